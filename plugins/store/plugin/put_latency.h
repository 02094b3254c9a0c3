/* put_latency.h — StoreStatsService's put-latency figures of
 * GET_BROKER_RUNTIME_INFO (28): putMessageEntireTimeMax, the
 * putMessageDistributeTime buckets and the putLatency99 / putLatency999
 * percentiles of the last completed window (a minute, printTPSInterval), and
 * putMessageFailedTimes, fed by every put of the plugin. */
#ifndef STORE_PUT_LATENCY_H
#define STORE_PUT_LATENCY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coarse_clock.h"

#define PUT_LATENCY_BUCKETS 13
/* StoreStatsService's percentile buckets: 1 ms steps to 20, 2 to 50, 5 to
 * 100, 10 to 200, 50 to 500, 100 to 1000, 1000 to 10000, then one open */
#define PUT_PCT_BUCKETS 76

typedef struct put_latency {
    _Atomic uint64_t bucket[PUT_LATENCY_BUCKETS]; /* the current window */
    _Atomic uint64_t pct[PUT_PCT_BUCKETS];
    _Atomic uint64_t max_ms;
    _Atomic uint64_t failed; /* putMessageFailedTimes */
    /* sampler thread writes, the 28 processor reads: the last window */
    _Atomic uint64_t last_bucket[PUT_LATENCY_BUCKETS];
    _Atomic uint64_t last_pct[PUT_PCT_BUCKETS];
    _Atomic bool has_last;    /* a window has completed */
    uint64_t window_ms;       /* 60000 (putStatsWindowMillis) */
    uint64_t window_start_ms; /* sampler thread only: start of the current window */
} put_latency;

/* One put that began at `began_ms` (coarse_now_ms) has completed. */
void put_latency_record(put_latency *pl, uint64_t began_ms);
/* That put failed in the commit log (DefaultMessageStore counts it). */
void put_latency_failed(put_latency *pl);
/* Java's "[<=0ms]:N [0~10ms]:N ... [10s~]:N " (trailing space included) of
 * the last completed window, "null" before the first one completed. */
void put_latency_text(put_latency *pl, char *out, size_t cap);
/* findPutMessageEntireTimePX(px) over the last completed window. */
double put_latency_percentile(put_latency *pl, double px);
/* Called every second: StoreStatsService.printTps closes the window once
 * window_ms has passed (the maximum is kept). */
void put_latency_tick(put_latency *pl, uint64_t now_ms);

#endif
