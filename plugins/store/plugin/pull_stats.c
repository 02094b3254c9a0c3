/* pull_stats.c — owns the per topic@group pulled-message counters and their
 * one-minute snapshots (Java: StatsItemSet GROUP_GET_NUMS, csListMinute of
 * 7 snapshots 10 s apart) and the broker-wide transferred-message count. One
 * mutex: taken once per FOUND pull, for a hash lookup and an add. */
#include "pull_stats.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/helpers.h>

#include "state_blob.h"

#define MINUTE_SNAPSHOTS 7

typedef struct snapshot {
    uint64_t at_ms;
    uint64_t value;
} snapshot;

typedef struct group_stat {
    uint64_t value;
    snapshot snaps[MINUTE_SNAPSHOTS]; /* oldest first */
    size_t nsnaps;
    char key[]; /* "topic@group": rmq_str_map borrows its keys, so it lives here */
} group_stat;

struct pull_stats {
    pthread_mutex_t mu;
    rmq_str_map by_key; /* "topic@group" → group_stat* */
    _Atomic uint64_t transferred;
    _Atomic uint64_t lookup_max_ms;
};

pull_stats *pull_stats_new(void)
{
    pull_stats *ps = calloc(1, sizeof *ps);
    if (!ps)
        return NULL;
    pthread_mutex_init(&ps->mu, NULL);
    rmq_str_map_init(&ps->by_key);
    return ps;
}

void pull_stats_free(pull_stats *ps)
{
    if (!ps)
        return;
    rmq_str_map_iter it;
    const char *k;
    void *v;
    rmq_str_map_iter_init(&it, &ps->by_key);
    while (rmq_str_map_iter_next(&it, &k, &v))
        free(v);
    rmq_str_map_destroy(&ps->by_key);
    pthread_mutex_destroy(&ps->mu);
    free(ps);
}

static void stats_key(const char *group, const char *topic, char *out, size_t cap)
{
    snprintf(out, cap, "%s@%s", topic, group); /* BrokerStatsManager.buildStatsKey */
}

void pull_stats_found(pull_stats *ps, const char *group, const char *topic, int32_t msgs,
                      uint64_t now_ms)
{
    if (!ps || msgs <= 0)
        return;
    atomic_fetch_add_explicit(&ps->transferred, (uint64_t)msgs, memory_order_relaxed);
    if (!group || !topic)
        return;
    char key[640];
    stats_key(group, topic, key, sizeof key);
    pthread_mutex_lock(&ps->mu);
    group_stat *g = rmq_str_map_get(&ps->by_key, key);
    if (!g) {
        int err = 0;
        size_t klen = strlen(key) + 1;
        g = calloc(1, sizeof *g + klen);
        if (g)
            memcpy(g->key, key, klen);
        if (g && !rmq_str_map_put(&ps->by_key, g->key, g, &err) && err) {
            free(g);
            g = NULL;
        }
        if (g) /* the count was 0 until now: the rate starts here */
            g->snaps[g->nsnaps++] = (snapshot){now_ms, 0};
    }
    if (g)
        g->value += (uint64_t)msgs;
    pthread_mutex_unlock(&ps->mu);
}

uint64_t pull_stats_transferred(pull_stats *ps)
{
    return ps ? atomic_load_explicit(&ps->transferred, memory_order_relaxed) : 0;
}

void pull_stats_lookup_ms(pull_stats *ps, uint64_t ms)
{
    if (!ps)
        return;
    uint64_t cur = atomic_load_explicit(&ps->lookup_max_ms, memory_order_relaxed);
    while (ms > cur &&
           !atomic_compare_exchange_weak_explicit(&ps->lookup_max_ms, &cur, ms,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

uint64_t pull_stats_lookup_max_ms(pull_stats *ps)
{
    return ps ? atomic_load_explicit(&ps->lookup_max_ms, memory_order_relaxed) : 0;
}

void pull_stats_sample(pull_stats *ps, uint64_t now_ms)
{
    if (!ps)
        return;
    pthread_mutex_lock(&ps->mu);
    rmq_str_map_iter it;
    const char *k;
    void *v;
    rmq_str_map_iter_init(&it, &ps->by_key);
    while (rmq_str_map_iter_next(&it, &k, &v)) {
        group_stat *g = v;
        if (g->nsnaps == MINUTE_SNAPSHOTS) {
            memmove(g->snaps, g->snaps + 1, (MINUTE_SNAPSHOTS - 1) * sizeof g->snaps[0]);
            g->nsnaps--;
        }
        g->snaps[g->nsnaps++] = (snapshot){now_ms, g->value};
    }
    pthread_mutex_unlock(&ps->mu);
}

double pull_stats_group_tps(pull_stats *ps, const char *group, const char *topic, uint64_t now_ms)
{
    if (!ps || !group || !topic)
        return 0;
    char key[640];
    stats_key(group, topic, key, sizeof key);
    double tps = 0;
    pthread_mutex_lock(&ps->mu);
    group_stat *g = rmq_str_map_get(&ps->by_key, key);
    if (g) {
        const snapshot *from = &g->snaps[0]; /* every key has one from its creation */
        if (now_ms > from->at_ms + 999)
            tps = (double)(g->value - from->value) * 1000.0 / (double)(now_ms - from->at_ms);
    }
    pthread_mutex_unlock(&ps->mu);
    return tps;
}

void pull_stats_export(pull_stats *ps, blob_writer *w)
{
    blob_put_u64(w, pull_stats_transferred(ps));
    blob_put_u64(w, pull_stats_lookup_max_ms(ps));
    pthread_mutex_lock(&ps->mu);
    blob_put_u64(w, rmq_str_map_count(&ps->by_key));
    rmq_str_map_iter it;
    const char *k;
    void *v;
    rmq_str_map_iter_init(&it, &ps->by_key);
    while (rmq_str_map_iter_next(&it, &k, &v)) {
        const group_stat *g = v;
        size_t klen = strlen(g->key);
        blob_put_u64(w, klen);
        blob_put(w, g->key, klen);
        blob_put_u64(w, g->value);
        blob_put_u64(w, g->nsnaps);
        blob_put(w, g->snaps, g->nsnaps * sizeof g->snaps[0]);
    }
    pthread_mutex_unlock(&ps->mu);
}

bool pull_stats_import(pull_stats *ps, blob_reader *r)
{
    atomic_store(&ps->transferred, blob_get_u64(r));
    atomic_store(&ps->lookup_max_ms, blob_get_u64(r));
    uint64_t n = blob_get_u64(r);
    bool ok = r->ok;
    pthread_mutex_lock(&ps->mu);
    for (uint64_t i = 0; ok && i < n; i++) {
        uint64_t klen = blob_get_u64(r);
        if (!r->ok || klen >= r->left) {
            ok = false;
            break;
        }
        group_stat *g = calloc(1, sizeof *g + klen + 1);
        if (!g) {
            ok = false;
            break;
        }
        blob_get(r, g->key, klen);
        g->key[klen] = 0;
        g->value = blob_get_u64(r);
        g->nsnaps = blob_get_u64(r);
        int err = 0;
        if (g->nsnaps < 1 || g->nsnaps > MINUTE_SNAPSHOTS ||
            !blob_get(r, g->snaps, g->nsnaps * sizeof g->snaps[0]) ||
            rmq_str_map_get(&ps->by_key, g->key) ||
            (!rmq_str_map_put(&ps->by_key, g->key, g, &err) && err)) {
            free(g);
            ok = false;
        }
    }
    pthread_mutex_unlock(&ps->mu);
    return ok && r->ok;
}
