/* namesrv_plugin.h — the NameServer plugin instance shared by its glue files
 * (descriptor, request processors, housekeeping, persistence). */
#ifndef NAMESRV_PLUGIN_H
#define NAMESRV_PLUGIN_H

#include <rmqhost/rmqhost.h>

#include "namesrv_core.h"

#define NAMESRV_EXECUTOR "namesrv-write"

typedef struct namesrv_plugin {
    rmq_plugin_ctx *ctx;
    const rmq_host_api *api;
    namesrv_core core;
    rmq_timer_id scan_timer;
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
