/* pop_processors.c — RocketMQ 5.x POP consumption on the remoting protocol:
 * POP_MESSAGE (200050), ACK_MESSAGE (200051), CHANGE_MESSAGE_INVISIBLETIME
 * (200053), BATCH_ACK_MESSAGE (200151); the held POPs and NOTIFICATIONs
 * (pop_peek_notify.c has PEEK/NOTIFICATION/POLLING_INFO). A popped message stays invisible for
 * invisibleTime ms; unless acknowledged the revive (pop_revive.c) then copies it into the POP
 * retry topic (pop_retry.c: reconsume times + 1), which a non-order POP reads too, or past the
 * group's retryMaxTimes into %DLQ%<group>. Order (FIFO) pop hands out a queue's messages only
 * when nothing of that queue is in flight for the group and redelivers in the queue (same
 * offset, reconsume times + 1). The answer carries
 * the stored records as PULL does and the header fields the 5.x client builds each message's POP_CK
 * (extraInfo) from: popTime, invisibleTime, reviveQid, restNum, startOffsetInfo, msgOffsetInfo,
 * orderCountInfo (ExtraInfoUtil formats). The state lives in pop_state.c. Runs on the pull
 * executor, except ACK_MESSAGE with pullMessageInline (the default): on the IO thread. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "header_numbers.h"
#include "message_id.h"
#include "pop_service.h"
#include "pull_request.h"
#include "store_features.h"

#define RC_NO_MESSAGE 208
#define POP_MAX_MSGS 32
#define POP_REVIVE_QID 0
#define POP_ORDER_REVIVE_QID 999 /* KeyBuilder.POP_ORDER_REVIVE_QUEUE: marks an order receipt */
#define POP_HOLD_TICK_MS 100
#define INIT_MODE_MAX 1 /* ConsumeInitMode.MAX */

typedef struct pop_held {
    rmq_deferred *d;
    uint64_t deadline_ms;
    struct pop_held *next;
} pop_held;

/* ---- growing text / byte buffers ---- */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool failed;
} sbuf;

static void sb_add(sbuf *b, const void *data, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->cap + n + 1) * 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->failed = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

/* ---- the POP request ---- */
typedef struct pop_req {
    const char *group, *topic, *exp_type, *exp;
    int32_t queue_id, max_msgs, init_mode;
    int64_t invisible, poll_ms;
    bool order;
    const char *attempt_id; /* attemptId (5.x), NULL when absent */
    bool resend; /* this queue's in-flight batch goes out again as it is (pop_attempt.c) */
} pop_req;

/* The subscription as PULL filters it (pull_filter.c): TAG hash codes, or
 * an SQL92 expression compiled by the filter plugin. 0, or a response
 * code with remark (SUBSCRIPTION_PARSE_FAILED, as Java when the expression
 * does not compile). Free with pull_filter_reset. */
static int32_t pop_filter_build(store_plugin *sp, const pop_req *p, pull_req *fp, char *remark,
                                size_t cap)
{
    memset(fp, 0, sizeof *fp);
    fp->codes = fp->codes_inline;
    bool tag_type = !p->exp_type || !*p->exp_type || strcmp(p->exp_type, "TAG") == 0;
    if (tag_type) {
        if (pull_filter_parse_tags(fp, p->exp) != 0) {
            snprintf(remark, cap, "java.lang.OutOfMemoryError");
            return RC_SYSTEM_ERROR;
        }
        return 0;
    }
    fp->is_sql = true;
    const void *tbl;
    void *ud;
    rmq_service_ref ref;
    int rc = RMQ_EINVAL;
    if (p->exp && *p->exp &&
        sp->api->service_acquire(sp->ctx, RMQ_FILTER_EXPR_SERVICE, RMQ_FILTER_EXPR_VERSION, &tbl,
                                 &ud, &ref) == 0) {
        const rmq_filter_expr_service *f = tbl;
        char err[256];
        rc = f->compile(ud, p->exp_type, p->exp, &fp->sql, err, sizeof err, NULL);
        sp->api->service_release(sp->ctx, ref);
    }
    if (rc != 0) {
        fp->sql = NULL;
        snprintf(remark, cap, "parse the consumer's subscription failed");
        return RC_SUBSCRIPTION_PARSE_FAILED;
    }
    return 0;
}

/* RECONSUMETIMES of a stored record sits after the hosts (§10.3.1). */
static void patch_reconsume_times(uint8_t *rec, size_t len, int32_t times)
{
    if (len < 40)
        return;
    uint32_t sys = stored_be32(rec + 36);
    size_t at = 36 + 4 + 8 + ((sys & STORED_SYSFLAG_BORNHOST_V6) ? 20 : 8) + 8 +
                ((sys & STORED_SYSFLAG_STOREHOST_V6) ? 20 : 8);
    if (at + 4 <= len)
        stored_put_be32(rec + at, (uint32_t)times);
}

/* What one POP collects: records, and per queue the offsets handed out. */
typedef struct pop_out {
    sbuf body, start_info, msg_info, order_info;
    int64_t rest;
    int found;
} pop_out;

/* flag: the retry flag of the queue's topic (pop_retry_flag) */
/* v as "%" PRId64 writes it, at the end of buf (24 bytes): the text. */
static const char *i64_text(char buf[24], int64_t v)
{
    char *p = buf + 24;
    *--p = '\0';
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    return p;
}

/* "<flag> <qid> <first offset>" and "<flag> <qid> <o1>,<o2>..." (an offset
 * per message popped: written without snprintf, as the journal lines) */
static void info_queue(pop_out *o, const char *flag, int32_t qid, const int64_t *offs, int n)
{
    if (n == 0)
        return;
    char num[24];
    if (o->start_info.len)
        sb_str(&o->start_info, ";");
    sb_str(&o->start_info, flag);
    sb_str(&o->start_info, " ");
    sb_str(&o->start_info, i64_text(num, qid));
    sb_str(&o->start_info, " ");
    sb_str(&o->start_info, i64_text(num, offs[0]));
    if (o->msg_info.len)
        sb_str(&o->msg_info, ";");
    sb_str(&o->msg_info, flag);
    sb_str(&o->msg_info, " ");
    sb_str(&o->msg_info, i64_text(num, qid));
    sb_str(&o->msg_info, " ");
    for (int i = 0; i < n; i++) {
        if (i)
            sb_str(&o->msg_info, ",");
        sb_str(&o->msg_info, i64_text(num, offs[i]));
    }
}

/* The message at a queue offset (one stored record, malloc'd). */
int pop_read_at(store_plugin *sp, const char *topic, int32_t qid, int64_t offset,
                store_get_result *res)
{
    memset(res, 0, sizeof *res);
    if (store_get_messages(sp->engine, topic, qid, offset, 1, NULL, NULL, NULL, res) != 0)
        return -1;
    if (res->status != STORE_GET_FOUND || !res->data || res->len < STORED_RECORD_MIN_SIZE) {
        free(res->data);
        res->data = NULL;
        return -1;
    }
    return 0;
}

/* Past retryMaxTimes: a copy in %DLQ%<group> queue 0 (Java's DLQ copy:
 * RETRY_TOPIC = the original topic, reconsume times = deliveries - 1). */
void pop_to_dlq(store_plugin *sp, const pop_queue *q, const uint8_t *rec, size_t len,
                int32_t reconsume)
{
    stored_record r;
    if (stored_record_decode(rec, len, false, &r) != STORED_RECORD_OK)
        return;
    char topic[300];
    snprintf(topic, sizeof topic, "%%DLQ%%%s", q->group);
    rmq_topic_config tc;
    if (meta_topic_create_in_send_back(sp, topic, 1, RMQ_PERM_READ | RMQ_PERM_WRITE, 0, &tc) != 0) {
        sp->api->log(sp->ctx, RMQ_LOG_WARN, "pop: cannot create %s", topic);
        return;
    }
    props_view *v = malloc(sizeof *v);
    if (!v)
        return;
    props_parse(r.props, r.props_len, v);
    char orig_topic[256], orig_id[64];
    snprintf(orig_topic, sizeof orig_topic, "%.*s", (int)r.topic_len, r.topic);
    /* a copy in the POP retry topic: RETRY_TOPIC names the topic it is for */
    const char *normal = pop_retry_normal_topic(orig_topic, q->group);
    memmove(orig_topic, normal, strlen(normal) + 1);
    store_msg tmp;
    store_msg_from_record(&r, &tmp);
    offset_msg_id(&tmp.store_host, r.phys_offset, orig_id);
    const char *kv[] = {"RETRY_TOPIC", orig_topic, "ORIGIN_MESSAGE_ID", orig_id, NULL};
    rmq_broker_config bc;
    bool has_bc = meta_broker_config_cached(sp, &bc, NULL) == 0 && bc.cluster_name[0];
    char *props = NULL;
    size_t plen = 0;
    if (props_rewrite(v, props_get(v, "RETRY_TOPIC", NULL) ? kv + 2 : kv, NULL,
                      has_bc ? bc.cluster_name : NULL, &props, &plen) == 0) {
        store_msg sm = tmp;
        sm.topic = topic;
        sm.queue_id = 0;
        sm.reconsume_times = reconsume;
        sm.props = props;
        sm.props_len = plen;
        sm.tags_code = props_tags_code(props, plen);
        store_put_result pr;
        if (store_send_put(sp, &sm, &pr) != 0 || pr.status != STORE_PUT_OK)
            sp->api->log(sp->ctx, RMQ_LOG_WARN, "pop: DLQ copy to %s failed", topic);
    }
    free(props);
    free(v);
}

/* Hand out the in-flight messages of q whose invisible time passed (up to
 * *room), or move them to the DLQ past max_times. The queue's next_visible
 * skips the walk while nothing can have expired (the revive costs nothing
 * for invisible messages: no timer, no scan). */
static void redeliver(store_plugin *sp, pop_queue *q, const pop_req *p, int64_t now,
                      int32_t max_times, int *room, pop_out *o, pop_journal_buf *jb, int64_t *offs,
                      int *noffs)
{
    if (q->n == 0 || (!p->resend && q->next_visible > now))
        return;
    int64_t next_visible = INT64_MAX;
    bool walked_all = true;
    for (size_t i = q->head; i < q->len; i++) {
        pop_inflight *slot = pop_inflight_at(q, i);
        if (!slot)
            continue;
        pop_inflight e = *slot;
        if (!p->order && !POP_INFLIGHT_LEGACY(&e)) {
            /* the revive's: it comes back through the retry topic */
            if (e.pop_time + e.invisible > now && e.pop_time + e.invisible < next_visible)
                next_visible = e.pop_time + e.invisible;
            continue;
        }
        if (!p->resend && e.pop_time + e.invisible > now) {
            if (e.pop_time + e.invisible < next_visible)
                next_visible = e.pop_time + e.invisible;
            continue;
        }
        if (*room <= 0) {
            walked_all = false;
            break;
        }
        store_get_result res;
        if (pop_read_at(sp, q->topic, q->queue_id, e.offset, &res) != 0) {
            /* the message is gone (files deleted): nothing left to deliver */
            pop_journal_ack(jb, q, e.offset);
            pop_inflight_remove(q, e.offset);
            continue;
        }
        if (!p->resend && e.deliveries > max_times) {
            pop_to_dlq(sp, q, res.data, res.len, e.deliveries - 1);
            free(res.data);
            pop_journal_ack(jb, q, e.offset);
            pop_inflight_remove(q, e.offset);
            continue;
        }
        if (!p->resend) /* a repeated attempt: still the same delivery */
            e.deliveries++;
        e.pop_time = now;
        e.invisible = p->invisible;
        *slot = e;
        if (now + p->invisible < next_visible)
            next_visible = now + p->invisible;
        if (now + p->invisible < q->revive_at)
            q->revive_at = now + p->invisible;
        pop_journal_inflight(jb, q, &e);
        patch_reconsume_times(res.data, res.len, e.deliveries - 1);
        sb_add(&o->body, res.data, res.len);
        free(res.data);
        offs[(*noffs)++] = e.offset;
        if (p->order) {
            char tmp[96];
            if (o->order_info.len)
                sb_str(&o->order_info, ";");
            snprintf(tmp, sizeof tmp, "0 qo%" PRId32 "%%%" PRId64 " %" PRId32, q->queue_id,
                     e.offset, e.deliveries - 1);
            sb_str(&o->order_info, tmp);
        }
        o->found++;
        (*room)--;
    }
    if (walked_all)
        q->next_visible = q->n ? next_visible : INT64_MAX;
    pop_queue_tidy(q);
}

bool pop_queue_order_locked(const pop_queue *q, int64_t now)
{
    if (q->n == 0)
        return false;
    if (q->next_visible > now)
        return true; /* every message in flight is still invisible */
    for (size_t i = q->head; i < q->len; i++)
        if (q->inflight[i].deliveries > 0 &&
            q->inflight[i].pop_time + q->inflight[i].invisible > now)
            return true;
    return false;
}

/* One record of the answer: as stored, or for a retry-topic record (unless
 * popResponseReturnActualRetryTopic) re-encoded under the topic asked for
 * with its POP_CK, as Java's PopMessageProcessor recodes it. */
static void add_record(store_plugin *sp, const pop_queue *q, const pop_req *p, int64_t start,
                       int64_t now, pop_out *o, const uint8_t *rec, size_t len)
{
    pop_service *ps = pop_service_of(sp);
    uint8_t *re = NULL;
    size_t n = 0;
    if (!ps->retry_actual_topic && pop_is_retry_topic(q->topic)) {
        rmq_broker_config bc;
        char head[400];
        snprintf(head, sizeof head, "%" PRId64 " %" PRId64 " %" PRId64 " %d %s %s", start, now,
                 p->invisible, POP_REVIVE_QID, pop_retry_flag(q->topic),
                 meta_broker_config_cached(sp, &bc, NULL) == 0 ? bc.broker_name : "");
        n = pop_retry_recode(sp, rec, len, p->topic, head, &re);
    }
    if (n)
        sb_add(&o->body, re, n);
    else
        sb_add(&o->body, rec, len);
    free(re);
}

/* New messages of q from its next offset. */
static void pop_new(store_plugin *sp, pop_queue *q, const pop_req *p, pull_req *filter, int64_t now,
                    int *room, pop_out *o, pop_journal_buf *jb, int64_t *offs, int *noffs)
{
    store_get_result res;
    memset(&res, 0, sizeof res);
    int64_t start = q->next_offset;
    pull_filter_ctx fc = {sp, filter};
    if (store_get_messages(sp->engine, q->topic, q->queue_id, q->next_offset, *room,
                           filter->match_all ? NULL : pull_filter_cq,
                           (filter->is_sql && filter->sql) ? pull_filter_record : NULL, &fc,
                           &res) != 0)
        return;
    if (res.status == STORE_GET_OFFSET_TOO_SMALL || res.status == STORE_GET_OFFSET_OVERFLOW_BADLY)
        q->next_offset = res.next_begin_offset; /* moved: start where the queue is */
    size_t at = 0;
    while (res.data && at + 4 <= res.len) {
        size_t sz = stored_be32(res.data + at);
        stored_record r;
        if (sz < STORED_RECORD_MIN_SIZE || at + sz > res.len ||
            stored_record_decode(res.data + at, sz, false, &r) != STORED_RECORD_OK)
            break;
        pop_inflight e = {.offset = r.queue_offset,
                          .pop_time = now,
                          .invisible = p->invisible,
                          .deliveries = 1,
                          .flags = p->order ? POP_INFLIGHT_ORDER : POP_INFLIGHT_PLAIN};
        if (pop_inflight_put(q, &e) != 0)
            break;
        pop_journal_inflight(jb, q, &e);
        add_record(sp, q, p, start, now, o, res.data + at, sz);
        offs[(*noffs)++] = r.queue_offset;
        if (p->order) {
            char tmp[96];
            if (o->order_info.len)
                sb_str(&o->order_info, ";");
            snprintf(tmp, sizeof tmp, "0 qo%" PRId32 "%%%" PRId64 " 0", q->queue_id,
                     r.queue_offset);
            sb_str(&o->order_info, tmp);
        }
        o->found++;
        (*room)--;
        at += sz;
    }
    if (res.status == STORE_GET_FOUND || res.status == STORE_GET_NO_MATCHED_MESSAGE ||
        res.status == STORE_GET_MESSAGE_WAS_REMOVING)
        q->next_offset = res.next_begin_offset;
    free(res.data);
}

static int64_t initial_offset(store_plugin *sp, const pop_req *p, int32_t qid)
{
    int64_t committed = -1;
    if (meta_offset_query(sp, p->group, p->topic, qid, &committed) == 0 && committed >= 0)
        return committed;
    int64_t min = store_min_offset(sp->engine, p->topic, qid);
    if (p->init_mode != INIT_MODE_MAX)
        return min;
    /* Java's initPopOffsetByCheckMsgInMem (default true): a queue whose first
     * message is still in memory starts at 0 even for MAX */
    if (min <= 0 && !store_check_in_disk_by_consume_offset(sp->engine, p->topic, qid, 0))
        return 0;
    return store_max_offset(sp->engine, p->topic, qid);
}

/* A non-order POP's read of the group's POP retry topics (st->mu held):
 * V1, and V2 too with enableRetryTopicV2 (Java also reads V1 then, its
 * retrieveMessageFromPopRetryTopicV1 default), each queue from its next
 * offset without the subscription's filter (Java: SUB_ALL). */
static void pop_retry_collect(store_plugin *sp, pop_service *ps, const pop_req *p, int64_t now,
                              int *room, pop_out *o, pop_journal_buf *jb)
{
    pull_req all;
    memset(&all, 0, sizeof all);
    all.codes = all.codes_inline;
    if (pull_filter_parse_tags(&all, "*") != 0) {
        pull_filter_reset(&all);
        return;
    }
    for (int v2 = 0; v2 <= (ps->retry_v2 ? 1 : 0); v2++) {
        char topic[300];
        rmq_topic_config tc;
        if (pop_retry_topic_name(topic, sizeof topic, p->group, p->topic, v2) != 0 ||
            !pop_name_ok(topic) || meta_topic_get(sp, topic, &tc) != 0)
            continue; /* no message of the group expired yet */
        for (int32_t qid = 0; qid < tc.read_queue_nums; qid++) {
            pop_queue *q = pop_queue_get(&ps->st, p->group, topic, qid);
            if (!q)
                break;
            if (q->next_offset < 0) {
                int64_t committed = -1;
                q->next_offset =
                    meta_offset_query(sp, p->group, topic, qid, &committed) == 0 && committed >= 0
                        ? committed
                        : store_min_offset(sp->engine, topic, qid);
                pop_journal_next(jb, q);
            }
            int64_t before = q->next_offset, offs[POP_MAX_MSGS];
            int noffs = 0;
            if (*room > 0)
                pop_new(sp, q, p, &all, now, room, o, jb, offs, &noffs);
            if (q->next_offset != before)
                pop_journal_next(jb, q);
            info_queue(o, pop_retry_flag(topic), qid, offs, noffs);
            int64_t max = store_max_offset(sp->engine, topic, qid);
            if (max > q->next_offset)
                o->rest += max - q->next_offset;
        }
    }
    pull_filter_reset(&all);
}

/* One pass over the queues asked for. RMQ_ESHUTDOWN when the state was
 * handed over (reload) or never opened. */
static int pop_collect(store_plugin *sp, const pop_req *p, pull_req *filter, int32_t nqueues,
                       int32_t max_times, pop_out *o, int64_t now)
{
    pop_service *ps = pop_service_of(sp);
    if (!ps || !ps->opened)
        return RMQ_ESHUTDOWN;
    pop_state *st = &ps->st;
    int room = p->max_msgs;
    int64_t offs[POP_MAX_MSGS];
    pop_journal_buf jb = {0};
    pthread_mutex_lock(&st->mu);
    if (st->closed) {
        pthread_mutex_unlock(&st->mu);
        return RMQ_ESHUTDOWN;
    }
    uint32_t turn = atomic_fetch_add(&ps->turn, 1);
    int32_t first = p->queue_id >= 0 ? p->queue_id : (int32_t)(turn % (uint32_t)nqueues);
    int32_t count = p->queue_id >= 0 ? 1 : nqueues;
    /* Java's PopMessageProcessor: one POP in five reads the retry topic
     * first, the others after the queues when there is room left */
    bool retry_first = !p->order && turn % 5 == 0;
    if (retry_first)
        pop_retry_collect(sp, ps, p, now, &room, o, &jb);
    for (int32_t k = 0; k < count; k++) {
        int32_t qid = (first + k) % nqueues;
        pop_queue *q = pop_queue_get(st, p->group, p->topic, qid);
        if (!q)
            break;
        if (q->next_offset < 0) {
            q->next_offset = initial_offset(sp, p, qid);
            pop_journal_next(&jb, q);
        }
        int64_t before = q->next_offset;
        int noffs = 0;
        if (room > 0) {
            if (p->order) {
                /* the same attemptId as this queue's batch: that batch again (Java's checkBlock) */
                pop_req rp = *p;
                rp.resend = q->n && pop_attempt_same(q, p->attempt_id);
                /* one in-flight batch per queue: locked while any of it is invisible */
                bool locked = !rp.resend && pop_queue_order_locked(q, now);
                if (!locked && q->n) {
                    redeliver(sp, q, &rp, now, max_times, &room, o, &jb, offs, &noffs);
                    /* Java reads the repeat from the committed offset: room
                     * left after the batch takes newer messages too */
                    if (rp.resend && room > 0)
                        pop_new(sp, q, p, filter, now, &room, o, &jb, offs, &noffs);
                } else if (!locked)
                    pop_new(sp, q, p, filter, now, &room, o, &jb, offs, &noffs);
            } else {
                /* expired messages come back through the retry topic
                 * (pop_revive.c); legacy entries in their queue, as before */
                if (q->has_legacy)
                    redeliver(sp, q, p, now, max_times, &room, o, &jb, offs, &noffs);
                if (room > 0)
                    pop_new(sp, q, p, filter, now, &room, o, &jb, offs, &noffs);
            }
        }
        /* the N line carries the attemptId: written when either changed */
        bool attempt_changed = p->order && noffs && pop_attempt_note(q, p->attempt_id);
        if (q->next_offset != before || attempt_changed)
            pop_journal_next(&jb, q);
        info_queue(o, "0", qid, offs, noffs);
        int64_t max = store_max_offset(sp->engine, p->topic, qid);
        if (max > q->next_offset)
            o->rest += max - q->next_offset;
    }
    if (!p->order && !retry_first && room > 0)
        pop_retry_collect(sp, ps, p, now, &room, o, &jb);
    int rc = pop_journal_flush(st, &jb);
    pthread_mutex_unlock(&st->mu);
    if (rc != 0)
        sp->api->log(sp->ctx, RMQ_LOG_ERROR, "pop journal %s: %s", st->path, strerror(-rc));
    return 0;
}

static void pop_out_free(pop_out *o)
{
    free(o->body.p);
    free(o->start_info.p);
    free(o->msg_info.p);
    free(o->order_info.p);
}

static void free_body(void *ud, const void *data)
{
    (void)ud;
    free((void *)data);
}

static int parse_header(store_plugin *sp, const rmq_cmd *cmd, pop_req *p, char *remark, size_t cap)
{
    const rmq_host_api *a = sp->api;
    memset(p, 0, sizeof *p);
    p->group = a->cmd_ext_get(cmd, "consumerGroup");
    p->topic = a->cmd_ext_get(cmd, "topic");
    p->exp_type = a->cmd_ext_get(cmd, "expType");
    p->exp = a->cmd_ext_get(cmd, "exp");
    const char *order = a->cmd_ext_get(cmd, "order");
    p->order = order && strcmp(order, "true") == 0;
    p->attempt_id = a->cmd_ext_get(cmd, "attemptId");
    const char *qid = a->cmd_ext_get(cmd, "queueId");
    const char *max = a->cmd_ext_get(cmd, "maxMsgNums");
    const char *inv = a->cmd_ext_get(cmd, "invisibleTime");
    const char *poll = a->cmd_ext_get(cmd, "pollTime");
    const char *born = a->cmd_ext_get(cmd, "bornTime");
    const char *init = a->cmd_ext_get(cmd, "initMode");
    int64_t born_ms = 0;
    /* @CFNotNull fields of PopMessageRequestHeader */
    const char *missing = !p->group   ? "consumerGroup"
                          : !p->topic ? "topic"
                          : !qid      ? "queueId"
                          : !max      ? "maxMsgNums"
                          : !inv      ? "invisibleTime"
                          : !poll     ? "pollTime"
                          : !born     ? "bornTime"
                          : !init     ? "initMode"
                                      : NULL;
    if (missing) {
        snprintf(remark, cap, "the custom field <%s> is null", missing);
        return -1;
    }
    if (java_parse_int(qid, &p->queue_id) != 0 || java_parse_int(max, &p->max_msgs) != 0 ||
        java_parse_long(inv, &p->invisible) != 0 || java_parse_long(poll, &p->poll_ms) != 0 ||
        java_parse_long(born, &born_ms) != 0 || java_parse_int(init, &p->init_mode) != 0) {
        snprintf(remark, cap, "the custom field has a malformed number");
        return -1;
    }
    return 0;
}

/* The checks of PopMessageProcessor, in order. 0 (with *nqueues and
 * *max_times) or a response code with remark. */
static int32_t pop_checks(store_plugin *sp, const pop_req *p, int32_t *nqueues, int32_t *max_times,
                          char *remark, size_t cap)
{
    rmq_broker_config bc;
    meta_broker_config_or_default(sp, &bc);
    if (!(bc.broker_permission & RMQ_PERM_READ)) {
        snprintf(remark, cap, "the broker[%s] popping message is forbidden", bc.broker_ip1);
        return RC_NO_PERMISSION;
    }
    if (p->max_msgs > POP_MAX_MSGS || p->max_msgs <= 0) {
        snprintf(remark, cap, "the broker[%s] pop message size[%d] is illegal", bc.broker_ip1,
                 p->max_msgs);
        return RC_MESSAGE_ILLEGAL;
    }
    if (!pop_name_ok(p->group) || !pop_name_ok(p->topic)) {
        snprintf(remark, cap, "illegal consumer group or topic name");
        return RC_MESSAGE_ILLEGAL;
    }
    rmq_topic_config tc;
    if (meta_topic_get(sp, p->topic, &tc) != 0) {
        snprintf(remark, cap, "topic[%s] not exist, apply first please! " FAQ_SUFFIX, p->topic);
        return RC_TOPIC_NOT_EXIST;
    }
    if (!(tc.perm & RMQ_PERM_READ)) {
        snprintf(remark, cap, "the topic[%s] peeking message is forbidden", p->topic);
        return RC_NO_PERMISSION;
    }
    if (p->queue_id >= tc.read_queue_nums || tc.read_queue_nums <= 0) {
        snprintf(remark, cap,
                 "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[]",
                 p->queue_id, p->topic, tc.read_queue_nums);
        return RC_SYSTEM_ERROR;
    }
    rmq_subscription_group_config g;
    if (meta_group_get(sp, p->group, bc.auto_create_subscription_group, &g) != 0) {
        snprintf(remark, cap, "subscription group [%s] does not exist, " FAQ_SUFFIX, p->group);
        return RC_SUBSCRIPTION_GROUP_NOT_EXIST;
    }
    if (!g.consume_enable) {
        snprintf(remark, cap, "subscription group no permission, %s", p->group);
        return RC_NO_PERMISSION;
    }
    *nqueues = tc.read_queue_nums;
    *max_times = g.retry_max_times;
    return 0;
}

/* Run a POP. A response (code > 0 or messages found), or NULL with
 * *hold = true when nothing was found and the request may wait. */
static rmq_cmd *pop_run(store_plugin *sp, const rmq_cmd *cmd, bool may_hold, bool *hold)
{
    const rmq_host_api *a = sp->api;
    char remark[600];
    pop_req p;
    *hold = false;
    if (parse_header(sp, cmd, &p, remark, sizeof remark) != 0)
        return a->cmd_new_response(cmd, RC_SYSTEM_ERROR, remark);
    int32_t nqueues = 0, max_times = 16;
    int32_t code = pop_checks(sp, &p, &nqueues, &max_times, remark, sizeof remark);
    if (code != 0)
        return a->cmd_new_response(cmd, code, remark);
    pull_req filter;
    code = pop_filter_build(sp, &p, &filter, remark, sizeof remark);
    if (code != 0) {
        pull_filter_reset(&filter);
        return a->cmd_new_response(cmd, code, remark);
    }
    pop_out o;
    memset(&o, 0, sizeof o);
    int64_t now = (int64_t)a->now_wall_ms();
    int rc = pop_collect(sp, &p, &filter, nqueues, max_times, &o, now);
    pull_filter_reset(&filter);
    if (rc != 0) {
        pop_out_free(&o);
        return a->cmd_new_response(cmd, RC_SYSTEM_ERROR, "store is shutting down");
    }
    if (o.body.failed || o.start_info.failed || o.msg_info.failed || o.order_info.failed) {
        pop_out_free(&o);
        return a->cmd_new_response(cmd, RC_SYSTEM_ERROR, "java.lang.OutOfMemoryError");
    }
    if (o.found == 0 && may_hold && p.poll_ms > 0 && !atomic_load(&sp->quiescing)) {
        pop_out_free(&o);
        *hold = true;
        return NULL;
    }
    /* Java 5.3.3 answers every POP that found nothing POLLING_TIMEOUT with
     * remark NO_MESSAGE_IN_QUEUE, whether it waited (pollTime) or not */
    rmq_cmd *r = a->cmd_new_response(cmd, o.found ? RC_SUCCESS : RC_POLLING_TIMEOUT,
                                     o.found ? "FOUND" : "NO_MESSAGE_IN_QUEUE");
    if (!r) {
        pop_out_free(&o);
        return NULL;
    }
    store_ext_i64(sp, r, "popTime", now);
    store_ext_i64(sp, r, "invisibleTime", p.invisible);
    store_ext_i64(sp, r, "reviveQid", p.order ? POP_ORDER_REVIVE_QID : POP_REVIVE_QID);
    store_ext_i64(sp, r, "restNum", o.rest);
    if (o.start_info.len)
        a->cmd_ext_set(r, "startOffsetInfo", o.start_info.p);
    if (o.msg_info.len)
        a->cmd_ext_set(r, "msgOffsetInfo", o.msg_info.p);
    if (o.order_info.len)
        a->cmd_ext_set(r, "orderCountInfo", o.order_info.p);
    if (o.found && o.body.len) {
        a->cmd_set_body(r, o.body.p, o.body.len, free_body, NULL);
        o.body.p = NULL;
    }
    pop_out_free(&o);
    return r;
}

/* ---- long polling: held POPs are tried again every tick ---- */

static void hold_tick(void *ud)
{
    store_plugin *sp = ud;
    pop_service *ps = pop_service_of(sp);
    if (!ps)
        return;
    atomic_store(&ps->wake_posted, false);
    pthread_mutex_lock(&ps->hold_mu);
    pop_held *list = ps->held;
    ps->held = NULL;
    atomic_store(&ps->nheld, 0);
    pthread_mutex_unlock(&ps->hold_mu);
    uint64_t now = sp->api->now_monotonic_ms();
    pop_held *keep = NULL;
    while (list) {
        pop_held *h = list;
        list = h->next;
        bool hold = false;
        bool ended = now >= h->deadline_ms;
        bool may_hold = !ended && !atomic_load(&sp->quiescing);
        const rmq_cmd *held_cmd = sp->api->deferred_cmd(h->d);
        rmq_cmd *r = sp->api->cmd_code(held_cmd) == POP_NOTIFICATION
                         ? pop_notification_run(sp, held_cmd, may_hold, &hold)
                         : pop_run(sp, held_cmd, may_hold, &hold);
        if (hold) {
            h->next = keep;
            keep = h;
            continue;
        }
        pop_poll_leave(sp, held_cmd);
        if (ended) /* Java's re-poll at the end of the wait checks the total first */
            r = pop_poll_answer_at_end(sp, held_cmd, r);
        sp->api->deferred_reply(h->d, r);
        free(h);
    }
    if (keep) {
        size_t n = 1;
        pthread_mutex_lock(&ps->hold_mu);
        pop_held *tail = keep;
        while (tail->next) {
            tail = tail->next;
            n++;
        }
        tail->next = ps->held;
        ps->held = keep;
        atomic_fetch_add(&ps->nheld, n);
        pthread_mutex_unlock(&ps->hold_mu);
    }
}

/* The 100 ms timer: the held POPs, and the background revive once its
 * interval passed (pop_revive.c; one timer for both, no thread). */
static void pop_tick(void *ud)
{
    hold_tick(ud);
    pop_revive_tick(ud);
}

static void wake_held(store_plugin *sp, void *arg)
{
    (void)arg;
    hold_tick(sp);
}

void pop_holds_on_arrival(store_plugin *sp)
{
    pop_service *ps = pop_service_of(sp);
    if (!ps || atomic_load_explicit(&ps->nheld, memory_order_relaxed) == 0)
        return;
    if (!atomic_exchange(&ps->wake_posted, true) && slow_worker_post(sp, wake_held, NULL) != 0)
        atomic_store(&ps->wake_posted, false); /* the 100 ms tick retries them */
}

void pop_holds_release_all(store_plugin *sp)
{
    pop_service *ps = pop_service_of(sp);
    if (!ps)
        return;
    pthread_mutex_lock(&ps->hold_mu);
    pop_held *list = ps->held;
    ps->held = NULL;
    atomic_store(&ps->nheld, 0);
    pthread_mutex_unlock(&ps->hold_mu);
    while (list) {
        pop_held *h = list;
        list = h->next;
        const rmq_cmd *held_cmd = sp->api->deferred_cmd(h->d);
        rmq_cmd *r;
        if (sp->api->cmd_code(held_cmd) == POP_NOTIFICATION) {
            r = sp->api->cmd_new_response(held_cmd, RC_SUCCESS, NULL);
            if (r)
                sp->api->cmd_ext_set(r, "hasMsg", "false");
        } else {
            r = sp->api->cmd_new_response(held_cmd, RC_POLLING_TIMEOUT, "store is shutting down");
        }
        pop_poll_leave(sp, held_cmd);
        sp->api->deferred_reply(h->d, r);
        free(h);
    }
}

size_t pop_holds_count(store_plugin *sp, const char *group, const char *topic, int32_t queue_id)
{
    pop_service *ps = pop_service_of(sp);
    if (!ps)
        return 0;
    const rmq_host_api *a = sp->api;
    size_t n = 0;
    pthread_mutex_lock(&ps->hold_mu);
    for (const pop_held *h = ps->held; h; h = h->next) {
        const rmq_cmd *c = a->deferred_cmd(h->d);
        const char *g = a->cmd_ext_get(c, "consumerGroup");
        const char *t = a->cmd_ext_get(c, "topic");
        int32_t q = 0;
        if (a->cmd_code(c) != POP_POP_MESSAGE || !g || !t || strcmp(g, group) != 0 ||
            strcmp(t, topic) != 0 || java_parse_int(a->cmd_ext_get(c, "queueId"), &q) != 0)
            continue;
        if ((q < 0 ? -1 : q) == queue_id)
            n++;
    }
    pthread_mutex_unlock(&ps->hold_mu);
    return n;
}

static int pop_process(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    bool hold = false;
    rmq_cmd *r = pop_run(sp, cmd, true, &hold);
    if (!hold) {
        if (!r) {
            a->request_fail(req, "java.lang.OutOfMemoryError");
            return RMQ_ENOMEM;
        }
        return store_answer(sp, &(reply_target){.req = req}, r);
    }
    int64_t poll = 0;
    (void)java_parse_long(a->cmd_ext_get(cmd, "pollTime"), &poll);
    int counted = pop_poll_enter(sp, cmd);
    rmq_cmd *full = counted == RMQ_EBUSY ? pop_polling_full_answer(sp, cmd) : NULL;
    if (counted != 0 && !full) {
        /* not counted (no memory): held, its release would take another
         * request's count; answered at once instead */
        a->request_fail(req, "java.lang.OutOfMemoryError");
        return RMQ_ENOMEM;
    }
    if (full)
        return store_answer(sp, &(reply_target){.req = req}, full);
    int rc = pop_hold_request(sp, req, poll);
    if (rc != RMQ_DEFERRED && counted == 0)
        pop_poll_leave(sp, cmd);
    return rc;
}

int pop_hold_request(store_plugin *sp, rmq_request *req, int64_t poll_ms)
{
    const rmq_host_api *a = sp->api;
    pop_service *ps = pop_service_of(sp);
    pop_held *h = ps ? calloc(1, sizeof *h) : NULL;
    if (!h) {
        a->request_fail(req, "java.lang.OutOfMemoryError");
        return RMQ_ENOMEM;
    }
    h->d = a->defer(req);
    if (!h->d) {
        free(h);
        a->request_fail(req, "store is shutting down");
        return RMQ_ESHUTDOWN;
    }
    h->deadline_ms = a->now_monotonic_ms() + (uint64_t)(poll_ms > 0 ? poll_ms : 0);
    pthread_mutex_lock(&ps->hold_mu);
    h->next = ps->held;
    ps->held = h;
    atomic_fetch_add(&ps->nheld, 1);
    pthread_mutex_unlock(&ps->hold_mu);
    /* a message stored between the empty answer and this insert wakes no
     * one: the tick (100 ms) finds it */
    return RMQ_DEFERRED;
}

/* ---- ACK_MESSAGE / CHANGE_MESSAGE_INVISIBLETIME ---- */

typedef struct ack_req {
    const char *group, *topic, *extra;
    int32_t queue_id;
    int64_t offset, invisible;
} ack_req;

static int32_t ack_parse(store_plugin *sp, const rmq_cmd *cmd, bool change, ack_req *k,
                         char *remark, size_t cap)
{
    const rmq_host_api *a = sp->api;
    memset(k, 0, sizeof *k);
    k->group = a->cmd_ext_get(cmd, "consumerGroup");
    k->topic = a->cmd_ext_get(cmd, "topic");
    k->extra = a->cmd_ext_get(cmd, "extraInfo");
    const char *qid = a->cmd_ext_get(cmd, "queueId");
    const char *off = a->cmd_ext_get(cmd, "offset");
    const char *inv = change ? a->cmd_ext_get(cmd, "invisibleTime") : "0";
    const char *missing = !k->group   ? "consumerGroup"
                          : !k->topic ? "topic"
                          : !qid      ? "queueId"
                          : !k->extra ? "extraInfo"
                          : !off      ? "offset"
                          : !inv      ? "invisibleTime"
                                      : NULL;
    if (missing) {
        snprintf(remark, cap, "the custom field <%s> is null", missing);
        return RC_SYSTEM_ERROR;
    }
    if (java_parse_int(qid, &k->queue_id) != 0 || java_parse_long(off, &k->offset) != 0 ||
        java_parse_long(inv, &k->invisible) != 0) {
        snprintf(remark, cap, "the custom field has a malformed number");
        return RC_SYSTEM_ERROR;
    }
    rmq_topic_config tc;
    if (meta_topic_get(sp, k->topic, &tc) != 0) {
        snprintf(remark, cap, "topic[%s] not exist, apply first please!" FAQ_SUFFIX, k->topic);
        return RC_TOPIC_NOT_EXIST;
    }
    if (k->queue_id < 0 || k->queue_id >= tc.read_queue_nums) {
        snprintf(remark, cap, "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d]",
                 k->queue_id, k->topic, tc.read_queue_nums);
        return RC_MESSAGE_ILLEGAL;
    }
    int64_t min = store_min_offset(sp->engine, k->topic, k->queue_id);
    int64_t max = store_max_offset(sp->engine, k->topic, k->queue_id);
    if (k->offset < min || k->offset > max) {
        snprintf(remark, cap,
                 "request offset[%" PRId64 "] not in queue offset range[%" PRId64 "-%" PRId64 "]",
                 k->offset, min, max);
        return RC_NO_MESSAGE;
    }
    return 0;
}

/* ack (change=false) or new invisible time (change=true) of one in-flight
 * message. *e_out gets the entry after the change. On the IO thread
 * (may_block false) it changes nothing and answers RMQ_EWOULDBLOCK when the state
 * lock is taken (a POP copying its batch, the revive scan) or this journal
 * write could start a compaction (a rewrite and an fsync): the caller moves
 * the acknowledgement to the slow worker. */
static int ack_apply(store_plugin *sp, const ack_req *k, bool change, int64_t now,
                     pop_inflight *e_out, bool may_block)
{
    pop_service *ps = pop_service_of(sp);
    if (!ps || !ps->opened)
        return RMQ_ESHUTDOWN;
    pop_state *st = &ps->st;
    pop_journal_buf jb = {0};
    int64_t commit = -1;
    if (may_block) {
        pthread_mutex_lock(&st->mu);
    } else if (pthread_mutex_trylock(&st->mu) != 0) {
        return RMQ_EWOULDBLOCK;
    } else if (!st->closed && pop_journal_near_compaction(st)) {
        pthread_mutex_unlock(&st->mu);
        return RMQ_EWOULDBLOCK;
    }
    if (st->closed) {
        pthread_mutex_unlock(&st->mu);
        return RMQ_ESHUTDOWN;
    }
    pop_queue *q = pop_name_ok(k->group) && pop_name_ok(k->topic)
                       ? pop_queue_get(st, k->group, k->topic, k->queue_id)
                       : NULL;
    pop_inflight *e = q ? pop_inflight_find(q, k->offset) : NULL;
    if (e && change) {
        e->pop_time = now;
        e->invisible = k->invisible;
        pop_queue_note_visible(q, now + k->invisible);
        *e_out = *e;
        pop_journal_inflight(&jb, q, e);
    } else if (e) {
        pop_journal_ack(&jb, q, k->offset);
        pop_inflight_remove(q, k->offset);
        pop_queue_tidy(q);
        commit = pop_queue_commit_offset(q);
    }
    int rc = pop_journal_flush(st, &jb);
    pthread_mutex_unlock(&st->mu);
    if (rc != 0)
        sp->api->log(sp->ctx, RMQ_LOG_ERROR, "pop journal %s: %s", st->path, strerror(-rc));
    if (commit >= 0) /* what the offset tables (consumer progress) show */
        meta_offset_commit(sp, k->group, k->topic, k->queue_id, commit);
    return rc == 0 ? 0 : RMQ_EIO;
}

/* The answer of one ACK_MESSAGE: RMQ_EWOULDBLOCK (nothing answered) when
 * !may_block and ack_apply could not go on without blocking. */
static int ack_run(store_plugin *sp, reply_target *t, const rmq_cmd *cmd, bool may_block)
{
    const rmq_host_api *a = sp->api;
    char remark[600];
    ack_req k;
    int32_t code = ack_parse(sp, cmd, false, &k, remark, sizeof remark);
    if (code == 0) {
        pop_inflight e;
        int rc = ack_apply(sp, &k, false, (int64_t)a->now_wall_ms(), &e, may_block);
        if (rc == RMQ_EWOULDBLOCK)
            return rc;
        if (rc != 0) {
            code = RC_SYSTEM_ERROR;
            snprintf(remark, sizeof remark, "pop state not writable");
        }
    }
    if (store_cmd_is_oneway(sp, cmd))
        return store_answer(sp, t, NULL);
    rmq_cmd *r = a->cmd_new_response(cmd, code, code ? remark : NULL);
    if (!r) {
        if (t->d)
            a->deferred_reply(t->d, NULL);
        return RMQ_ENOMEM;
    }
    return store_answer(sp, t, r);
}

static void ack_slow(store_plugin *sp, void *arg)
{
    rmq_deferred *d = arg;
    reply_target t = {.d = d};
    ack_run(sp, &t, sp->api->deferred_cmd(d), true);
}

/* On the pull executor (pullMessageInline = false): Java's threading. */
static int ack_process(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    reply_target t = {.req = req};
    return ack_run(ud, &t, cmd, true);
}

/* On the IO thread (pullMessageInline, the default): an acknowledgement is
 * an in-memory change and one short journal write(2), answered without a
 * hand-off to the pull executor and back; when that would wait (ack_apply's
 * RMQ_EWOULDBLOCK) it moves to the slow worker. */
static int ack_inline(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    reply_target t = {.req = req};
    int rc = ack_run(sp, &t, cmd, false);
    if (rc != RMQ_EWOULDBLOCK)
        return rc;
    rmq_deferred *d = sp->api->defer(req);
    if (!d) {
        sp->api->request_fail(req, "store is shutting down");
        return RMQ_ESHUTDOWN;
    }
    if (slow_worker_post(sp, ack_slow, d) != 0) {
        rmq_cmd *r = sp->api->cmd_new_response(cmd, RC_SYSTEM_ERROR, "store is shutting down");
        sp->api->deferred_reply(d, store_cmd_is_oneway(sp, cmd) ? NULL : r);
        if (r && store_cmd_is_oneway(sp, cmd))
            sp->api->cmd_free(r);
    }
    return RMQ_DEFERRED;
}

static int change_process(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    char remark[600];
    ack_req k;
    int32_t code = ack_parse(sp, cmd, true, &k, remark, sizeof remark);
    if (code != 0)
        return store_reply_code(sp, req, cmd, code, remark);
    int64_t now = (int64_t)a->now_wall_ms();
    pop_inflight e = {.pop_time = now, .invisible = k.invisible};
    if (ack_apply(sp, &k, true, now, &e, true) != 0)
        return store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "pop state not writable");
    rmq_cmd *r = a->cmd_new_response(cmd, RC_SUCCESS, NULL);
    if (!r)
        return RMQ_ENOMEM;
    /* the receipt's reviveQid tells an order receipt (999) from a plain one */
    int64_t revive = POP_REVIVE_QID;
    const char *sp3 = k.extra;
    for (int i = 0; i < 3 && sp3; i++) {
        sp3 = strchr(sp3, ' ');
        if (sp3)
            sp3++;
    }
    if (sp3 && strncmp(sp3, "999 ", 4) == 0)
        revive = POP_ORDER_REVIVE_QID;
    store_ext_i64(sp, r, "popTime", e.pop_time);
    store_ext_i64(sp, r, "invisibleTime", e.invisible);
    store_ext_i64(sp, r, "reviveQid", revive);
    return store_answer(sp, &(reply_target){.req = req}, r);
}

/* ---- BATCH_ACK_MESSAGE (200151) ---- */

/* BatchAck's bitSet as fastjson2 writes a java.util.BitSet: the bytes of
 * BitSet.toByteArray() (little-endian bits), as a number array or base64.
 * Bytes into out; their count, -1 when malformed. */
static int bitset_bytes(const json_t *b, uint8_t *out, int cap)
{
    if (json_is_array(b)) {
        int n = (int)json_array_size(b);
        if (n > cap)
            return -1;
        for (int i = 0; i < n; i++) {
            json_t *v = json_array_get(b, (size_t)i);
            if (!json_is_integer(v))
                return -1;
            out[i] = (uint8_t)json_integer_value(v);
        }
        return n;
    }
    const char *s = json_string_value(b);
    if (!s)
        return -1;
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    int n = 0, bits = 0;
    uint32_t acc = 0;
    for (; *s && *s != '='; s++) {
        const char *p = strchr(tbl, *s);
        if (!p)
            return -1;
        acc = (acc << 6) | (uint32_t)(p - tbl);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n >= cap)
                return -1;
            out[n++] = (uint8_t)(acc >> bits);
        }
    }
    return n;
}

static const json_t *field(const json_t *o, const char *short_name, const char *long_name)
{
    const json_t *v = json_object_get(o, short_name);
    return v ? v : json_object_get(o, long_name);
}

static int batch_ack_process(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    size_t len = 0;
    const char *body = a->cmd_body(cmd, &len);
    json_t *root = body ? json_loadb(body, len, 0, NULL) : NULL;
    const json_t *acks = json_object_get(root, "acks");
    if (!json_is_array(acks)) {
        json_decref(root);
        return store_reply_code(sp, req, cmd, RC_SUCCESS, NULL); /* nothing to acknowledge */
    }
    int64_t now = (int64_t)a->now_wall_ms();
    for (size_t i = 0; i < json_array_size(acks); i++) {
        const json_t *e = json_array_get(acks, i);
        ack_req k = {0};
        k.group = json_string_value(field(e, "c", "consumerGroup"));
        k.topic = json_string_value(field(e, "t", "topic"));
        const char *retry = json_string_value(field(e, "r", "retry"));
        k.queue_id = (int32_t)json_integer_value(field(e, "q", "queueId"));
        int64_t start = json_integer_value(field(e, "so", "startOffset"));
        uint8_t bits[4096];
        int nb = bitset_bytes(field(e, "b", "bitSet"), bits, (int)sizeof bits);
        /* retry "1"/"2": the message is in the V1/V2 POP retry topic */
        char real[300];
        if (!k.group || !k.topic || nb < 0 ||
            pop_retry_real_topic(real, sizeof real, k.topic, k.group, retry) != 0)
            continue;
        k.topic = real;
        for (int bit = 0; bit < nb * 8; bit++) {
            if (!(bits[bit / 8] & (1u << (bit % 8))))
                continue;
            k.offset = start + bit;
            pop_inflight out;
            (void)ack_apply(sp, &k, false, now, &out, true);
        }
    }
    json_decref(root);
    return store_reply_code(sp, req, cmd, RC_SUCCESS, NULL);
}

/* ---- life cycle ---- */

int pop_service_init(store_plugin *sp, store_features *f)
{
    pop_service *ps = calloc(1, sizeof *ps);
    if (!ps)
        return RMQ_ENOMEM;
    pthread_mutex_init(&ps->hold_mu, NULL);
    pthread_mutex_init(&ps->st.mu, NULL);
    ps->st.fd = -1;
    ps->retry_v2 = sp->api->setting_bool(sp->ctx, "enableRetryTopicV2");
    ps->retry_actual_topic = sp->api->setting_bool(sp->ctx, "popResponseReturnActualRetryTopic");
    f->pop = ps;
    if (pop_poll_counts_init(ps) != 0)
        return RMQ_ENOMEM;
    /* a reload's new generation opens it in import_state, once the serving
     * generation closed it (it writes the journal until then) */
    int rc = sp->open_deferred ? 0 : pop_service_open(sp);
    if (rc != 0)
        return rc;
    const rmq_host_api *a = sp->api;
    rc = a->register_processor(sp->ctx, 200050, pop_process, sp, "pull");
    if (rc == 0)
        rc = a->register_processor(sp->ctx, 200051, sp->set.pull_inline ? ack_inline : ack_process,
                                   sp, sp->set.pull_inline ? NULL : "pull");
    if (rc == 0)
        rc = a->register_processor(sp->ctx, 200053, change_process, sp, "pull");
    if (rc == 0)
        rc = a->register_processor(sp->ctx, 200151, batch_ack_process, sp, "pull");
    if (rc == 0)
        rc = pop_peek_notify_register(sp);
    if (rc == 0)
        rc = a->add_timer(sp->ctx, POP_HOLD_TICK_MS, POP_HOLD_TICK_MS, pop_tick, sp, "pull",
                          &ps->hold_timer);
    return rc;
}

int pop_service_open(store_plugin *sp)
{
    pop_service *ps = pop_service_of(sp);
    if (!ps || ps->opened)
        return 0;
    char err[600] = "";
    int rc = pop_state_open(&ps->st, sp->set.root_dir, err, sizeof err);
    if (rc != 0) {
        sp->api->log(sp->ctx, RMQ_LOG_ERROR, "pop state: %s", err);
        return RMQ_EIO;
    }
    ps->opened = true;
    return 0;
}

void pop_service_handover(store_plugin *sp)
{
    pop_service *ps = pop_service_of(sp);
    if (!ps)
        return;
    pop_holds_release_all(sp);
    if (ps->opened)
        pop_state_close(&ps->st);
    ps->opened = false;
}

pop_service *pop_service_of(store_plugin *sp)
{
    store_features *f = sp->hooks ? features_of(sp) : NULL;
    return f ? f->pop : NULL;
}

void pop_service_fini(store_plugin *sp, store_features *f)
{
    pop_service *ps = f->pop;
    if (!ps)
        return;
    if (ps->hold_timer)
        sp->api->cancel_timer(sp->ctx, ps->hold_timer);
    pop_holds_release_all(sp);
    if (ps->opened)
        pop_state_close(&ps->st);
    pthread_mutex_destroy(&ps->st.mu);
    pthread_mutex_destroy(&ps->hold_mu);
    pop_poll_counts_fini(ps);
    free(ps);
    f->pop = NULL;
}
