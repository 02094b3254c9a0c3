/* request_stats.h — lock-free per-server request figures: counts and error
 * counts per request code (codes outside [0, 16384) share one slot) and a
 * log2 latency histogram. Bounded in size whatever the traffic. */
#ifndef RMQHOST_REQUEST_STATS_H
#define RMQHOST_REQUEST_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define STATS_CODE_SLOTS 16384   /* codes [0, 16384); slot STATS_CODE_SLOTS = any other */
#define STATS_LATENCY_BUCKETS 32 /* bucket i: latency < 2^i microseconds */

typedef struct request_stats {
    atomic_ulong requests[STATS_CODE_SLOTS + 1];
    atomic_ulong errors[STATS_CODE_SLOTS + 1];
    atomic_ulong latency[STATS_LATENCY_BUCKETS];
    atomic_ulong latency_max_us;
    atomic_ulong latency_sum_us;
} request_stats;

size_t request_stats_slot(int32_t code);
void request_stats_count(request_stats *s, int32_t code);
void request_stats_error(request_stats *s, int32_t code);
void request_stats_latency(request_stats *s, uint64_t ns);
/* Upper bound (µs) of the bucket holding quantile q in (0, 1]; 0 when empty. */
uint64_t request_stats_quantile_us(request_stats *s, double q);
uint64_t request_stats_now_ns(void);

#endif
