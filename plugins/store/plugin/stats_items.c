/* stats_items.c — owns the StatsItemSet counters behind
 * VIEW_BROKER_STATS_DATA. Every send and pull adds to them from several I/O
 * threads, so an add takes the set's lock shared (a lookup) and bumps atomic
 * counters while it holds it; only a new key, a removal and the sampling
 * timer take it exclusively.
 *
 * Memory: one item per topic (two sets), so 100,000 topics make 200,000
 * items. Each window's snapshot list is kept as one snapshot while all its
 * entries are equal (an idle key), and as a ring of exactly KEEP entries
 * only while they differ; the sample times are the set's (every item is
 * sampled at once). An item takes ~140 bytes instead of 1.9 KB with three
 * lists of 26 timed snapshots each. */
#include "stats_items.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/helpers.h>

#define KEEP_MAX 25
static const uint8_t KEEP[STATS_WINDOWS] = {7, 7, KEEP_MAX}; /* StatsItem's list bounds */

/* One sampled (values of each series, times). */
typedef struct call_snapshot {
    int64_t value[STATS_SERIES], times;
} call_snapshot;

/* One window's list of an item: its last n samples, `last` the newest.
 * ring NULL: all n equal `last`. Else KEEP entries, the oldest at head. */
typedef struct window_list {
    call_snapshot last;
    call_snapshot *ring;
    uint8_t n, head;
} window_list;

typedef struct stats_item {
    _Atomic int64_t value[STATS_SERIES], times;
    window_list w[STATS_WINDOWS];
    char key[]; /* the map borrows it */
} stats_item;

/* The times of a window's last KEEP samples (a ring, the oldest at head):
 * an item's n snapshots were taken at the set's last n samples. */
typedef struct sample_times {
    uint64_t at_ms[KEEP_MAX];
    uint8_t n, head;
} sample_times;

struct stats_items {
    pthread_rwlock_t rw;
    rmq_str_map by_key;
    sample_times at[STATS_WINDOWS];
};

static void item_free(stats_item *it)
{
    for (int w = 0; w < STATS_WINDOWS; w++)
        free(it->w[w].ring);
    free(it);
}

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
        item_free(v);
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

bool stats_items_remove(stats_items *s, const char *key)
{
    if (!s || !key)
        return false;
    pthread_rwlock_wrlock(&s->rw); /* no add holds the item now */
    stats_item *it = rmq_str_map_remove(&s->by_key, key);
    pthread_rwlock_unlock(&s->rw);
    if (it)
        item_free(it);
    return it != NULL;
}

size_t stats_items_remove_prefix(stats_items *s, const char *prefix)
{
    if (!s || !prefix)
        return 0;
    size_t plen = strlen(prefix), n = 0;
    pthread_rwlock_wrlock(&s->rw);
    if (s->by_key.count == 0) {
        pthread_rwlock_unlock(&s->rw);
        return 0;
    }
    stats_item **gone = malloc(s->by_key.count * sizeof *gone);
    rmq_str_map_iter it;
    const char *k;
    void *v;
    rmq_str_map_iter_init(&it, &s->by_key);
    while (gone && rmq_str_map_iter_next(&it, &k, &v))
        if (strncmp(k, prefix, plen) == 0)
            gone[n++] = v;
    for (size_t i = 0; i < n; i++)
        rmq_str_map_remove(&s->by_key, gone[i]->key);
    pthread_rwlock_unlock(&s->rw);
    for (size_t i = 0; i < n; i++)
        item_free(gone[i]);
    free(gone);
    return n;
}

static bool same(call_snapshot a, call_snapshot b)
{
    return a.value[0] == b.value[0] && a.value[1] == b.value[1] && a.times == b.times;
}

/* Appends snap to a list of at most keep entries (the oldest goes). */
static void list_push(window_list *l, uint8_t keep, call_snapshot snap)
{
    if (!l->ring && (l->n == 0 || same(l->last, snap))) {
        if (l->n < keep)
            l->n++;
        l->last = snap;
        return;
    }
    if (!l->ring) {
        call_snapshot *r = malloc(keep * sizeof *r);
        if (!r) { /* out of memory: the window reads as unchanged */
            l->last = snap;
            return;
        }
        for (uint8_t i = 0; i < l->n; i++)
            r[i] = l->last;
        l->ring = r;
        l->head = 0;
    }
    if (l->n < keep) {
        l->ring[(l->head + l->n) % keep] = snap;
        l->n++;
    } else {
        l->ring[l->head] = snap;
        l->head = (uint8_t)((l->head + 1) % keep);
    }
    l->last = snap;
    for (uint8_t i = 0; i < l->n; i++)
        if (!same(l->ring[(l->head + i) % keep], snap))
            return;
    free(l->ring); /* all equal again: back to one snapshot */
    l->ring = NULL;
}

void stats_items_sample(stats_items *s, int w, uint64_t now_ms)
{
    if (!s || w < 0 || w >= STATS_WINDOWS)
        return;
    pthread_rwlock_wrlock(&s->rw);
    sample_times *t = &s->at[w];
    if (t->n < KEEP[w]) {
        t->at_ms[(t->head + t->n) % KEEP[w]] = now_ms;
        t->n++;
    } else {
        t->at_ms[t->head] = now_ms;
        t->head = (uint8_t)((t->head + 1) % KEEP[w]);
    }
    rmq_str_map_iter it;
    const char *k;
    void *v;
    rmq_str_map_iter_init(&it, &s->by_key);
    while (rmq_str_map_iter_next(&it, &k, &v)) {
        stats_item *i = v;
        list_push(&i->w[w], KEEP[w],
                  (call_snapshot){{atomic_load(&i->value[0]), atomic_load(&i->value[1])},
                                  atomic_load(&i->times)});
    }
    pthread_rwlock_unlock(&s->rw);
}

/* StatsItem.computeStatsData: first and last snapshot of the list. One
 * snapshot divides 0 by 0 as Java does (NaN); none is all zeros. */
static stats_view compute(const window_list *l, uint8_t keep, const sample_times *t, int series)
{
    stats_view r = {0, 0, 0};
    if (!l->n)
        return r;
    call_snapshot first = l->ring ? l->ring[l->head] : l->last, last = l->last;
    uint64_t first_at = t->at_ms[(t->head + t->n - l->n) % keep];
    uint64_t last_at = t->at_ms[(t->head + t->n - 1) % keep];
    r.sum = last.value[series] - first.value[series];
    r.tps = ((double)r.sum * 1000.0) / (double)((int64_t)last_at - (int64_t)first_at);
    int64_t td = last.times - first.times;
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
            out[w] = compute(&it->w[w], KEEP[w], &s->at[w], series);
    pthread_rwlock_unlock(&s->rw);
    return it != NULL;
}
