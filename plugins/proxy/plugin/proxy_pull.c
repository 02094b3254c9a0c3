/* proxy_pull.c — PullMessage (rocketmq-apis' offset-based consumption):
 * one PULL_MESSAGE (11) to the broker role through invoke_local at the
 * requested offset, with the filter as the request's own subscription (the
 * subscription sysFlag, so no registered consumer is needed). A request
 * with long_polling_timeout is a long poll: the PULL carries the suspend
 * flag with that time (at most maxLongPollingTimeoutMs and what the
 * deadline leaves), the store holds it until a message arrives or the time
 * is up, and the gRPC call is held meanwhile (grpc_hold +
 * invoke_local_async, no thread waits, as ReceiveMessage); without one an
 * empty queue answers at once. The stream
 * is the status, then each message, then next_offset. Java's proxy (5.3.x)
 * leaves PullMessage UNIMPLEMENTED; statuses here: FOUND → OK, no new or no
 * matched message → MESSAGE_NOT_FOUND, offset out of range → ILLEGAL_OFFSET
 * (each still followed by next_offset) — docs/compat.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_backend.h"
#include "proxy_internal.h"
#include "proxy_message.h"

#define PULL_MESSAGE 11
#define PULL_NOT_FOUND 19
#define PULL_RETRY_IMMEDIATELY 20
#define PULL_OFFSET_MOVED 21
#define TOPIC_NOT_EXIST 17
#define SUBSCRIPTION_GROUP_NOT_EXIST 26
#define FLAG_SUSPEND 0x2
#define FLAG_SUBSCRIPTION 0x4
#define PULL_MAX_BATCH 32

static int send_status(proxy *px, rmq_grpc_call *call, Apache__Rocketmq__V2__Code code,
                       const char *message)
{
    Apache__Rocketmq__V2__Status st;
    proxy_status(&st, code, message);
    Apache__Rocketmq__V2__PullMessageResponse r = APACHE__ROCKETMQ__V2__PULL_MESSAGE_RESPONSE__INIT;
    r.content_case = APACHE__ROCKETMQ__V2__PULL_MESSAGE_RESPONSE__CONTENT_STATUS;
    r.status = &st;
    return proxy_reply(px, call, &r.base);
}

static int send_next_offset(proxy *px, rmq_grpc_call *call, int64_t next)
{
    Apache__Rocketmq__V2__PullMessageResponse r = APACHE__ROCKETMQ__V2__PULL_MESSAGE_RESPONSE__INIT;
    r.content_case = APACHE__ROCKETMQ__V2__PULL_MESSAGE_RESPONSE__CONTENT_NEXT_OFFSET;
    r.next_offset = next;
    return proxy_reply(px, call, &r.base);
}

/* The found records as Messages (no receipt handle: nothing to ack). */
static int send_messages(proxy *px, rmq_grpc_call *call, const uint8_t *body, size_t blen)
{
    int rc = 0;
    proxy_md5 *md5 = proxy_md5_new(); /* NULL: each digest on its own */
    for (size_t at = 0; rc == 0 && body && at < blen;) {
        rec r;
        size_t n = rec_decode(body + at, blen - at, &r);
        if (!n)
            break;
        built b;
        if (msg_build(&b, &r, "", 0, px->api->now_wall_ms(), md5) == 0) {
            b.sys.receipt_handle = NULL;
            b.sys.invisible_duration = NULL;
            Apache__Rocketmq__V2__PullMessageResponse m =
                APACHE__ROCKETMQ__V2__PULL_MESSAGE_RESPONSE__INIT;
            m.content_case = APACHE__ROCKETMQ__V2__PULL_MESSAGE_RESPONSE__CONTENT_MESSAGE;
            m.message = &b.m;
            rc = proxy_reply(px, call, &m.base);
        } else {
            rc = RMQ_ENOMEM;
        }
        msg_free(&b);
        at += n;
    }
    proxy_md5_free(md5);
    return rc;
}

/* The broker role's answer (lrc < 0: none) as the stream's messages. */
static int pull_answer(proxy *px, rmq_grpc_call *call, int lrc, const rmq_cmd *resp, int64_t offset)
{
    const rmq_host_api *api = px->api;
    if (lrc < 0)
        return send_status(px, call,
                           lrc == RMQ_ETIMEDOUT ? PX_PROXY_TIMEOUT : PX_INTERNAL_SERVER_ERROR,
                           rmq_strerror(lrc));
    int rc;
    int32_t code = api->cmd_code(resp);
    const char *next = api->cmd_ext_get(resp, "nextBeginOffset");
    int64_t next_off = next ? strtoll(next, NULL, 10) : offset;
    const char *remark = api->cmd_remark(resp);
    switch (code) {
    case 0: {
        size_t blen = 0;
        const uint8_t *body = api->cmd_body(resp, &blen);
        rc = send_status(px, call, PX_OK, "OK");
        if (rc == 0)
            rc = send_messages(px, call, body, blen);
        break;
    }
    case PULL_NOT_FOUND:
    case PULL_RETRY_IMMEDIATELY:
        rc = send_status(px, call, APACHE__ROCKETMQ__V2__CODE__MESSAGE_NOT_FOUND, "no new message");
        break;
    case PULL_OFFSET_MOVED:
        rc = send_status(px, call, APACHE__ROCKETMQ__V2__CODE__ILLEGAL_OFFSET,
                         remark ? remark : "the offset is out of the queue's range");
        break;
    default:
        return send_status(px, call,
                           code == TOPIC_NOT_EXIST                ? PX_TOPIC_NOT_FOUND
                           : code == SUBSCRIPTION_GROUP_NOT_EXIST ? PX_CONSUMER_GROUP_NOT_FOUND
                                                                  : proxy_code_of_remoting(code),
                           remark ? remark : "pull failed");
    }
    if (rc == 0)
        rc = send_next_offset(px, call, next_off);
    return rc;
}

typedef struct pull_wait {
    proxy *px;
    rmq_grpc_call *call;
    int64_t offset;
} pull_wait;

/* The store's answer to the held PULL, on the thread that gave it. */
static void pull_answered(int err, const rmq_cmd *resp, void *ud)
{
    pull_wait *w = ud;
    if (err == RMQ_ESHUTDOWN) { /* this generation is going: nothing new yet */
        if (send_status(w->px, w->call, APACHE__ROCKETMQ__V2__CODE__MESSAGE_NOT_FOUND,
                        "no new message") == 0)
            send_next_offset(w->px, w->call, w->offset);
    } else
        pull_answer(w->px, w->call, err, resp, w->offset);
    w->px->api->grpc_finish(w->call, RMQ_GRPC_OK, NULL);
    w->px->api->grpc_release(w->call);
    free(w);
}

/* The long poll's length: the request's long_polling_timeout, at most
 * maxLongPollingTimeoutMs and what the deadline leaves (less a second for
 * the answer to travel); 0 = answer at once. */
static int64_t pull_poll_ms(proxy *px, rmq_grpc_call *call,
                            const Apache__Rocketmq__V2__PullMessageRequest *req)
{
    if (!req->long_polling_timeout)
        return 0;
    int64_t poll =
        req->long_polling_timeout->seconds * 1000 + req->long_polling_timeout->nanos / 1000000;
    if (poll > px->max_poll_ms)
        poll = px->max_poll_ms;
    uint64_t deadline = px->api->grpc_call_deadline_ms(call);
    uint64_t now = px->api->now_monotonic_ms();
    if (deadline) {
        int64_t left = deadline > now + 1000 ? (int64_t)(deadline - now - 1000) : 0;
        if (poll > left)
            poll = left;
    }
    return poll > 0 ? poll : 0;
}

int proxy_pull_message(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    const rmq_host_api *api = px->api;
    Apache__Rocketmq__V2__PullMessageRequest *req =
        apache__rocketmq__v2__pull_message_request__unpack(NULL, len, msg);
    if (!req)
        return api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                "PullMessageRequest: undecodable protobuf");
    int rc = 0;
    const char *group = req->group && req->group->name ? req->group->name : "";
    const Apache__Rocketmq__V2__MessageQueue *mq = req->message_queue;
    const char *topic = mq && mq->topic && mq->topic->name ? mq->topic->name : "";
    if (!group[0]) {
        rc = send_status(px, call, APACHE__ROCKETMQ__V2__CODE__ILLEGAL_CONSUMER_GROUP,
                         "consumer group cannot be empty");
        goto out;
    }
    if (!topic[0]) {
        rc = send_status(px, call, PX_ILLEGAL_TOPIC, "topic name cannot be empty");
        goto out;
    }
    if (mq->id < 0 || req->offset < 0) {
        rc = send_status(px, call, APACHE__ROCKETMQ__V2__CODE__ILLEGAL_OFFSET,
                         mq->id < 0 ? "message queue id cannot be negative"
                                    : "offset cannot be negative");
        goto out;
    }
    int batch =
        req->batch_size > 0 && req->batch_size < PULL_MAX_BATCH ? req->batch_size : PULL_MAX_BATCH;
    bool sql = req->filter_expression &&
               req->filter_expression->type == APACHE__ROCKETMQ__V2__FILTER_TYPE__SQL;
    const char *exp = req->filter_expression && req->filter_expression->expression &&
                              *req->filter_expression->expression
                          ? req->filter_expression->expression
                          : "*";
    char q[16], off[32], n[16], flag[16], ver[32], susp[32];
    int64_t poll = pull_poll_ms(px, call, req);
    snprintf(susp, sizeof susp, "%" PRId64, poll);
    snprintf(q, sizeof q, "%d", mq->id);
    snprintf(off, sizeof off, "%" PRId64, req->offset);
    snprintf(n, sizeof n, "%d", batch);
    snprintf(flag, sizeof flag, "%d", FLAG_SUBSCRIPTION | (poll > 0 ? FLAG_SUSPEND : 0));
    snprintf(ver, sizeof ver, "%" PRIu64, api->now_wall_ms());
    const char *kv[] = {"consumerGroup",
                        group,
                        "topic",
                        topic,
                        "queueId",
                        q,
                        "queueOffset",
                        off,
                        "maxMsgNums",
                        n,
                        "sysFlag",
                        flag,
                        "commitOffset",
                        "0",
                        "suspendTimeoutMillis",
                        susp,
                        "subscription",
                        exp,
                        "subVersion",
                        ver,
                        "expressionType",
                        sql ? "SQL92" : "TAG",
                        NULL};
    rmq_cmd *pr = api->cmd_new_request(PULL_MESSAGE);
    for (size_t i = 0; pr && kv[i]; i += 2)
        if (api->cmd_ext_set(pr, kv[i], kv[i + 1]) < 0) {
            api->cmd_free(pr);
            pr = NULL;
        }
    if (!pr) {
        rc = RMQ_ENOMEM;
        goto out;
    }
    if (poll > 0) {
        /* held in the store until a message comes or the poll is over */
        pull_wait *w = calloc(1, sizeof *w);
        if (w && api->grpc_hold(call, NULL, NULL) == 0) {
            w->px = px;
            w->call = call;
            w->offset = req->offset;
            int arc = proxy_broker_call_async(px, topic, mq->broker ? mq->broker->name : NULL, pr,
                                              poll, pull_answered, w);
            if (arc < 0) { /* pr is freed by the failed call */
                pull_answer(px, call, arc, NULL, req->offset);
                api->grpc_finish(call, RMQ_GRPC_OK, NULL);
                api->grpc_release(call);
                free(w);
            }
            goto out;
        }
        free(w);
        /* no hold (the generation is quiescing): answer now */
        snprintf(flag, sizeof flag, "%d", FLAG_SUBSCRIPTION);
        api->cmd_ext_set(pr, "sysFlag", flag);
    }
    rmq_cmd *resp = NULL;
    int lrc = proxy_broker_call(px, topic, mq->broker ? mq->broker->name : NULL, pr, &resp);
    rc = pull_answer(px, call, lrc, resp, req->offset);
    if (resp)
        api->cmd_free(resp);
out:
    apache__rocketmq__v2__pull_message_request__free_unpacked(req, NULL);
    return rc;
}
