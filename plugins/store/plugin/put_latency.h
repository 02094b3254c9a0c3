/* put_latency.h — StoreStatsService's put-latency figures of
 * GET_BROKER_RUNTIME_INFO (28): putMessageEntireTimeMax and the
 * putMessageDistributeTime buckets, fed by every put of the plugin. */
#ifndef STORE_PUT_LATENCY_H
#define STORE_PUT_LATENCY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "coarse_clock.h"

#define PUT_LATENCY_BUCKETS 13

typedef struct put_latency {
    _Atomic uint64_t bucket[PUT_LATENCY_BUCKETS];
    _Atomic uint64_t max_ms;
    uint64_t window_start_ms; /* sampler thread only: start of the current minute */
} put_latency;

/* One put that began at `began_ms` (coarse_now_ms) has completed. */
void put_latency_record(put_latency *pl, uint64_t began_ms);
/* Java's "[<=0ms]:N [0~10ms]:N ... [10s~]:N " (trailing space included). */
void put_latency_text(put_latency *pl, char *out, size_t cap);
/* Called every second: StoreStatsService.printTps starts a new distribution
 * once a minute has passed (the maximum is kept). */
void put_latency_tick(put_latency *pl, uint64_t now_ms);

#endif
