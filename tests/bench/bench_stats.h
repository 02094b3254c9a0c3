/* bench_stats.h — what one rmqbench event loop counted: requests, responses
 * per code, errors by kind and the latency histogram. */
#ifndef RMQBENCH_BENCH_STATS_H
#define RMQBENCH_BENCH_STATS_H

#include <stdint.h>

#include "latency_histogram.h"

/* Distinct response codes tracked individually; more land in `other_codes`. */
#define RMQ_BENCH_MAX_CODES 32

typedef struct rmq_code_count {
    int32_t code;
    uint64_t count;
} rmq_code_count;

typedef struct rmq_bench_errors {
    uint64_t connect;   /* connect() failed */
    uint64_t closed;    /* peer closed or read/write failed before the end */
    uint64_t bad_frame; /* impossible length prefix or undecodable header */
    uint64_t unmatched; /* response opaque matches no request in flight */
} rmq_bench_errors;

typedef struct rmq_bench_stats {
    /* Counted only inside the measured window: */
    uint64_t sent;
    uint64_t responses;
    uint64_t messages; /* pull mode: stored messages received */
    rmq_code_count codes[RMQ_BENCH_MAX_CODES];
    uint32_t code_kinds;
    uint64_t other_codes;
    rmq_latency_histogram hist;
    double window_seconds;
    /* Counted over the whole run, warm-up included: */
    rmq_bench_errors errors;
} rmq_bench_stats;

/* Zero the windowed figures (warm-up end); errors are kept. */
void rmq_stats_reset_window(rmq_bench_stats *s);
void rmq_stats_init(rmq_bench_stats *s);
/* Count one response of `code`; returns 1 when the code is new here. */
int rmq_stats_count_code(rmq_bench_stats *s, int32_t code);
void rmq_stats_merge(rmq_bench_stats *dst, const rmq_bench_stats *src);
uint64_t rmq_stats_error_total(const rmq_bench_stats *s);

#endif
