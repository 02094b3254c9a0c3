/* stats_items.h — Java's StatsItemSet for VIEW_BROKER_STATS_DATA (315): per
 * key a value and a call count, with snapshot lists sampled every 10 s (7
 * kept: the last minute), every 10 min (7: the last hour) and every hour
 * (25: the last day); a view is StatsItem.computeStatsData of each list.
 * One set holds two of Java's sets that are always added together under the
 * same key (TOPIC_PUT_NUMS and TOPIC_PUT_SIZE: series 0 and 1), so a send
 * pays one lookup for both. */
#ifndef STORE_STATS_ITEMS_H
#define STORE_STATS_ITEMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct stats_items stats_items;

/* StatsSnapshot: sum of the window, its rate per second and value per call. */
typedef struct stats_view {
    int64_t sum;
    double tps;
    double avgpt;
} stats_view;

enum { STATS_MINUTE, STATS_HOUR, STATS_DAY, STATS_WINDOWS };
enum { STATS_SERIES = 2 };

stats_items *stats_items_new(void);
void stats_items_free(stats_items *s);
/* addValue(key, v0, times) on series 0 and addValue(key, v1, times) on
 * series 1. Any thread. */
void stats_items_add(stats_items *s, const char *key, int64_t v0, int64_t v1, int64_t times);
/* Drops key (its topic was deleted); false when absent. Any thread. */
bool stats_items_remove(stats_items *s, const char *key);
/* Drops every key starting with prefix (a walk over the set); the count. */
size_t stats_items_remove_prefix(stats_items *s, const char *prefix);
/* One snapshot of every key into window w's list (STATS_MINUTE every 10 s,
 * STATS_HOUR every 10 min, STATS_DAY every hour), at wall time now_ms. */
void stats_items_sample(stats_items *s, int w, uint64_t now_ms);
/* The three windows of `key` in `series`; false when the key was never
 * added. */
bool stats_items_view(stats_items *s, int series, const char *key, stats_view out[STATS_WINDOWS]);

#endif
