/* namesrv_plugin.h — the NameServer plugin instance shared by its glue files
 * (descriptor, request processors, housekeeping, persistence). */
#ifndef NAMESRV_PLUGIN_H
#define NAMESRV_PLUGIN_H

#include <rmqhost/rmqhost.h>

#include "namesrv_core.h"

#define NAMESRV_EXECUTOR "namesrv-write"
/* What one (topic, broker) costs with its share of the route cache
 * (namesrv_register_bench, tests/bench/cluster_storm.sh): the estimate of
 * what removals freed. */
#define NAMESRV_BYTES_PER_QUEUE_DATA 800u

typedef struct namesrv_plugin {
    rmq_plugin_ctx *ctx;
    const rmq_host_api *api;
    namesrv_core core;
    rmq_timer_id scan_timer;
    /* heap return (namesrv_housekeeping.c): after this many QueueData were
     * removed since the last return (0: never), under the core lock */
    uint64_t trim_after_removed;
    uint64_t trim_mark; /* core.routes.qd_removed at the last return */
} namesrv_plugin;

/* namesrv_processors.c */
int namesrv_register_processors(namesrv_plugin *ns);

/* namesrv_housekeeping.c: channel listener and expiry scan */
int namesrv_start_housekeeping(namesrv_plugin *ns);

/* namesrv_persistence.c: kvConfig.json and configStorePath */
int namesrv_load_kv(namesrv_plugin *ns);
int namesrv_persist_kv(namesrv_plugin *ns);     /* caller holds the core lock */
int namesrv_persist_config(namesrv_plugin *ns); /* caller holds the core lock */
void namesrv_load_stored_config(namesrv_plugin *ns);
int namesrv_make_parent_dirs(const char *path);

#endif
