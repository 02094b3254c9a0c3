/* put_latency.c — per-put latency as StoreStatsService.setPutMessageEntireTimeMax
 * measures it: one increment per put in Java's 13 distribution buckets and in
 * its percentile buckets, the maximum, and a window closed every minute as
 * Java's printTps does: GET_BROKER_RUNTIME_INFO shows the window that closed
 * last, as Java's lastPutMessageDistributeTime / lastBuckets. */
#include "put_latency.h"

#include <inttypes.h>
#include <stdio.h>

static const char *const BUCKET_NAMES[PUT_LATENCY_BUCKETS] = {
    "[<=0ms]", "[0~10ms]", "[10~50ms]", "[50~100ms]", "[100~200ms]", "[200~500ms]", "[500ms~1s]",
    "[1~2s]",  "[2~3s]",   "[3~4s]",    "[4~5s]",     "[5~10s]",     "[10s~]"};
/* upper bounds (exclusive) of buckets 1..11; bucket 0 is <= 0 */
static const uint64_t BOUNDS_MS[] = {10, 50, 100, 200, 500, 1000, 2000, 3000, 4000, 5000, 10000};

static size_t bucket_of(uint64_t ms)
{
    if (ms == 0)
        return 0;
    size_t i = 0;
    while (i < sizeof BOUNDS_MS / sizeof BOUNDS_MS[0] && ms >= BOUNDS_MS[i])
        i++;
    return i + 1;
}

/* The upper bound (inclusive) of percentile bucket i; INT64_MAX for the last. */
static int64_t pct_bound(size_t i)
{
    static const struct {
        int step, count;
    } RULE[] = {{1, 20}, {2, 15}, {5, 10}, {10, 10}, {50, 6}, {100, 5}, {1000, 9}};
    int64_t at = 0;
    for (size_t r = 0; r < sizeof RULE / sizeof RULE[0]; r++) {
        if (i < (size_t)RULE[r].count)
            return at + (int64_t)(i + 1) * RULE[r].step;
        at += (int64_t)RULE[r].count * RULE[r].step;
        i -= (size_t)RULE[r].count;
    }
    return INT64_MAX;
}

/* TreeMap.ceilingEntry(ms): the first bucket whose bound is >= ms. */
static size_t pct_of(uint64_t ms)
{
    size_t i = 0;
    while (i < PUT_PCT_BUCKETS - 1 && (int64_t)ms > pct_bound(i))
        i++;
    return i;
}

void put_latency_record(put_latency *pl, uint64_t began_ms)
{
    uint64_t now = coarse_now_ms();
    uint64_t ms = now > began_ms ? now - began_ms : 0;
    atomic_fetch_add_explicit(&pl->bucket[bucket_of(ms)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&pl->pct[pct_of(ms)], 1, memory_order_relaxed);
    uint64_t max = atomic_load_explicit(&pl->max_ms, memory_order_relaxed);
    while (ms > max && !atomic_compare_exchange_weak_explicit(
                           &pl->max_ms, &max, ms, memory_order_relaxed, memory_order_relaxed)) {
    }
}

void put_latency_failed(put_latency *pl)
{
    atomic_fetch_add_explicit(&pl->failed, 1, memory_order_relaxed);
}

void put_latency_text(put_latency *pl, char *out, size_t cap)
{
    if (!atomic_load(&pl->has_last)) { /* String.valueOf((String) null) */
        snprintf(out, cap, "null");
        return;
    }
    size_t n = 0;
    out[0] = 0;
    for (size_t i = 0; i < PUT_LATENCY_BUCKETS && n < cap; i++) {
        uint64_t v = atomic_load_explicit(&pl->last_bucket[i], memory_order_relaxed);
        int w = snprintf(out + n, cap - n, "%s:%" PRIu64 " ", BUCKET_NAMES[i], v);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

double put_latency_percentile(put_latency *pl, double px)
{
    uint64_t c[PUT_PCT_BUCKETS];
    uint64_t total = 0;
    for (size_t i = 0; i < PUT_PCT_BUCKETS; i++) {
        c[i] = atomic_load_explicit(&pl->last_pct[i], memory_order_relaxed);
        total += c[i];
    }
    /* Java: the rank (long)(total * px), interpolated inside its bucket */
    int64_t rank = (int64_t)((double)total * px);
    int64_t passed = 0;
    for (size_t i = 0; i < PUT_PCT_BUCKETS; i++) {
        int64_t count = (int64_t)c[i];
        if (rank <= passed + count) {
            int64_t rel = rank - passed;
            if (i == 0)
                return count == 0 ? 0 : (double)(pct_bound(0) * rel) / (double)count;
            int64_t lo = pct_bound(i - 1);
            /* Java multiplies in long: the open last bucket wraps, so does this */
            int64_t span = (int64_t)((uint64_t)(pct_bound(i) - lo) * (uint64_t)rel);
            return (double)lo + (count == 0 ? 0 : (double)span / (double)count);
        }
        passed += count;
    }
    return 0;
}

void put_latency_tick(put_latency *pl, uint64_t now_ms)
{
    if (!pl->window_start_ms) {
        pl->window_start_ms = now_ms;
        return;
    }
    uint64_t window = pl->window_ms ? pl->window_ms : 60000;
    if (now_ms <= pl->window_start_ms + window)
        return;
    pl->window_start_ms = now_ms;
    /* a put landing during the move counts in one window or the other */
    for (size_t i = 0; i < PUT_LATENCY_BUCKETS; i++)
        atomic_store_explicit(&pl->last_bucket[i],
                              atomic_exchange_explicit(&pl->bucket[i], 0, memory_order_relaxed),
                              memory_order_relaxed);
    for (size_t i = 0; i < PUT_PCT_BUCKETS; i++)
        atomic_store_explicit(&pl->last_pct[i],
                              atomic_exchange_explicit(&pl->pct[i], 0, memory_order_relaxed),
                              memory_order_relaxed);
    atomic_store(&pl->has_last, true);
}
