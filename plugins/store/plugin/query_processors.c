/* query_processors.c — QUERY_MESSAGE (12: by key and store-time range,
 * _UNIQUE_KEY_QUERY) and VIEW_MESSAGE_BY_ID (33: one record by commit-log
 * offset) (protocol-messages.md §10.9.1–§10.9.2). On the query executor: the
 * index lookup reads files. Answered in the request's serialization. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "header_numbers.h"
#include "store_plugin.h"

static void free_body(void *ud, const void *data)
{
    (void)ud;
    free((void *)data);
}

/* Reflection-decoded headers: a missing or unparsable number is null, and
 * using it throws a NullPointerException. */
static int req_long(store_plugin *sp, rmq_request *req, const rmq_cmd *cmd, const char *k,
                    int64_t *out)
{
    const char *v = sp->api->cmd_ext_get(cmd, k);
    if (!v || java_parse_long(v, out) != 0) {
        sp->api->request_fail(req, "java.lang.NullPointerException");
        return -1;
    }
    return 0;
}

static int query_message(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    /* the index key is topic + "#" + key: Java's string concatenation
     * spells a missing one "null" */
    const char *topic = a->cmd_ext_get(cmd, "topic");
    const char *key = a->cmd_ext_get(cmd, "key");
    if (!topic)
        topic = "null";
    if (!key)
        key = "null";
    int64_t max_num = 0, begin, end;
    int32_t max32 = 0;
    /* _UNIQUE_KEY_QUERY replaces maxNum before it is unboxed */
    if (java_parse_bool(a->cmd_ext_get(cmd, "_UNIQUE_KEY_QUERY"))) {
        max_num = sp->set.default_query_max_num;
    } else {
        const char *mv = a->cmd_ext_get(cmd, "maxNum");
        if (!mv || java_parse_int(mv, &max32) != 0) {
            a->request_fail(req, "java.lang.NullPointerException");
            return RMQ_EINVAL;
        }
        max_num = max32;
    }
    if (req_long(sp, req, cmd, "beginTimestamp", &begin) ||
        req_long(sp, req, cmd, "endTimestamp", &end))
        return RMQ_EINVAL;
    store_query_result qr;
    memset(&qr, 0, sizeof qr);
    if (store_query_by_key(sp->engine, topic, key,
                           (int32_t)(max_num > INT32_MAX ? INT32_MAX : max_num), begin, end,
                           &qr) != 0)
        qr.count = 0;
    rmq_cmd *r;
    if (qr.count > 0 && qr.data) {
        r = a->cmd_new_response(cmd, RC_SUCCESS, NULL);
        if (r) {
            a->cmd_set_body(r, qr.data, qr.len, free_body, NULL);
            qr.data = NULL;
        }
    } else {
        r = a->cmd_new_response(cmd, RC_QUERY_NOT_FOUND,
                                "can not find message, maybe time range not correct");
    }
    free(qr.data);
    if (!r)
        return RMQ_ENOMEM;
    /* DefaultMessageStore.queryMessage copies the index's figures only from
     * a lookup that found offsets: no match leaves both 0 */
    bool matched = qr.count > 0;
    store_ext_i64(sp, r, "indexLastUpdateTimestamp", matched ? qr.index_last_update_timestamp : 0);
    store_ext_i64(sp, r, "indexLastUpdatePhyoffset", matched ? qr.index_last_update_phyoffset : 0);
    if (store_cmd_is_oneway(sp, cmd)) {
        a->cmd_free(r);
        return RMQ_OK;
    }
    return a->reply(req, r);
}

static int view_message(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    int64_t off;
    if (req_long(sp, req, cmd, "offset", &off))
        return RMQ_EINVAL;
    uint8_t *rec = NULL;
    size_t len = 0;
    rmq_cmd *r;
    if (off >= 0 && store_read_record(sp->engine, off, &rec, &len) == 0 && rec) {
        r = a->cmd_new_response(cmd, RC_SUCCESS, NULL);
        if (r)
            a->cmd_set_body(r, rec, len, free_body, NULL);
        else
            free(rec);
    } else {
        char remark[96];
        snprintf(remark, sizeof remark, "can not find message by the offset, %" PRId64, off);
        r = a->cmd_new_response(cmd, RC_SYSTEM_ERROR, remark);
    }
    if (!r)
        return RMQ_ENOMEM;
    if (store_cmd_is_oneway(sp, cmd)) {
        a->cmd_free(r);
        return RMQ_OK;
    }
    return a->reply(req, r);
}

int query_processors_register(store_plugin *sp)
{
    const rmq_host_api *a = sp->api;
    int rc = a->declare_executor(sp->ctx, "query", sp->set.query_threads, sp->set.query_queue);
    if (rc == 0)
        rc = a->register_processor(sp->ctx, 12, query_message, sp, "query");
    if (rc == 0)
        rc = a->register_processor(sp->ctx, 33, view_message, sp, "query");
    return rc;
}
