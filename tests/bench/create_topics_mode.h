/* create_topics_mode.h — rmqbench --create-topics N: the cost of creating
 * topics as a client sees it. One connection sends one request at a time:
 * SEND_MESSAGE_V2 of --size bytes to a new topic (auto-created from TBW102
 * with --queues queues), or with --create-via-admin UPDATE_AND_CREATE_TOPIC
 * (17); reports the time per 1,000 creations as the table grows, then the
 * latency of sends to the first and the last topic created. */
#ifndef RMQBENCH_CREATE_TOPICS_MODE_H
#define RMQBENCH_CREATE_TOPICS_MODE_H

#include <stdio.h>

#include "bench_options.h"

/* 0 = every creation answered SUCCESS, 1 = a failure (on stderr). */
int rmq_bench_create_topics_run(const rmq_bench_options *o, FILE *out);

#endif
