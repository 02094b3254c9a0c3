/* stats_items.c — owns the StatsItemSet counters behind
 * VIEW_BROKER_STATS_DATA. Every send and pull adds to them from several I/O
 * threads, so an add takes the set's lock shared (a lookup; items are never
 * removed while the set lives) and bumps atomic counters; only a new key and
 * the sampling timer take it exclusively. */
#include "stats_items.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/helpers.h>

static const size_t KEEP[STATS_WINDOWS] = {7, 7, 25}; /* StatsItem's list bounds */
#define MAX_KEEP 26 /* Java removes the first once a list holds more than KEEP */

typedef struct call_snapshot {
    uint64_t at_ms;
    int64_t value[STATS_SERIES], times;
} call_snapshot;

typedef struct stats_item {
    _Atomic int64_t value[STATS_SERIES], times;
    call_snapshot list[STATS_WINDOWS][MAX_KEEP]; /* oldest first */
    size_t n[STATS_WINDOWS];
    char key[]; /* the map borrows it */
} stats_item;

struct stats_items {
    pthread_rwlock_t rw;
    rmq_str_map by_key;
};

stats_items *stats_items_new(void)
{
    stats_items *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    pthread_rwlock_init(&s->rw, NULL);
    rmq_str_map_init(&s->by_key);
    return s;
}

void stats_items_free(stats_items *s)
{
    if (!s)
        return;
    rmq_str_map_iter it;
    const char *k;
    void *v;
    rmq_str_map_iter_init(&it, &s->by_key);
    while (rmq_str_map_iter_next(&it, &k, &v))
        free(v);
    rmq_str_map_destroy(&s->by_key);
    pthread_rwlock_destroy(&s->rw);
    free(s);
}

static void bump(stats_item *it, int64_t v0, int64_t v1, int64_t times)
{
    atomic_fetch_add_explicit(&it->value[0], v0, memory_order_relaxed);
    atomic_fetch_add_explicit(&it->value[1], v1, memory_order_relaxed);
    atomic_fetch_add_explicit(&it->times, times, memory_order_relaxed);
}

void stats_items_add(stats_items *s, const char *key, int64_t v0, int64_t v1, int64_t times)
{
    if (!s || !key)
        return;
    pthread_rwlock_rdlock(&s->rw);
    stats_item *it = rmq_str_map_get(&s->by_key, key);
    if (it) {
        bump(it, v0, v1, times);
        pthread_rwlock_unlock(&s->rw);
        return;
    }
    pthread_rwlock_unlock(&s->rw);
    pthread_rwlock_wrlock(&s->rw);
    it = rmq_str_map_get(&s->by_key, key); /* another thread may have made it */
    if (!it) { /* getAndCreateStatsItem: empty lists until the next sampling */
        size_t klen = strlen(key) + 1;
        int err = 0;
        it = calloc(1, sizeof *it + klen);
        if (it) {
            atomic_init(&it->value[0], 0);
            atomic_init(&it->value[1], 0);
            atomic_init(&it->times, 0);
            memcpy(it->key, key, klen);
        }
        if (it && !rmq_str_map_put(&s->by_key, it->key, it, &err) && err) {
            free(it);
            it = NULL;
        }
    }
    if (it)
        bump(it, v0, v1, times);
    pthread_rwlock_unlock(&s->rw);
}

void stats_items_sample(stats_items *s, int w, uint64_t now_ms)
{
    if (!s || w < 0 || w >= STATS_WINDOWS)
        return;
    pthread_rwlock_wrlock(&s->rw);
    rmq_str_map_iter it;
    const char *k;
    void *v;
    rmq_str_map_iter_init(&it, &s->by_key);
    while (rmq_str_map_iter_next(&it, &k, &v)) {
        stats_item *i = v;
        i->list[w][i->n[w]++] = (call_snapshot){
            now_ms, {atomic_load(&i->value[0]), atomic_load(&i->value[1])}, atomic_load(&i->times)};
        if (i->n[w] > KEEP[w]) {
            memmove(i->list[w], i->list[w] + 1, (i->n[w] - 1) * sizeof i->list[w][0]);
            i->n[w]--;
        }
    }
    pthread_rwlock_unlock(&s->rw);
}

/* StatsItem.computeStatsData: first and last snapshot of the list. One
 * snapshot divides 0 by 0 as Java does (NaN); none is all zeros. */
static stats_view compute(const call_snapshot *l, size_t n, int series)
{
    stats_view r = {0, 0, 0};
    if (!n)
        return r;
    const call_snapshot *first = &l[0], *last = &l[n - 1];
    r.sum = last->value[series] - first->value[series];
    r.tps = ((double)r.sum * 1000.0) / (double)((int64_t)last->at_ms - (int64_t)first->at_ms);
    int64_t td = last->times - first->times;
    if (td > 0)
        r.avgpt = (double)r.sum / (double)td;
    return r;
}

bool stats_items_view(stats_items *s, int series, const char *key, stats_view out[STATS_WINDOWS])
{
    if (!s || !key || series < 0 || series >= STATS_SERIES)
        return false;
    pthread_rwlock_rdlock(&s->rw); /* the lists change only under the exclusive lock */
    stats_item *it = rmq_str_map_get(&s->by_key, key);
    if (it)
        for (int w = 0; w < STATS_WINDOWS; w++)
            out[w] = compute(it->list[w], it->n[w], series);
    pthread_rwlock_unlock(&s->rw);
    return it != NULL;
}
