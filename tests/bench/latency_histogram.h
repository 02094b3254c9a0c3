/* latency_histogram.h — a fixed-size log-bucket (HDR-like) histogram of
 * nanosecond latencies: constant-time record, no allocation after init. */
#ifndef RMQBENCH_LATENCY_HISTOGRAM_H
#define RMQBENCH_LATENCY_HISTOGRAM_H

#include <stdint.h>

/* 2^7 sub-buckets per power of two: relative error below 1/64 (~1.6%). */
#define RMQ_HIST_SUB_BITS 7
#define RMQ_HIST_SUB_COUNT (1u << RMQ_HIST_SUB_BITS)
#define RMQ_HIST_HALF_COUNT (RMQ_HIST_SUB_COUNT / 2u)
/* Values up to 2^44 ns (~4.9 h) are kept exactly to bucket precision; larger
 * ones are clamped into the last bucket (max stays exact). */
#define RMQ_HIST_MAX_BITS 44
#define RMQ_HIST_BUCKETS                                                                           \
    (RMQ_HIST_SUB_COUNT + (RMQ_HIST_MAX_BITS - RMQ_HIST_SUB_BITS) * RMQ_HIST_HALF_COUNT)

typedef struct rmq_latency_histogram {
    uint64_t count;
    uint64_t sum_ns;
    uint64_t min_ns;
    uint64_t max_ns;
    uint64_t buckets[RMQ_HIST_BUCKETS];
} rmq_latency_histogram;

void rmq_hist_reset(rmq_latency_histogram *h);
void rmq_hist_record(rmq_latency_histogram *h, uint64_t value_ns);
/* Adds every sample of `src` into `dst` (per-thread histograms → total). */
void rmq_hist_merge(rmq_latency_histogram *dst, const rmq_latency_histogram *src);
/* Value at quantile q (0 < q <= 1): the highest value equivalent to the
 * bucket holding the ceil(q*count)-th sample, never above max. 0 if empty. */
uint64_t rmq_hist_quantile_ns(const rmq_latency_histogram *h, double q);

#endif
