/* proxy_send.c — SendMessage: each message becomes a SEND_MESSAGE_V2
 * request to the broker role of this process (invoke_local_async), with the
 * properties Java's proxy sets (tag, keys, UNIQ_KEY = the client's message
 * id, the producer group = the topic, sharding key = message group, trace
 * context, reconsume times); the queue is chosen as Java's proxy chooses it
 * (consistent hash of the message group, else round robin over the write
 * queues), and the store's answer becomes a SendResultEntry. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_backend.h"
#include "proxy_internal.h"

#define SEND_MESSAGE_V2 310
#define PERM_WRITE 0x2
/* remoting SEND answer codes */
#define FLUSH_DISK_TIMEOUT 10
#define SLAVE_NOT_AVAILABLE 11
#define FLUSH_SLAVE_TIMEOUT 12
#define COMPRESSED_FLAG 0x1
#define TRANSACTION_PREPARED_TYPE (0x1 << 2)

/* Property names a client may not set (Java's MessageConst.STRING_HASH_SET,
 * the ones in use). */
static const char *const SYSTEM_KEYS[] = {"TRACE_ON",
                                          "MSG_REGION",
                                          "KEYS",
                                          "TAGS",
                                          "WAIT",
                                          "DELAY",
                                          "RETRY_TOPIC",
                                          "REAL_TOPIC",
                                          "REAL_QID",
                                          "TRAN_MSG",
                                          "PGROUP",
                                          "MIN_OFFSET",
                                          "MAX_OFFSET",
                                          "BUYER_ID",
                                          "ORIGIN_MESSAGE_ID",
                                          "TRANSFER_FLAG",
                                          "CORRECTION_FLAG",
                                          "MQ2_FLAG",
                                          "RECONSUME_TIME",
                                          "UNIQ_KEY",
                                          "MAX_RECONSUME_TIMES",
                                          "CONSUME_START_TIME",
                                          "__STARTDELIVERTIME",
                                          "TRAN_PREPARED_QUEUE_OFFSET",
                                          "TRANSACTION_CHECK_TIMES",
                                          "CHECK_IMMUNITY_TIME_IN_SECONDS",
                                          "INSTANCE_ID",
                                          "CORRELATION_ID",
                                          "REPLY_TO_CLIENT",
                                          "TTL",
                                          "ARRIVE_TIME",
                                          "PUSH_REPLY_TIME",
                                          "CLUSTER",
                                          "MSG_TYPE",
                                          "__SHARDINGKEY",
                                          "TIMER_DELIVER_MS",
                                          "TIMER_DELAY_SEC",
                                          "TIMER_DELAY_MS",
                                          "TRACE_CONTEXT",
                                          NULL};

bool proxy_is_system_key(const char *k)
{
    /* the first byte first: a received message's every property comes here */
    for (size_t i = 0; SYSTEM_KEYS[i]; i++)
        if (SYSTEM_KEYS[i][0] == k[0] && strcmp(SYSTEM_KEYS[i], k) == 0)
            return true;
    return false;
}

/* Java's String.hashCode over the UTF-16 code units of a UTF-8 string. */
int32_t proxy_java_string_hash(const char *s)
{
    uint32_t h = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        uint32_t cp;
        int n;
        if (p[0] < 0x80)
            cp = p[0], n = 1;
        else if ((p[0] & 0xE0) == 0xC0 && p[1])
            cp = ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu), n = 2;
        else if ((p[0] & 0xF0) == 0xE0 && p[1] && p[2])
            cp = ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu), n = 3;
        else if ((p[0] & 0xF8) == 0xF0 && p[1] && p[2] && p[3])
            cp = ((p[0] & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) |
                 (p[3] & 0x3Fu),
            n = 4;
        else
            cp = 0xFFFD, n = 1;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            h = 31 * h + (0xD800 + (cp >> 10));
            h = 31 * h + (0xDC00 + (cp & 0x3FF));
        } else {
            h = 31 * h + cp;
        }
        p += n;
    }
    return (int32_t)h;
}

/* Guava's Hashing.consistentHash(long, int), which Java's proxy uses to
 * pin a message group to a queue. */
static int consistent_hash(int64_t input, int buckets)
{
    uint64_t state = (uint64_t)input;
    int candidate = 0;
    for (;;) {
        state = 2862933555777941757ULL * state + 1;
        double next_double = (double)((int32_t)(state >> 33) + 1) / 2147483648.0;
        double next = (double)(candidate + 1) / next_double;
        if (next >= 0 && next < buckets)
            candidate = (int)next;
        else
            return candidate;
    }
}

typedef struct write_queue {
    const char *broker;
    int id;
} write_queue;

static int cmp_qd(const void *a, const void *b)
{
    return strcmp(((const proxy_queue_data *)a)->broker_name,
                  ((const proxy_queue_data *)b)->broker_name);
}

/* Java's publish info: writable queue datas by broker name, ids
 * 0..writeQueueNums-1 each. */
static size_t write_queues(proxy_route *r, write_queue *out, size_t cap)
{
    qsort(r->qd, r->nqd, sizeof(r->qd[0]), cmp_qd);
    size_t n = 0;
    for (size_t i = 0; i < r->nqd; i++) {
        if (!(r->qd[i].perm & PERM_WRITE) || r->qd[i].nbroker_ids == 0)
            continue;
        for (int q = 0; q < r->qd[i].write_queue_nums && n < cap; q++)
            out[n++] = (write_queue){r->qd[i].broker_name, q};
    }
    return n;
}

typedef struct prop_buf {
    char *s;
    size_t len, cap;
    bool oom;
} prop_buf;

static void prop_add(prop_buf *b, const char *k, const char *v)
{
    size_t klen = strlen(k), vlen = strlen(v);
    size_t need = b->len + klen + vlen + 3;
    if (need > b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 256;
        while (ncap < need)
            ncap *= 2;
        char *ns = realloc(b->s, ncap);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns;
        b->cap = ncap;
    }
    /* "%s\001%s\002" without sprintf (a send adds four or more) */
    char *p = b->s + b->len;
    memcpy(p, k, klen);
    p[klen] = '\001';
    memcpy(p + klen + 1, v, vlen);
    p[klen + 1 + vlen] = '\002';
    p[klen + 2 + vlen] = '\0';
    b->len += klen + vlen + 2;
}

/* v in decimal as "%lld" writes it, into buf (21 bytes or more): buf. The
 * send request's numbers are written per message; snprintf was ~3 k of a
 * send's instructions. */
static char *dec(char *buf, long long v)
{
    char tmp[24];
    size_t n = 0;
    unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    char *p = buf;
    if (v < 0)
        *p++ = '-';
    while (n)
        *p++ = tmp[--n];
    *p = '\0';
    return buf;
}

static char *udec(char *buf, unsigned long long u)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    char *p = buf;
    while (n)
        *p++ = tmp[--n];
    *p = '\0';
    return buf;
}

typedef struct send_outcome {
    Apache__Rocketmq__V2__Code code;
    char message[256];
    char msg_id[128];
    int64_t offset;
    char recall_handle[1024]; /* a timer message's (RecallMessage) */
    char tx_id[192];          /* a half message's transaction id (proxy_transaction.c); "" else */
} send_outcome;

/* An outcome no step has written yet: what a zeroed one held. */
static void outcome_init(send_outcome *o)
{
    o->code = 0;
    o->message[0] = o->msg_id[0] = o->recall_handle[0] = o->tx_id[0] = '\0';
    o->offset = 0;
}

static uint64_t millis_of(const Google__Protobuf__Timestamp *t)
{
    return t ? (uint64_t)t->seconds * 1000u + (uint64_t)t->nanos / 1000000u : 0;
}

/* The SEND_MESSAGE_V2 request of message m to queue wq, or NULL with out
 * telling why it is not sent. */
static rmq_cmd *build_send(proxy *px, const Apache__Rocketmq__V2__Message *m, const char *topic,
                           const write_queue *wq, send_outcome *out)
{
    const rmq_host_api *api = px->api;
    const Apache__Rocketmq__V2__SystemProperties *sp = m->system_properties;
    if (!sp || !sp->message_id || !sp->message_id[0]) {
        out->code = PX_ILLEGAL_MESSAGE_ID;
        snprintf(out->message, sizeof(out->message), "message id is empty");
        return NULL;
    }
    if ((int64_t)m->body.len > px->max_message_size) {
        out->code = PX_BODY_TOO_LARGE;
        snprintf(out->message, sizeof(out->message), "message body size exceeds the limit %lld",
                 (long long)px->max_message_size);
        return NULL;
    }
    prop_buf pb = {0};
    for (size_t i = 0; i < m->n_user_properties; i++) {
        const char *k = m->user_properties[i]->key ? m->user_properties[i]->key : "";
        if (proxy_is_system_key(k)) {
            free(pb.s);
            out->code = PX_ILLEGAL_PROPERTY_KEY;
            snprintf(out->message, sizeof(out->message), "property is used by system: %s", k);
            return NULL;
        }
        prop_add(&pb, k, m->user_properties[i]->value ? m->user_properties[i]->value : "");
    }
    if (sp->tag && sp->tag[0])
        prop_add(&pb, "TAGS", sp->tag);
    if (sp->n_keys > 0) {
        size_t klen = 1;
        for (size_t i = 0; i < sp->n_keys; i++)
            klen += strlen(sp->keys[i]) + 1;
        char *keys = calloc(1, klen);
        if (keys) {
            for (size_t i = 0; i < sp->n_keys; i++) {
                if (i)
                    strcat(keys, " ");
                strcat(keys, sp->keys[i]);
            }
            prop_add(&pb, "KEYS", keys);
            free(keys);
        } else {
            pb.oom = true;
        }
    }
    prop_add(&pb, "UNIQ_KEY", sp->message_id);
    char num[32];
    prop_add(&pb, "RECONSUME_TIME", dec(num, sp->delivery_attempt));
    prop_add(&pb, "PGROUP", topic);
    if (sp->message_group && sp->message_group[0])
        prop_add(&pb, "__SHARDINGKEY", sp->message_group);
    if (sp->trace_context && sp->trace_context[0])
        prop_add(&pb, "TRACE_CONTEXT", sp->trace_context);
    if (sp->delivery_timestamp) {
        /* the store's timer messages (Java's proxy does the same) */
        prop_add(&pb, "TIMER_DELIVER_MS", udec(num, millis_of(sp->delivery_timestamp)));
    }
    bool txn = sp->message_type == APACHE__ROCKETMQ__V2__MESSAGE_TYPE__TRANSACTION;
    if (txn) {
        prop_add(&pb, "TRAN_MSG", "true");
        /* only when the client gave one, as Java's proxy: else the store's
         * transactionTimeOut is the immunity */
        if (sp->orphaned_transaction_recovery_duration) {
            snprintf(num, sizeof(num), "%lld",
                     (long long)sp->orphaned_transaction_recovery_duration->seconds);
            prop_add(&pb, "CHECK_IMMUNITY_TIME_IN_SECONDS", num);
        }
    }
    if (pb.oom) {
        free(pb.s);
        out->code = PX_INTERNAL_SERVER_ERROR;
        snprintf(out->message, sizeof(out->message), "out of memory");
        return NULL;
    }
    if (pb.len > 0)
        pb.s[--pb.len] = '\0'; /* no separator after the last pair, as Java */
    int sys_flag = 0;
    if (sp->body_encoding == APACHE__ROCKETMQ__V2__ENCODING__GZIP)
        sys_flag |= COMPRESSED_FLAG;
    if (txn)
        sys_flag |= TRANSACTION_PREPARED_TYPE;

    rmq_cmd *req = api->cmd_new_request(SEND_MESSAGE_V2);
    char qid[32], flag[32], born[32];
    dec(qid, wq->id);
    dec(flag, sys_flag);
    uint64_t born_ms = millis_of(sp->born_timestamp);
    udec(born, born_ms ? born_ms : (uint64_t)api->now_wall_ms());
    dec(num, sp->delivery_attempt);
    int rc = req ? 0 : RMQ_ENOMEM;
    const char *kv[][2] = {{"a", topic}, {"b", topic},   {"c", "TBW102"},
                           {"d", "4"},   {"e", qid},     {"f", flag},
                           {"g", born},  {"h", "0"},     {"i", pb.s ? pb.s : ""},
                           {"j", num},   {"k", "false"}, {"m", "false"}};
    for (size_t i = 0; rc == 0 && i < sizeof(kv) / sizeof(kv[0]); i++)
        rc = api->cmd_ext_set(req, kv[i][0], kv[i][1]);
    if (rc == 0 && m->body.len)
        rc = api->cmd_set_body(req, m->body.data, m->body.len, NULL, NULL);
    free(pb.s);
    if (rc < 0) {
        if (req)
            api->cmd_free(req);
        out->code = PX_INTERNAL_SERVER_ERROR;
        snprintf(out->message, sizeof(out->message), "%s", rmq_strerror(rc));
        return NULL;
    }
    return req;
}

/* The answer to message m's send to broker (err < 0: none came). */
static void read_send_answer(proxy *px, const Apache__Rocketmq__V2__Message *m, const char *broker,
                             int err, const rmq_cmd *resp, send_outcome *out)
{
    const rmq_host_api *api = px->api;
    const Apache__Rocketmq__V2__SystemProperties *sp = m->system_properties;
    bool txn = sp->message_type == APACHE__ROCKETMQ__V2__MESSAGE_TYPE__TRANSACTION;
    if (err < 0) {
        out->code = err == RMQ_ETIMEDOUT ? PX_PROXY_TIMEOUT : PX_INTERNAL_SERVER_ERROR;
        snprintf(out->message, sizeof(out->message), "send to %s %s: %s",
                 proxy_backend_broker_label(px), broker, rmq_strerror(err));
        return;
    }
    int32_t code = api->cmd_code(resp);
    const char *remark = api->cmd_remark(resp);
    const char *offset = api->cmd_ext_get(resp, "queueOffset");
    switch (code) {
    case 0:
        out->code = PX_OK;
        snprintf(out->message, sizeof(out->message), "OK");
        snprintf(out->msg_id, sizeof(out->msg_id), "%s", sp->message_id);
        out->offset = offset ? strtoll(offset, NULL, 10) : 0;
        snprintf(out->recall_handle, sizeof(out->recall_handle), "%s",
                 api->cmd_ext_get(resp, "recallHandle") ? api->cmd_ext_get(resp, "recallHandle")
                                                        : "");
        if (txn)
            proxy_transaction_id(proxy_backend_is_cluster(px) ? broker : NULL,
                                 api->cmd_ext_get(resp, "msgId"), out->offset, out->tx_id,
                                 sizeof(out->tx_id));
        break;
    case FLUSH_DISK_TIMEOUT:
        out->code = PX_MASTER_PERSISTENCE_TIMEOUT;
        snprintf(out->message, sizeof(out->message),
                 "send message failed, sendStatus=FLUSH_DISK_TIMEOUT");
        break;
    case FLUSH_SLAVE_TIMEOUT:
        out->code = PX_SLAVE_PERSISTENCE_TIMEOUT;
        snprintf(out->message, sizeof(out->message),
                 "send message failed, sendStatus=FLUSH_SLAVE_TIMEOUT");
        break;
    case SLAVE_NOT_AVAILABLE:
        out->code = PX_HA_NOT_AVAILABLE;
        snprintf(out->message, sizeof(out->message),
                 "send message failed, sendStatus=SLAVE_NOT_AVAILABLE");
        break;
    default:
        /* an MQBrokerException in Java: ResponseBuilder's mapping, the remark */
        out->code = proxy_code_of_remoting(code);
        if (remark)
            snprintf(out->message, sizeof(out->message), "%s", remark);
        else
            snprintf(out->message, sizeof(out->message), "%d", code);
        break;
    }
}

/* One SendMessage call in flight. The handler runs on the gRPC server's I/O
 * loop; the route comes from the cache (or, on a miss, from the NameServer
 * role without blocking) and each message goes to the store with
 * invoke_local_async, whose inline SEND processor then runs at once on this
 * same thread: a send crosses no thread unless the store defers its answer
 * (SYNC_FLUSH, SYNC_MASTER), and then continues on the answering thread. */
typedef struct send_call {
    proxy *px;
    rmq_grpc_call *call;
    Apache__Rocketmq__V2__SendMessageRequest *req;
    const char *topic;
    proxy_route route;
    size_t nwq, pick;
    send_outcome *outs;
    size_t next;          /* the message being sent, or the next one */
    atomic_int phase;     /* proxy_step_* */
    proxy_pb_arena arena; /* req's memory: pb_block, then malloc */
    /* from here on not zeroed (4 KiB, write_queues fills the first nwq) */
    write_queue wqs[256];
    _Alignas(max_align_t) uint8_t pb_block[];
} send_call;

static void send_call_free(send_call *sc)
{
    proxy_route_free(&sc->route);
    free(sc->outs);
    proxy_pb_arena_release(&sc->arena); /* sc->req and all it holds */
    free(sc);
}

/* Answer the call: the overall status (code; message NULL = its name) when
 * no message was tried, else one entry per message. Ends and releases the
 * held call and frees sc. */
static void send_call_answer(send_call *sc, bool tried, Apache__Rocketmq__V2__Code code,
                             const char *message)
{
    proxy *px = sc->px;
    size_t n = tried ? sc->req->n_messages : 0;
    Apache__Rocketmq__V2__SendMessageResponse resp =
        APACHE__ROCKETMQ__V2__SEND_MESSAGE_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st;
    /* a few entries (a SendMessage mostly carries one) on the stack: three
     * callocs and frees per call otherwise; every entry used is set below */
    enum { STACK_ENTRIES = 4 };
    Apache__Rocketmq__V2__SendResultEntry ents_s[STACK_ENTRIES], *entp_s[STACK_ENTRIES];
    Apache__Rocketmq__V2__Status sts_s[STACK_ENTRIES];
    bool heap = n > STACK_ENTRIES;
    Apache__Rocketmq__V2__SendResultEntry *ents = heap ? calloc(n, sizeof(*ents)) : ents_s;
    Apache__Rocketmq__V2__SendResultEntry **entp = heap ? calloc(n, sizeof(*entp)) : entp_s;
    Apache__Rocketmq__V2__Status *sts = heap ? calloc(n, sizeof(*sts)) : sts_s;
    if (!ents || !entp || !sts) {
        px->api->grpc_finish(sc->call, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
    } else {
        bool mixed = false;
        for (size_t i = 0; i < n; i++) {
            const send_outcome *o = &sc->outs[i];
            apache__rocketmq__v2__send_result_entry__init(&ents[i]);
            proxy_status(&sts[i], o->code, o->message);
            ents[i].status = &sts[i];
            ents[i].message_id = (char *)o->msg_id;
            ents[i].transaction_id = (char *)o->tx_id;
            ents[i].offset = o->offset;
            ents[i].recall_handle = (char *)o->recall_handle;
            entp[i] = &ents[i];
            mixed |= o->code != sc->outs[0].code;
        }
        resp.n_entries = n;
        resp.entries = entp;
        if (!tried)
            proxy_status(&st, code, message);
        else if (mixed)
            proxy_status(&st, PX_MULTIPLE_RESULTS, NULL);
        else
            proxy_status(&st, sc->outs[0].code, NULL);
        resp.status = &st;
        /* RMQ_ENOTCONN when the client left meanwhile: nothing to tell */
        if (proxy_reply(px, sc->call, &resp.base) == 0)
            px->api->grpc_finish(sc->call, RMQ_GRPC_OK, NULL);
        else
            px->api->grpc_finish(sc->call, RMQ_GRPC_INTERNAL, "cannot encode the answer");
    }
    if (heap) {
        free(ents);
        free(entp);
        free(sts);
    }
    px->api->grpc_release(sc->call);
    send_call_free(sc);
}

static void send_step(send_call *sc);

static void send_answered(int err, const rmq_cmd *resp, void *ud)
{
    send_call *sc = ud;
    read_send_answer(sc->px, sc->req->messages[sc->next], sc->wqs[sc->pick].broker, err, resp,
                     &sc->outs[sc->next]);
    sc->next++;
    /* answered while send_step is still issuing: it carries on itself */
    if (proxy_step_answered(&sc->phase))
        send_step(sc);
}

/* Send the remaining messages one after another, then answer. */
static void send_step(send_call *sc)
{
    proxy *px = sc->px;
    size_t n = sc->req->n_messages;
    while (sc->next < n) {
        size_t i = sc->next;
        const Apache__Rocketmq__V2__Message *m = sc->req->messages[i];
        if (!m->topic || !m->topic->name || strcmp(m->topic->name, sc->topic) != 0) {
            sc->outs[i].code = PX_MESSAGE_CORRUPTED;
            snprintf(sc->outs[i].message, sizeof(sc->outs[i].message),
                     "topic in message is not same");
            sc->next++;
            continue;
        }
        rmq_cmd *cmd = build_send(px, m, sc->topic, &sc->wqs[sc->pick], &sc->outs[i]);
        if (!cmd) {
            sc->next++;
            continue;
        }
        proxy_step_issuing(&sc->phase);
        int rc = proxy_broker_call_async(px, sc->topic, sc->wqs[sc->pick].broker, cmd, 0,
                                         send_answered, sc);
        if (rc != 0) {
            read_send_answer(px, m, sc->wqs[sc->pick].broker, rc, NULL, &sc->outs[i]);
            sc->next++;
            continue;
        }
        if (proxy_step_wait(&sc->phase))
            return; /* send_answered continues on the answering thread */
    }
    send_call_answer(sc, true, PX_OK, NULL);
}

static void send_routed(int rc, proxy_route *route, const char *why, void *ud)
{
    send_call *sc = ud;
    sc->route = *route;
    char twhy[256];
    if (sc->px->validate_message_type && (rc == 0 || rc == RMQ_ENOENT) &&
        !proxy_message_type_ok(sc->route.msg_type[0] ? sc->route.msg_type : "UNSPECIFIED",
                               sc->req->messages[0], sc->topic, twhy, sizeof(twhy))) {
        /* Java checks the type before it routes: a topic the broker lacks
         * is UNSPECIFIED and refuses every type */
        send_call_answer(sc, false, APACHE__ROCKETMQ__V2__CODE__MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
                         twhy);
        return;
    }
    if (rc == 0)
        sc->nwq = write_queues(&sc->route, sc->wqs, sizeof(sc->wqs) / sizeof(sc->wqs[0]));
    if (rc != 0 || sc->nwq == 0) {
        send_call_answer(sc, false,
                         rc == RMQ_ENOENT      ? PX_TOPIC_NOT_FOUND
                         : rc == RMQ_ETIMEDOUT ? PX_PROXY_TIMEOUT
                         : rc == 0             ? PX_FORBIDDEN
                                               : PX_INTERNAL_SERVER_ERROR,
                         rc == 0 ? "no writable queue" : why);
        return;
    }
    size_t n = sc->req->n_messages;
    const char *group = n == 1 && sc->req->messages[0]->system_properties
                            ? sc->req->messages[0]->system_properties->message_group
                            : NULL;
    if (group && group[0])
        sc->pick = (size_t)consistent_hash(proxy_java_string_hash(group), (int)sc->nwq);
    else
        sc->pick = atomic_fetch_add(&sc->px->send_round, 1) % sc->nwq;
    send_step(sc);
}

int proxy_send_message(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    const rmq_host_api *api = px->api;
    /* The call and, after it, room for the unpacked request (its strings,
     * body and nested messages: about twice the wire bytes; more goes to
     * malloc): one allocation instead of ~10. Neither the queue table nor
     * the outcomes' text buffers (~2 KiB a message) are zeroed: clearing
     * them was a tenth of a send's instructions; outcome_init sets what
     * send_call_answer reads. */
    size_t room = len < SIZE_MAX / 4 ? 2 * len + 1024 : 0;
    send_call *sc = room ? malloc(sizeof(*sc) + room) : NULL;
    if (!sc)
        return RMQ_ENOMEM;
    memset(sc, 0, offsetof(send_call, wqs));
    proxy_pb_arena_init(&sc->arena, sc->pb_block, room);
    Apache__Rocketmq__V2__SendMessageRequest *req =
        apache__rocketmq__v2__send_message_request__unpack(&sc->arena.pc, len, msg);
    if (!req) {
        proxy_pb_arena_release(&sc->arena);
        free(sc);
        return api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                "SendMessageRequest: undecodable protobuf");
    }
    size_t n = req->n_messages;
    sc->outs = malloc((n + 1) * sizeof(*sc->outs));
    if (!sc->outs) {
        proxy_pb_arena_release(&sc->arena);
        free(sc);
        return RMQ_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        outcome_init(&sc->outs[i]);
    sc->px = px;
    sc->call = call;
    sc->req = req;
    const Apache__Rocketmq__V2__Resource *t0 =
        n > 0 && req->messages[0]->topic ? req->messages[0]->topic : NULL;
    sc->topic = t0 && t0->name ? t0->name : "";
    int rc = api->grpc_hold(call, NULL, NULL);
    if (rc < 0) {
        send_call_free(sc);
        return rc;
    }
    if (n == 0) {
        send_call_answer(sc, false, PX_BAD_REQUEST, "no message to send");
    } else if (!sc->topic[0]) {
        send_call_answer(sc, false, PX_ILLEGAL_TOPIC, "topic name cannot be empty");
    } else if ((rc = proxy_route_get_async(px, sc->topic, send_routed, sc)) != 0) {
        char why[128];
        snprintf(why, sizeof(why), "route of %s: %s", sc->topic, rmq_strerror(rc));
        send_call_answer(sc, false, PX_INTERNAL_SERVER_ERROR, why);
    }
    return 0;
}
