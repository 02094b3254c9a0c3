/* grpc_mode.h — rmqbench --grpc: RocketMQ 5.x clients' send and
 * receive+ack phases over apache.rocketmq.v2.MessagingService. */
#ifndef RMQBENCH_GRPC_MODE_H
#define RMQBENCH_GRPC_MODE_H

#include <stdio.h>

#include "bench_options.h"

/* Send -n messages of --size bytes with -c calls in flight, then receive
 * and acknowledge them with -c SimpleConsumers; report to out like
 * tests/bench/proxy5 (the Go client) does. 0 when every message was sent,
 * received and acknowledged and no call failed, else 1. */
int rmq_bench_grpc_run(const rmq_bench_options *o, FILE *out);

#endif
