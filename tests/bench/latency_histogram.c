/* latency_histogram.c — bucket arithmetic of the log-bucket latency histogram.
 * Owns only the numbers; must not allocate, print or read clocks, because it
 * sits on the per-response hot path of rmqbench. */
#include "latency_histogram.h"

#include <string.h>

static unsigned msb_index(uint64_t v)
{
    return 63u - (unsigned)__builtin_clzll(v);
}

static uint32_t bucket_of(uint64_t v)
{
    if (v < RMQ_HIST_SUB_COUNT)
        return (uint32_t)v;
    unsigned msb = msb_index(v);
    if (msb >= RMQ_HIST_MAX_BITS)
        return RMQ_HIST_BUCKETS - 1u;
    /* Keep the top SUB_BITS bits: 'top' lands in [HALF, SUB). */
    unsigned shift = msb - (RMQ_HIST_SUB_BITS - 1u);
    uint64_t top = v >> shift;
    return RMQ_HIST_SUB_COUNT + (shift - 1u) * RMQ_HIST_HALF_COUNT +
           (uint32_t)(top - RMQ_HIST_HALF_COUNT);
}

/* Largest value that maps into bucket `idx`. */
static uint64_t bucket_high(uint32_t idx)
{
    if (idx < RMQ_HIST_SUB_COUNT)
        return idx;
    uint32_t rel = idx - RMQ_HIST_SUB_COUNT;
    unsigned shift = rel / RMQ_HIST_HALF_COUNT + 1u;
    uint64_t top = (uint64_t)(rel % RMQ_HIST_HALF_COUNT) + RMQ_HIST_HALF_COUNT;
    return ((top + 1u) << shift) - 1u;
}

void rmq_hist_reset(rmq_latency_histogram *h)
{
    memset(h, 0, sizeof(*h));
    h->min_ns = UINT64_MAX;
}

void rmq_hist_record(rmq_latency_histogram *h, uint64_t value_ns)
{
    h->buckets[bucket_of(value_ns)]++;
    h->count++;
    h->sum_ns += value_ns;
    if (value_ns < h->min_ns)
        h->min_ns = value_ns;
    if (value_ns > h->max_ns)
        h->max_ns = value_ns;
}

void rmq_hist_merge(rmq_latency_histogram *dst, const rmq_latency_histogram *src)
{
    for (uint32_t i = 0; i < RMQ_HIST_BUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
    dst->count += src->count;
    dst->sum_ns += src->sum_ns;
    if (src->min_ns < dst->min_ns)
        dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
}

uint64_t rmq_hist_quantile_ns(const rmq_latency_histogram *h, double q)
{
    if (h->count == 0)
        return 0;
    if (q > 1.0)
        q = 1.0;
    uint64_t rank = (uint64_t)(q * (double)h->count);
    if ((double)rank < q * (double)h->count)
        rank++;
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < RMQ_HIST_BUCKETS; i++) {
        seen += h->buckets[i];
        if (seen >= rank) {
            /* The last bucket also holds clamped giants: only max is honest. */
            if (i == RMQ_HIST_BUCKETS - 1u)
                return h->max_ns;
            uint64_t v = bucket_high(i);
            return v > h->max_ns ? h->max_ns : v;
        }
    }
    return h->max_ns;
}
