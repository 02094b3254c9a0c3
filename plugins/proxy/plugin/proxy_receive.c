/* proxy_receive.c — the consumer RPCs of MessagingService on the store's
 * POP (plugins/store pop_processors.c) through invoke_local:
 * ReceiveMessage → POP_MESSAGE (200050) over every queue of the topic on
 * this broker (queueId -1 as Java's proxy; order=true for a FIFO group), each
 * stored record becoming a v2 Message (status first, then the messages,
 * then the delivery timestamp, as Java's ReceiveMessageResponseStreamWriter);
 * AckMessage → ACK_MESSAGE (200051) per entry; ChangeInvisibleDuration →
 * CHANGE_MESSAGE_INVISIBLETIME (200053). The receipt handle is the POP
 * extraInfo string (ExtraInfoUtil layout: startOffset popTime invisibleTime
 * reviveQid retry brokerName queueId offset) plus the commit-log offset
 * (ForwardMessageToDeadLetterQueue needs it); clients treat it as opaque.
 * ForwardMessageToDeadLetterQueue → CONSUMER_SEND_MSG_BACK (36) with
 * delayLevel -1 (to %DLQ%<group>), then ACK_MESSAGE, as Java's proxy.
 * Long polling: the POP carries the polling time (proxy_receive_wait.c) and
 * the store holds it until a message arrives; the gRPC call is held
 * meanwhile and answered from the store's answer (ABI 1.11). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proxy_backend.h"
#include "proxy_internal.h"
#include "proxy_message.h"
#include "proxy_receipt.h"

#define POP_MESSAGE 200050
#define ACK_MESSAGE 200051
#define CHANGE_INVISIBLETIME 200053
#define POP_MAX_BATCH 32
#define DEFAULT_INVISIBLE_MS 30000
#define PULL_NOT_FOUND 19
#define POLLING_TIMEOUT 210
#define POLLING_FULL 209
#define NO_MESSAGE 208
#define SYSFLAG_BORNHOST_V6 0x10
#define SYSFLAG_STOREHOST_V6 0x20

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint64_t be64(const uint8_t *p)
{
    return ((uint64_t)be32(p) << 32) | be32(p + 4);
}

static int64_t ms_of(const Google__Protobuf__Duration *d, int64_t dflt)
{
    return d ? d->seconds * 1000 + d->nanos / 1000000 : dflt;
}

static void host_text(const uint8_t *p, bool v6, char *out, size_t cap)
{
    if (v6) {
        snprintf(out, cap, "[%02x%02x:%02x%02x:...]:%u", p[0], p[1], p[2], p[3],
                 (unsigned)be32(p + 16));
        return;
    }
    /* per received message, twice: by hand rather than snprintf */
    char t[32];
    size_t n = 0;
    for (int i = 0; i < 4; i++) {
        n += proxy_ll_text(p[i], t + n);
        t[n++] = i < 3 ? '.' : ':';
    }
    n += proxy_ll_text(be32(p + 4), t + n);
    n = n < cap ? n : cap - 1;
    memcpy(out, t, n);
    out[n] = '\0';
}

/* v as width upper-case hex digits (the "%0*X" of a message id) */
static void hex_put(char *out, uint64_t v, int width)
{
    static const char hex[] = "0123456789ABCDEF";
    for (int i = width - 1; i >= 0; i--, v >>= 4)
        out[i] = hex[v & 15];
}

/* Decode the record at p (len bytes left): its size, 0 when malformed. */
size_t rec_decode(const uint8_t *p, size_t len, rec *r)
{
    if (len < 4)
        return 0;
    size_t total = be32(p);
    if (total < 60 || total > len)
        return 0;
    size_t at = 8;
    r->body_crc = (int32_t)be32(p + at);
    r->queue_id = (int32_t)be32(p + at + 4);
    at += 12; /* crc, queueId, flag */
    r->queue_offset = (int64_t)be64(p + at);
    r->phys_offset = (int64_t)be64(p + at + 8);
    r->sys_flag = (int32_t)be32(p + at + 16);
    r->born_ts = (int64_t)be64(p + at + 20);
    at += 28;
    bool bv6 = r->sys_flag & SYSFLAG_BORNHOST_V6, sv6 = r->sys_flag & SYSFLAG_STOREHOST_V6;
    size_t bl = bv6 ? 20 : 8, sl = sv6 ? 20 : 8;
    if (at + bl + 8 + sl + 4 + 8 + 4 > total)
        return 0;
    host_text(p + at, bv6, r->born_host, sizeof r->born_host);
    at += bl;
    r->store_ts = (int64_t)be64(p + at);
    at += 8;
    host_text(p + at, sv6, r->store_host, sizeof r->store_host);
    at += sl;
    r->reconsume = (int32_t)be32(p + at);
    at += 4 + 8; /* reconsumeTimes, preparedTransactionOffset */
    r->body_len = (int32_t)be32(p + at);
    at += 4;
    if (r->body_len < 0 || at + (size_t)r->body_len + 1 > total)
        return 0;
    r->body = p + at;
    at += (size_t)r->body_len;
    size_t tl = p[at++];
    if (at + tl + 2 > total)
        return 0;
    memcpy(r->topic, p + at, tl); /* tl < sizeof r->topic */
    r->topic[tl] = '\0';
    at += tl;
    r->props_len = (uint16_t)((p[at] << 8) | p[at + 1]);
    at += 2;
    if (at + r->props_len > total)
        return 0;
    r->props = (const char *)p + at;
    return total;
}

static void ts_of(Google__Protobuf__Timestamp *t, int64_t ms)
{
    google__protobuf__timestamp__init(t);
    t->seconds = ms / 1000;
    t->nanos = (int32_t)(ms % 1000) * 1000000;
}

int msg_build(built *b, const rec *r, const char *receipt, int64_t invisible_ms, uint64_t now_ms,
              proxy_md5 *md5)
{
    int64_t deliver_ms = -1;
    bool delayed = false;
    memset(b, 0, sizeof *b);
    apache__rocketmq__v2__message__init(&b->m);
    apache__rocketmq__v2__resource__init(&b->topic);
    apache__rocketmq__v2__system_properties__init(&b->sys);
    apache__rocketmq__v2__digest__init(&b->digest);
    b->topic.name = (char *)r->topic;
    b->m.topic = &b->topic;
    b->m.system_properties = &b->sys;
    b->m.body.data = (uint8_t *)r->body;
    b->m.body.len = (size_t)r->body_len;
    /* MD5 of the body in upper-case hex, as Java's proxy (GrpcConverter):
     * the 5.x clients verify it and discard a mismatch as corrupted */
    proxy_md5_hex(md5, r->body, (size_t)r->body_len, b->digest_text);
    b->digest.type = APACHE__ROCKETMQ__V2__DIGEST_TYPE__MD5;
    b->digest.checksum = b->digest_text;
    b->sys.body_digest = &b->digest;
    b->sys.body_encoding = APACHE__ROCKETMQ__V2__ENCODING__IDENTITY;
    b->sys.message_type = APACHE__ROCKETMQ__V2__MESSAGE_TYPE__NORMAL;
    ts_of(&b->born, r->born_ts);
    ts_of(&b->store, r->store_ts);
    b->sys.born_timestamp = &b->born;
    b->sys.store_timestamp = &b->store;
    b->sys.born_host = (char *)r->born_host;
    b->sys.store_host = (char *)r->store_host;
    b->sys.queue_id = r->queue_id;
    b->sys.queue_offset = r->queue_offset;
    b->sys.delivery_attempt = r->reconsume + 1;
    google__protobuf__duration__init(&b->invisible);
    b->invisible.seconds = invisible_ms / 1000;
    b->invisible.nanos = (int32_t)(invisible_ms % 1000) * 1000000;
    b->sys.invisible_duration = &b->invisible;
    size_t rl = strlen(receipt);
    rl = rl < sizeof b->receipt ? rl : sizeof b->receipt - 1;
    memcpy(b->receipt, receipt, rl);
    b->receipt[rl] = '\0';
    b->sys.receipt_handle = b->receipt;
    /* "%016" PRIX64 "%08X" of phys_offset and (unsigned)queue_offset */
    hex_put(b->msg_id, (uint64_t)r->phys_offset, 16);
    hex_put(b->msg_id + 16, (uint32_t)r->queue_offset, 8);
    b->msg_id[24] = '\0';
    b->sys.message_id = b->msg_id;
    /* properties: name U+0001 value U+0002 ... — entries, key pointers and
     * the copy in one block sized by what the text holds (four callocs of
     * props_len / 2 slots each were over 1 KiB, malloc's slow path, per
     * message) */
    size_t nent = 1, nspace = 0;
    for (uint16_t i = 0; i < r->props_len; i++) {
        nent += r->props[i] == 2;
        nspace += r->props[i] == ' ';
    }
    size_t nkey = nspace + nent; /* a KEYS value splits into spaces + 1 */
    char *blk = malloc(nent * (sizeof *b->ents + sizeof *b->entp) + nkey * sizeof *b->keys +
                       (size_t)r->props_len + 1);
    if (!blk)
        return RMQ_ENOMEM;
    b->ents = (Apache__Rocketmq__V2__Message__UserPropertiesEntry *)(void *)blk;
    b->entp = (Apache__Rocketmq__V2__Message__UserPropertiesEntry **)(void *)(b->ents + nent);
    b->keys = (char **)(b->entp + nent);
    b->props = (char *)(b->keys + nkey);
    memcpy(b->props, r->props, r->props_len);
    b->props[r->props_len] = '\0';
    char *p = b->props, *end = b->props + r->props_len;
    while (p < end) {
        char *sep = memchr(p, 2, (size_t)(end - p));
        char *stop = sep ? sep : end;
        *stop = '\0';
        char *eq = strchr(p, 1);
        if (eq && eq > p) {
            *eq = '\0';
            char *name = p, *val = eq + 1;
            if (strcmp(name, "TAGS") == 0) {
                b->sys.tag = val;
            } else if (strcmp(name, "KEYS") == 0) {
                for (char *k = strtok(val, " "); k; k = strtok(NULL, " "))
                    b->keys[b->sys.n_keys++] = k;
            } else if (strcmp(name, "UNIQ_KEY") == 0) {
                b->sys.message_id = val;
            } else if (strcmp(name, "__SHARDINGKEY") == 0) {
                b->sys.message_group = val;
                b->sys.message_type = APACHE__ROCKETMQ__V2__MESSAGE_TYPE__FIFO;
            } else if (strcmp(name, "TRACE_CONTEXT") == 0) {
                b->sys.trace_context = val;
            } else if (strcmp(name, "TIMER_DELIVER_MS") == 0) {
                deliver_ms = deliver_ms < 0 ? strtoll(val, NULL, 10) : deliver_ms;
                delayed = true;
            } else if (strcmp(name, "TIMER_DELAY_SEC") == 0) {
                /* Java's proxy: now + the delay, and it wins over DELIVER_MS */
                deliver_ms = (int64_t)now_ms + strtoll(val, NULL, 10) * 1000;
                delayed = true;
            } else if (strcmp(name, "DELAY") == 0) {
                delayed = true;
            } else if (!proxy_is_system_key(name) && strcmp(name, "POP_CK") != 0) {
                Apache__Rocketmq__V2__Message__UserPropertiesEntry *e =
                    &b->ents[b->m.n_user_properties];
                apache__rocketmq__v2__message__user_properties_entry__init(e);
                e->key = name;
                e->value = val;
                b->entp[b->m.n_user_properties++] = e;
            }
        }
        p = stop + 1;
    }
    /* Java's order: TRANSACTION, then DELAY (a delay level or a timer
     * property), then FIFO (a sharding key), else NORMAL */
    if (delayed)
        b->sys.message_type = APACHE__ROCKETMQ__V2__MESSAGE_TYPE__DELAY;
    if (deliver_ms >= 0) {
        ts_of(&b->deliver, deliver_ms);
        b->sys.delivery_timestamp = &b->deliver;
    }
    b->sys.keys = b->keys;
    b->m.user_properties = b->entp;
    return 0;
}

void msg_free(built *b)
{
    free(b->ents); /* the block entp, keys and props live in too */
}

struct proxy_built {
    built b;
    rec r;
    uint8_t *copy; /* the record the message points into */
};

proxy_built *proxy_message_build(const uint8_t *record, size_t len)
{
    proxy_built *pb = calloc(1, sizeof *pb);
    if (!pb || !(pb->copy = malloc(len ? len : 1))) {
        free(pb);
        return NULL;
    }
    memcpy(pb->copy, record, len);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t now_ms = (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
    if (rec_decode(pb->copy, len, &pb->r) == 0 ||
        msg_build(&pb->b, &pb->r, "", 0, now_ms, NULL) != 0) {
        proxy_message_free(pb);
        return NULL;
    }
    /* not a received message: no receipt handle, no invisible time */
    pb->b.sys.receipt_handle = NULL;
    pb->b.sys.invisible_duration = NULL;
    return pb;
}

Apache__Rocketmq__V2__Message *proxy_message_of(proxy_built *pb)
{
    return &pb->b.m;
}

void proxy_message_free(proxy_built *pb)
{
    if (!pb)
        return;
    msg_free(&pb->b);
    free(pb->copy);
    free(pb);
}

static int send_status(proxy *px, rmq_grpc_call *call, Apache__Rocketmq__V2__Code code,
                       const char *message)
{
    Apache__Rocketmq__V2__Status st;
    proxy_status(&st, code, message);
    Apache__Rocketmq__V2__ReceiveMessageResponse r =
        APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__INIT;
    r.content_case = APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_STATUS;
    r.status = &st;
    return proxy_reply(px, call, &r.base);
}

/* The entry of startOffsetInfo "<retry> qid offset;..." for the queue
 * (retry flag, qid): its start offset. */
static int64_t start_offset_of(const char *info, const char *retry, int32_t qid, int64_t dflt)
{
    for (const char *p = info; p && *p;) {
        int q = -1;
        long long off = 0;
        char flag[4];
        if (sscanf(p, "%3s %d %lld", flag, &q, &off) == 3 && q == qid && strcmp(flag, retry) == 0)
            return off;
        p = strchr(p, ';');
        if (p)
            p++;
    }
    return dflt;
}

/* The value of property `name` (name U+0001 value U+0002 ...) into out;
 * false when absent or too long. */
static bool prop_of(const rec *r, const char *name, char *out, size_t cap)
{
    size_t kl = strlen(name);
    for (const char *p = r->props, *end = r->props + r->props_len; p < end;) {
        const char *stop = memchr(p, 2, (size_t)(end - p));
        if (!stop)
            stop = end;
        if ((size_t)(stop - p) > kl && memcmp(p, name, kl) == 0 && p[kl] == 1 &&
            (size_t)(stop - p - kl - 1) < cap) {
            snprintf(out, cap, "%.*s", (int)(stop - p - kl - 1), p + kl + 1);
            return true;
        }
        p = stop + 1;
    }
    return false;
}

/* A record of the store's POP retry topic (%RETRY%<group>_<topic>, or
 * %RETRY%<group>+<topic>): its receipt's retry flag "1" / "2"
 * (ExtraInfoUtil.getRetry), else "0". Java's proxy shows such a message
 * under the topic the client asked for (the remoting client's
 * processPopResponse sets it), which the copy's RETRY_TOPIC property holds:
 * r->topic becomes that. */
static const char *retry_flag_and_topic(rec *r)
{
    if (strncmp(r->topic, "%RETRY%", 7) != 0)
        return "0";
    const char *flag = strchr(r->topic + 7, '+') ? "2" : "1";
    char orig[sizeof r->topic];
    if (prop_of(r, "RETRY_TOPIC", orig, sizeof orig))
        snprintf(r->topic, sizeof r->topic, "%s", orig);
    return flag;
}

static void add_status(proxy_replies *out, Apache__Rocketmq__V2__Code code, const char *message)
{
    Apache__Rocketmq__V2__Status st;
    proxy_status(&st, code, message);
    Apache__Rocketmq__V2__ReceiveMessageResponse r =
        APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__INIT;
    r.content_case = APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_STATUS;
    r.status = &st;
    proxy_replies_add(out, &r.base);
}

/* The answer messages of a POP's answer (or lrc < 0): status, messages,
 * delivery timestamp. */
static void receive_answer_build(proxy *px, proxy_replies *out, int lrc, const rmq_cmd *resp,
                                 int64_t invisible, const char *broker)
{
    const rmq_host_api *api = px->api;
    if (lrc < 0) {
        add_status(out, APACHE__ROCKETMQ__V2__CODE__PROXY_TIMEOUT, rmq_strerror(lrc));
        return;
    }
    int32_t code = api->cmd_code(resp);
    if (code == PULL_NOT_FOUND || code == POLLING_TIMEOUT) {
        add_status(out, APACHE__ROCKETMQ__V2__CODE__MESSAGE_NOT_FOUND, "no new message");
        return;
    }
    if (code == POLLING_FULL) { /* Java's ReceiveMessageResponseStreamWriter */
        add_status(out, PX_TOO_MANY_REQUESTS, "polling full");
        return;
    }
    if (code != 0) {
        const char *remark = api->cmd_remark(resp);
        add_status(out, code == 17 ? PX_TOPIC_NOT_FOUND : proxy_code_of_remoting(code),
                   remark ? remark : "pop failed");
        return;
    }
    const char *pop_time = api->cmd_ext_get(resp, "popTime");
    const char *revive = api->cmd_ext_get(resp, "reviveQid");
    const char *starts = api->cmd_ext_get(resp, "startOffsetInfo");
    size_t blen = 0;
    const uint8_t *body = api->cmd_body(resp, &blen);
    add_status(out, PX_OK, "OK");
    /* each message's protobuf: about its stored record (body, properties)
     * and its receipt, digest and system properties, ~1 KiB at most */
    if (body)
        proxy_replies_reserve(out, blen + blen / 4 + 4096);
    proxy_md5 *md5 = proxy_md5_new(); /* NULL: each digest on its own */
    for (size_t at = 0; out->err == 0 && body && at < blen;) {
        rec r;
        size_t n = rec_decode(body + at, blen - at, &r);
        if (!n)
            break;
        char receipt[512], ck[400];
        /* a retry-topic message as the store answers it by default (Java's
         * popResponseReturnActualRetryTopic false): under the asked topic,
         * its receipt in POP_CK; Java's proxy hands out that, plus the
         * commit-log offset */
        bool has_ck = prop_of(&r, "POP_CK", ck, sizeof ck);
        const char *retry = has_ck ? "0" : retry_flag_and_topic(&r);
        if (has_ck)
            snprintf(receipt, sizeof receipt, "%s %" PRId64, ck, r.phys_offset);
        else
            proxy_receipt_format(
                receipt, sizeof receipt, start_offset_of(starts, retry, r.queue_id, r.queue_offset),
                pop_time ? pop_time : "0", invisible, revive ? revive : "0", retry,
                broker && *broker ? broker : "broker", r.queue_id, r.queue_offset, r.phys_offset);
        built b;
        if (msg_build(&b, &r, receipt, invisible, api->now_wall_ms(), md5) == 0) {
            Apache__Rocketmq__V2__ReceiveMessageResponse m =
                APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__INIT;
            m.content_case = APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_MESSAGE;
            m.message = &b.m;
            proxy_replies_add(out, &m.base);
        } else {
            out->err = RMQ_ENOMEM;
        }
        msg_free(&b);
        at += n;
    }
    proxy_md5_free(md5);
    if (out->err == 0) {
        Google__Protobuf__Timestamp ts;
        ts_of(&ts, (int64_t)api->now_wall_ms());
        Apache__Rocketmq__V2__ReceiveMessageResponse d =
            APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__INIT;
        d.content_case = APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_DELIVERY_TIMESTAMP;
        d.delivery_timestamp = &ts;
        proxy_replies_add(out, &d.base);
    }
}

/* One hand-off for the whole answer (a batch of 32 was 34 loop tasks);
 * the messages built before a failure still go out, as they did one by
 * one, and the call stays open for the caller to end. */
int proxy_receive_answer(proxy *px, rmq_grpc_call *call, int lrc, const rmq_cmd *resp,
                         int64_t invisible, const char *broker, int finish_status)
{
    proxy_replies out = {0};
    receive_answer_build(px, &out, lrc, resp, invisible, broker);
    int err = out.err;
    int rc = proxy_replies_flush(px, call, &out, err ? RMQ_GRPC_NO_FINISH : finish_status);
    return err ? err : rc;
}

int proxy_receive_message(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    const rmq_host_api *api = px->api;
    Apache__Rocketmq__V2__ReceiveMessageRequest *req =
        apache__rocketmq__v2__receive_message_request__unpack(NULL, len, msg);
    if (!req)
        return api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT, "malformed ReceiveMessageRequest");
    int rc = 0;
    const char *group = req->group ? req->group->name : NULL;
    const char *topic =
        req->message_queue && req->message_queue->topic ? req->message_queue->topic->name : NULL;
    const char *broker =
        req->message_queue && req->message_queue->broker ? req->message_queue->broker->name : "";
    if (!group || !*group || !topic || !*topic) {
        rc = send_status(px, call, APACHE__ROCKETMQ__V2__CODE__BAD_REQUEST,
                         "group and message_queue.topic are required");
        goto out;
    }
    int64_t poll_ms = 0;
    const char *poll_why = NULL;
    if (proxy_polling_time(px, call, req, &poll_ms, &poll_why) != 0) {
        rc = send_status(px, call, proxy_polling_refusal_code(px, call), poll_why);
        goto out;
    }
    int64_t invisible = ms_of(req->invisible_duration, DEFAULT_INVISIBLE_MS);
    if (invisible <= 0) {
        rc = send_status(px, call, APACHE__ROCKETMQ__V2__CODE__ILLEGAL_INVISIBLE_TIME,
                         "the invisible time is illegal");
        goto out;
    }
    int batch = req->batch_size > 0 ? req->batch_size : POP_MAX_BATCH;
    if (batch > POP_MAX_BATCH)
        batch = POP_MAX_BATCH;
    bool sql = req->filter_expression &&
               req->filter_expression->type == APACHE__ROCKETMQ__V2__FILTER_TYPE__SQL;
    const char *exp = req->filter_expression && req->filter_expression->expression &&
                              *req->filter_expression->expression
                          ? req->filter_expression->expression
                          : "*";
    char num[4][32];
    snprintf(num[0], sizeof num[0], "%d", batch);
    snprintf(num[1], sizeof num[1], "%" PRId64, invisible);
    snprintf(num[2], sizeof num[2], "%" PRIu64, api->now_wall_ms());
    snprintf(num[3], sizeof num[3], "%" PRId64, poll_ms);
    /* a FIFO (orderly) group pops in order: a queue whose last batch is
     * unacknowledged gives nothing until it is acknowledged or expires, so
     * a message group's next message waits for the one before (Java's
     * ReceiveMessageActivity) */
    bool fifo = proxy_group_fifo(px, group);
    rmq_cmd *pr = api->cmd_new_request(POP_MESSAGE);
    if (!pr) {
        rc = RMQ_ENOMEM;
        goto out;
    }
    const char *order = fifo ? "true" : "false";
    const char *kv[] = {
        "consumerGroup", group,  "topic",         topic,  "queueId",  "-1",
        "maxMsgNums",    num[0], "invisibleTime", num[1], "pollTime", num[3],
        "bornTime",      num[2], "initMode",      "1",    "expType",  sql ? "SQL92" : "TAG",
        "exp",           exp,    "order",         order,  NULL};
    for (size_t i = 0; kv[i]; i += 2)
        api->cmd_ext_set(pr, kv[i], kv[i + 1]);
    /* a FIFO client repeats a receive whose answer it lost with the same
     * attempt_id: the store hands that batch out again (Java's proxy
     * passes it on as the POP's attemptId) */
    if (req->attempt_id && *req->attempt_id)
        api->cmd_ext_set(pr, "attemptId", req->attempt_id);
    /* a long poll waits in the store without holding this thread */
    if (poll_ms > 0 && proxy_receive_wait(px, call, pr, invisible, broker) == 0)
        goto out;
    if (poll_ms > 0) /* no hold (the generation is quiescing): answer now */
        api->cmd_ext_set(pr, "pollTime", "0");
    rmq_cmd *resp = NULL;
    int lrc = proxy_broker_call(px, topic, broker, pr, &resp);
    rc = proxy_receive_answer(px, call, lrc, resp, invisible, broker, RMQ_GRPC_OK);
    if (resp)
        api->cmd_free(resp);
out:
    apache__rocketmq__v2__receive_message_request__free_unpacked(req, NULL);
    return rc;
}

/* One ACK_MESSAGE / CHANGE_MESSAGE_INVISIBLETIME: the remoting answer (or
 * NULL with *lrc set). */
/* The request of ack_call, or NULL with *lrc set; *rh: the parsed handle. */
static rmq_cmd *ack_request(proxy *px, int code, const char *group, const char *topic,
                            const char *receipt, int64_t invisible, int *lrc, pop_receipt *rh)
{
    const rmq_host_api *api = px->api;
    *lrc = 0;
    if (!proxy_receipt_parse(receipt, rh)) {
        *lrc = RMQ_EINVAL;
        return NULL;
    }
    rmq_cmd *req = api->cmd_new_request(code);
    if (!req) {
        *lrc = RMQ_ENOMEM;
        return NULL;
    }
    char q[24], o[24], inv[24], real[600];
    /* the handle's retry flag names the POP retry topic the message is in
     * (Java's ReceiptHandle.getRealTopic); routing stays by the topic */
    if (strcmp(rh->retry, "1") == 0 || strcmp(rh->retry, "2") == 0) {
        snprintf(real, sizeof real, "%%RETRY%%%s%c%s", group, rh->retry[0] == '2' ? '+' : '_',
                 topic);
        topic = real;
    }
    proxy_ll_text(rh->queue_id, q);
    proxy_ll_text(rh->offset, o);
    proxy_ll_text(invisible, inv);
    const char *kv[] = {
        "consumerGroup", group,    "topic", topic,           "queueId", q,   "extraInfo",
        receipt,         "offset", o,       "invisibleTime", inv,       NULL};
    for (size_t i = 0; kv[i]; i += 2)
        api->cmd_ext_set(req, kv[i], kv[i + 1]);
    return req;
}

static rmq_cmd *ack_call(proxy *px, int code, const char *group, const char *topic,
                         const char *receipt, int64_t invisible, int *lrc)
{
    pop_receipt rh;
    rmq_cmd *req = ack_request(px, code, group, topic, receipt, invisible, lrc, &rh);
    if (!req)
        return NULL;
    rmq_cmd *resp = NULL;
    /* to the broker the message came from, as the handle names it */
    *lrc = proxy_broker_call(px, topic, rh.broker, req, &resp);
    return *lrc < 0 ? NULL : resp;
}

/* One AckMessage call in flight: the handler runs on the gRPC server's I/O
 * loop and each entry goes to the store with invoke_local_async, whose
 * inline ACK processor answers at once on this same thread (as SendMessage,
 * proxy_send.c): an acknowledgement crosses no thread. */
typedef struct ack_call_state {
    proxy *px;
    rmq_grpc_call *call;
    Apache__Rocketmq__V2__AckMessageRequest *req;
    Apache__Rocketmq__V2__Status *sts;
    size_t next;
    atomic_int phase; /* proxy_step_* */
} ack_call_state;

static void ack_entry_status(Apache__Rocketmq__V2__Status *st, int lrc, const rmq_cmd *r,
                             const rmq_host_api *api)
{
    int32_t code = r ? api->cmd_code(r) : -1;
    if (lrc == RMQ_EINVAL)
        proxy_status(st, APACHE__ROCKETMQ__V2__CODE__INVALID_RECEIPT_HANDLE,
                     "receipt handle is invalid");
    else if (!r)
        proxy_status(st, PX_PROXY_TIMEOUT, NULL);
    else if (code == 0)
        proxy_status(st, PX_OK, "OK");
    else
        proxy_status(st, proxy_code_of_remoting(code), "ack failed");
}

/* Answer with every entry's status; ends, releases and frees. */
static void ack_call_answer(ack_call_state *ac)
{
    proxy *px = ac->px;
    const rmq_host_api *api = px->api;
    size_t n = ac->req->n_entries;
    Apache__Rocketmq__V2__AckMessageResponse resp =
        APACHE__ROCKETMQ__V2__ACK_MESSAGE_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status status;
    Apache__Rocketmq__V2__AckMessageResultEntry *ents = calloc(n ? n : 1, sizeof *ents);
    Apache__Rocketmq__V2__AckMessageResultEntry **entp = calloc(n ? n : 1, sizeof *entp);
    if (!ents || !entp) {
        api->grpc_finish(ac->call, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
    } else {
        size_t failed = 0;
        for (size_t i = 0; i < n; i++) {
            apache__rocketmq__v2__ack_message_result_entry__init(&ents[i]);
            ents[i].message_id = ac->req->entries[i]->message_id;
            ents[i].receipt_handle = ac->req->entries[i]->receipt_handle;
            ents[i].status = &ac->sts[i];
            entp[i] = &ents[i];
            failed += ac->sts[i].code != PX_OK;
        }
        /* Java: OK when every entry is, MULTIPLE_RESULTS otherwise (one entry: its own) */
        if (failed == 0)
            proxy_status(&status, PX_OK, "OK");
        else if (n == 1)
            status = ac->sts[0];
        else
            proxy_status(&status, PX_MULTIPLE_RESULTS, "ack has multiple results");
        resp.status = &status;
        resp.n_entries = n;
        resp.entries = entp;
        if (proxy_reply(px, ac->call, &resp.base) == 0)
            api->grpc_finish(ac->call, RMQ_GRPC_OK, NULL);
        else
            api->grpc_finish(ac->call, RMQ_GRPC_INTERNAL, "cannot encode the answer");
    }
    free(ents);
    free(entp);
    api->grpc_release(ac->call);
    free(ac->sts);
    apache__rocketmq__v2__ack_message_request__free_unpacked(ac->req, NULL);
    free(ac);
}

static void ack_step(ack_call_state *ac);

static void ack_answered(int err, const rmq_cmd *resp, void *ud)
{
    ack_call_state *ac = ud;
    ack_entry_status(&ac->sts[ac->next], err, err < 0 ? NULL : resp, ac->px->api);
    ac->next++;
    if (proxy_step_answered(&ac->phase))
        ack_step(ac);
}

static void ack_step(ack_call_state *ac)
{
    proxy *px = ac->px;
    const char *group = ac->req->group->name;
    const char *topic = ac->req->topic->name;
    while (ac->next < ac->req->n_entries) {
        size_t i = ac->next;
        int lrc = 0;
        pop_receipt rh;
        rmq_cmd *cmd = ack_request(px, ACK_MESSAGE, group, topic,
                                   ac->req->entries[i]->receipt_handle, 0, &lrc, &rh);
        if (cmd) {
            proxy_step_issuing(&ac->phase);
            /* to the broker the message came from, as the handle names it */
            lrc = proxy_broker_call_async(px, topic, rh.broker, cmd, 0, ack_answered, ac);
            if (lrc == 0) {
                if (proxy_step_wait(&ac->phase))
                    return; /* ack_answered continues on the answering thread */
                continue;
            }
        }
        ack_entry_status(&ac->sts[i], lrc, NULL, px->api);
        ac->next++;
    }
    ack_call_answer(ac);
}

int proxy_ack_message(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    const rmq_host_api *api = px->api;
    Apache__Rocketmq__V2__AckMessageRequest *req =
        apache__rocketmq__v2__ack_message_request__unpack(NULL, len, msg);
    if (!req)
        return api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT, "malformed AckMessageRequest");
    const char *group = req->group ? req->group->name : NULL;
    const char *topic = req->topic ? req->topic->name : NULL;
    if (!group || !*group || !topic || !*topic) {
        Apache__Rocketmq__V2__AckMessageResponse resp =
            APACHE__ROCKETMQ__V2__ACK_MESSAGE_RESPONSE__INIT;
        Apache__Rocketmq__V2__Status status;
        proxy_status(&status, APACHE__ROCKETMQ__V2__CODE__BAD_REQUEST,
                     "group and topic are required");
        resp.status = &status;
        return proxy_reply_free(px, call, &resp.base, &req->base);
    }
    ack_call_state *ac = calloc(1, sizeof(*ac));
    if (ac)
        ac->sts = calloc(req->n_entries ? req->n_entries : 1, sizeof(*ac->sts));
    int rc = ac && ac->sts ? api->grpc_hold(call, NULL, NULL) : RMQ_ENOMEM;
    if (rc < 0) {
        if (ac)
            free(ac->sts);
        free(ac);
        apache__rocketmq__v2__ack_message_request__free_unpacked(req, NULL);
        return rc;
    }
    ac->px = px;
    ac->call = call;
    ac->req = req;
    ack_step(ac);
    return 0;
}

int proxy_change_invisible_duration(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    const rmq_host_api *api = px->api;
    Apache__Rocketmq__V2__ChangeInvisibleDurationRequest *req =
        apache__rocketmq__v2__change_invisible_duration_request__unpack(NULL, len, msg);
    if (!req)
        return api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                "malformed ChangeInvisibleDurationRequest");
    Apache__Rocketmq__V2__ChangeInvisibleDurationResponse resp =
        APACHE__ROCKETMQ__V2__CHANGE_INVISIBLE_DURATION_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status status;
    char receipt[512] = "";
    const char *group = req->group ? req->group->name : NULL;
    const char *topic = req->topic ? req->topic->name : NULL;
    int64_t invisible = ms_of(req->invisible_duration, -1);
    int lrc = 0;
    rmq_cmd *r = NULL;
    if (!group || !*group || !topic || !*topic) {
        proxy_status(&status, APACHE__ROCKETMQ__V2__CODE__BAD_REQUEST,
                     "group and topic are required");
    } else if (invisible < 0) {
        proxy_status(&status, APACHE__ROCKETMQ__V2__CODE__ILLEGAL_INVISIBLE_TIME,
                     "the invisible time is illegal");
    } else if (!(r = ack_call(px, CHANGE_INVISIBLETIME, group, topic, req->receipt_handle,
                              invisible, &lrc))) {
        proxy_status(&status,
                     lrc == RMQ_EINVAL ? APACHE__ROCKETMQ__V2__CODE__INVALID_RECEIPT_HANDLE
                                       : PX_PROXY_TIMEOUT,
                     lrc == RMQ_EINVAL ? "receipt handle is invalid" : NULL);
    } else if (api->cmd_code(r) != 0) {
        proxy_status(&status, proxy_code_of_remoting(api->cmd_code(r)), "change invisible failed");
    } else {
        /* the same receipt with the new popTime and invisible time */
        pop_receipt rh;
        proxy_receipt_parse(req->receipt_handle, &rh); /* parsed by ack_call already */
        const char *npt = api->cmd_ext_get(r, "popTime");
        const char *nrq = api->cmd_ext_get(r, "reviveQid");
        proxy_receipt_format(receipt, sizeof receipt, rh.start_offset, npt ? npt : "0", invisible,
                             nrq ? nrq : "0", rh.retry, rh.broker, rh.queue_id, rh.offset, rh.phys);
        resp.receipt_handle = receipt;
        proxy_status(&status, PX_OK, "OK");
    }
    if (r)
        api->cmd_free(r);
    resp.status = &status;
    return proxy_reply_free(px, call, &resp.base, &req->base);
}

int proxy_forward_to_dlq(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    const rmq_host_api *api = px->api;
    Apache__Rocketmq__V2__ForwardMessageToDeadLetterQueueRequest *req =
        apache__rocketmq__v2__forward_message_to_dead_letter_queue_request__unpack(NULL, len, msg);
    if (!req)
        return api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                "malformed ForwardMessageToDeadLetterQueueRequest");
    Apache__Rocketmq__V2__ForwardMessageToDeadLetterQueueResponse resp =
        APACHE__ROCKETMQ__V2__FORWARD_MESSAGE_TO_DEAD_LETTER_QUEUE_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status status;
    const char *group = req->group ? req->group->name : NULL;
    const char *topic = req->topic ? req->topic->name : NULL;
    pop_receipt rh;
    bool parsed = proxy_receipt_parse(req->receipt_handle, &rh) && rh.phys >= 0;
    rmq_cmd *back = NULL;
    if (!group || !*group || !topic || !*topic) {
        proxy_status(&status, APACHE__ROCKETMQ__V2__CODE__BAD_REQUEST,
                     "group and topic are required");
    } else if (!parsed) {
        proxy_status(&status, APACHE__ROCKETMQ__V2__CODE__INVALID_RECEIPT_HANDLE,
                     "receipt handle is invalid");
    } else if (!(back = api->cmd_new_request(36))) {
        proxy_status(&status, PX_INTERNAL_SERVER_ERROR, "out of memory");
    } else {
        char po[32], mx[16];
        snprintf(po, sizeof po, "%lld", rh.phys);
        snprintf(mx, sizeof mx, "%d",
                 req->max_delivery_attempts > 0 ? req->max_delivery_attempts : 16);
        const char *kv[] = {"offset",
                            po,
                            "group",
                            group,
                            "delayLevel",
                            "-1",
                            "originMsgId",
                            req->message_id,
                            "originTopic",
                            topic,
                            "unitMode",
                            "false",
                            "maxReconsumeTimes",
                            mx,
                            NULL};
        for (size_t i = 0; kv[i]; i += 2)
            api->cmd_ext_set(back, kv[i], kv[i + 1]);
        rmq_cmd *r = NULL;
        int lrc = proxy_broker_call(px, topic, rh.broker, back, &r);
        int32_t code = lrc < 0 ? -1 : api->cmd_code(r);
        if (lrc < 0) {
            proxy_status(&status, PX_PROXY_TIMEOUT, NULL);
        } else if (code != 0) {
            proxy_status(&status, proxy_code_of_remoting(code), "forward to DLQ failed");
        } else {
            /* stored in the DLQ: the message leaves the group's flight */
            int alrc = 0;
            rmq_cmd *a = ack_call(px, ACK_MESSAGE, group, topic, req->receipt_handle, 0, &alrc);
            if (a)
                api->cmd_free(a);
            proxy_status(&status, PX_OK, "OK");
        }
        if (r)
            api->cmd_free(r);
    }
    resp.status = &status;
    return proxy_reply_free(px, call, &resp.base, &req->base);
}
