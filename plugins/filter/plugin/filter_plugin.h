/* filter_plugin.h — one filter plugin generation's state, shared by the
 * plugin's glue files. Everything lives here (no file-scope state). */
#ifndef RMQ_FILTER_PLUGIN_H
#define RMQ_FILTER_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "consumer_filter_table.h"
#include "filter_engine.h"
#include "filter_server_table.h"
#include "rmqhost/rmqhost.h"
#include "rmqhost/services/broker_service.h"
#include "rmqhost/services/filter_service.h"

#define FILTER_REGISTER_FILTER_SERVER 301
#define FILTER_STATE_VERSION 1
#define FILTER_PERSIST_EXECUTOR "filter-persist"

typedef struct filter_plugin {
    rmq_plugin_ctx *pctx;
    const rmq_host_api *api;

    /* settings */
    rmq_fx_options opt;
    bool enable_property_filter;
    uint64_t server_max_idle_ms;
    uint64_t server_scan_ms;
    int64_t clean_span_ms;
    uint64_t persist_ms;
    char filter_path[1024]; /* consumerFilter.json */

    filter_server_table servers;
    consumer_filter_table filters;
    bool exported; /* state handed to a new generation: fini must not persist */

    rmq_filter_expr_service expr_svc;
    rmq_filter_servers_service servers_svc;
} filter_plugin;

/* filter_server_processor.c */
int filter_register_server_processing(filter_plugin *fp);

/* consumer_filter_sync.c */
int filter_consumer_sync_start(filter_plugin *fp);
int filter_consumer_persist(filter_plugin *fp);

/* filter_services.c */
int filter_export_services(filter_plugin *fp);

#endif
