/* delete_topics_mode.h — rmqbench --delete-topics N: the cost of deleting
 * topics as mqadmin deleteTopic pays it. One connection to the broker sends
 * DELETE_TOPIC_IN_BROKER (215) for <--topic>-0..N-1, one at a time; with
 * --namesrv host:port each is followed by DELETE_TOPIC_IN_NAMESRV (216) on
 * a second connection, as mqadmin does after the brokers. Reports the time
 * per 1,000 deletions (both calls) every --report-every, with the median
 * and p99 of each call. */
#ifndef RMQBENCH_DELETE_TOPICS_MODE_H
#define RMQBENCH_DELETE_TOPICS_MODE_H

#include <stdio.h>

#include "bench_options.h"

/* 0 = every deletion answered SUCCESS, 1 = a failure (on stderr). */
int rmq_bench_delete_topics_run(const rmq_bench_options *o, FILE *out);

#endif
