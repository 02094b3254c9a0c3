/* queue_admin_processors.c — the offset, time and statistics codes of the
 * admin processor that need the store: SEARCH_OFFSET_BY_TIMESTAMP (29),
 * GET_MAX_OFFSET (30), GET_MIN_OFFSET (31), GET_EARLIEST_MSG_STORETIME (32),
 * GET_TOPIC_STATS_INFO (202, object map keys) and QUERY_CONSUME_QUEUE (321)
 * (protocol-messages.md §10.2.7, §10.2.11, §10.9.3, §10.11). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "header_numbers.h"
#include "store_plugin.h"

typedef struct text_buf {
    char *p;
    size_t len, cap;
    bool oom;
} text_buf;

static void tb_printf(text_buf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = true;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = (b->cap ? b->cap * 2 : 1024) + (size_t)n;
        char *np = realloc(b->p, ncap);
        if (!np) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
}

/* JSON string body (quotes and backslashes escaped; control bytes as \u00XX). */
static void tb_json_str(text_buf *b, const char *s)
{
    tb_printf(b, "\"");
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            tb_printf(b, "\\%c", c);
        else if (c < 0x20)
            tb_printf(b, "\\u%04x", c);
        else
            tb_printf(b, "%c", c);
    }
    tb_printf(b, "\"");
}

static void free_body(void *ud, const void *data)
{
    (void)ud;
    free((void *)data);
}

static int finish(store_plugin *sp, rmq_request *req, const rmq_cmd *cmd, rmq_cmd *r)
{
    if (!r)
        return RMQ_ENOMEM;
    if (store_cmd_is_oneway(sp, cmd)) {
        sp->api->cmd_free(r);
        return RMQ_OK;
    }
    return sp->api->reply(req, r);
}

/* SUCCESS with the JSON in `b` as body (ownership passes); ENOMEM when
 * building it ran out of memory. */
static int body_answer_remark(store_plugin *sp, rmq_request *req, const rmq_cmd *cmd, text_buf *b,
                              const char *remark)
{
    if (b->oom) {
        free(b->p);
        return RMQ_ENOMEM;
    }
    rmq_cmd *r = sp->api->cmd_new_response(cmd, RC_SUCCESS, remark);
    if (r)
        sp->api->cmd_set_body(r, b->p, b->len, free_body, NULL);
    else
        free(b->p);
    return finish(sp, req, cmd, r);
}

static int body_answer(store_plugin *sp, rmq_request *req, const rmq_cmd *cmd, text_buf *b)
{
    return body_answer_remark(sp, req, cmd, b, NULL);
}

/* topic + queueId of the reflection-decoded header; NPE when missing. */
static int topic_queue(store_plugin *sp, rmq_request *req, const rmq_cmd *cmd, const char **topic,
                       int32_t *q)
{
    *topic = sp->api->cmd_ext_get(cmd, "topic");
    const char *v = sp->api->cmd_ext_get(cmd, "queueId");
    if (!*topic || !v || java_parse_int(v, q) != 0) {
        sp->api->request_fail(req, "java.lang.NullPointerException");
        return -1;
    }
    return 0;
}

static int offset_answer(store_plugin *sp, rmq_request *req, const rmq_cmd *cmd, const char *key,
                         int64_t v)
{
    rmq_cmd *r = sp->api->cmd_new_response(cmd, RC_SUCCESS, NULL);
    if (r)
        store_ext_i64(sp, r, key, v);
    return finish(sp, req, cmd, r);
}

static int search_offset(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const char *topic;
    int32_t q;
    int64_t ts;
    const char *v = sp->api->cmd_ext_get(cmd, "timestamp");
    if (topic_queue(sp, req, cmd, &topic, &q) != 0)
        return RMQ_EINVAL;
    if (!v || java_parse_long(v, &ts) != 0) {
        sp->api->request_fail(req, "java.lang.NullPointerException");
        return RMQ_EINVAL;
    }
    return offset_answer(sp, req, cmd, "offset", store_offset_by_time(sp->engine, topic, q, ts));
}

/* GET_MAX_OFFSET, GET_MIN_OFFSET and GET_EARLIEST_MSG_STORETIME: one engine
 * reading of the header's queue, answered under `key`. */
static int queue_reading(store_plugin *sp, rmq_request *req, const rmq_cmd *cmd, const char *key,
                         int64_t (*read)(store_engine *, const char *, int32_t))
{
    const char *topic;
    int32_t q;
    if (topic_queue(sp, req, cmd, &topic, &q) != 0)
        return RMQ_EINVAL;
    return offset_answer(sp, req, cmd, key, read(sp->engine, topic, q));
}

static int max_offset(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return queue_reading(ud, req, cmd, "offset", store_max_offset);
}

static int min_offset(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return queue_reading(ud, req, cmd, "offset", store_min_offset);
}

static int earliest_time(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return queue_reading(ud, req, cmd, "timestamp", store_earliest_msg_store_time);
}

static int topic_stats(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    const char *topic = a->cmd_ext_get(cmd, "topic");
    rmq_topic_config tc;
    if (!topic || meta_topic_get(sp, topic, &tc) != 0) {
        char remark[400];
        snprintf(remark, sizeof remark, "topic[%s] not exist", topic ? topic : "null");
        return finish(sp, req, cmd, a->cmd_new_response(cmd, RC_TOPIC_NOT_EXIST, remark));
    }
    rmq_broker_config bc;
    if (meta_broker_config(sp, &bc) != 0)
        memset(&bc, 0, sizeof bc);
    text_buf b = {0};
    tb_printf(&b, "{\"offsetTable\":{");
    for (int32_t i = 0; i < tc.write_queue_nums; i++) {
        int64_t mn = store_min_offset(sp->engine, topic, i);
        int64_t mx = store_max_offset(sp->engine, topic, i);
        int64_t ts = mx > 0 ? store_message_store_time(sp->engine, topic, i, mx - 1) : 0;
        if (mn < 0)
            mn = 0;
        if (mx < 0)
            mx = 0;
        tb_printf(&b, "%s{\"brokerName\":", i ? "," : "");
        tb_json_str(&b, bc.broker_name);
        tb_printf(&b, ",\"queueId\":%d,\"topic\":", i);
        tb_json_str(&b, topic);
        tb_printf(&b,
                  "}:{\"lastUpdateTimestamp\":%" PRId64 ",\"maxOffset\":%" PRId64
                  ",\"minOffset\":%" PRId64 "}",
                  ts, mx, mn);
    }
    tb_printf(&b, "}}");
    return body_answer(sp, req, cmd, &b);
}

static int query_consume_queue(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    const char *topic;
    int32_t q, count;
    int64_t index;
    if (topic_queue(sp, req, cmd, &topic, &q) != 0)
        return RMQ_EINVAL;
    const char *vi = a->cmd_ext_get(cmd, "index"), *vc = a->cmd_ext_get(cmd, "count");
    if (!vi || !vc || java_parse_long(vi, &index) != 0 || java_parse_int(vc, &count) != 0) {
        a->request_fail(req, "java.lang.NullPointerException");
        return RMQ_EINVAL;
    }
    const char *group = a->cmd_ext_get(cmd, "consumerGroup");
    /* getConsumeQueue: a queue without a consume queue is refused (Java
     * also makes an empty one for a queue that was only read, e.g. pulled;
     * rmqhost does not: docs/compat.md) */
    if (!store_queue_exists(sp->engine, topic, q)) {
        char remark[400];
        snprintf(remark, sizeof remark, "%d@%s is not exist!", q, topic);
        return finish(sp, req, cmd, a->cmd_new_response(cmd, RC_SYSTEM_ERROR, remark));
    }
    int64_t mn = store_min_offset(sp->engine, topic, q),
            mx = store_max_offset(sp->engine, topic, q);
    if (index < mn || index >= mx || count <= 0) {
        char remark[400];
        snprintf(remark, sizeof remark, "Index %" PRId64 " of %d@%s is not exist!", index, q,
                 topic);
        return finish(sp, req, cmd, a->cmd_new_response(cmd, RC_SUCCESS, remark));
    }
    size_t n = count > 1000 ? 1000 : (size_t)count;
    store_cq_entry *e = calloc(n, sizeof *e);
    if (!e)
        return RMQ_ENOMEM;
    size_t got = store_read_cq(sp->engine, topic, q, index, e, n);
    text_buf b = {0};
    tb_printf(&b, "{");
    if (group && *group) {
        rmq_consumer_sub_info *info = malloc(sizeof *info);
        if (info && meta_consumer_subscription(sp, group, topic, info) == 0 &&
            info->has_subscription) {
            tb_printf(&b, "\"subscriptionData\":{\"classFilterMode\":false,\"expressionType\":");
            tb_json_str(&b, info->expression_type[0] ? info->expression_type : "TAG");
            tb_printf(&b, ",\"subString\":");
            tb_json_str(&b, info->sub_string);
            tb_printf(&b, ",\"subVersion\":%" PRId64 ",\"topic\":", info->sub_version);
            tb_json_str(&b, topic);
            tb_printf(&b, "},");
        } else {
            char msg[600];
            snprintf(msg, sizeof msg, "%s@%s is not online!", group, topic);
            tb_printf(&b, "\"filterData\":");
            tb_json_str(&b, msg);
            tb_printf(&b, ",");
        }
        free(info);
    }
    tb_printf(&b, "\"maxQueueIndex\":%" PRId64 ",\"minQueueIndex\":%" PRId64 ",\"queueData\":[", mx,
              mn);
    for (size_t i = 0; i < got; i++)
        tb_printf(&b,
                  "%s{\"eval\":false,\"physicOffset\":%" PRId64 ",\"physicSize\":%d,"
                  "\"tagsCode\":%" PRId64 "}",
                  i ? "," : "", e[i].phys_offset, e[i].size, e[i].tags_code);
    tb_printf(&b, "]}");
    free(e);
    return body_answer_remark(sp, req, cmd, &b, JAVA_UNSET_REMARK);
}

int queue_admin_processors_register(store_plugin *sp)
{
    const rmq_host_api *a = sp->api;
    int rc = a->declare_executor(sp->ctx, "admin", sp->set.admin_threads, sp->set.admin_queue);
    struct {
        int32_t code;
        rmq_processor_fn fn;
    } t[] = {{29, search_offset}, {30, max_offset},   {31, min_offset},
             {32, earliest_time}, {202, topic_stats}, {321, query_consume_queue}};
    for (size_t i = 0; rc == 0 && i < sizeof t / sizeof t[0]; i++)
        rc = a->register_processor(sp->ctx, t[i].code, t[i].fn, sp, "admin");
    return rc;
}
