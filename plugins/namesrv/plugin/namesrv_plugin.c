/* namesrv_plugin.c — the NameServer plugin descriptor: settings with Java's
 * key names, init/fini and hot-reload state transfer. Owns the plugin
 * instance's lifetime; request handling lives in namesrv_processors.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namesrv_plugin.h"

#define NAMESRV_STATE_VERSION 1

/* fini/export_state/import_state receive only the ctx: the instance is
 * reached through the SDK's ctx accessor, never a file-scope variable. */
static namesrv_plugin *from_ctx(rmq_plugin_ctx *ctx)
{
    return rmq_ctx_userdata(ctx);
}

static const rmq_setting_decl SETTINGS[] = {
    {"rocketmqHome", RMQ_SETTING_STRING, "", "RocketMQ home (empty: $ROCKETMQ_HOME)", 0, 0},
    {"kvConfigPath", RMQ_SETTING_STRING, "", "KV file (empty: <state_dir>/namesrv/kvConfig.json)",
     0, 0},
    {"configStorePath", RMQ_SETTING_STRING, "",
     "run-time config file (empty: <state_dir>/namesrv/namesrv.properties)", 0, 0},
    {"productEnvName", RMQ_SETTING_STRING, "center", "clusterTest only (unsupported)", 0, 0},
    {"clusterTest", RMQ_SETTING_BOOL, "false", "unsupported: true is refused", 0, 0},
    {"orderMessageEnable", RMQ_SETTING_BOOL, "false", "add orderTopicConf to routes", 0, 0},
    {"configBlackList", RMQ_SETTING_STRING, "configBlackList;configStorePath;kvConfigPath",
     "keys UPDATE_NAMESRV_CONFIG refuses with Java's remark", 0, 0},
    {"returnOrderTopicConfigToBroker", RMQ_SETTING_BOOL, "true",
     "REGISTER_BROKER answers carry ORDER_TOPIC_CONFIG", 0, 0},
    {"enableAllTopicList", RMQ_SETTING_BOOL, "true", "serve code 206", 0, 0},
    {"enableTopicList", RMQ_SETTING_BOOL, "true", "serve codes 224, 311-313", 0, 0},
    {"scanNotActiveBrokerInterval", RMQ_SETTING_INT, "10000", "expiry scan period, ms", 1,
     86400000},
    {"brokerChannelExpiredTime", RMQ_SETTING_INT, "120000",
     "a broker not heard from for this long (ms) is removed", 1, 86400000LL * 30},
    {"writeExecutorThreads", RMQ_SETTING_INT, "2", "threads of the namesrv-write executor", 1, 64},
    {"writeExecutorQueueCapacity", RMQ_SETTING_INT, "10000", "queue of the namesrv-write executor",
     1, 1000000},
    {"heapTrimAfterRemovalMb", RMQ_SETTING_INT, "64",
     "after removals that freed about this many MiB (800 B per topic and broker), the next expiry "
     "scan returns free heap to the OS; 0 = never",
     0, 1048576},
    {NULL, RMQ_SETTING_STRING, NULL, NULL, 0, 0},
};

static char *join_path(const char *dir, const char *rel)
{
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, rel);
    return p;
}

static int read_settings(rmq_plugin_ctx *ctx, const rmq_host_api *api, namesrv_config *cfg)
{
    namesrv_config_defaults(cfg);
    const char *state = api->state_dir(ctx);
    const char *home = api->setting_string(ctx, "rocketmqHome");
    if (!home || !*home)
        home = getenv("ROCKETMQ_HOME");
    const char *kv = api->setting_string(ctx, "kvConfigPath");
    const char *store = api->setting_string(ctx, "configStorePath");
    char *kv_default = join_path(state ? state : ".", "namesrv/kvConfig.json");
    char *store_default = join_path(state ? state : ".", "namesrv/namesrv.properties");
    int rc = 0;
    rc |= namesrv_config_set_str(&cfg->rocketmq_home, home && *home ? home : NULL);
    rc |= namesrv_config_set_str(&cfg->kv_config_path, kv && *kv ? kv : kv_default);
    rc |= namesrv_config_set_str(&cfg->config_store_path, store && *store ? store : store_default);
    rc |=
        namesrv_config_set_str(&cfg->product_env_name, api->setting_string(ctx, "productEnvName"));
    rc |= namesrv_config_set_str(&cfg->config_black_list,
                                 api->setting_string(ctx, "configBlackList"));
    free(kv_default);
    free(store_default);
    cfg->cluster_test = api->setting_bool(ctx, "clusterTest");
    cfg->order_message_enable = api->setting_bool(ctx, "orderMessageEnable");
    cfg->return_order_topic_config_to_broker =
        api->setting_bool(ctx, "returnOrderTopicConfigToBroker");
    cfg->enable_all_topic_list = api->setting_bool(ctx, "enableAllTopicList");
    cfg->enable_topic_list = api->setting_bool(ctx, "enableTopicList");
    cfg->scan_not_active_broker_interval_ms = api->setting_int(ctx, "scanNotActiveBrokerInterval");
    cfg->broker_channel_expired_ms = api->setting_int(ctx, "brokerChannelExpiredTime");
    char host[128];
    int port;
    if (api->server_address(ctx, host, sizeof(host), &port) == 0 && port > 0)
        cfg->listen_port = port;
    return rc == 0 ? 0 : RMQ_ENOMEM;
}

static int namesrv_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    namesrv_config cfg;
    int rc = read_settings(ctx, api, &cfg);
    if (rc != 0) {
        namesrv_config_free(&cfg);
        return rc;
    }
    if (cfg.cluster_test) {
        api->log(ctx, RMQ_LOG_ERROR,
                 "clusterTest=true is not supported by this NameServer (protocol.md §4.10); "
                 "set clusterTest = false");
        namesrv_config_free(&cfg);
        return RMQ_EINVAL;
    }
    namesrv_plugin *ns = calloc(1, sizeof(*ns));
    if (!ns) {
        namesrv_config_free(&cfg);
        return RMQ_ENOMEM;
    }
    ns->ctx = ctx;
    ns->api = api;
    ns->trim_after_removed = (uint64_t)api->setting_int(ctx, "heapTrimAfterRemovalMb") *
                             (1024u * 1024u) / NAMESRV_BYTES_PER_QUEUE_DATA;
    if (namesrv_core_init(&ns->core, &cfg) != 0) {
        namesrv_config_free(&cfg);
        free(ns);
        return RMQ_ENOMEM;
    }
    namesrv_load_stored_config(ns);
    rc = namesrv_load_kv(ns);
    if (rc == 0)
        rc = api->declare_executor(ctx, NAMESRV_EXECUTOR,
                                   (int)api->setting_int(ctx, "writeExecutorThreads"),
                                   (int)api->setting_int(ctx, "writeExecutorQueueCapacity"));
    if (rc == 0)
        rc = namesrv_register_processors(ns);
    if (rc == 0)
        rc = namesrv_start_housekeeping(ns);
    if (rc != 0) {
        namesrv_core_destroy(&ns->core);
        free(ns);
        return rc;
    }
    api->set_userdata(ctx, ns);
    api->log(
        ctx, RMQ_LOG_INFO, "NameServer ready (kvConfigPath=%s, scan every %lld ms, expiry %lld ms)",
        ns->core.cfg.kv_config_path, (long long)ns->core.cfg.scan_not_active_broker_interval_ms,
        (long long)ns->core.cfg.broker_channel_expired_ms);
    return 0;
}

static void namesrv_fini(rmq_plugin_ctx *ctx)
{
    namesrv_plugin *ns = from_ctx(ctx);
    if (!ns)
        return;
    ns->api->cancel_timer(ctx, ns->scan_timer);
    /* route_cache_destroy waits for RCU readers and queued reclamation, so no
     * callback into this .so runs after fini */
    namesrv_core_destroy(&ns->core);
    ns->api->set_userdata(ctx, NULL);
    free(ns);
}

static int namesrv_export_state(rmq_plugin_ctx *ctx, void **blob, size_t *len)
{
    namesrv_plugin *ns = from_ctx(ctx);
    if (!ns)
        return RMQ_EINVAL;
    namesrv_core_lock(&ns->core);
    char *b = namesrv_core_export(&ns->core, ns->api->now_monotonic_ms(), len);
    namesrv_core_unlock(&ns->core);
    if (!b)
        return RMQ_ENOMEM;
    *blob = b;
    return 0;
}

static int namesrv_import_state(rmq_plugin_ctx *ctx, uint32_t version, const void *blob, size_t len)
{
    namesrv_plugin *ns = from_ctx(ctx);
    if (!ns || version != NAMESRV_STATE_VERSION)
        return RMQ_EINVAL;
    char err[256] = "";
    namesrv_core_lock(&ns->core);
    int rc =
        namesrv_core_import(&ns->core, blob, len, ns->api->now_monotonic_ms(), err, sizeof(err));
    if (namesrv_core_publish(&ns->core) != 0)
        rc = -1;
    namesrv_core_unlock(&ns->core);
    if (rc != 0) {
        ns->api->log(ctx, RMQ_LOG_ERROR, "importing NameServer state failed: %s", err);
        return RMQ_EINVAL;
    }
    ns->api->log(ctx, RMQ_LOG_INFO, "imported NameServer state (%zu bytes)", len);
    return 0;
}

RMQ_PLUGIN(.state_version = NAMESRV_STATE_VERSION, .name = "namesrv", .version = "1.0.0",
           .description = "Apache RocketMQ NameServer (4.9.8 semantics, 5.3.3 codes)",
           .settings = SETTINGS, .init = namesrv_init, .fini = namesrv_fini,
           .export_state = namesrv_export_state, .import_state = namesrv_import_state);
