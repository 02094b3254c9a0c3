/* consumer_filter_table.h — RocketMQ's ConsumerFilterManager (protocol.md
 * §6.6): per (topic, consumer group) the compiled SQL92 subscription with its
 * born/dead times and client version, and its consumerFilter.json form. */
#ifndef RMQ_FILTER_CONSUMER_FILTER_TABLE_H
#define RMQ_FILTER_CONSUMER_FILTER_TABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloom_filter.h"
#include "filter_engine.h"
#include "rmqhost/services/broker_service.h"

typedef struct consumer_filter_data {
    char *topic;
    char *group;
    char *expression;
    char *expression_type;
    int64_t born_time;      /* wall ms */
    int64_t dead_time;      /* 0 while alive; dead ⇔ dead_time >= born_time */
    int64_t client_version; /* subVersion */
    int bloom_bit_num;
    int bloom_k;
    int bloom_pos[BLOOM_MAX_K];
    struct rmq_filter_expr *compiled; /* NULL if a loaded expression no longer compiles */
} consumer_filter_data;

/* Thread-safe: events (EXEC/EVENT), the persist timer and admin/export
 * calls serialise on one mutex; no caller holds it across calls. */
typedef struct consumer_filter_table {
    pthread_mutex_t lock;
    consumer_filter_data *v;
    size_t n, cap;
    bloom_params bloom;
    rmq_fx_options opt;
    bool dirty; /* changed since the last to_json(…, clear_dirty) */
} consumer_filter_table;

/* What callers may look at without holding the lock. */
typedef struct consumer_filter_view {
    int64_t born_time, dead_time, client_version;
    bool dead;
    bool compiled;
    int bloom_bit_num, bloom_k, bloom_pos[BLOOM_MAX_K];
    char expression[512];
    char expression_type[32];
} consumer_filter_view;

void consumer_filter_table_init(consumer_filter_table *t, const bloom_params *bloom,
                                const rmq_fx_options *opt);
void consumer_filter_table_dispose(consumer_filter_table *t);

bool consumer_filter_is_dead(const consumer_filter_data *d);

/* ConsumerFilterManager.register(group, subList) at wall time `now`. */
void consumer_filter_table_register(consumer_filter_table *t, const char *group,
                                    const rmq_consumer_subscription *subs, size_t n, int64_t now);
/* ConsumerFilterManager.unRegister(group): alive entries die at `now`. */
void consumer_filter_table_unregister(consumer_filter_table *t, const char *group, int64_t now);
/* Remove entries dead for >= span ms. Returns how many were removed. */
size_t consumer_filter_table_clean(consumer_filter_table *t, int64_t now, int64_t span);

bool consumer_filter_table_get(consumer_filter_table *t, const char *topic, const char *group,
                               consumer_filter_view *out);
/* As get, for the store's PULL checks: version, death, type and a malloc'd
 * copy of the compiled expression (*compiled NULL when the entry has none).
 * 1 found, 0 absent, -1 out of memory. */
int consumer_filter_table_get_compiled(consumer_filter_table *t, const char *topic,
                                       const char *group, int64_t *client_version, bool *dead,
                                       char *type, size_t type_cap,
                                       struct rmq_filter_expr **compiled);
size_t consumer_filter_table_count(consumer_filter_table *t);

/* consumerFilter.json text (malloc'd, NULL on OOM). clear_dirty resets the
 * dirty flag under the same lock, so a change racing the write is kept. */
char *consumer_filter_table_to_json(consumer_filter_table *t, bool clear_dirty);

/* Replace the table's content with a consumerFilter.json text.
 * at_start = true applies Java's load rules: a file whose bloom parameters
 * differ from the current ones is discarded (returns 0, nothing loaded,
 * *discarded = true), and alive entries are taken as dead since
 * max(now - 30 s, bornTime) until their consumers heartbeat again.
 * at_start = false (hot reload) keeps times as they are.
 * Returns 0 or -1 (bad JSON: table unchanged, err set). */
int consumer_filter_table_load(consumer_filter_table *t, const char *text, size_t len,
                               bool at_start, int64_t now, bool *discarded, char *err,
                               size_t errlen);

#endif
