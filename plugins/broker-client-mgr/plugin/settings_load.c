/* settings_load.c — owns the plugin's settings declaration (Java BrokerConfig
 * names and defaults) and turning them into bcm_settings and the declared
 * topics. Must not touch the network or files. */
#include "broker_context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

const rmq_setting_decl bcm_setting_decls[] = {
    {"brokerClusterName", RMQ_SETTING_STRING, "DefaultCluster", "cluster this broker registers in",
     0, 0},
    {"brokerName", RMQ_SETTING_STRING, NULL, "broker name (default: host name, as Java)", 0, 0},
    {"brokerId", RMQ_SETTING_INT, "0", "0 = master", 0, 1000000},
    {"brokerIP1", RMQ_SETTING_STRING, NULL, "advertised IP (default: the bound server's address)",
     0, 0},
    {"haServerAddr", RMQ_SETTING_STRING, NULL,
     "ip:port sent as haServerAddr (default brokerIP1:the store's HA port)", 0, 0},
    {"namesrvAddr", RMQ_SETTING_STRING, "127.0.0.1:9876", "NameServers, ';'-separated", 0, 0},
    {"registerNameServerPeriod", RMQ_SETTING_INT, "30000", "ms, clamped to 10000..60000", 0, 0},
    {"registerBrokerTimeoutMills", RMQ_SETTING_INT, "6000",
     "per-NameServer registration timeout, ms", 100, 600000},
    {"compressedRegister", RMQ_SETTING_BOOL, "false", "zlib RegisterBrokerBody", 0, 0},
    {"brokerPermission", RMQ_SETTING_INT, "6", "PermName bits applied to registered topics", 0, 15},
    {"enableSplitRegistration", RMQ_SETTING_BOOL, "false", "send the topic table in chunks", 0, 0},
    {"splitRegistrationSize", RMQ_SETTING_INT, "800", "topics per chunk", 1, 1000000},
    {"autoCreateTopicEnable", RMQ_SETTING_BOOL, "true", "register TBW102", 0, 0},
    {"defaultTopicQueueNums", RMQ_SETTING_INT, "8", "queues of TBW102 and declared topics", 1,
     1024},
    {"clusterTopicEnable", RMQ_SETTING_BOOL, "true", "cluster-named topic readable/writable", 0, 0},
    {"brokerTopicEnable", RMQ_SETTING_BOOL, "true", "broker-named topic readable/writable", 0, 0},
    {"traceTopicEnable", RMQ_SETTING_BOOL, "false", "create msgTraceTopicName", 0, 0},
    {"msgTraceTopicName", RMQ_SETTING_STRING, "RMQ_SYS_TRACE_TOPIC", "trace topic name", 0, 0},
    {"topics", RMQ_SETTING_STRING, NULL, "declared topics: 'Name[:queues[:perm]]' joined by ';'", 0,
     0},
    {"autoCreateSubscriptionGroup", RMQ_SETTING_BOOL, "true", "create groups on first heartbeat", 0,
     0},
    {"notifyConsumerIdsChangedEnable", RMQ_SETTING_BOOL, "true", "send NOTIFY_CONSUMER_IDS_CHANGED",
     0, 0},
    {"channelExpiredTimeout", RMQ_SETTING_INT, "120000",
     "ms without heartbeat before a client expires", 100, 86400000},
    {"clientHousekeepingInterval", RMQ_SETTING_INT, "10000", "ms between client expiry scans", 10,
     3600000},
    {"flushConsumerOffsetInterval", RMQ_SETTING_INT, "5000",
     "ms between consumerOffset.json flushes", 10, 3600000},
    {"rebalanceLockMaxLiveTime", RMQ_SETTING_INT, "60000", "ms a queue lock lives without refresh",
     10, 86400000},
    {"storePathRootDir", RMQ_SETTING_STRING, NULL,
     "files go to <dir>/config (default <state_dir>/<plugin>)", 0, 0},
    {"answerStorageCodes", RMQ_SETTING_BOOL, "true",
     "answer pull/offset/send codes as a broker without a store", 0, 0},
    {"pullSuspendMaxMillis", RMQ_SETTING_INT, "30000", "upper bound of a held PULL_MESSAGE", 0,
     600000},
    {"pullHoldMaxRequests", RMQ_SETTING_INT, "10000", "held pulls beyond this are answered at once",
     0, 10000000},
    {"pullHoldCheckInterval", RMQ_SETTING_INT, "100", "ms between checks of held pulls", 10, 60000},
    {"unregisterBrokerTimeoutMills", RMQ_SETTING_INT, "3000",
     "UNREGISTER_BROKER timeout at shutdown", 100, 60000},
    {"callClientTimeoutMillis", RMQ_SETTING_INT, "10000",
     "relay of 307/309 to a client, ms (Java: fixed 10000)", 100, 600000},
    {"heartbeatThreadPoolNums", RMQ_SETTING_INT, "2", "HEART_BEAT executor threads", 1, 64},
    {"heartbeatThreadPoolQueueCapacity", RMQ_SETTING_INT, "50000", "HEART_BEAT queue", 1, 10000000},
    {"brokerFastFailureEnable", RMQ_SETTING_BOOL, "true",
     "answer HEART_BEATs that waited too long in the queue SYSTEM_BUSY [TIMEOUT_CLEAN_QUEUE]", 0,
     0},
    {"waitTimeMillsInHeartbeatQueue", RMQ_SETTING_INT, "31000",
     "longest wait of a HEART_BEAT in its queue before the fast failure, ms", 1, 3600000},
    {"clientManageThreadPoolNums", RMQ_SETTING_INT, "2",
     "UNREGISTER_CLIENT/CHECK_CLIENT_CONFIG threads", 1, 64},
    {"consumerManageThreadPoolNums", RMQ_SETTING_INT, "2", "consumer list/offset threads", 1, 64},
    {"adminBrokerThreadPoolNums", RMQ_SETTING_INT, "2", "admin codes and relays", 1, 64},
    {"topicsJournalCompactBytes", RMQ_SETTING_INT, "4194304",
     "topics.journal size past which topics.json is rewritten (at least the last topics.json's "
     "size)",
     4096, 1073741824},
    {"heapTrimAfterTopicDeletions", RMQ_SETTING_INT, "1000",
     "return freed heap to the OS after this many topic deletions (0 = never)", 0, 100000000},
    {"configBlackList", RMQ_SETTING_STRING, "configBlackList;brokerConfigPath",
     "settings UPDATE_BROKER_CONFIG may not change, ';'-separated", 0, 0},
    /* ACL 1.0 credentials for calls to NameServers (request_signing.c) */
    {"accessKey", RMQ_SETTING_STRING, "", "sign NameServer calls with this AccessKey", 0, 0},
    {"secretKey", RMQ_SETTING_STRING, "", "its secret (never shown by rmqhostctl config)", 0, 0},
    {NULL, 0, NULL, NULL, 0, 0},
};

/* A setting's value: what UPDATE_BROKER_CONFIG persisted, else conf.d's. */
static const char *s_str(bcm_ctx *c, const char *name)
{
    const char *o = bcm_setting_text(c, name);
    return o ? o : c->api->setting_string(c->pctx, name);
}

static int64_t s_int(bcm_ctx *c, const char *name)
{
    const char *o = bcm_setting_text(c, name);
    return o ? strtoll(o, NULL, 10) : c->api->setting_int(c->pctx, name);
}

static bool s_bool(bcm_ctx *c, const char *name)
{
    const char *o = bcm_setting_text(c, name);
    return o ? strcasecmp(o, "true") == 0 : c->api->setting_bool(c->pctx, name);
}

static void copy_setting(bcm_ctx *c, const char *name, char *dst, size_t len)
{
    const char *v = s_str(c, name);
    snprintf(dst, len, "%s", v ? v : "");
}

uint64_t bcm_heartbeat_queue_wait_ms(bcm_ctx *c)
{
    return s_bool(c, "brokerFastFailureEnable")
               ? (uint64_t)s_int(c, "waitTimeMillsInHeartbeatQueue")
               : 0;
}

int bcm_settings_load(bcm_ctx *c)
{
    const rmq_host_api *a = c->api;
    bcm_settings *s = &c->s;
    /* the directory of the files, broker.properties included: conf.d's only */
    const char *root = a->setting_string(c->pctx, "storePathRootDir");
    if (root && *root)
        snprintf(c->config_dir, sizeof c->config_dir, "%s/config", root);
    else
        snprintf(c->config_dir, sizeof c->config_dir, "%s/%s", a->state_dir(c->pctx),
                 a->plugin_name(c->pctx));
    int orc = bcm_config_overrides_load(c);
    if (orc != 0)
        return orc;
    copy_setting(c, "brokerClusterName", s->cluster_name, sizeof s->cluster_name);
    copy_setting(c, "brokerName", s->broker_name, sizeof s->broker_name);
    if (!s->broker_name[0] && gethostname(s->broker_name, sizeof s->broker_name - 1) != 0)
        snprintf(s->broker_name, sizeof s->broker_name, "broker-a");
    s->broker_id = s_int(c, "brokerId");
    copy_setting(c, "brokerIP1", s->broker_ip1, sizeof s->broker_ip1);
    copy_setting(c, "haServerAddr", s->ha_server_addr, sizeof s->ha_server_addr);
    int64_t period = s_int(c, "registerNameServerPeriod");
    s->register_period_ms = period < 10000 ? 10000 : period > 60000 ? 60000 : period;
    s->register_timeout_ms = s_int(c, "registerBrokerTimeoutMills");
    s->compressed_register = s_bool(c, "compressedRegister");
    s->broker_permission = (int)s_int(c, "brokerPermission");
    s->enable_split_registration = s_bool(c, "enableSplitRegistration");
    s->split_registration_size = s_int(c, "splitRegistrationSize");
    s->auto_create_subscription_group = s_bool(c, "autoCreateSubscriptionGroup");
    s->notify_consumer_ids_changed_enable = s_bool(c, "notifyConsumerIdsChangedEnable");
    s->channel_expired_timeout_ms = s_int(c, "channelExpiredTimeout");
    s->housekeeping_period_ms = s_int(c, "clientHousekeepingInterval");
    s->flush_offset_interval_ms = s_int(c, "flushConsumerOffsetInterval");
    s->lock_max_live_ms = s_int(c, "rebalanceLockMaxLiveTime");
    s->answer_storage_codes = s_bool(c, "answerStorageCodes");
    s->pull_suspend_max_ms = s_int(c, "pullSuspendMaxMillis");
    s->pull_hold_max_requests = s_int(c, "pullHoldMaxRequests");
    s->pull_hold_check_ms = s_int(c, "pullHoldCheckInterval");
    s->unregister_timeout_ms = s_int(c, "unregisterBrokerTimeoutMills");
    s->call_client_timeout_ms = s_int(c, "callClientTimeoutMillis");

    char host[64] = "";
    int port = 0;
    if (a->server_address(c->pctx, host, sizeof host, &port) != 0) {
        a->log(c->pctx, RMQ_LOG_ERROR, "broker-client-mgr needs a server (set server = ...)");
        return RMQ_EINVAL;
    }
    s->auto_create_topic_enable = a->setting_bool(c->pctx, "autoCreateTopicEnable");
    s->journal_compact_bytes = a->setting_int(c->pctx, "topicsJournalCompactBytes");
    s->heap_trim_after_deletions = a->setting_int(c->pctx, "heapTrimAfterTopicDeletions");
    s->auto_create_topic_enable = s_bool(c, "autoCreateTopicEnable");
    snprintf(s->advertised_ip, sizeof s->advertised_ip, "%s",
             s->broker_ip1[0] ? s->broker_ip1 : host);
    s->listen_port = port;
    snprintf(c->broker_addr, sizeof c->broker_addr, "%s:%d",
             s->broker_ip1[0] ? s->broker_ip1 : host, port);
    if (s->ha_server_addr[0])
        snprintf(c->ha_addr, sizeof c->ha_addr, "%s", s->ha_server_addr);
    else
        snprintf(c->ha_addr, sizeof c->ha_addr, "%s:%d", s->broker_ip1[0] ? s->broker_ip1 : host,
                 port + 1);

    bcm_system_topic_opts o = {
        .cluster_name = s->cluster_name,
        .broker_name = s->broker_name,
        .auto_create_topic_enable = s_bool(c, "autoCreateTopicEnable"),
        .default_topic_queue_nums = (int)s_int(c, "defaultTopicQueueNums"),
        .cluster_topic_enable = s_bool(c, "clusterTopicEnable"),
        .broker_topic_enable = s_bool(c, "brokerTopicEnable"),
        .trace_topic_enable = s_bool(c, "traceTopicEnable"),
        .trace_topic_name = s_str(c, "msgTraceTopicName"),
    };
    bcm_topic_table_add_system(&c->topics, &o);

    return 0;
}

int bcm_settings_topics(bcm_ctx *c)
{
    const char *spec = s_str(c, "topics");
    if (!spec || !*spec)
        return 0;
    int dflt = (int)s_int(c, "defaultTopicQueueNums");
    char *copy = strdup(spec), *save = NULL;
    if (!copy)
        return RMQ_ENOMEM;
    for (char *tok = strtok_r(copy, ";, ", &save); tok; tok = strtok_r(NULL, ";, ", &save)) {
        char *q = strchr(tok, ':');
        int queues = dflt, perm = 6;
        if (q) {
            *q++ = '\0';
            queues = atoi(q);
            char *p = strchr(q, ':');
            if (p)
                perm = atoi(p + 1);
        }
        if (!*tok || queues <= 0) {
            c->api->log(c->pctx, RMQ_LOG_ERROR, "setting topics: bad entry '%s'", tok);
            free(copy);
            return RMQ_EINVAL;
        }
        /* declared topics are part of the configuration: they do not bump
         * the persisted DataVersion unless they are new */
        if (!bcm_topic_table_has(&c->topics, tok))
            bcm_topic_table_put(&c->topics,
                                bcm_topic_config_new(tok, queues, queues, perm, 0, false, NULL),
                                c->api->now_wall_ms());
    }
    free(copy);
    return 0;
}
