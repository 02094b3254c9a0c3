/* proxy_offset.c — the offset RPCs of MessagingService for pull-style
 * consumers, answered by the broker role through invoke_local:
 * GetOffset → QUERY_CONSUMER_OFFSET (14), UpdateOffset →
 * UPDATE_CONSUMER_OFFSET (15), QueryOffset → GET_MIN_OFFSET (31) for
 * BEGINNING, GET_MAX_OFFSET (30) for END, SEARCH_OFFSET_BY_TIMESTAMP (29)
 * for TIMESTAMP. Java's proxy (5.3.x) leaves these RPCs UNIMPLEMENTED;
 * the codes here follow rocketmq-apis' definitions (docs/compat.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_backend.h"
#include "proxy_internal.h"

#define QUERY_CONSUMER_OFFSET 14
#define UPDATE_CONSUMER_OFFSET 15
#define SEARCH_OFFSET_BY_TIMESTAMP 29
#define GET_MAX_OFFSET 30
#define GET_MIN_OFFSET 31
#define QUERY_NOT_FOUND 22
#define TOPIC_NOT_EXIST 17
#define SUBSCRIPTION_GROUP_NOT_EXIST 26

/* The queue of a request: false with st set when it names none. */
static bool queue_of(const Apache__Rocketmq__V2__MessageQueue *mq, const char **topic, int *qid,
                     Apache__Rocketmq__V2__Status *st)
{
    *topic = mq && mq->topic && mq->topic->name ? mq->topic->name : "";
    if (!**topic) {
        proxy_status(st, PX_ILLEGAL_TOPIC, "topic name cannot be empty");
        return false;
    }
    if (mq->id < 0) {
        proxy_status(st, PX_BAD_REQUEST, "message queue id cannot be negative");
        return false;
    }
    *qid = mq->id;
    return true;
}

/* One request to the broker role with header fields kv (NULL-ended): its
 * answer, or NULL with st set. */
static rmq_cmd *ask(proxy *px, const Apache__Rocketmq__V2__MessageQueue *mq, int code,
                    const char *const *kv, Apache__Rocketmq__V2__Status *st)
{
    const rmq_host_api *api = px->api;
    rmq_cmd *req = api->cmd_new_request(code);
    int rc = req ? 0 : RMQ_ENOMEM;
    for (size_t i = 0; rc == 0 && kv[i]; i += 2)
        rc = api->cmd_ext_set(req, kv[i], kv[i + 1]) < 0 ? RMQ_ENOMEM : 0;
    if (rc != 0) {
        if (req)
            api->cmd_free(req);
        proxy_status(st, PX_INTERNAL_SERVER_ERROR, "out of memory");
        return NULL;
    }
    rmq_cmd *resp = NULL;
    /* the broker of the message queue (cluster mode) */
    rc = proxy_broker_call(px, mq->topic->name, mq->broker ? mq->broker->name : NULL, req, &resp);
    if (rc < 0) {
        proxy_status(st, rc == RMQ_ETIMEDOUT ? PX_PROXY_TIMEOUT : PX_INTERNAL_SERVER_ERROR,
                     rmq_strerror(rc));
        return NULL;
    }
    return resp;
}

/* A failed answer's status: its remark (a static text when it has none). */
static void failed(proxy *px, rmq_cmd *resp, Apache__Rocketmq__V2__Status *st, char *buf,
                   size_t cap)
{
    int32_t code = px->api->cmd_code(resp);
    const char *remark = px->api->cmd_remark(resp);
    snprintf(buf, cap, "%s", remark ? remark : "");
    Apache__Rocketmq__V2__Code c =
        code == TOPIC_NOT_EXIST                ? PX_TOPIC_NOT_FOUND
        : code == SUBSCRIPTION_GROUP_NOT_EXIST ? PX_CONSUMER_GROUP_NOT_FOUND
        : code == QUERY_NOT_FOUND              ? APACHE__ROCKETMQ__V2__CODE__OFFSET_NOT_FOUND
                                               : proxy_code_of_remoting(code);
    proxy_status(st, c, buf[0] ? buf : NULL);
}

static int64_t offset_field(proxy *px, rmq_cmd *resp)
{
    const char *o = px->api->cmd_ext_get(resp, "offset");
    return o ? strtoll(o, NULL, 10) : 0;
}

/* One request to the broker role, its answer as st: OK (the answer's
 * offset into *offset when one is asked for) or the failure, whose text
 * stays in remark until the reply is sent. */
static void ask_status(proxy *px, const Apache__Rocketmq__V2__MessageQueue *mq, int code,
                       const char *const *kv, Apache__Rocketmq__V2__Status *st, char *remark,
                       size_t cap, int64_t *offset)
{
    rmq_cmd *r = ask(px, mq, code, kv, st);
    if (!r)
        return;
    if (px->api->cmd_code(r) == 0) {
        if (offset)
            *offset = offset_field(px, r);
        proxy_status(st, PX_OK, NULL);
    } else {
        failed(px, r, st, remark, cap);
    }
    px->api->cmd_free(r);
}

/* The consumer group of a request: NULL with st set when it names none. */
static const char *group_of(const Apache__Rocketmq__V2__Resource *group,
                            Apache__Rocketmq__V2__Status *st)
{
    if (group && group->name && group->name[0])
        return group->name;
    proxy_status(st, APACHE__ROCKETMQ__V2__CODE__ILLEGAL_CONSUMER_GROUP,
                 "consumer group cannot be empty");
    return NULL;
}

int proxy_get_offset(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    Apache__Rocketmq__V2__GetOffsetRequest *req =
        apache__rocketmq__v2__get_offset_request__unpack(NULL, len, msg);
    if (!req)
        return px->api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                    "GetOffsetRequest: undecodable protobuf");
    Apache__Rocketmq__V2__GetOffsetResponse resp = APACHE__ROCKETMQ__V2__GET_OFFSET_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st;
    char remark[512];
    const char *topic, *group = group_of(req->group, &st);
    int qid;
    if (group && queue_of(req->message_queue, &topic, &qid, &st)) {
        char q[16];
        snprintf(q, sizeof q, "%d", qid);
        const char *kv[] = {"consumerGroup", group, "topic", topic, "queueId", q, NULL};
        ask_status(px, req->message_queue, QUERY_CONSUMER_OFFSET, kv, &st, remark, sizeof remark,
                   &resp.offset);
    }
    resp.status = &st;
    return proxy_reply_free(px, call, &resp.base, &req->base);
}

int proxy_update_offset(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    Apache__Rocketmq__V2__UpdateOffsetRequest *req =
        apache__rocketmq__v2__update_offset_request__unpack(NULL, len, msg);
    if (!req)
        return px->api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                    "UpdateOffsetRequest: undecodable protobuf");
    Apache__Rocketmq__V2__UpdateOffsetResponse resp =
        APACHE__ROCKETMQ__V2__UPDATE_OFFSET_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st;
    char remark[512];
    const char *topic, *group = group_of(req->group, &st);
    int qid;
    if (group && req->offset < 0) {
        proxy_status(&st, APACHE__ROCKETMQ__V2__CODE__ILLEGAL_OFFSET, "offset cannot be negative");
    } else if (group && queue_of(req->message_queue, &topic, &qid, &st)) {
        char q[16], o[32];
        snprintf(q, sizeof q, "%d", qid);
        snprintf(o, sizeof o, "%" PRId64, req->offset);
        const char *kv[] = {"consumerGroup", group, "topic", topic, "queueId", q,
                            "commitOffset",  o,     NULL};
        ask_status(px, req->message_queue, UPDATE_CONSUMER_OFFSET, kv, &st, remark, sizeof remark,
                   NULL);
    }
    resp.status = &st;
    return proxy_reply_free(px, call, &resp.base, &req->base);
}

int proxy_query_offset(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    Apache__Rocketmq__V2__QueryOffsetRequest *req =
        apache__rocketmq__v2__query_offset_request__unpack(NULL, len, msg);
    if (!req)
        return px->api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                    "QueryOffsetRequest: undecodable protobuf");
    Apache__Rocketmq__V2__QueryOffsetResponse resp =
        APACHE__ROCKETMQ__V2__QUERY_OFFSET_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st;
    char remark[512];
    const char *topic;
    int qid;
    if (queue_of(req->message_queue, &topic, &qid, &st)) {
        char q[16], ts[32];
        snprintf(q, sizeof q, "%d", qid);
        int code = 0;
        switch (req->query_offset_policy) {
        case APACHE__ROCKETMQ__V2__QUERY_OFFSET_POLICY__BEGINNING: code = GET_MIN_OFFSET; break;
        case APACHE__ROCKETMQ__V2__QUERY_OFFSET_POLICY__END: code = GET_MAX_OFFSET; break;
        case APACHE__ROCKETMQ__V2__QUERY_OFFSET_POLICY__TIMESTAMP:
            if (req->timestamp)
                code = SEARCH_OFFSET_BY_TIMESTAMP;
            break;
        default: break;
        }
        if (!code) {
            proxy_status(&st, PX_BAD_REQUEST,
                         req->query_offset_policy ==
                                 APACHE__ROCKETMQ__V2__QUERY_OFFSET_POLICY__TIMESTAMP
                             ? "timestamp is required by the TIMESTAMP policy"
                             : "unknown query offset policy");
        } else {
            snprintf(ts, sizeof ts, "%" PRId64,
                     req->timestamp
                         ? req->timestamp->seconds * 1000 + req->timestamp->nanos / 1000000
                         : 0);
            const char *kv[] = {"topic", topic, "queueId", q, "timestamp", ts, NULL};
            if (code != SEARCH_OFFSET_BY_TIMESTAMP)
                kv[4] = NULL;
            ask_status(px, req->message_queue, code, kv, &st, remark, sizeof remark, &resp.offset);
        }
    }
    resp.status = &st;
    return proxy_reply_free(px, call, &resp.base, &req->base);
}
