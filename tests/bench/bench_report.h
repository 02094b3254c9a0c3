/* bench_report.h — rmqbench's output: the human summary or one JSON object. */
#ifndef RMQBENCH_BENCH_REPORT_H
#define RMQBENCH_BENCH_REPORT_H

#include <stdio.h>

#include "bench_options.h"
#include "bench_stats.h"

typedef struct rmq_bench_result {
    rmq_bench_stats total;   /* merged over threads */
    double requests_per_sec; /* sum over threads of count / own window */
    double messages_per_sec; /* pull mode: stored messages received, same sum */
    double window_seconds;   /* longest thread window */
    int failed;              /* a connection failed */
} rmq_bench_result;

void rmq_report_text(FILE *out, const rmq_bench_options *o, const rmq_bench_result *r);
void rmq_report_json(FILE *out, const rmq_bench_options *o, const rmq_bench_result *r);

#endif
