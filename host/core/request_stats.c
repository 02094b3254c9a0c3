/* request_stats.c — counting requests, errors and latency per server with
 * relaxed atomics on the I/O and executor threads. Only counts: never logs,
 * never allocates, never looks at request contents beyond the code. */
#include "request_stats.h"

#include <time.h>

size_t request_stats_slot(int32_t code)
{
    return code >= 0 && code < STATS_CODE_SLOTS ? (size_t)code : STATS_CODE_SLOTS;
}

void request_stats_count(request_stats *s, int32_t code)
{
    atomic_fetch_add_explicit(&s->requests[request_stats_slot(code)], 1, memory_order_relaxed);
}

void request_stats_error(request_stats *s, int32_t code)
{
    atomic_fetch_add_explicit(&s->errors[request_stats_slot(code)], 1, memory_order_relaxed);
}

uint64_t request_stats_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void request_stats_latency(request_stats *s, uint64_t ns)
{
    uint64_t us = ns / 1000u;
    size_t b = 0;
    while (b + 1 < STATS_LATENCY_BUCKETS && us >= ((uint64_t)1 << b))
        b++;
    atomic_fetch_add_explicit(&s->latency[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->latency_sum_us, (unsigned long)us, memory_order_relaxed);
    unsigned long cur = atomic_load_explicit(&s->latency_max_us, memory_order_relaxed);
    while (us > cur && !atomic_compare_exchange_weak(&s->latency_max_us, &cur, (unsigned long)us))
        ;
}

uint64_t request_stats_quantile_us(request_stats *s, double q)
{
    unsigned long counts[STATS_LATENCY_BUCKETS];
    unsigned long total = 0;
    for (size_t i = 0; i < STATS_LATENCY_BUCKETS; i++) {
        counts[i] = atomic_load_explicit(&s->latency[i], memory_order_relaxed);
        total += counts[i];
    }
    if (total == 0)
        return 0;
    unsigned long want = (unsigned long)(q * (double)total);
    if (want < 1)
        want = 1;
    unsigned long seen = 0;
    for (size_t i = 0; i < STATS_LATENCY_BUCKETS; i++) {
        seen += counts[i];
        if (seen >= want)
            return (uint64_t)1 << i;
    }
    return (uint64_t)1 << (STATS_LATENCY_BUCKETS - 1);
}
