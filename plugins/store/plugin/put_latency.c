/* put_latency.c — per-put latency as StoreStatsService.setPutMessageEntireTimeMax
 * measures it: one bucket increment per put (Java's 13 buckets), the maximum,
 * and the distribution restarted every minute as Java's printTps does. */
#include "put_latency.h"

#include <inttypes.h>
#include <stdio.h>

#define DISTRIBUTION_WINDOW_MS 60000 /* printTPSInterval */

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

void put_latency_record(put_latency *pl, uint64_t began_ms)
{
    uint64_t now = coarse_now_ms();
    uint64_t ms = now > began_ms ? now - began_ms : 0;
    atomic_fetch_add_explicit(&pl->bucket[bucket_of(ms)], 1, memory_order_relaxed);
    uint64_t max = atomic_load_explicit(&pl->max_ms, memory_order_relaxed);
    while (ms > max && !atomic_compare_exchange_weak_explicit(
                           &pl->max_ms, &max, ms, memory_order_relaxed, memory_order_relaxed)) {
    }
}

void put_latency_text(put_latency *pl, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (size_t i = 0; i < PUT_LATENCY_BUCKETS && n < cap; i++) {
        uint64_t v = atomic_load_explicit(&pl->bucket[i], memory_order_relaxed);
        int w = snprintf(out + n, cap - n, "%s:%" PRIu64 " ", BUCKET_NAMES[i], v);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

void put_latency_tick(put_latency *pl, uint64_t now_ms)
{
    if (!pl->window_start_ms) {
        pl->window_start_ms = now_ms;
        return;
    }
    if (now_ms <= pl->window_start_ms + DISTRIBUTION_WINDOW_MS)
        return;
    pl->window_start_ms = now_ms;
    for (size_t i = 0; i < PUT_LATENCY_BUCKETS; i++)
        atomic_store_explicit(&pl->bucket[i], 0, memory_order_relaxed);
}
