/* namesrv_core.c — ties the route table, KV store and route cache together:
 * publishing re-encoded routes after each change. Owns the writer mutex;
 * must not know about the host API (requests, channels, files). */
#include "namesrv_core.h"

#include <stdlib.h>
#include <string.h>

#include "route_assembler.h"

int namesrv_core_init(namesrv_core *core, namesrv_config *cfg)
{
    memset(core, 0, sizeof(*core));
    if (pthread_mutex_init(&core->lock, NULL) != 0)
        return -1;
    core->cfg = *cfg;
    memset(cfg, 0, sizeof(*cfg));
    route_table_init(&core->routes, core->cfg.broker_channel_expired_ms);
    kv_store_init(&core->kv);
    if (route_cache_init(&core->cache) != 0) {
        route_table_destroy(&core->routes);
        pthread_mutex_destroy(&core->lock);
        return -1;
    }
    return 0;
}

void namesrv_core_destroy(namesrv_core *core)
{
    route_cache_destroy(&core->cache);
    route_table_destroy(&core->routes);
    kv_store_destroy(&core->kv);
    namesrv_config_free(&core->cfg);
    pthread_mutex_destroy(&core->lock);
}

void namesrv_core_lock(namesrv_core *core)
{
    pthread_mutex_lock(&core->lock);
}

void namesrv_core_unlock(namesrv_core *core)
{
    pthread_mutex_unlock(&core->lock);
}

const char *namesrv_core_order_conf(const namesrv_core *core, const char *topic)
{
    if (!core->cfg.order_message_enable)
        return NULL;
    return kv_store_get(&core->kv, KV_NAMESPACE_ORDER_TOPIC_CONFIG, topic);
}

static int publish_one(namesrv_core *core, const char *topic, route_assembler *as)
{
    const topic_entry *te = route_table_topic(&core->routes, topic);
    bool absent = true;
    route_entry *e =
        te ? route_assembler_build(as, te, namesrv_core_order_conf(core, topic), &absent) : NULL;
    if (absent) {
        route_cache_remove(&core->cache, topic);
        return 0;
    }
    if (!e)
        return -1;
    return route_cache_publish(&core->cache, e);
}

/* Full rebuild: withdraws cached topics that no longer exist, then re-encodes
 * every topic of the table. */
static int publish_all(namesrv_core *core, route_assembler *as)
{
    int rc = 0;
    route_slots *sl = core->cache.table;
    size_t cap = sl->mask + 1, n = 0;
    char **gone = malloc(cap * sizeof(*gone));
    for (size_t i = 0; gone && i < cap; i++) {
        route_entry *e = sl->slot[i];
        if (e && e != core->cache.tombstone && !route_table_topic(&core->routes, e->topic))
            gone[n++] = strdup(e->topic);
    }
    for (size_t i = 0; i < n; i++) {
        if (gone[i])
            route_cache_remove(&core->cache, gone[i]);
        free(gone[i]);
    }
    free(gone);
    rmq_str_map_iter it;
    const char *k;
    rmq_str_map_iter_init(&it, &core->routes.topics);
    while (rmq_str_map_iter_next(&it, &k, NULL))
        if (publish_one(core, k, as) != 0)
            rc = -1;
    return rc;
}

int namesrv_core_publish(namesrv_core *core)
{
    size_t n;
    bool all;
    char **dirty = route_table_take_dirty(&core->routes, &n, &all);
    int rc = 0;
    route_assembler as;
    route_assembler_init(&as, &core->routes);
    as.arena = core->cache.arena;
    if (all) {
        rc = publish_all(core, &as);
    } else {
        for (size_t i = 0; i < n; i++)
            if (publish_one(core, dirty[i], &as) != 0)
                rc = -1;
    }
    route_assembler_free(&as);
    for (size_t i = 0; i < n; i++)
        free(dirty[i]);
    free(dirty);
    return rc;
}
