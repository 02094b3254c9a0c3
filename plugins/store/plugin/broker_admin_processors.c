/* broker_admin_processors.c — the broker admin codes that need the store:
 * GET_BROKER_RUNTIME_INFO (28, mqadmin brokerStatus / clusterList figures),
 * INVOKE_BROKER_TO_RESET_OFFSET (222) pushing RESET_CONSUMER_CLIENT_OFFSET
 * (220) to the group's consumers (Broker2Client.resetOffset), and the
 * "broker.topic_deleted" subscriber dropping the topic's consume queues
 * (cleanUnusedTopic). Run on the store's admin-side executor. */
#include <inttypes.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/statvfs.h>
#include <time.h>

#include <rmqhost/helpers.h>

#include "broker_stats.h"
#include "pull_stats.h"
#include "state_blob.h"
#include "header_numbers.h"
#include "store_features.h"

#define RESET_CONSUMER_CLIENT_OFFSET 220
#define RC_CONSUMER_NOT_ONLINE 206
#define V3_0_7_SNAPSHOT 28    /* MQVersion ordinal: reset needs at least this client */
#define TPS_SAMPLES 601       /* one a second: 10 s, 1 min and 10 min windows */
#define GROUP_SAMPLE_TICKS 10 /* pull_stats snapshots every 10 s */

typedef struct tps_sample {
    uint64_t at_ms;
    uint64_t put, found, miss, transferred;
} tps_sample;

/* The ring of counters behind putTps / getFoundTps / getMissTps /
 * getTotalTps / getTransferedTps, the day figures of BrokerStats and the
 * pull statistics. */
typedef struct admin_state {
    store_plugin *sp;
    pthread_mutex_t mu;
    tps_sample ring[TPS_SAMPLES];
    size_t head, count;
    uint64_t boot_ms;
    pull_stats *pulls;
    unsigned ticks;
    int day; /* local year * 1000 + day of year of the last tick */
    /* BrokerStats.record() at each local midnight */
    uint64_t put_today_morning, put_yesterday_morning;
    uint64_t get_today_morning, get_yesterday_morning;
    /* what the engines of earlier generations (hot reloads) and of this one
     * before a refused reload counted: a reopened engine counts from 0 */
    uint64_t base_put_times, base_put_bytes, base_found, base_miss;
} admin_state;

/* The engine's runtime figures with the counters carried over reloads. */
static void runtime_stats(admin_state *st, store_runtime_stats *rs)
{
    store_runtime_stats_get(st->sp->engine, rs);
    rs->put_message_times_total += st->base_put_times;
    rs->put_message_size_total += st->base_put_bytes;
    rs->get_message_times_total_found += st->base_found;
    rs->get_message_times_total_miss += st->base_miss;
}

static int local_day(uint64_t wall_ms)
{
    time_t t = (time_t)(wall_ms / 1000);
    struct tm tm;
    localtime_r(&t, &tm);
    return tm.tm_year * 1000 + tm.tm_yday;
}

static void sample_timer(void *ud)
{
    admin_state *st = ud;
    store_runtime_stats rs;
    runtime_stats(st, &rs);
    uint64_t transferred = pull_stats_transferred(st->pulls);
    uint64_t now = st->sp->api->now_monotonic_ms();
    int day = local_day(st->sp->api->now_wall_ms());
    pthread_mutex_lock(&st->mu);
    st->ring[st->head] =
        (tps_sample){now, rs.put_message_times_total, rs.get_message_times_total_found,
                     rs.get_message_times_total_miss, transferred};
    st->head = (st->head + 1) % TPS_SAMPLES;
    if (st->count < TPS_SAMPLES)
        st->count++;
    if (day != st->day) {
        if (st->day) { /* midnight passed */
            st->put_yesterday_morning = st->put_today_morning;
            st->put_today_morning = rs.put_message_times_total;
            st->get_yesterday_morning = st->get_today_morning;
            st->get_today_morning = transferred;
        }
        st->day = day;
    }
    unsigned tick = ++st->ticks;
    bool group_tick = tick % GROUP_SAMPLE_TICKS == 0;
    put_latency_tick(&st->sp->put_lat, now);
    pthread_mutex_unlock(&st->mu);
    if (group_tick)
        pull_stats_sample(st->pulls, now);
    broker_stats_tick(st->sp, tick, st->sp->api->now_wall_ms());
}

enum { TPS_PUT, TPS_FOUND, TPS_MISS, TPS_TOTAL, TPS_TRANSFERRED };

static uint64_t sample_value(const tps_sample *s, int which)
{
    switch (which) {
    case TPS_PUT: return s->put;
    case TPS_FOUND: return s->found;
    case TPS_MISS: return s->miss;
    case TPS_TOTAL: return s->found + s->miss;
    default: return s->transferred;
    }
}

/* StoreStatsService's "<10 s> <60 s> <600 s>" rates of one counter: each a
 * Java double, or empty while fewer samples than the window exist. */
static void tps_text(admin_state *st, int which, char *out, size_t cap)
{
    static const size_t windows[] = {10, 60, 600};
    size_t n = 0;
    out[0] = 0;
    pthread_mutex_lock(&st->mu);
    for (int w = 0; w < 3; w++) {
        char num[40] = "";
        if (st->count > windows[w]) {
            size_t newest = (st->head + TPS_SAMPLES - 1) % TPS_SAMPLES;
            size_t oldest = (newest + TPS_SAMPLES - windows[w]) % TPS_SAMPLES;
            const tps_sample *a = &st->ring[oldest], *b = &st->ring[newest];
            double tps = (double)(sample_value(b, which) - sample_value(a, which)) /
                         (double)(b->at_ms - a->at_ms) * 1000.0;
            rmq_java_double_text(tps, num, sizeof num);
        }
        n += (size_t)snprintf(out + n, cap - n, "%s%s", w ? " " : "", num);
    }
    pthread_mutex_unlock(&st->mu);
}

static void human_bytes(uint64_t b, char *out, size_t cap)
{
    /* MixAll.humanReadableByteCount(bytes, false): 1024 units, one decimal */
    static const char units[] = "KMGTPE";
    if (b < 1024) {
        snprintf(out, cap, "%" PRIu64 " B", b);
        return;
    }
    double v = (double)b;
    int e = -1;
    while (v >= 1024 && e < 5) {
        v /= 1024;
        e++;
    }
    snprintf(out, cap, "%.1f %ciB", v, units[e]);
}

static void put_num(json_t *t, const char *k, int64_t v)
{
    char num[32];
    snprintf(num, sizeof num, "%" PRId64, v);
    json_object_set_new(t, k, json_string(num));
}

/* getEarliestMessageTime: STORETIMESTAMP of the first record of the
 * commit log, -1 when it holds none. */
static int64_t earliest_message_time(store_plugin *sp, const store_runtime_stats *rs)
{
    if (rs->commitlog_max_offset <= rs->commitlog_min_offset)
        return -1;
    uint8_t *buf = NULL;
    stored_record r;
    if (features_read_record(sp, rs->commitlog_min_offset, &buf, &r) != 0)
        return -1;
    free(buf);
    return r.store_ts;
}

/* ScheduleMessageService.buildRunningStats: "scheduleMessageOffset_<level>"
 * = "<delivered offset>,<max offset>" of each level that has been used. */
static void schedule_offsets(store_plugin *sp, json_t *t)
{
    store_features *f = features_of(sp);
    if (!f)
        return;
    for (int level = 1; level <= f->nlevels; level++) {
        int64_t max = store_max_offset(sp->engine, SCHEDULE_TOPIC, level - 1);
        pthread_mutex_lock(&f->delay_mu);
        int64_t done = f->delay_offset[level];
        pthread_mutex_unlock(&f->delay_mu);
        if (max <= 0 && done <= 0)
            continue;
        char k[48], v[64];
        snprintf(k, sizeof k, "scheduleMessageOffset_%d", level);
        snprintf(v, sizeof v, "%" PRId64 ",%" PRId64, done, max);
        json_object_set_new(t, k, json_string(v));
    }
}

/* BrokerController's thread-pool queue figures for one of the store's
 * executors, as the host holds it (SDK 1.6): waiting requests and how long
 * the oldest has waited. A code processed inline (sendMessageInline /
 * pullMessageInline, the default) leaves its executor empty: 0, right, as
 * nothing queues. A host older than 1.6 cannot tell: 0. */
static void queue_figures(store_plugin *sp, const char *executor, int64_t *length, int64_t *wait)
{
    const rmq_host_api *a = sp->api;
    size_t n = 0;
    uint64_t head_wait = 0;
    if (a->abi_minor >= 6 &&
        a->size >= offsetof(rmq_host_api, executor_queue_info) + sizeof(a->executor_queue_info) &&
        a->executor_queue_info(sp->ctx, executor, &n, NULL, &head_wait) != 0) {
        n = 0;
        head_wait = 0;
    }
    *length = (int64_t)n;
    *wait = (int64_t)head_wait;
}

static int process_runtime_info(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    admin_state *st = ud;
    store_plugin *sp = st->sp;
    store_runtime_stats rs;
    runtime_stats(st, &rs);
    json_t *t = json_object();
    uint64_t transferred = pull_stats_transferred(st->pulls);
    json_object_set_new(t, "brokerVersionDesc", json_string("V4_9_8"));
    put_num(t, "brokerVersion", 409); /* MQVersion.CURRENT_VERSION of 4.9.8 (V4_9_8) */
    pthread_mutex_lock(&st->mu);
    put_num(t, "msgPutTotalYesterdayMorning", (int64_t)st->put_yesterday_morning);
    put_num(t, "msgPutTotalTodayMorning", (int64_t)st->put_today_morning);
    put_num(t, "msgGetTotalYesterdayMorning", (int64_t)st->get_yesterday_morning);
    put_num(t, "msgGetTotalTodayMorning", (int64_t)st->get_today_morning);
    pthread_mutex_unlock(&st->mu);
    put_num(t, "msgPutTotalTodayNow", (int64_t)rs.put_message_times_total);
    put_num(t, "msgGetTotalTodayNow", (int64_t)transferred);
    int64_t send_len, send_wait, pull_len, pull_wait, query_len, query_wait;
    queue_figures(sp, "send", &send_len, &send_wait);
    queue_figures(sp, "pull", &pull_len, &pull_wait);
    queue_figures(sp, "query", &query_len, &query_wait);
    put_num(t, "sendThreadPoolQueueSize", send_len);
    put_num(t, "sendThreadPoolQueueCapacity", sp->set.send_queue);
    put_num(t, "pullThreadPoolQueueSize", pull_len);
    put_num(t, "pullThreadPoolQueueCapacity", sp->set.pull_queue);
    put_num(t, "queryThreadPoolQueueSize", query_len);
    put_num(t, "queryThreadPoolQueueCapacity", sp->set.query_queue);
    int64_t tx_len, tx_wait;
    queue_figures(sp, "transaction", &tx_len, &tx_wait);
    put_num(t, "EndTransactionQueueSize", tx_len);
    put_num(t, "EndTransactionThreadPoolQueueCapacity", END_TRANSACTION_QUEUE_CAPACITY);
    put_num(t, "dispatchBehindBytes", rs.dispatch_behind_bytes);
    put_num(t, "pageCacheLockTimeMills", 0);
    put_num(t, "sendThreadPoolQueueHeadWaitTimeMills", send_wait);
    put_num(t, "pullThreadPoolQueueHeadWaitTimeMills", pull_wait);
    put_num(t, "queryThreadPoolQueueHeadWaitTimeMills", query_wait);
    put_num(t, "earliestMessageTimeStamp", earliest_message_time(sp, &rs));
    put_num(t, "startAcceptSendRequestTimeStamp", sp->set.start_accept_send_ts);
    /* transientStorePoolEnable is off: Java answers Integer.MAX_VALUE */
    put_num(t, "remainTransientStoreBufferNumbs", 2147483647);
    char buf[1200];
    int64_t unflushed = rs.commitlog_max_offset - rs.flushed_offset;
    human_bytes(unflushed > 0 ? (uint64_t)unflushed : 0, buf, sizeof buf);
    json_object_set_new(t, "remainHowManyDataToFlush", json_string(buf));
    put_num(t, "commitLogMinOffset", rs.commitlog_min_offset);
    put_num(t, "commitLogMaxOffset", rs.commitlog_max_offset);
    char num[40];
    rmq_java_double_text(rs.commitlog_disk_ratio, num, sizeof num);
    json_object_set_new(t, "commitLogDiskRatio", json_string(num));
    /* storePathCommitLog, by default <storePathRootDir>/commitlog */
    if (sp->set.commitlog_dir[0])
        snprintf(buf, sizeof buf, "commitLogDiskRatio_%s", sp->set.commitlog_dir);
    else
        snprintf(buf, sizeof buf, "commitLogDiskRatio_%s/commitlog", sp->set.root_dir);
    json_object_set_new(t, buf, json_string(num));
    rmq_java_double_text(rs.consumequeue_disk_ratio, num, sizeof num);
    json_object_set_new(t, "consumeQueueDiskRatio", json_string(num));
    schedule_offsets(sp, t);
    /* StoreStatsService.getRuntimeInfo: a total of 0 is reported as 1 */
    uint64_t times = rs.put_message_times_total ? rs.put_message_times_total : 1;
    put_num(t, "putMessageTimesTotal", (int64_t)times);
    put_num(t, "putMessageSizeTotal", (int64_t)rs.put_message_size_total);
    put_num(t, "putMessageFailedTimes",
            (int64_t)atomic_load_explicit(&sp->put_lat.failed, memory_order_relaxed));
    /* String.format("%.2f"): Java rounds half up, printf to nearest even;
     * the interpolated figures rarely sit on a tie */
    snprintf(num, sizeof num, "%.2f", put_latency_percentile(&sp->put_lat, 0.99));
    json_object_set_new(t, "putLatency99", json_string(num));
    snprintf(num, sizeof num, "%.2f", put_latency_percentile(&sp->put_lat, 0.999));
    json_object_set_new(t, "putLatency999", json_string(num));
    rmq_java_double_text((double)rs.put_message_size_total / (double)times, num, sizeof num);
    json_object_set_new(t, "putMessageAverageSize", json_string(num));
    put_num(t, "putMessageEntireTimeMax",
            (int64_t)atomic_load_explicit(&sp->put_lat.max_ms, memory_order_relaxed));
    put_latency_text(&sp->put_lat, buf, sizeof buf);
    json_object_set_new(t, "putMessageDistributeTime", json_string(buf));
    put_num(t, "dispatchMaxBuffer", 0); /* never set in 4.9.8 */
    put_num(t, "getMessageEntireTimeMax", (int64_t)pull_stats_lookup_max_ms(st->pulls));
    put_num(t, "getMessageTimesTotalFound", (int64_t)rs.get_message_times_total_found);
    put_num(t, "getMessageTimesTotalMiss", (int64_t)rs.get_message_times_total_miss);
    put_num(t, "bootTimestamp", (int64_t)st->boot_ms);
    uint64_t up = (sp->api->now_wall_ms() - st->boot_ms) / 1000;
    snprintf(buf, sizeof buf,
             "[ %" PRIu64 " days, %" PRIu64 " hours, %" PRIu64 " minutes, %" PRIu64 " seconds ]",
             up / 86400, up / 3600 % 24, up / 60 % 60, up % 60);
    json_object_set_new(t, "runtime", json_string(buf));
    static const struct {
        const char *key;
        int which;
    } rates[] = {{"putTps", TPS_PUT},
                 {"getFoundTps", TPS_FOUND},
                 {"getMissTps", TPS_MISS},
                 {"getTotalTps", TPS_TOTAL},
                 {"getTransferedTps", TPS_TRANSFERRED}};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        char tps[128];
        tps_text(st, rates[i].which, tps, sizeof tps);
        json_object_set_new(t, rates[i].key, json_string(tps));
    }
    struct statvfs vfs;
    if (statvfs(sp->set.root_dir, &vfs) == 0) {
        char tot[32], fr[32];
        human_bytes((uint64_t)vfs.f_blocks * vfs.f_frsize, tot, sizeof tot);
        human_bytes((uint64_t)vfs.f_bfree * vfs.f_frsize, fr, sizeof fr); /* File.getFreeSpace */
        snprintf(buf, sizeof buf, "Total : %s, Free : %s.", tot, fr);
        json_object_set_new(t, "commitLogDirCapacity", json_string(buf));
    }
    json_t *root = json_pack("{so}", "table", t);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text)
        return RMQ_ENOMEM;
    if (store_cmd_is_oneway(sp, cmd)) {
        free(text);
        return RMQ_OK;
    }
    rmq_cmd *r = sp->api->cmd_new_response(cmd, RC_SUCCESS, NULL);
    if (r)
        sp->api->cmd_set_body(r, text, strlen(text), NULL, NULL);
    free(text);
    return r ? sp->api->reply(req, r) : RMQ_ENOMEM;
}

/* ---- INVOKE_BROKER_TO_RESET_OFFSET ---------------------------------------- */

static int process_reset_offset(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    admin_state *st = ud;
    store_plugin *sp = st->sp;
    const rmq_host_api *a = sp->api;
    const char *topic = a->cmd_ext_get(cmd, "topic");
    const char *group = a->cmd_ext_get(cmd, "group");
    const char *ts_text = a->cmd_ext_get(cmd, "timestamp");
    const char *force_text = a->cmd_ext_get(cmd, "isForce");
    /* the reflection decode leaves the primitive timestamp/isForce at 0/false
     * when absent or unparsable; a null topic throws in the topic table, a
     * null group makes the offset key "<topic>@null" */
    if (!topic) {
        a->request_fail(req, "java.lang.NullPointerException");
        return RMQ_EINVAL;
    }
    if (!group)
        group = "null";
    int64_t ts = 0;
    if (!ts_text || java_parse_long(ts_text, &ts) != 0)
        ts = 0;
    bool force = java_parse_bool(force_text);
    char remark[600];
    rmq_topic_config tc;
    if (meta_topic_get(sp, topic, &tc) != 0) {
        snprintf(remark, sizeof remark,
                 "[reset-offset] reset offset failed, no topic in this broker. topic=%s", topic);
        return store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, remark);
    }
    rmq_broker_config bc;
    if (meta_broker_config(sp, &bc) != 0)
        memset(&bc, 0, sizeof bc);
    json_t *jt = json_string(topic), *jb = json_string(bc.broker_name);
    char *qt = json_dumps(jt, JSON_ENCODE_ANY), *qb = json_dumps(jb, JSON_ENCODE_ANY);
    json_decref(jt);
    json_decref(jb);
    size_t cap =
        64 + (size_t)tc.write_queue_nums * (strlen(qt ? qt : "") + strlen(qb ? qb : "") + 96);
    char *body = malloc(cap);
    if (!body || !qt || !qb) {
        free(body);
        free(qt);
        free(qb);
        return RMQ_ENOMEM;
    }
    size_t n = (size_t)snprintf(body, cap, "{\"offsetTable\":{");
    const void *tbl;
    void *mud;
    rmq_service_ref ref;
    int rc = a->service_acquire(sp->ctx, RMQ_BROKER_META_SERVICE, RMQ_BROKER_META_VERSION, &tbl,
                                &mud, &ref);
    if (rc != 0) {
        free(body);
        free(qt);
        free(qb);
        return store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "broker.meta is not available");
    }
    const rmq_broker_meta_service *m = tbl;
    for (int32_t q = 0; q < tc.write_queue_nums; q++) {
        int64_t consumer = m->offset_query(mud, group, topic, q);
        if (consumer == -1) {
            a->service_release(sp->ctx, ref);
            free(body);
            free(qt);
            free(qb);
            snprintf(remark, sizeof remark, "THe consumer group <%s> not exist", group);
            return store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, remark);
        }
        int64_t at = ts == -1 ? store_max_offset(sp->engine, topic, q)
                              : store_offset_by_time(sp->engine, topic, q, ts);
        if (at < 0)
            at = 0;
        int64_t off = force || at < consumer ? at : consumer;
        n += (size_t)snprintf(body + n, cap - n,
                              "%s{\"brokerName\":%s,\"queueId\":%d,\"topic\":%s}:%" PRId64,
                              q ? "," : "", qb, q, qt, off);
    }
    n += (size_t)snprintf(body + n, cap - n, "}}");
    free(qt);
    free(qb);
    rmq_consumer_channel chans[64];
    size_t nch = m->consumer_channels(mud, group, chans, 64);
    a->service_release(sp->ctx, ref);
    if (nch == 0) {
        free(body);
        snprintf(remark, sizeof remark,
                 "Consumer not online, so can not reset offset, Group: %s Topic: %s Timestamp: "
                 "%" PRId64,
                 group, topic, ts);
        return store_reply_code(sp, req, cmd, RC_CONSUMER_NOT_ONLINE, remark);
    }
    for (size_t i = 0; i < nch && i < 64; i++) {
        if (chans[i].version < V3_0_7_SNAPSHOT) {
            free(body);
            snprintf(remark, sizeof remark, "the client does not support this feature. version=%d",
                     chans[i].version);
            return store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, remark);
        }
        rmq_cmd *push = a->cmd_new_request(RESET_CONSUMER_CLIENT_OFFSET);
        if (!push)
            continue;
        a->cmd_ext_set(push, "topic", topic);
        a->cmd_ext_set(push, "group", group);
        a->cmd_ext_set(push, "timestamp", ts_text);
        /* Java's header for the clients leaves isForce at its default */
        a->cmd_ext_set(push, "isForce", "false");
        a->cmd_set_body(push, body, n, NULL, NULL);
        int prc = a->invoke_oneway(sp->ctx, chans[i].channel, push, 5000);
        if (prc != 0)
            a->log(sp->ctx, RMQ_LOG_WARN, "RESET_CONSUMER_CLIENT_OFFSET to %s: %s",
                   chans[i].client_id, rmq_strerror(prc));
    }
    if (store_cmd_is_oneway(sp, cmd)) {
        free(body);
        return RMQ_OK;
    }
    /* Broker2Client.resetOffset never clears the placeholder remark */
    rmq_cmd *r = a->cmd_new_response(cmd, RC_SUCCESS, JAVA_UNSET_REMARK);
    if (r)
        a->cmd_set_body(r, body, n, NULL, NULL);
    free(body);
    return r ? a->reply(req, r) : RMQ_ENOMEM;
}

/* cleanUnusedTopic for the deleted topic (published on EXEC). */
static void on_topic_deleted(const char *event, const void *data, size_t len, void *ud)
{
    (void)event;
    admin_state *st = ud;
    if (!len || ((const char *)data)[len - 1] != '\0')
        return;
    const char *topic = data;
    int rc = store_delete_topic(st->sp->engine, topic);
    if (st->sp->set.auto_delete_unused_stats) /* 4.9.8 keeps them by default */
        broker_stats_on_topic_deleted(st->sp, topic);
    st->sp->api->log(st->sp->ctx, RMQ_LOG_INFO, "topic %s deleted: consume queues removed (%s)",
                     topic, rmq_strerror(rc));
}

static admin_state *state_alloc(store_plugin *sp)
{

    admin_state *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->sp = sp;
    st->pulls = pull_stats_new();
    if (!st->pulls) {
        free(st);
        return NULL;
    }
    pthread_mutex_init(&st->mu, NULL);
    st->boot_ms = sp->api->now_wall_ms();
    return st;
}

int broker_admin_processors_register(store_plugin *sp)
{
    admin_state *st = state_alloc(sp);
    if (!st)
        return RMQ_ENOMEM;
    features_of(sp)->admin = st;
    features_of(sp)->pull_stats = st->pulls;
    const rmq_host_api *a = sp->api;
    int rc = a->declare_executor(sp->ctx, "brokerAdmin", 1, 10000);
    if (rc == 0)
        rc = a->register_processor(sp->ctx, 28, process_runtime_info, st, "brokerAdmin");
    if (rc == 0)
        rc = a->register_processor(sp->ctx, 222, process_reset_offset, st, "brokerAdmin");
    if (rc == 0)
        rc = broker_stats_register(sp);
    if (rc == 0)
        rc = a->subscribe_event(sp->ctx, RMQ_BROKER_TOPIC_DELETED_EVENT, on_topic_deleted, st);
    rmq_timer_id id;
    if (rc == 0)
        rc = a->add_timer(sp->ctx, 1000, 1000, sample_timer, st, NULL, &id);
    return rc;
}

void broker_admin_state_free(void *p)
{
    admin_state *st = p;
    if (!st)
        return;
    pthread_mutex_destroy(&st->mu);
    pull_stats_free(st->pulls);
    free(st);
}

/* ---- hot reload: the figures of 28 and 208 go on in the new generation ---- */

int broker_admin_export(store_plugin *sp, blob_writer *w)
{
    store_features *f = features_of(sp);
    admin_state *st = f ? f->admin : NULL;
    if (!st)
        return RMQ_ENOENT;
    store_runtime_stats rs;
    runtime_stats(st, &rs);
    /* the engine closes next; reopened (a refused reload) it counts from 0 */
    st->base_put_times = rs.put_message_times_total;
    st->base_put_bytes = rs.put_message_size_total;
    st->base_found = rs.get_message_times_total_found;
    st->base_miss = rs.get_message_times_total_miss;
    blob_put_u64(w, st->base_put_times);
    blob_put_u64(w, st->base_put_bytes);
    blob_put_u64(w, st->base_found);
    blob_put_u64(w, st->base_miss);
    pthread_mutex_lock(&st->mu);
    blob_put_u64(w, st->boot_ms);
    blob_put_u64(w, (uint64_t)(int64_t)st->day);
    blob_put_u64(w, st->ticks);
    blob_put_u64(w, st->put_today_morning);
    blob_put_u64(w, st->put_yesterday_morning);
    blob_put_u64(w, st->get_today_morning);
    blob_put_u64(w, st->get_yesterday_morning);
    blob_put_u64(w, st->count);
    for (size_t i = 0; i < st->count; i++) /* oldest first */
        blob_put(w, &st->ring[(st->head + TPS_SAMPLES - st->count + i) % TPS_SAMPLES],
                 sizeof(tps_sample));
    pthread_mutex_unlock(&st->mu);
    for (size_t i = 0; i < PUT_LATENCY_BUCKETS; i++)
        blob_put_u64(w, atomic_load(&sp->put_lat.bucket[i]));
    blob_put_u64(w, atomic_load(&sp->put_lat.max_ms));
    blob_put_u64(w, sp->put_lat.window_start_ms);
    pull_stats_export(st->pulls, w);
    return w->failed ? RMQ_ENOMEM : 0;
}

int broker_admin_import(store_plugin *sp, blob_reader *r)
{
    store_features *f = features_of(sp);
    admin_state *st = f ? f->admin : NULL;
    if (!st)
        return RMQ_ENOENT;
    /* not live yet: nothing else touches the state */
    st->base_put_times = blob_get_u64(r);
    st->base_put_bytes = blob_get_u64(r);
    st->base_found = blob_get_u64(r);
    st->base_miss = blob_get_u64(r);
    st->boot_ms = blob_get_u64(r);
    st->day = (int)(int64_t)blob_get_u64(r);
    st->ticks = (unsigned)blob_get_u64(r);
    st->put_today_morning = blob_get_u64(r);
    st->put_yesterday_morning = blob_get_u64(r);
    st->get_today_morning = blob_get_u64(r);
    st->get_yesterday_morning = blob_get_u64(r);
    uint64_t count = blob_get_u64(r);
    if (count > TPS_SAMPLES)
        r->ok = false;
    for (uint64_t i = 0; r->ok && i < count; i++)
        blob_get(r, &st->ring[i], sizeof(tps_sample));
    st->count = r->ok ? (size_t)count : 0;
    st->head = st->count % TPS_SAMPLES;
    for (size_t i = 0; i < PUT_LATENCY_BUCKETS; i++)
        atomic_store(&sp->put_lat.bucket[i], blob_get_u64(r));
    atomic_store(&sp->put_lat.max_ms, blob_get_u64(r));
    sp->put_lat.window_start_ms = blob_get_u64(r);
    if (!r->ok || !pull_stats_import(st->pulls, r))
        return RMQ_EINVAL;
    return 0;
}
