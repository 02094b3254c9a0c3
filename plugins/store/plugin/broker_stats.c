/* broker_stats.c — owns BrokerStatsManager's topic and group counters and
 * the admin codes that read them or clean the store by hand:
 * VIEW_BROKER_STATS_DATA (315), CLEAN_EXPIRED_CONSUMEQUEUE (306),
 * CLEAN_UNUSED_TOPIC (316), DELETE_EXPIRED_COMMITLOG (329). */
#include "broker_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/helpers.h>

#include "stats_items.h"
#include "store_features.h"

/* Java's NUMS and SIZE sets of one key space are always added together:
 * they share a stats_items (series 0 the count, series 1 the bytes) */
enum { TOPIC_PUT, GROUP_GET, NSETS };
/* BrokerStatsManager's names of the sets kept here, by set and series */
static const char *const SET_NAMES[NSETS][STATS_SERIES] = {{"TOPIC_PUT_NUMS", "TOPIC_PUT_SIZE"},
                                                           {"GROUP_GET_NUMS", "GROUP_GET_SIZE"}};

struct broker_stats {
    stats_items *set[NSETS];
};

static broker_stats *stats_of(store_plugin *sp)
{
    store_features *f = features_of(sp);
    return f ? f->broker_stats : NULL;
}

void broker_stats_free(broker_stats *bs)
{
    if (!bs)
        return;
    for (int i = 0; i < NSETS; i++)
        stats_items_free(bs->set[i]);
    free(bs);
}

void broker_stats_on_put(store_plugin *sp, const char *topic, int64_t msgs, int64_t bytes)
{
    broker_stats *bs = stats_of(sp);
    if (!bs || !topic)
        return;
    stats_items_add(bs->set[TOPIC_PUT], topic, msgs, bytes, 1);
}

void broker_stats_on_get(store_plugin *sp, const char *group, const char *topic, int64_t msgs,
                         int64_t bytes)
{
    broker_stats *bs = stats_of(sp);
    if (!bs || !group || !topic)
        return;
    char key[640];
    snprintf(key, sizeof key, "%s@%s", topic, group); /* buildStatsKey(topic, group) */
    stats_items_add(bs->set[GROUP_GET], key, msgs, bytes, 1);
}

void broker_stats_on_topic_deleted(store_plugin *sp, const char *topic)
{
    broker_stats *bs = stats_of(sp);
    if (!bs || !topic)
        return;
    stats_items_remove(bs->set[TOPIC_PUT], topic);
    char prefix[640];
    snprintf(prefix, sizeof prefix, "%s@", topic);
    stats_items_remove_prefix(bs->set[GROUP_GET], prefix);
}

void broker_stats_tick(store_plugin *sp, unsigned tick, uint64_t now_wall_ms)
{
    broker_stats *bs = stats_of(sp);
    if (!bs)
        return;
    /* the first sampling of every window runs at start (delay 0), as Java's */
    for (int i = 0; i < NSETS; i++) {
        if (tick % 10 == 1)
            stats_items_sample(bs->set[i], STATS_MINUTE, now_wall_ms);
        if (tick % 600 == 1)
            stats_items_sample(bs->set[i], STATS_HOUR, now_wall_ms);
        if (tick % 3600 == 1)
            stats_items_sample(bs->set[i], STATS_DAY, now_wall_ms);
    }
}

/* fastjson writes a NaN or infinite double as null */
static void put_double(char *out, size_t cap, double d)
{
    if (d != d || d - d != 0)
        snprintf(out, cap, "null");
    else
        rmq_java_double_text(d, out, cap);
}

static int process_view_stats(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    const char *name = a->cmd_ext_get(cmd, "statsName");
    const char *key = a->cmd_ext_get(cmd, "statsKey");
    if (!name || !key) {
        a->request_fail(req, "org.apache.rocketmq.remoting.exception.RemotingCommandException: "
                             "the custom field <statsName> is null");
        return RMQ_EINVAL;
    }
    broker_stats *bs = stats_of(sp);
    stats_view v[STATS_WINDOWS];
    bool found = false;
    for (int i = 0; bs && i < NSETS && !found; i++)
        for (int k = 0; k < STATS_SERIES && !found; k++)
            if (strcmp(name, SET_NAMES[i][k]) == 0)
                found = stats_items_view(bs->set[i], k, key, v);
    if (!found) {
        char remark[1200];
        snprintf(remark, sizeof remark, "The stats <%s> <%s> not exist", name, key);
        return store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, remark);
    }
    /* BrokerStatsData, fastjson's alphabetical field order */
    static const char *const WNAME[STATS_WINDOWS] = {"statsMinute", "statsHour", "statsDay"};
    static const int ORDER[STATS_WINDOWS] = {STATS_DAY, STATS_HOUR, STATS_MINUTE};
    char body[1024];
    size_t n = (size_t)snprintf(body, sizeof body, "{");
    for (int i = 0; i < STATS_WINDOWS; i++) {
        int w = ORDER[i];
        char avg[40], tps[40];
        put_double(avg, sizeof avg, v[w].avgpt);
        put_double(tps, sizeof tps, v[w].tps);
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "%s\"%s\":{\"avgpt\":%s,\"sum\":%lld,\"tps\":%s}", i ? "," : "",
                              WNAME[w], avg, (long long)v[w].sum, tps);
    }
    n += (size_t)snprintf(body + n, sizeof body - n, "}");
    if (store_cmd_is_oneway(sp, cmd))
        return RMQ_OK;
    rmq_cmd *r = a->cmd_new_response(cmd, RC_SUCCESS, NULL);
    if (!r)
        return RMQ_ENOMEM;
    a->cmd_set_body(r, body, n, NULL, NULL);
    return a->reply(req, r);
}

/* ---- manual clean-ups: Java logs and answers SUCCESS, whatever they did ---- */

static int process_clean_expired_cq(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    int n = store_clean_expired_queues(sp->engine);
    sp->api->log(sp->ctx, RMQ_LOG_WARN, "cleanExpiredConsumeQueue: %d consume queue(s) removed", n);
    return store_reply_code(sp, req, cmd, RC_SUCCESS, NULL);
}

static int process_delete_expired_commitlog(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    /* executeDeleteFilesManually: the next clean-up deletes expired segments
     * even outside deleteWhen; here it runs now */
    store_clean_expired(sp->engine, true);
    sp->api->log(sp->ctx, RMQ_LOG_WARN, "deleteExpiredCommitLog: retention ran");
    return store_reply_code(sp, req, cmd, RC_SUCCESS, NULL);
}

static void collect_topic(void *ud, const rmq_topic_config *cfg)
{
    int err = 0;
    char *name = strdup(cfg->topic_name);
    if (name && !rmq_str_map_put(ud, name, name, &err) && err)
        free(name);
}

static bool topic_known(void *ud, const char *topic)
{
    return rmq_str_map_get(ud, topic) != NULL;
}

static int process_clean_unused_topic(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    const void *tbl;
    void *mud;
    rmq_service_ref ref;
    if (a->service_acquire(sp->ctx, RMQ_BROKER_META_SERVICE, RMQ_BROKER_META_VERSION, &tbl, &mud,
                           &ref) != 0) /* no topic table: nothing can be called unused */
        return store_reply_code(sp, req, cmd, RC_SUCCESS, NULL);
    rmq_str_map topics;
    rmq_str_map_init(&topics);
    const rmq_broker_meta_service *m = tbl;
    m->topic_for_each(mud, collect_topic, &topics);
    a->service_release(sp->ctx, ref);
    int n = store_clean_unused_topics(sp->engine, topic_known, &topics);
    rmq_str_map_iter it;
    const char *k;
    void *v;
    rmq_str_map_iter_init(&it, &topics);
    while (rmq_str_map_iter_next(&it, &k, &v))
        free(v);
    rmq_str_map_destroy(&topics);
    a->log(sp->ctx, RMQ_LOG_WARN, "cleanUnusedTopic: %d consume queue(s) removed", n);
    return store_reply_code(sp, req, cmd, RC_SUCCESS, NULL);
}

int broker_stats_register(store_plugin *sp)
{
    store_features *f = features_of(sp);
    broker_stats *bs = calloc(1, sizeof *bs);
    if (!bs)
        return RMQ_ENOMEM;
    for (int i = 0; i < NSETS; i++)
        if (!(bs->set[i] = stats_items_new())) {
            broker_stats_free(bs);
            return RMQ_ENOMEM;
        }
    f->broker_stats = bs;
    static const struct {
        int32_t code;
        rmq_processor_fn fn;
    } t[] = {{315, process_view_stats},
             {306, process_clean_expired_cq},
             {316, process_clean_unused_topic},
             {329, process_delete_expired_commitlog}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        int rc = sp->api->register_processor(sp->ctx, t[i].code, t[i].fn, sp, "brokerAdmin");
        if (rc != 0)
            return rc;
    }
    return 0;
}
