/* send_processor.c — SEND_MESSAGE (10), SEND_MESSAGE_V2 (310) and
 * SEND_BATCH_MESSAGE (320): the checks of protocol-messages.md §10.5.1 in
 * order, topic auto-creation through broker.meta, queue choice, the stored
 * form (§10.5.4, §10.3.6) and the answer (§10.2.3), deferred until the fsync
 * under SYNC_FLUSH. Runs inline on IO by default; what may block (creating a
 * topic or a group, %RETRY% routing) moves to the slow worker. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "batch_body.h"
#include "broker_stats.h"
#include "header_numbers.h"
#include "message_id.h"
#include "ha.h"
#include "send_put.h"
#include "store_features.h"

typedef struct send_job {
    reply_target t;
    const rmq_cmd *cmd;
    bool oneway;
    bool deferred; /* defer() was called: the processor returns RMQ_DEFERRED */
    char peer[80];
    send_header h;
} send_job;

enum { SEND_DONE = 0, SEND_NEEDS_SLOW = 1 };

static const char *const SYSTEM_TOPICS[] = {"SCHEDULE_TOPIC_XXXX",
                                            "RMQ_SYS_TRANS_HALF_TOPIC",
                                            "RMQ_SYS_TRANS_OP_HALF_TOPIC",
                                            "TRANS_CHECK_MAX_TIME_TOPIC",
                                            "SELF_TEST_TOPIC",
                                            "OFFSET_MOVED_EVENT",
                                            NULL};

/* snprintf("%s") without the format machinery: this runs on every send */
static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

rmq_cmd *send_response_new(store_plugin *sp, const rmq_cmd *req, int32_t code, const char *remark)
{
    rmq_cmd *r = sp->api->cmd_new_response(req, code, remark);
    if (r) {
        sp->api->cmd_ext_set(r, "MSG_REGION", live_text_get(&sp->set.region_id));
        sp->api->cmd_ext_set(r, "TRACE_ON", sp->set.trace_on ? "true" : "false");
    }
    return r;
}

static int answer(store_plugin *sp, send_job *j, int32_t code, const char *remark)
{
    if (j->oneway)
        return store_answer(sp, &j->t, NULL);
    return store_answer(sp, &j->t, send_response_new(sp, j->cmd, code, remark));
}

/* An answer Java builds from an exception thrown out of the processor: the
 * dispatcher's own SYSTEM_ERROR, without the send answer's ext fields. */
static int answer_exception(store_plugin *sp, send_job *j, const char *remark)
{
    if (j->oneway)
        return store_answer(sp, &j->t, NULL);
    return store_answer(sp, &j->t, sp->api->cmd_new_response(j->cmd, RC_SYSTEM_ERROR, remark));
}

void send_store_host(store_plugin *sp, const rmq_broker_config *bc, store_addr *out)
{
    if (bc && bc->broker_ip1[0] && addr_from_ip_port(bc->broker_ip1, bc->listen_port, out) == 0)
        return;
    char host[64];
    int port = 0;
    if (sp->api->server_address(sp->ctx, host, sizeof host, &port) != 0 ||
        addr_from_ip_port(host, port, out) != 0)
        addr_from_ip_port("127.0.0.1", port, out);
}

/* Java times the puts that reach the commit log (DefaultMessageStore:
 * after its status and message checks), failed appends included. */
static bool put_reached_log(int rc, store_put_status st)
{
    return rc != 0 || st == STORE_PUT_OK || st == STORE_PUT_CREATE_MAPPED_FILE_FAILED ||
           st == STORE_PUT_UNKNOWN_ERROR;
}

int store_send_put(store_plugin *sp, const store_msg *m, store_put_result *out)
{
    uint64_t began = coarse_now_ms();
    int rc = store_put(sp->engine, m, out);
    if (put_reached_log(rc, out->status)) {
        put_latency_record(&sp->put_lat, began);
        if (rc != 0 || out->status != STORE_PUT_OK)
            put_latency_failed(&sp->put_lat);
    }
    return rc;
}

bool store_put_due(store_plugin *sp, const store_msg *m, const char *what, const char *topic)
{
    store_put_result pr;
    if (store_send_put(sp, m, &pr) == 0 && pr.status == STORE_PUT_OK)
        return true;
    bool ok = pr.status != STORE_PUT_SERVICE_NOT_AVAILABLE &&
              pr.status != STORE_PUT_CREATE_MAPPED_FILE_FAILED;
    sp->api->log(sp->ctx, RMQ_LOG_WARN, "%s message to %s could not be stored (status %d)%s", what,
                 topic, (int)pr.status, ok ? ": dropped" : ": retried later");
    return ok;
}

int32_t send_put_status_code(store_plugin *sp, store_put_status st, char *remark, size_t cap)
{
    switch (st) {
    case STORE_PUT_OK: remark[0] = 0; return RC_SUCCESS;
    case STORE_PUT_SERVICE_NOT_AVAILABLE: {
        store_runtime_stats rs;
        store_runtime_stats_get(sp->engine, &rs);
        snprintf(
            remark, cap,
            "service not available now. It may be caused by one of the following reasons: "
            "the broker's disk is full [CL: %5.2f CQ: %5.2f INDEX: %5.2f], messages are put to "
            "the slave, message store has been shut down, etc.",
            rs.commitlog_disk_ratio, rs.consumequeue_disk_ratio, rs.index_disk_ratio);
        return RC_SERVICE_NOT_AVAILABLE;
    }
    case STORE_PUT_MESSAGE_ILLEGAL:
    case STORE_PUT_PROPERTIES_SIZE_EXCEEDED:
        snprintf(remark, cap,
                 "the message is illegal, maybe msg body or properties length not matched. msg "
                 "body length limit %" PRId64 "B, msg properties length limit 32KB.",
                 sp->set.engine.max_message_size);
        return RC_MESSAGE_ILLEGAL;
    case STORE_PUT_CREATE_MAPPED_FILE_FAILED:
        snprintf(remark, cap, "create mapped file failed, server is busy or broken.");
        return RC_SYSTEM_ERROR;
    case STORE_PUT_UNKNOWN_ERROR:
    default: snprintf(remark, cap, "UNKNOWN_ERROR"); return RC_SYSTEM_ERROR;
    }
}

/* ---- SYNC_FLUSH / SYNC_MASTER: the answer leaves once the flush and the
 * replica wait (both when both apply, concurrently as in Java) are done ---- */
typedef struct flush_wait {
    store_plugin *sp;
    rmq_deferred *d;
    rmq_cmd *resp;
    uint64_t put_began_ms;
    atomic_int pending;  /* waits still running */
    atomic_int flush_rc; /* 0 or RC_FLUSH_DISK_TIMEOUT */
    atomic_int repl_rc;  /* 0, RC_SLAVE_NOT_AVAILABLE or RC_FLUSH_SLAVE_TIMEOUT */
} flush_wait;

static void wait_finished(flush_wait *fw)
{
    if (atomic_fetch_sub(&fw->pending, 1) != 1)
        return;
    /* Java's put future completes after the waits: they are part of the put */
    put_latency_record(&fw->sp->put_lat, fw->put_began_ms);
    /* a failed replica status overrides a failed flush (CommitLog#asyncPutMessage) */
    int code = atomic_load(&fw->repl_rc) ? atomic_load(&fw->repl_rc) : atomic_load(&fw->flush_rc);
    if (code)
        fw->sp->api->cmd_set_code(fw->resp, code);
    fw->sp->api->deferred_reply(fw->d, fw->resp);
    free(fw);
}

static void flush_done(void *ud, bool ok)
{
    flush_wait *fw = ud;
    if (!ok)
        atomic_store(&fw->flush_rc, RC_FLUSH_DISK_TIMEOUT);
    wait_finished(fw);
}

static void replica_done(void *ud, int code)
{
    flush_wait *fw = ud;
    atomic_store(&fw->repl_rc, code);
    wait_finished(fw);
}

/* Answer a stored send: now (ASYNC_FLUSH on an ASYNC_MASTER, WAIT=false,
 * oneway) or after the fsync and/or the slave's ack; the put's latency is
 * recorded then (put_began_ms). */
static int answer_stored(store_plugin *sp, send_job *j, const store_put_result *pr,
                         const char *msg_id, int32_t queue_id, bool wait_store,
                         uint64_t put_began_ms, const store_msg *timer_msg, const char *broker_name)
{
    ha_master_notify(sp);
    bool flush_wait_needed = sp->set.engine.flush_type == STORE_SYNC_FLUSH && wait_store;
    bool replica_needed = ha_current_role(sp) == HA_SYNC_MASTER && wait_store;
    if ((!flush_wait_needed && !replica_needed) || j->oneway)
        put_latency_record(&sp->put_lat, put_began_ms);
    if (j->oneway)
        return store_answer(sp, &j->t, NULL);
    rmq_cmd *r = send_response_new(sp, j->cmd, RC_SUCCESS, NULL);
    if (!r)
        return RMQ_ENOMEM;
    sp->api->cmd_ext_set(r, "msgId", msg_id);
    store_ext_i64(sp, r, "queueId", queue_id);
    store_ext_i64(sp, r, "queueOffset", pr->queue_offset);
    if (timer_msg) /* 5.x: the handle RECALL_MESSAGE takes */
        recall_handle_attach(sp, r, timer_msg->props, timer_msg->props_len, broker_name);
    if (!flush_wait_needed && !replica_needed)
        return store_answer(sp, &j->t, r);
    flush_wait *fw = malloc(sizeof *fw);
    if (!fw) {
        put_latency_record(&sp->put_lat, put_began_ms);
        sp->api->cmd_free(r);
        return RMQ_ENOMEM;
    }
    fw->put_began_ms = put_began_ms;
    if (!j->t.d) {
        j->t.d = sp->api->defer(j->t.req);
        j->deferred = true;
    }
    fw->sp = sp;
    fw->d = j->t.d;
    fw->resp = r;
    /* one extra count held while both waits are started */
    atomic_init(&fw->pending, 1 + (flush_wait_needed ? 1 : 0) + (replica_needed ? 1 : 0));
    atomic_init(&fw->flush_rc, 0);
    atomic_init(&fw->repl_rc, 0);
    j->t.d = NULL; /* the waits answer */
    if (flush_wait_needed && store_wait_flush(sp->engine, pr->end_offset, flush_done, fw) != 0)
        flush_done(fw, false);
    if (replica_needed)
        ha_master_wait_replica(sp, pr->end_offset, replica_done, fw);
    wait_finished(fw);
    return RMQ_OK;
}

/* Java isWaitStoreMsgOK: WAIT absent or "true" (any case). */
static bool wait_store_ok(const props_view *pv)
{
    size_t l;
    const char *w = props_get(pv, "WAIT", &l);
    return !w || (l == 4 && strncasecmp(w, "true", 4) == 0);
}

static int64_t tags_code_of(const props_view *pv)
{
    size_t l;
    const char *t = props_get(pv, "TAGS", &l);
    return t ? (int64_t)java_string_hash(t, l) : 0;
}

static bool topic_char_ok(unsigned char c)
{
    return c == '%' || c == '|' || c == '_' || c == '-' || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* §10.5.1 steps 3a–3c, 4. 0 or a code with remark. */
static int32_t check_topic(const char *topic, char *remark, size_t cap)
{
    if (!topic || !*topic) {
        snprintf(remark, cap, "The specified topic is blank.");
        return RC_SYSTEM_ERROR;
    }
    const unsigned char *p = (const unsigned char *)topic;
    for (; *p; p++)
        if (!topic_char_ok(*p)) {
            snprintf(remark, cap,
                     "The specified topic contains illegal characters, allowing only "
                     "^[%%|a-zA-Z0-9_-]+$");
            return RC_SYSTEM_ERROR;
        }
    size_t len = (size_t)((const char *)p - topic);
    if (len > 127) {
        snprintf(remark, cap, "The specified topic is longer than topic max length.");
        return RC_SYSTEM_ERROR;
    }
    for (const char *const *s = SYSTEM_TOPICS; *s; s++)
        if (topic[0] == (*s)[0] && strcmp(topic, *s) == 0) {
            snprintf(remark, cap, "Sending message to topic[%s] is forbidden.", topic);
            return RC_NO_PERMISSION;
        }
    return 0;
}

static void java_time_text(int64_t ms, char *buf, size_t cap)
{
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    localtime_r(&s, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf, cap, "%s,%03d", base, (int)(ms % 1000));
}

/* one step of a shared Weyl sequence, mixed (the finaliser of MurmurHash3):
 * any IO thread may take the next value without a lock */
static uint32_t next_random(store_plugin *sp)
{
    uint32_t z = atomic_fetch_add_explicit(&sp->send_random, 0x9E3779B9u, memory_order_relaxed);
    z = (z ^ (z >> 16)) * 0x85EBCA6Bu;
    z = (z ^ (z >> 13)) * 0xC2B2AE35u;
    return z ^ (z >> 16);
}

static bool is_retry_topic(const char *t)
{
    return strncmp(t, "%RETRY%", 7) == 0;
}

/* Default %RETRY% handling until the retry hooks exist: the group must
 * exist (§10.5.1 step 8). */
static int32_t retry_group_check(store_plugin *sp, const char *topic, char *remark, size_t cap)
{
    rmq_subscription_group_config g;
    if (meta_group_get(sp, topic + 7, true, &g) != 0) {
        snprintf(remark, cap, "subscription group not exist, %s " FAQ_SUFFIX, topic + 7);
        return RC_SUBSCRIPTION_GROUP_NOT_EXIST;
    }
    return 0;
}

int32_t send_msg_check(store_plugin *sp, const send_header *h, const rmq_broker_config *bc,
                       const char *peer, bool may_block, rmq_topic_config *tc, char *remark,
                       size_t cap)
{
    int32_t code;
    bool have_tc = h->topic && meta_topic_get(sp, h->topic, tc) == 0;
    /* step 2 */
    if (!(bc->broker_permission & RMQ_PERM_WRITE) && have_tc && tc->order) {
        snprintf(remark, cap, "the broker[%s] sending message is forbidden", bc->broker_ip1);
        return RC_NO_PERMISSION;
    }
    /* steps 3, 4 */
    if ((code = check_topic(h->topic, remark, cap)) != 0)
        return code;
    /* step 5 */
    if (!have_tc) {
        if (!may_block)
            return SEND_CHECK_NEEDS_SLOW;
        /* createTopicInSendMessageMethod unboxes defaultTopicQueueNums and
         * looks the default topic up in a ConcurrentHashMap (null throws) */
        if (!send_header_need(h, SEND_HAS_DEFQ, remark, cap))
            return SEND_CHECK_EXCEPTION;
        if (!h->default_topic) {
            snprintf(remark, cap, "java.lang.NullPointerException");
            return SEND_CHECK_EXCEPTION;
        }
        int32_t sysflag = 0;
        if (h->unit_mode)
            sysflag = is_retry_topic(h->topic) ? 2 : 1;
        have_tc = meta_topic_create_in_send(sp, h->topic, h->default_topic,
                                            h->default_topic_queue_nums, sysflag, tc) == 0;
        if (!have_tc && is_retry_topic(h->topic))
            have_tc = meta_topic_create_in_send_back(
                          sp, h->topic, 1, RMQ_PERM_READ | RMQ_PERM_WRITE, sysflag, tc) == 0;
        if (!have_tc) {
            snprintf(remark, cap, "topic[%s] not exist, apply first please!" FAQ_SUFFIX, h->topic);
            return RC_TOPIC_NOT_EXIST;
        }
    }
    /* step 6 */
    if (!send_header_need(h, SEND_HAS_QUEUE_ID, remark, cap))
        return SEND_CHECK_EXCEPTION;
    int32_t qmax =
        tc->write_queue_nums > tc->read_queue_nums ? tc->write_queue_nums : tc->read_queue_nums;
    if (h->queue_id >= qmax) {
        char perm[4];
        snprintf(remark, cap,
                 "request queueId[%d] is illegal, TopicConfig [topicName=%s, readQueueNums=%d, "
                 "writeQueueNums=%d, perm=%s, topicFilterType=%s, topicSysFlag=%d, order=%s] "
                 "Producer: %s",
                 h->queue_id, tc->topic_name, tc->read_queue_nums, tc->write_queue_nums,
                 perm_string(tc->perm, perm),
                 tc->topic_filter_type == 1 ? "MULTI_TAG" : "SINGLE_TAG", tc->topic_sys_flag,
                 tc->order ? "true" : "false", peer);
        return RC_SYSTEM_ERROR;
    }
    return 0;
}

static int put_single(store_plugin *sp, send_job *j, const rmq_broker_config *bc,
                      const store_addr *store_host, const rmq_topic_config *tc, send_message *m)
{
    const send_header *h = &j->h;
    char remark[512];
    size_t body_len = 0;
    const void *body = sp->api->cmd_body(j->cmd, &body_len);

    store_msg sm = {0};
    sm.topic = m->topic;
    sm.queue_id = m->queue_id;
    sm.flag = h->flag;
    sm.sys_flag = m->sys_flag | (tc->topic_filter_type == 1 ? 0x2 : 0);
    sm.born_ts = h->born_ts;
    if (addr_parse(j->peer, &sm.born_host) != 0)
        addr_from_ip_port("127.0.0.1", 0, &sm.born_host);
    sm.store_host = *store_host;
    sm.reconsume_times = m->reconsume_times;
    sm.prepared_tx_offset = m->prepared_tx_offset;
    sm.body = body;
    sm.body_len = body_len;

    char stack_props[2048];
    char *props = stack_props;
    size_t plen;
    if (m->props_override) {
        props = m->props_override;
        plen = m->props_override_len;
        sm.tags_code = m->has_tags_code ? m->tags_code : 0;
    } else {
        static const char *const drop_wait[] = {"WAIT", NULL};
        plen = props_encode_stored(&m->props, drop_wait, bc->cluster_name, stack_props,
                                   sizeof stack_props);
        if (plen > sizeof stack_props) {
            props = malloc(plen);
            if (!props)
                return answer(sp, j, RC_SYSTEM_ERROR, "java.lang.OutOfMemoryError");
            props_encode_stored(&m->props, drop_wait, bc->cluster_name, props, plen);
        }
        sm.tags_code = m->has_tags_code ? m->tags_code : tags_code_of(&m->props);
    }
    sm.props = props;
    sm.props_len = plen;
    /* the answer waits for the flush (SYNC_FLUSH): the flusher writes it */
    bool wait = wait_store_ok(&m->props);
    sm.defer_write = !j->oneway && wait;

    store_put_result pr;
    uint64_t began = coarse_now_ms();
    int rc = store_put(sp->engine, &sm, &pr);
    if (props != stack_props && props != m->props_override)
        free(props);
    if (rc != 0)
        pr.status = STORE_PUT_UNKNOWN_ERROR;
    if (pr.status != STORE_PUT_OK) {
        if (put_reached_log(rc, pr.status)) {
            put_latency_record(&sp->put_lat, began);
            put_latency_failed(&sp->put_lat);
        }
        int32_t code = send_put_status_code(sp, pr.status, remark, sizeof remark);
        return answer(sp, j, code, remark);
    }
    char id[64];
    offset_msg_id(&sm.store_host, pr.phys_offset, id);
    broker_stats_on_put(sp, m->topic, 1, pr.total_size);
    return answer_stored(sp, j, &pr, id, m->resp_queue_id, wait, began,
                         strcmp(m->topic, TIMER_TOPIC) == 0 ? &sm : NULL, bc->broker_name);
}

static int put_batch(store_plugin *sp, send_job *j, const rmq_broker_config *bc,
                     const store_addr *store_host_in, const rmq_topic_config *tc, int32_t queue_id)
{
    const send_header *h = &j->h;
    char remark[512];
    size_t len = 0;
    const uint8_t *body = sp->api->cmd_body(j->cmd, &len);
    /* asyncSendBatchMessage unboxes sysFlag, flag and bornTimestamp */
    if (!send_header_need(h, SEND_HAS_SYS_FLAG | SEND_HAS_FLAG | SEND_HAS_BORN_TS, remark,
                          sizeof remark))
        return answer_exception(sp, j, remark);
    props_view *bp = malloc(sizeof *bp);
    if (!bp)
        return answer(sp, j, RC_SYSTEM_ERROR, "java.lang.OutOfMemoryError");
    props_parse(h->properties, h->properties ? strlen(h->properties) : 0, bp);
    /* CommitLog.asyncPutMessages: size, transaction bits, DELAY, then the encoder */
    int32_t code = 0;
    bool illegal = (int64_t)len > sp->set.engine.max_message_size || (h->sys_flag & 0xC) != 0;
    size_t dl;
    const char *delay = props_get(bp, "DELAY", &dl);
    if (!illegal && delay) {
        char tmp[64];
        int32_t level = 0;
        snprintf(tmp, sizeof tmp, "%.*s", (int)(dl < 63 ? dl : 63), delay);
        if (dl > 63 || java_parse_int(tmp, &level) != 0) {
            /* getDelayTimeLevel's Integer.parseInt throws */
            number_format_remark(tmp, remark, sizeof remark);
            free(bp);
            return answer_exception(sp, j, remark);
        }
        illegal = level > 0;
    }
    if (illegal) {
        free(bp);
        code = send_put_status_code(sp, STORE_PUT_MESSAGE_ILLEGAL, remark, sizeof remark);
        return answer(sp, j, code, remark);
    }
    long n = batch_body_count(body, len);
    batch_item *items = NULL;
    store_msg *msgs = NULL;
    int64_t *phys = NULL;
    char *props_all = NULL;
    char *ids = NULL;
    props_view *one = NULL;
    int rc = 0;
    if (n <= 0) {
        size_t dummy;
        batch_status st = batch_body_decode(body, len, NULL, 0, &dummy);
        free(bp);
        if (st == BATCH_EMPTY) {
            code = send_put_status_code(sp, STORE_PUT_MESSAGE_ILLEGAL, remark, sizeof remark);
            return answer(sp, j, code, remark);
        }
        return answer_exception(sp, j, batch_status_remark(st)); /* the decoder threw */
    }
    /* batch-level properties: CLUSTER, then the header's (a Java batch header carries WAIT) */
    char batch_props[4096];
    size_t bpl = 0;
    {
        props_view *cl = malloc(sizeof *cl);
        if (!cl) {
            free(bp);
            return answer(sp, j, RC_SYSTEM_ERROR, "java.lang.OutOfMemoryError");
        }
        cl->n = 0;
        bpl = props_encode_stored(cl, NULL, bc->cluster_name, batch_props, sizeof batch_props);
        free(cl);
        size_t rest = props_encode_stored(
            bp, (const char *const[]){"CLUSTER", NULL}, NULL, batch_props + bpl + 1,
            sizeof batch_props > bpl + 1 ? sizeof batch_props - bpl - 1 : 0);
        if (rest && bpl + 1 + rest <= sizeof batch_props) {
            batch_props[bpl] = PROP_SEP;
            bpl += 1 + rest;
        } else if (rest) {
            bpl = sizeof batch_props + 1; /* too long: refused below */
        }
    }
    bool wait = wait_store_ok(bp);
    free(bp);
    if (bpl > sizeof batch_props) {
        code = send_put_status_code(sp, STORE_PUT_PROPERTIES_SIZE_EXCEEDED, remark, sizeof remark);
        return answer(sp, j, code, remark);
    }
    items = calloc((size_t)n, sizeof *items);
    msgs = calloc((size_t)n, sizeof *msgs);
    phys = calloc((size_t)n, sizeof *phys);
    size_t total_props = 0;
    size_t got = 0;
    if (!items || !msgs || !phys ||
        batch_body_decode(body, len, items, (size_t)n, &got) != BATCH_OK) {
        rc = answer(sp, j, RC_SYSTEM_ERROR, "java.lang.OutOfMemoryError");
        goto out;
    }
    for (size_t i = 0; i < got; i++)
        total_props += items[i].props_len + 1 + bpl;
    props_all = malloc(total_props + 1);
    ids = malloc((size_t)n * 58 + 1);
    one = malloc(sizeof *one);
    if (!props_all || !ids || !one) {
        rc = answer(sp, j, RC_SYSTEM_ERROR, "java.lang.OutOfMemoryError");
        goto out;
    }
    store_addr born, store_host;
    if (addr_parse(j->peer, &born) != 0)
        addr_from_ip_port("127.0.0.1", 0, &born);
    store_host = *store_host_in;
    size_t at = 0;
    for (size_t i = 0; i < got; i++) {
        batch_item *it = &items[i];
        char *p = props_all + at;
        size_t pl = 0;
        memcpy(p, it->props, it->props_len);
        pl = it->props_len;
        if (pl && bpl && p[pl - 1] != PROP_SEP)
            p[pl++] = PROP_SEP;
        memcpy(p + pl, batch_props, bpl);
        pl += bpl;
        at += pl;
        size_t tl;
        props_parse(it->props, it->props_len, one);
        const char *tag = props_get(one, "TAGS", &tl);
        msgs[i].tags_code = tag ? (int64_t)java_string_hash(tag, tl) : 0;
        msgs[i].topic = h->topic;
        msgs[i].queue_id = queue_id;
        msgs[i].flag = it->flag;
        msgs[i].sys_flag = h->sys_flag | (tc->topic_filter_type == 1 ? 0x2 : 0);
        msgs[i].born_ts = h->born_ts;
        msgs[i].born_host = born;
        msgs[i].store_host = store_host;
        msgs[i].reconsume_times = h->reconsume_times;
        msgs[i].body = it->body;
        msgs[i].body_len = it->body_len;
        msgs[i].props = p;
        msgs[i].props_len = pl;
    }
    msgs[0].defer_write = !j->oneway && wait;
    store_put_result pr;
    uint64_t began = coarse_now_ms();
    if (store_put_batch(sp->engine, msgs, got, phys, &pr) != 0)
        pr.status = STORE_PUT_UNKNOWN_ERROR;
    if (pr.status != STORE_PUT_OK) {
        if (put_reached_log(0, pr.status)) {
            put_latency_record(&sp->put_lat, began);
            put_latency_failed(&sp->put_lat);
        }
        code = send_put_status_code(sp, pr.status, remark, sizeof remark);
        rc = answer(sp, j, code, remark);
        goto out;
    }
    size_t il = 0;
    for (size_t i = 0; i < got; i++) {
        if (i)
            ids[il++] = ',';
        il += offset_msg_id(&store_host, phys[i], ids + il);
    }
    ids[il] = 0;
    broker_stats_on_put(sp, h->topic, (int64_t)got, pr.total_size);
    rc = answer_stored(sp, j, &pr, ids, queue_id, wait, began, NULL, NULL);
out:
    free(items);
    free(msgs);
    free(phys);
    free(props_all);
    free(ids);
    free(one);
    return rc;
}

/* A hook's refusal: a code with remark, an exception, or UNKNOWN_ERROR. */
static int hook_refusal(store_plugin *sp, send_job *j, int32_t code, const char *remark)
{
    if (code == SEND_CHECK_EXCEPTION)
        return answer_exception(sp, j, remark);
    return answer(sp, j, code > 0 ? code : RC_SYSTEM_ERROR, code > 0 ? remark : "UNKNOWN_ERROR");
}

/* The whole send after header decode. may_block: on EXEC or the slow worker. */
static int send_run(store_plugin *sp, send_job *j, bool may_block)
{
    const send_header *h = &j->h;
    char remark[1024];
    int32_t code;

    /* step 1 */
    if (sp->set.start_accept_send_ts > 0 &&
        (int64_t)sp->api->now_wall_ms() < sp->set.start_accept_send_ts) {
        char t[64];
        java_time_text(sp->set.start_accept_send_ts, t, sizeof t);
        snprintf(remark, sizeof remark, "broker unable to service, until %s", t);
        return answer(sp, j, RC_SYSTEM_ERROR, remark);
    }
    rmq_broker_config bc;
    store_addr store_host;
    if (meta_broker_config_cached(sp, &bc, &store_host) != 0) {
        memset(&bc, 0, sizeof bc);
        snprintf(bc.cluster_name, sizeof bc.cluster_name, "DefaultCluster");
        bc.broker_permission = RMQ_PERM_READ | RMQ_PERM_WRITE;
    }
    rmq_topic_config tc;
    code = send_msg_check(sp, h, &bc, j->peer, may_block, &tc, remark, sizeof remark);
    if (code == SEND_CHECK_NEEDS_SLOW)
        return SEND_NEEDS_SLOW;
    if (code == SEND_CHECK_EXCEPTION)
        return answer_exception(sp, j, remark);
    if (code != 0)
        return answer(sp, j, code, remark);
    int32_t queue_id = h->queue_id;
    if (queue_id < 0) {
        if (tc.write_queue_nums <= 0) /* randomQueueId's modulo throws */
            return answer_exception(sp, j, "java.lang.ArithmeticException: / by zero");
        queue_id = (int32_t)((next_random(sp) % 99999999u) % (uint32_t)tc.write_queue_nums);
    }
    if (h->batch)
        return put_batch(sp, j, &bc, &store_host, &tc, queue_id);

    /* on the stack: no allocation on the hot path (props_view is ~4 KiB) */
    send_message msg;
    send_message *m = &msg;
    m->props_override = NULL;
    m->props_override_len = 0;
    m->has_tags_code = false;
    m->tags_code = 0;
    m->prepared_tx_offset = 0;
    copy_text(m->topic, sizeof m->topic, h->topic);
    m->queue_id = queue_id;
    m->resp_queue_id = queue_id;
    m->sys_flag = h->sys_flag;
    m->reconsume_times = h->reconsume_times;
    props_parse(h->properties, h->properties ? strlen(h->properties) : 0, &m->props);
    int rc;
    /* step 8: %RETRY% (retry/DLQ routing, §10.5.6) */
    if (is_retry_topic(m->topic)) {
        if (!may_block)
            return SEND_NEEDS_SLOW;
        code = sp->hooks && sp->hooks->retry_send
                   ? sp->hooks->retry_send(sp, h, m, remark, sizeof remark)
                   : retry_group_check(sp, m->topic, remark, sizeof remark);
        if (code != 0) {
            rc = hook_refusal(sp, j, code, remark);
            goto done;
        }
        if (strcmp(m->topic, h->topic) != 0 && meta_topic_get(sp, m->topic, &tc) != 0)
            memset(&tc, 0, sizeof tc);
    }
    /* handleRetryAndDLQ ends unboxing sysFlag; then flag and bornTimestamp */
    if (!send_header_need(h, SEND_HAS_SYS_FLAG | SEND_HAS_FLAG | SEND_HAS_BORN_TS, remark,
                          sizeof remark)) {
        rc = answer_exception(sp, j, remark);
        goto done;
    }
    /* step 9 */
    bool tran = props_value_is(&m->props, "TRAN_MSG", "true");
    if (tran && sp->set.reject_transaction_message) {
        snprintf(remark, sizeof remark, "the broker[%s] sending transaction message is forbidden",
                 bc.broker_ip1);
        rc = answer(sp, j, RC_NO_PERMISSION, remark);
        goto done;
    }
    /* DELAY / TRAN_MSG / TIMER_*: routed by the delay, transaction and timer
     * hooks (§10.6, §10.10, 5.x timer messages) */
    static const prop_name special[] = {PROP_NAME("DELAY"), PROP_NAME("TIMER_DELIVER_MS"),
                                        PROP_NAME("TIMER_DELAY_SEC"), PROP_NAME("TIMER_DELAY_MS")};
    if (sp->hooks && sp->hooks->special_send &&
        (tran || props_has_any(&m->props, special, sizeof special / sizeof special[0]))) {
        if (!may_block)
            return SEND_NEEDS_SLOW;
        code = sp->hooks->special_send(sp, h, m, remark, sizeof remark);
        if (code != 0) {
            rc = hook_refusal(sp, j, code, remark);
            goto done;
        }
    }
    rc = put_single(sp, j, &bc, &store_host, &tc, m);
done:
    free(m->props_override);
    return rc;
}

static void send_slow(store_plugin *sp, void *arg)
{
    send_job *j = arg;
    send_run(sp, j, true);
    free(j);
}

static int send_process(rmq_request *req, const rmq_cmd *cmd, void *ud, bool inline_io)
{
    store_plugin *sp = ud;
    char remark[512];
    send_job job;
    job.t.req = req;
    job.t.d = NULL;
    job.deferred = false;
    job.cmd = cmd;
    job.oneway = store_cmd_is_oneway(sp, cmd);
    const char *peer = sp->api->request_peer(req);
    copy_text(job.peer, sizeof job.peer, peer ? peer : "");
    if (send_header_decode(sp, cmd, &job.h, remark, sizeof remark) != 0) {
        sp->api->request_fail(req, remark);
        return RMQ_EINVAL;
    }
    int rc = send_run(sp, &job, !inline_io);
    if (rc != SEND_NEEDS_SLOW)
        return job.deferred ? RMQ_DEFERRED : RMQ_OK;
    send_job *slow = malloc(sizeof *slow);
    if (!slow) {
        sp->api->request_fail(req, "java.lang.OutOfMemoryError");
        return RMQ_ENOMEM;
    }
    *slow = job;
    slow->t.d = sp->api->defer(req);
    slow->deferred = true;
    if (!slow->t.d) {
        free(slow);
        sp->api->request_fail(req, "store is shutting down");
        return RMQ_ESHUTDOWN;
    }
    if (slow_worker_post(sp, send_slow, slow) != 0) {
        answer(sp, slow, RC_SYSTEM_ERROR, "store is shutting down");
        free(slow);
    }
    return RMQ_DEFERRED;
}

static int send_inline(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return send_process(req, cmd, ud, true);
}

static int send_exec(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return send_process(req, cmd, ud, false);
}

int send_processors_register(store_plugin *sp)
{
    const rmq_host_api *a = sp->api;
    int rc = a->declare_executor(sp->ctx, "send", sp->set.send_threads, sp->set.send_queue);
    if (rc != 0)
        return rc;
    rmq_processor_fn fn = sp->set.send_inline ? send_inline : send_exec;
    const char *ex = sp->set.send_inline ? NULL : "send";
    static const int32_t codes[] = {10, 310, 320};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if ((rc = a->register_processor(sp->ctx, codes[i], fn, sp, ex)) != 0)
            return rc;
    return 0;
}
