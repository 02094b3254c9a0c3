/* store_probe_plugin.c — a test fixture standing where a store plugin would:
 * it calls every entry of "broker.meta" on request (code 7201), records the
 * "broker.topic_deleted" events (7202), optionally exports a fake
 * "store.queues" whose figures come from its settings, and optionally takes
 * over storage codes 10 and 30 from broker-client-mgr's fallback stubs.
 * Test-only; codes 7201-7202 are used by no RocketMQ role. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmqhost/rmqhost.h"
#include "rmqhost/services/broker_meta_service.h"
#include "rmqhost/services/store_service.h"

enum { CODE_META = 7201, CODE_DELETED = 7202 };

typedef struct probe {
    const rmq_host_api *api;
    rmq_plugin_ctx *ctx;
    pthread_mutex_t mu;
    char deleted[4096]; /* "topic\n" per event */
    rmq_store_queues_service store;
    /* "topic/queueId/maxOffset/lastStoreTime;..." from setting queueTable */
    char table[2048];
    int64_t min_offset;      /* for topics starting with "Old" */
    bool in_disk_for_disk_t; /* topics starting with "Disk" */
} probe;

static const rmq_setting_decl probe_settings[] = {
    {"exportStore", RMQ_SETTING_BOOL, "false", "export a fake store.queues", 0, 0},
    {"takeStorageCodes", RMQ_SETTING_BOOL, "false", "register 10 and 30 plainly", 0, 0},
    {"queueTable", RMQ_SETTING_STRING, NULL, "topic/queueId/maxOffset/lastStoreTime;...", 0, 0},
    {"oldMinOffset", RMQ_SETTING_INT, "5", "min offset of topics named Old*", 0, 1000000},
    {NULL, 0, NULL, NULL, 0, 0},
};

/* The queue's entry of queueTable: max offset and the store time of its
 * last message, or false. */
static bool table_entry(const probe *p, const char *topic, int32_t q, int64_t *max, int64_t *ts)
{
    char copy[2048], *save = NULL;
    snprintf(copy, sizeof copy, "%s", p->table);
    for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        char t[256];
        long long qq, mm, tt;
        if (sscanf(tok, "%255[^/]/%lld/%lld/%lld", t, &qq, &mm, &tt) == 4 &&
            strcmp(t, topic) == 0 && qq == q) {
            *max = mm;
            *ts = tt;
            return true;
        }
    }
    return false;
}

static int64_t st_max(void *ud, const char *topic, int32_t q)
{
    int64_t m = 0, ts;
    return table_entry(ud, topic, q, &m, &ts) ? m : 0;
}

static int64_t st_min(void *ud, const char *topic, int32_t q)
{
    (void)q;
    return strncmp(topic, "Old", 3) == 0 ? ((probe *)ud)->min_offset : 0;
}

static int64_t st_time(void *ud, const char *topic, int32_t q, int64_t off)
{
    int64_t m, ts;
    if (!table_entry(ud, topic, q, &m, &ts) || off != m - 1)
        return -1;
    return ts;
}

static bool st_in_disk(void *ud, const char *topic, int32_t q, int64_t off)
{
    (void)ud;
    (void)q;
    return off == 0 && strncmp(topic, "Disk", 4) == 0;
}

static int st_message(void *ud, int64_t phys, void **rec, size_t *len)
{
    (void)ud;
    if (phys == 999)
        return RMQ_ENOENT;
    char buf[64];
    int n = snprintf(buf, sizeof buf, "STORED-RECORD-AT-%lld", (long long)phys);
    *rec = malloc((size_t)n);
    if (!*rec)
        return RMQ_ENOMEM;
    memcpy(*rec, buf, (size_t)n);
    *len = (size_t)n;
    return 0;
}

static void set_num(const rmq_host_api *a, rmq_cmd *r, const char *k, long long v)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    a->cmd_ext_set(r, k, num);
}

static void put_topic(const rmq_host_api *a, rmq_cmd *r, const rmq_topic_config *t)
{
    a->cmd_ext_set(r, "topicName", t->topic_name);
    set_num(a, r, "readQueueNums", t->read_queue_nums);
    set_num(a, r, "writeQueueNums", t->write_queue_nums);
    set_num(a, r, "perm", t->perm);
    set_num(a, r, "topicSysFlag", t->topic_sys_flag);
    set_num(a, r, "topicFilterType", t->topic_filter_type);
}

static void count_topic(void *ud, const rmq_topic_config *cfg)
{
    (void)cfg;
    (*(size_t *)ud)++;
}

static long long ext_num(const rmq_host_api *a, const rmq_cmd *cmd, const char *k)
{
    const char *v = a->cmd_ext_get(cmd, k);
    return v ? atoll(v) : 0;
}

/* ext "op" names the entry; the other ext fields are its arguments; the
 * answer carries the result as ext fields (code 1 + error text on failure). */
static int on_meta(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    probe *p = ud;
    const rmq_host_api *a = p->api;
    const void *tv = NULL;
    void *sud = NULL;
    rmq_service_ref ref = 0;
    int rc = a->service_acquire(p->ctx, RMQ_BROKER_META_SERVICE, RMQ_BROKER_META_VERSION, &tv, &sud,
                                &ref);
    rmq_cmd *r = a->cmd_new_response(cmd, 0, NULL);
    if (rc != 0) {
        a->cmd_set_code(r, 1);
        a->cmd_set_remark(r, rmq_strerror(rc));
        return a->reply(req, r);
    }
    const rmq_broker_meta_service *m = tv;
    const char *op = a->cmd_ext_get(cmd, "op");
    const char *topic = a->cmd_ext_get(cmd, "topic");
    const char *group = a->cmd_ext_get(cmd, "group");
    op = op ? op : "";
    rc = 0;
    if (strcmp(op, "config") == 0) {
        rmq_broker_config bc;
        rc = m->broker_config(sud, &bc);
        a->cmd_ext_set(r, "clusterName", bc.cluster_name);
        a->cmd_ext_set(r, "brokerName", bc.broker_name);
        a->cmd_ext_set(r, "brokerIP1", bc.broker_ip1);
        set_num(a, r, "listenPort", bc.listen_port);
        set_num(a, r, "brokerPermission", bc.broker_permission);
        set_num(a, r, "autoCreateTopicEnable", bc.auto_create_topic_enable);
    } else if (strcmp(op, "topic_get") == 0) {
        rmq_topic_config t;
        if ((rc = m->topic_get(sud, topic, &t)) == 0)
            put_topic(a, r, &t);
    } else if (strcmp(op, "create_in_send") == 0) {
        rmq_topic_config t;
        rc = m->topic_create_in_send(sud, topic, a->cmd_ext_get(cmd, "defaultTopic"),
                                     (int32_t)ext_num(a, cmd, "queues"),
                                     (int32_t)ext_num(a, cmd, "sysFlag"), &t);
        if (rc == 0)
            put_topic(a, r, &t);
    } else if (strcmp(op, "create_back") == 0) {
        rmq_topic_config t;
        rc = m->topic_create_in_send_back(sud, topic, (int32_t)ext_num(a, cmd, "queues"),
                                          (int32_t)ext_num(a, cmd, "perm"),
                                          (int32_t)ext_num(a, cmd, "sysFlag"), &t);
        if (rc == 0)
            put_topic(a, r, &t);
    } else if (strcmp(op, "for_each") == 0) {
        size_t seen = 0;
        size_t n = m->topic_for_each(sud, count_topic, &seen);
        set_num(a, r, "count", (long long)n);
        set_num(a, r, "seen", (long long)seen);
    } else if (strcmp(op, "group_get") == 0) {
        rmq_subscription_group_config g;
        if ((rc = m->group_get(sud, group, ext_num(a, cmd, "auto") != 0, &g)) == 0) {
            a->cmd_ext_set(r, "groupName", g.group_name);
            set_num(a, r, "retryMaxTimes", g.retry_max_times);
            set_num(a, r, "retryQueueNums", g.retry_queue_nums);
            set_num(a, r, "consumeEnable", g.consume_enable);
        }
    } else if (strcmp(op, "consumer_sub") == 0) {
        rmq_consumer_sub_info s;
        if ((rc = m->consumer_subscription(sud, group, topic, &s)) == 0) {
            set_num(a, r, "messageModel", s.message_model);
            set_num(a, r, "hasSubscription", s.has_subscription);
            a->cmd_ext_set(r, "expressionType", s.expression_type);
            a->cmd_ext_set(r, "subString", s.sub_string);
        }
    } else if (strcmp(op, "consumer_channels") == 0) {
        rmq_consumer_channel ch[4];
        size_t n = m->consumer_channels(sud, group, ch, 4);
        set_num(a, r, "count", (long long)n);
        if (n)
            a->cmd_ext_set(r, "clientId", ch[0].client_id);
    } else if (strcmp(op, "producer_channel") == 0) {
        set_num(a, r, "channel", (long long)m->producer_channel(sud, group));
    } else if (strcmp(op, "offset_commit") == 0) {
        rc = m->offset_commit(sud, group, topic, (int32_t)ext_num(a, cmd, "queueId"),
                              ext_num(a, cmd, "offset"));
    } else if (strcmp(op, "offset_query") == 0) {
        set_num(a, r, "offset",
                (long long)m->offset_query(sud, group, topic, (int32_t)ext_num(a, cmd, "queueId")));
    } else {
        rc = RMQ_EINVAL;
    }
    a->service_release(p->ctx, ref);
    if (rc != 0) {
        a->cmd_set_code(r, 1);
        a->cmd_set_remark(r, rmq_strerror(rc));
    }
    return a->reply(req, r);
}

static int on_deleted(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    probe *p = ud;
    rmq_cmd *r = p->api->cmd_new_response(cmd, 0, NULL);
    pthread_mutex_lock(&p->mu);
    p->api->cmd_set_body(r, p->deleted, strlen(p->deleted), NULL, NULL);
    pthread_mutex_unlock(&p->mu);
    return p->api->reply(req, r);
}

static void on_topic_deleted(const char *event, const void *data, size_t len, void *ud)
{
    (void)event;
    probe *p = ud;
    pthread_mutex_lock(&p->mu);
    size_t n = strlen(p->deleted);
    if (len && ((const char *)data)[len - 1] == '\0' && n + len + 1 < sizeof p->deleted)
        snprintf(p->deleted + n, sizeof p->deleted - n, "%s\n", (const char *)data);
    pthread_mutex_unlock(&p->mu);
}

static int on_taken(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    probe *p = ud;
    rmq_cmd *r = p->api->cmd_new_response(cmd, 0, "answered by the probe store");
    return p->api->reply(req, r);
}

static int probe_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    probe *p = calloc(1, sizeof *p);
    if (!p)
        return RMQ_ENOMEM;
    p->api = api;
    p->ctx = ctx;
    pthread_mutex_init(&p->mu, NULL);
    const char *tbl = api->setting_string(ctx, "queueTable");
    snprintf(p->table, sizeof p->table, "%s", tbl ? tbl : "");
    p->min_offset = api->setting_int(ctx, "oldMinOffset");
    api->set_userdata(ctx, p);
    int rc = api->declare_executor(ctx, "probe", 2, 100);
    if (rc == 0)
        rc = api->register_processor(ctx, CODE_META, on_meta, p, "probe");
    if (rc == 0)
        rc = api->register_processor(ctx, CODE_DELETED, on_deleted, p, NULL);
    if (rc == 0)
        rc = api->subscribe_event(ctx, RMQ_BROKER_TOPIC_DELETED_EVENT, on_topic_deleted, p);
    if (rc == 0 && api->setting_bool(ctx, "takeStorageCodes")) {
        rc = api->register_processor(ctx, 10, on_taken, p, NULL);
        if (rc == 0)
            rc = api->register_processor(ctx, 30, on_taken, p, NULL);
    }
    if (rc == 0 && api->setting_bool(ctx, "exportStore")) {
        p->store.size = sizeof p->store;
        p->store.max_offset = st_max;
        p->store.min_offset = st_min;
        p->store.store_time = st_time;
        p->store.check_in_disk_by_consume_offset = st_in_disk;
        p->store.message_by_offset = st_message;
        rc = api->export_service(ctx, RMQ_STORE_QUEUES_SERVICE, RMQ_STORE_QUEUES_VERSION, &p->store,
                                 p);
    }
    if (rc != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p);
    }
    return rc;
}

static void probe_fini(rmq_plugin_ctx *ctx)
{
    probe *p = rmq_ctx_userdata(ctx);
    if (!p)
        return;
    pthread_mutex_destroy(&p->mu);
    free(p);
}

RMQ_PLUGIN(.name = "storeprobe", .version = "1.0.0",
           .description = "test fixture: broker.meta caller and fake store.queues",
           .settings = probe_settings, .init = probe_init, .fini = probe_fini);
