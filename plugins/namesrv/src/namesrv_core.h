/* namesrv_core.h — one NameServer instance without the host: route table,
 * KV store, configuration and the published route cache, with the writer
 * mutex that serialises every change. The plugin glue and the unit tests
 * both drive it. */
#ifndef NAMESRV_NAMESRV_CORE_H
#define NAMESRV_NAMESRV_CORE_H

#include <pthread.h>

#include "kv_store.h"
#include "namesrv_config.h"
#include "route_cache.h"
#include "route_table.h"

typedef struct namesrv_core {
    pthread_mutex_t lock; /* writers and non-hot readers */
    route_table routes;
    kv_store kv;
    route_cache cache; /* read lock-free by GET_ROUTEINFO_BY_TOPIC */
    namesrv_config cfg;
} namesrv_core;

/* Takes ownership of *cfg (zeroed on return). 0 or -1. */
int namesrv_core_init(namesrv_core *core, namesrv_config *cfg);
void namesrv_core_destroy(namesrv_core *core);

void namesrv_core_lock(namesrv_core *core);
void namesrv_core_unlock(namesrv_core *core);

/* Caller holds the lock: re-encodes every topic whose route changed and
 * publishes (or withdraws) it in the cache. 0 or -1 (OOM: some stay stale). */
int namesrv_core_publish(namesrv_core *core);

/* Caller holds the lock. The orderTopicConf value for a topic, or NULL. */
const char *namesrv_core_order_conf(const namesrv_core *core, const char *topic);

/* Export/import of the whole state (hot reload). Liveness is stored as age so
 * the importer can rebase it on its own clock. Caller holds the lock. */
char *namesrv_core_export(const namesrv_core *core, uint64_t now_ms, size_t *len);
int namesrv_core_import(namesrv_core *core, const char *blob, size_t len, uint64_t now_ms,
                        char *err, size_t errlen);

#endif
