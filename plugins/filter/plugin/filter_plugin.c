/* filter_plugin.c — the filter plugin's descriptor: settings (Java's names
 * where Java has one), init/fini, and hot-reload state transfer (consumer
 * filter data and the filter-server registry survive a reload). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_plugin.h"

static const rmq_setting_decl SETTINGS[] = {
    {"enablePropertyFilter", RMQ_SETTING_BOOL, "true",
     "accept SQL92 subscriptions (Java's broker default is false)", 0, 0},
    {"sql92Operators5x", RMQ_SETTING_BOOL, "false",
     "RocketMQ 5.x CONTAINS/STARTSWITH/ENDSWITH (changes the meaning of some selectors)", 0, 0},
    {"filterServerMaxIdleTimeMillis", RMQ_SETTING_INT, "30000",
     "a filter server not re-registered for longer than this is removed and disconnected", 1,
     86400000},
    {"filterServerScanIntervalMillis", RMQ_SETTING_INT, "10000", "filter-server expiry scan period",
     1, 3600000},
    {"filterDataCleanTimeSpan", RMQ_SETTING_INT, "86400000",
     "consumer filter data dead this long (ms) is purged", 0, 86400000LL * 365},
    {"consumerFilterPersistIntervalMillis", RMQ_SETTING_INT, "10000",
     "consumerFilter.json clean + write period", 100, 3600000},
    {"maxErrorRateOfBloomFilter", RMQ_SETTING_INT, "20", "bloom filter error rate, percent", 1, 99},
    {"expectConsumerNumUseFilter", RMQ_SETTING_INT, "32", "bloom filter expected consumers", 1,
     1000000},
    {"consumerFilterPath", RMQ_SETTING_STRING, "",
     "consumerFilter.json (empty: <state_dir>/<plugin name>/consumerFilter.json)", 0, 0},
    {NULL, RMQ_SETTING_STRING, NULL, NULL, 0, 0},
};

static filter_plugin *from_ctx(rmq_plugin_ctx *ctx)
{
    return rmq_ctx_userdata(ctx);
}

static int read_settings(filter_plugin *fp)
{
    const rmq_host_api *a = fp->api;
    rmq_plugin_ctx *c = fp->pctx;
    fp->enable_property_filter = a->setting_bool(c, "enablePropertyFilter");
    fp->opt.ops5x = a->setting_bool(c, "sql92Operators5x");
    fp->server_max_idle_ms = (uint64_t)a->setting_int(c, "filterServerMaxIdleTimeMillis");
    fp->server_scan_ms = (uint64_t)a->setting_int(c, "filterServerScanIntervalMillis");
    fp->clean_span_ms = a->setting_int(c, "filterDataCleanTimeSpan");
    fp->persist_ms = (uint64_t)a->setting_int(c, "consumerFilterPersistIntervalMillis");
    const char *path = a->setting_string(c, "consumerFilterPath");
    const char *state = a->state_dir(c);
    if (path && *path)
        snprintf(fp->filter_path, sizeof fp->filter_path, "%s", path);
    else
        snprintf(fp->filter_path, sizeof fp->filter_path, "%s/%s/consumerFilter.json",
                 state ? state : ".", a->plugin_name(c));
    bloom_params bloom;
    if (bloom_params_init(&bloom, (int)a->setting_int(c, "maxErrorRateOfBloomFilter"),
                          (int)a->setting_int(c, "expectConsumerNumUseFilter")) != 0) {
        a->log(c, RMQ_LOG_ERROR, "invalid bloom filter settings");
        return RMQ_ERANGE;
    }
    consumer_filter_table_init(&fp->filters, &bloom, &fp->opt);
    filter_server_table_init(&fp->servers);
    return 0;
}

static void destroy(filter_plugin *fp)
{
    consumer_filter_table_dispose(&fp->filters);
    filter_server_table_dispose(&fp->servers);
    free(fp);
}

static int filter_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    filter_plugin *fp = calloc(1, sizeof(*fp));
    if (!fp)
        return RMQ_ENOMEM;
    fp->pctx = ctx;
    fp->api = api;
    int rc = read_settings(fp);
    if (rc != 0) {
        free(fp);
        return rc;
    }
    api->set_userdata(ctx, fp);
    rc = filter_export_services(fp);
    if (rc == 0)
        rc = filter_register_server_processing(fp);
    if (rc == 0)
        rc = filter_consumer_sync_start(fp);
    if (rc != 0) {
        api->log(ctx, RMQ_LOG_ERROR, "filter init failed: %s", rmq_strerror(rc));
        api->set_userdata(ctx, NULL);
        destroy(fp);
        return rc;
    }
    api->log(ctx, RMQ_LOG_INFO, "filter ready: enablePropertyFilter=%s sql92Operators5x=%s, %s",
             fp->enable_property_filter ? "true" : "false", fp->opt.ops5x ? "true" : "false",
             fp->filter_path);
    return 0;
}

static void filter_fini(rmq_plugin_ctx *ctx)
{
    filter_plugin *fp = from_ctx(ctx);
    if (!fp)
        return;
    /* As Java persists at shutdown; after a hand-over the new generation owns the file. */
    if (!fp->exported)
        filter_consumer_persist(fp);
    fp->api->set_userdata(ctx, NULL);
    destroy(fp);
}

/* Blob: {"consumerFilter": <consumerFilter.json object>,
 *        "filterServers": [{"channel", "addr", "lastUpdate"}]}; channel ids
 * and monotonic times stay valid because the host process is the same. */
static int filter_export_state(rmq_plugin_ctx *ctx, void **blob, size_t *len)
{
    filter_plugin *fp = from_ctx(ctx);
    if (!fp)
        return RMQ_EINVAL;
    char *cf = consumer_filter_table_to_json(&fp->filters, false);
    json_t *root = json_object();
    json_t *cfj = cf ? json_loads(cf, 0, NULL) : NULL;
    free(cf);
    json_object_set_new(root, "consumerFilter", cfj ? cfj : json_object());
    json_t *servers = json_array();
    size_t n = 0;
    filter_server_entry *snap = filter_server_table_snapshot(&fp->servers, &n);
    for (size_t i = 0; snap && i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "channel", json_integer((json_int_t)snap[i].channel));
        json_object_set_new(o, "addr", json_string(snap[i].addr));
        json_object_set_new(o, "lastUpdate", json_integer((json_int_t)snap[i].last_update_ms));
        json_array_append_new(servers, o);
    }
    free(snap);
    json_object_set_new(root, "filterServers", servers);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text)
        return RMQ_ENOMEM;
    *blob = text;
    *len = strlen(text);
    fp->exported = true;
    return 0;
}

static int filter_import_state(rmq_plugin_ctx *ctx, uint32_t version, const void *blob, size_t len)
{
    filter_plugin *fp = from_ctx(ctx);
    if (!fp || version != FILTER_STATE_VERSION)
        return RMQ_EINVAL;
    json_t *root = json_loadb(blob, len, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return RMQ_EINVAL;
    }
    int rc = 0;
    char *cf = json_dumps(json_object_get(root, "consumerFilter"), JSON_COMPACT);
    char err[256];
    if (!cf ||
        consumer_filter_table_load(&fp->filters, cf, strlen(cf), false,
                                   (int64_t)fp->api->now_wall_ms(), NULL, err, sizeof err) != 0)
        rc = RMQ_EINVAL;
    free(cf);
    size_t i, servers = 0;
    json_t *o;
    json_array_foreach(json_object_get(root, "filterServers"), i, o)
    {
        const char *addr = json_string_value(json_object_get(o, "addr"));
        if (!addr)
            continue;
        servers++;
        filter_server_table_register(
            &fp->servers, (uint64_t)json_integer_value(json_object_get(o, "channel")), addr,
            (uint64_t)json_integer_value(json_object_get(o, "lastUpdate")));
    }
    json_decref(root);
    if (rc == 0)
        fp->api->log(ctx, RMQ_LOG_INFO, "imported %zu consumer filter entries, %zu filter servers",
                     consumer_filter_table_count(&fp->filters), servers);
    return rc;
}

RMQ_PLUGIN(.state_version = FILTER_STATE_VERSION, .name = "filter", .version = "1.0.0",
           .description = "filter-server registry and TAG/SQL92 subscription expressions",
           .settings = SETTINGS, .init = filter_init, .fini = filter_fini,
           .export_state = filter_export_state, .import_state = filter_import_state);
