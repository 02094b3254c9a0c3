/* transaction_service.c — transactions of protocol-messages.md §10.10: the
 * half message (RMQ_SYS_TRANS_HALF_TOPIC), END_TRANSACTION (37) committing
 * or rolling back with an op record (RMQ_SYS_TRANS_OP_HALF_TOPIC, tag d),
 * and the check-back loop that re-appends unresolved half messages and asks
 * a producer of their PGROUP with CHECK_TRANSACTION_STATE (39, oneway).
 * Progress is kept as offsets of group CID_RMQ_SYS_TRANS, as Java does. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rmqhost/services/transaction_check_event.h>

#include "ha.h"
#include "header_numbers.h"
#include "message_id.h"
#include "store_features.h"

#define TX_COMMIT 8
#define TX_ROLLBACK 12
#define CHECK_TRANSACTION_STATE 39
#define OP_SCAN_MAX 100000
#define MAX_PROCESS_MS 60000 /* MAX_PROCESS_TIME_LIMIT of one check round */

static void cluster_of(store_plugin *sp, rmq_broker_config *bc)
{
    if (meta_broker_config(sp, bc) != 0) {
        memset(bc, 0, sizeof *bc);
        snprintf(bc->cluster_name, sizeof bc->cluster_name, "DefaultCluster");
    }
}

/* parseHalfMessageInner */
int transaction_prepare(store_plugin *sp, const send_header *h, send_message *m, char *remark,
                        size_t cap)
{
    (void)h;
    (void)remark;
    (void)cap;
    rmq_broker_config bc;
    cluster_of(sp, &bc);
    char qid[16];
    snprintf(qid, sizeof qid, "%d", m->queue_id);
    const char *kv[] = {"REAL_TOPIC", m->topic, "REAL_QID", qid, NULL};
    char *props = NULL;
    size_t plen = 0;
    int rc = props_rewrite(&m->props, kv, NULL, bc.cluster_name, &props, &plen);
    if (rc != 0)
        return rc;
    free(m->props_override);
    m->props_override = props;
    m->props_override_len = plen;
    m->has_tags_code = true;
    m->tags_code = props_tags_code(props, plen);
    snprintf(m->topic, sizeof m->topic, "%s", HALF_TOPIC);
    m->queue_id = 0;
    m->sys_flag &= ~STORED_SYSFLAG_TX_MASK;
    return 0;
}

/* The broker's own address as STOREHOST / BORNHOST of its records. */
static void own_host(store_plugin *sp, store_addr *a)
{
    rmq_broker_config bc;
    bool have = meta_broker_config(sp, &bc) == 0;
    send_store_host(sp, have ? &bc : NULL, a);
}

/* addRemoveTagInTransactionOp: body = the half message's queue offset. */
static int put_op(store_plugin *sp, int32_t queue_id, int64_t half_queue_offset)
{
    char body[32], uniq[33], props[128];
    int blen = snprintf(body, sizeof body, "%" PRId64, half_queue_offset);
    features_uniq_key(sp, uniq);
    int plen = snprintf(props, sizeof props, "TAGS\001d\002UNIQ_KEY\001%s", uniq);
    store_msg m = {0};
    m.topic = OP_HALF_TOPIC;
    m.queue_id = queue_id;
    m.born_ts = (int64_t)sp->api->now_wall_ms();
    own_host(sp, &m.born_host);
    m.store_host = m.born_host;
    m.body = body;
    m.body_len = (size_t)blen;
    m.props = props;
    m.props_len = (size_t)plen;
    m.tags_code = (int64_t)java_string_hash("d", 1);
    store_put_result pr;
    if (store_send_put(sp, &m, &pr) != 0 || pr.status != STORE_PUT_OK)
        return RMQ_EIO;
    return 0;
}

/* EndTransactionProcessor.processRequest */
static int process_end_transaction(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    const char *group = a->cmd_ext_get(cmd, "producerGroup");
    int64_t tsto = 0, clo = 0, cor = 0;
    /* the reflection decode leaves a missing or unparsable number null;
     * checkFields unboxes commitOrRollback, the rest is unboxed at use */
    int32_t cor32 = 0;
    bool has_tsto = java_parse_long(a->cmd_ext_get(cmd, "tranStateTableOffset"), &tsto) == 0;
    bool has_clo = java_parse_long(a->cmd_ext_get(cmd, "commitLogOffset"), &clo) == 0;
    if (java_parse_int(a->cmd_ext_get(cmd, "commitOrRollback"), &cor32) != 0) {
        a->request_fail(req, "java.lang.NullPointerException");
        return RMQ_EINVAL;
    }
    cor = cor32;
    if (cor != 0 && cor != TX_COMMIT && cor != TX_ROLLBACK) {
        a->request_fail(req, "org.apache.rocketmq.remoting.exception.RemotingCommandException: "
                             "commitOrRollback field wrong");
        return RMQ_EINVAL;
    }
    if (cor != 0 && !has_clo) { /* the half message is looked up by commitLogOffset */
        a->request_fail(req, "java.lang.NullPointerException");
        return RMQ_EINVAL;
    }
    if (cor == 0)
        return RMQ_OK; /* unknown: nothing done, no answer */
    uint8_t *buf = NULL;
    stored_record r;
    if (features_read_record(sp, clo, &buf, &r) != 0)
        return store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR,
                                "Find prepared transaction message failed");
    props_view *v = malloc(sizeof *v);
    if (!v) {
        free(buf);
        return RMQ_ENOMEM;
    }
    props_parse(r.props, r.props_len, v);
    int rc;
    size_t gl = 0;
    const char *pg = props_get(v, "PGROUP", &gl);
    char topic[256];
    store_msg m;
    if (!pg) {
        rc = store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "java.lang.NullPointerException");
    } else if (!group || gl != strlen(group) || memcmp(pg, group, gl) != 0) {
        rc = store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "The producer group wrong");
    } else if (!has_tsto) {
        rc = store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "java.lang.NullPointerException");
    } else if (r.queue_offset != tsto) {
        rc = store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR,
                              "The transaction state table offset wrong");
    } else if (r.phys_offset != clo) {
        rc = store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "The commit log offset wrong");
    } else if (cor == TX_ROLLBACK) {
        put_op(sp, r.queue_id, r.queue_offset);
        /* Java answers with checkPrepareMessage's command, whose remark is
         * still createResponseCommand's placeholder */
        rc = store_reply_code(sp, req, cmd, RC_SUCCESS, JAVA_UNSET_REMARK);
    } else if (!store_msg_to_real_queue(&r, v, topic, &m)) {
        rc = store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "java.lang.NullPointerException");
    } else {
        /* endMessageTransaction: the half record in its real queue, COMMIT bits */
        m.sys_flag = (m.sys_flag & ~STORED_SYSFLAG_TX_MASK) | STORED_SYSFLAG_TX_COMMIT;
        m.prepared_tx_offset = r.phys_offset;
        store_put_result pr;
        if (store_send_put(sp, &m, &pr) != 0)
            pr.status = STORE_PUT_UNKNOWN_ERROR;
        char remark[300];
        switch (pr.status) {
        case STORE_PUT_OK:
            put_op(sp, r.queue_id, r.queue_offset);
            rc = store_reply_code(sp, req, cmd, RC_SUCCESS, NULL);
            break;
        case STORE_PUT_CREATE_MAPPED_FILE_FAILED:
            rc = store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "Create mapped file failed.");
            break;
        case STORE_PUT_MESSAGE_ILLEGAL:
        case STORE_PUT_PROPERTIES_SIZE_EXCEEDED:
            snprintf(remark, sizeof remark,
                     "The message is illegal, maybe msg body or properties length not matched. "
                     "msg body length limit %" PRId64 "B, msg properties length limit 32KB.",
                     sp->set.engine.max_message_size);
            rc = store_reply_code(sp, req, cmd, RC_MESSAGE_ILLEGAL, remark);
            break;
        case STORE_PUT_SERVICE_NOT_AVAILABLE:
            rc = store_reply_code(sp, req, cmd, RC_SERVICE_NOT_AVAILABLE,
                                  "Service not available now.");
            break;
        default: rc = store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "UNKNOWN_ERROR"); break;
        }
    }
    free(v);
    free(buf);
    return rc;
}

/* ---- the check-back loop ------------------------------------------------- */

typedef struct off_set {
    int64_t *v;
    size_t n, cap;
} off_set;

static void set_add(off_set *s, int64_t x)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        int64_t *nv = realloc(s->v, nc * sizeof *nv);
        if (!nv)
            return;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = x;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* After set_sort. */
static bool set_has(const off_set *s, int64_t x)
{
    return s->n && bsearch(&x, s->v, s->n, sizeof *s->v, cmp_i64) != NULL;
}

static void set_sort(off_set *s)
{
    if (s->n)
        qsort(s->v, s->n, sizeof *s->v, cmp_i64);
}

static int64_t progress(store_plugin *sp, const char *topic)
{
    int64_t off = 0;
    meta_offset_query(sp, TRANS_GROUP, topic, 0, &off);
    return off < 0 ? 0 : off;
}

/* CHECK_TRANSACTION_STATE for the re-appended half record at `phys`: its
 * bytes with topic and queue id set back to REAL_TOPIC / REAL_QID. Without
 * a remoting producer of the group the check is published as event
 * store.transaction_check for 5.x clients behind a gRPC endpoint; with no
 * one there either, the next round asks again. */
static void send_check(store_plugin *sp, int64_t phys, int64_t queue_offset, const char *group)
{
    uint64_t ch = 0;
    meta_producer_channel(sp, group, &ch);
    uint8_t *buf = NULL;
    stored_record r;
    if (features_read_record(sp, phys, &buf, &r) != 0)
        return;
    props_view *v = malloc(sizeof *v);
    uint8_t *body = NULL;
    size_t blen = 0;
    if (v) {
        props_parse(r.props, r.props_len, v);
        size_t tl = 0, ql = 0, ul = 0;
        const char *rt = props_get(v, "REAL_TOPIC", &tl);
        const char *rq = props_get(v, "REAL_QID", &ql);
        const char *uk = props_get(v, "UNIQ_KEY", &ul);
        char qid[16] = "0", uniq[128] = "";
        if (rq)
            snprintf(qid, sizeof qid, "%.*s", (int)(ql < 15 ? ql : 15), rq);
        if (uk)
            snprintf(uniq, sizeof uniq, "%.*s", (int)(ul < 127 ? ul : 127), uk);
        stored_record c = r;
        if (rt && tl <= STORED_RECORD_MAX_TOPIC) {
            c.topic = rt;
            c.topic_len = (uint8_t)tl;
        }
        c.queue_id = atoi(qid);
        c.sys_flag &= ~STORED_SYSFLAG_TX_MASK;
        size_t cap = stored_record_size(c.sys_flag, (size_t)c.body_len, c.topic_len, c.props_len);
        body = malloc(cap);
        if (body)
            blen = stored_record_encode(&c, false, body, cap);
        rmq_cmd *req = ch ? sp->api->cmd_new_request(CHECK_TRANSACTION_STATE) : NULL;
        rmq_transaction_check_event ev = {.size = sizeof ev,
                                          .producer_group = group,
                                          .msg_id = uniq,
                                          .commit_log_offset = r.phys_offset,
                                          .tran_state_table_offset = queue_offset,
                                          .record = body,
                                          .record_len = blen};
        if (!ch && body && blen) {
            sp->api->publish_event(sp->ctx, RMQ_STORE_TRANSACTION_CHECK_EVENT, &ev, sizeof ev);
        } else if (req && body && blen) {
            store_msg tmp;
            store_msg_from_record(&r, &tmp);
            char offid[64];
            offset_msg_id(&tmp.store_host, r.phys_offset, offid);
            store_ext_i64(sp, req, "tranStateTableOffset", queue_offset);
            store_ext_i64(sp, req, "commitLogOffset", r.phys_offset);
            sp->api->cmd_ext_set(req, "msgId", uniq);
            sp->api->cmd_ext_set(req, "transactionId", uniq);
            sp->api->cmd_ext_set(req, "offsetMsgId", offid);
            sp->api->cmd_set_body(req, body, blen, NULL, NULL);
            int rc = sp->api->invoke_oneway(sp->ctx, ch, req, 3000);
            if (rc != 0) {
                sp->api->log(sp->ctx, RMQ_LOG_WARN, "CHECK_TRANSACTION_STATE to %s: %s", group,
                             rmq_strerror(rc));
                /* the producer the broker role gave has no connection here
                 * (a 5.x client registered by a gRPC endpoint): the event
                 * reaches it through that endpoint's Telemetry stream */
                sp->api->publish_event(sp->ctx, RMQ_STORE_TRANSACTION_CHECK_EVENT, &ev, sizeof ev);
            }
        } else if (req) {
            sp->api->cmd_free(req);
        }
    }
    free(body);
    free(v);
    free(buf);
}

/* Java's getLong/getInt of a property: the number, or -1 when it is not one. */
static int64_t prop_long(const props_view *v, const char *name, bool *present)
{
    size_t l = 0;
    const char *s = props_get(v, name, &l);
    *present = s != NULL;
    if (!s || l == 0 || l > 20)
        return -1;
    char buf[24];
    memcpy(buf, s, l);
    buf[l] = 0;
    char *end = NULL;
    long long x = strtoll(buf, &end, 10);
    return *end ? -1 : x;
}

/* Re-append r to the half queue with its properties plus `kv`; the put result. */
static int put_back(store_plugin *sp, const stored_record *r, const props_view *v,
                    const char *const *kv, store_put_result *pr)
{
    char *props = NULL;
    size_t plen = 0;
    if (props_rewrite(v, kv, NULL, NULL, &props, &plen) != 0)
        return RMQ_ENOMEM;
    store_msg m;
    store_msg_from_record(r, &m);
    m.topic = HALF_TOPIC;
    m.queue_id = 0;
    m.props = props;
    m.props_len = plen;
    m.tags_code = props_tags_code(props, plen);
    int rc = store_send_put(sp, &m, pr);
    free(props);
    return rc == 0 && pr->status == STORE_PUT_OK ? 0 : RMQ_EIO;
}

/* resolveDiscardMsg: a copy in TRANS_CHECK_MAX_TIME_TOPIC (1 queue, perm RW),
 * never checked again; no op record is written. `kv` (may be NULL) are the
 * properties needDiscard had already changed. */
static void discard(store_plugin *sp, const stored_record *r, const props_view *v,
                    const char *const *kv, const char *why)
{
    rmq_topic_config tc;
    meta_topic_create_in_send_back(sp, CHECK_MAX_TOPIC, 1, RMQ_PERM_READ | RMQ_PERM_WRITE, 0, &tc);
    char *props = NULL;
    size_t plen = 0;
    if (kv && props_rewrite(v, kv, NULL, NULL, &props, &plen) != 0)
        return;
    store_msg m;
    store_msg_from_record(r, &m);
    m.topic = CHECK_MAX_TOPIC;
    m.queue_id = 0;
    if (props) {
        m.props = props;
        m.props_len = plen;
    }
    m.tags_code = props_tags_code(m.props, m.props_len);
    store_put_result pr;
    if (store_send_put(sp, &m, &pr) != 0 || pr.status != STORE_PUT_OK)
        sp->api->log(sp->ctx, RMQ_LOG_WARN, "discarding half message at %" PRId64 " failed",
                     r->phys_offset);
    else
        sp->api->log(sp->ctx, RMQ_LOG_INFO, "half message at %" PRId64 " %s: discarded to %s",
                     r->phys_offset, why, CHECK_MAX_TOPIC);
    free(props);
}

/* Re-append with TRANSACTION_CHECK_TIMES (already the new value) and ask a
 * producer of its PGROUP. */
static void check_one(store_plugin *sp, const stored_record *r, props_view *v, const char *times)
{
    size_t gl = 0;
    const char *pg = props_get(v, "PGROUP", &gl);
    const char *kv[] = {"TRANSACTION_CHECK_TIMES", times, NULL};
    store_put_result pr;
    if (put_back(sp, r, v, kv, &pr) == 0 && pg) {
        char group[256];
        snprintf(group, sizeof group, "%.*s", (int)(gl < 255 ? gl : 255), pg);
        send_check(sp, pr.phys_offset, pr.queue_offset, group);
    }
}

/* What the scan does with one unresolved half message. */
enum { HALF_NEXT, HALF_STOP };

/* TransactionalMessageServiceImpl.check for the half message at queue
 * offset i, in Java's order: needDiscard / needSkip, fresh-stored stop,
 * immunity (CHECK_IMMUNITY_TIME_IN_SECONDS re-appends it marked with
 * TRAN_PREPARED_QUEUE_OFFSET instead of stopping the scan), then the check. */
static int scan_one(store_features *f, int64_t i, const stored_record *r, props_view *v,
                    const off_set *done, uint64_t start)
{
    store_plugin *sp = f->sp;
    int64_t now = (int64_t)sp->api->now_wall_ms();
    bool has_times = false;
    int64_t times = prop_long(v, "TRANSACTION_CHECK_TIMES", &has_times);
    if (has_times && times >= f->tx_check_max) {
        discard(sp, r, v, NULL, "reached transactionCheckMax");
        return HALF_NEXT;
    }
    /* needDiscard has set the property already: 1, or the old count + 1 */
    char ntimes[24];
    snprintf(ntimes, sizeof ntimes, "%" PRId64, has_times ? times + 1 : 1);
    const char *times_kv[] = {"TRANSACTION_CHECK_TIMES", ntimes, NULL};
    int64_t age = now - r->born_ts;
    if (age > f->tx_file_reserved_ms) {
        discard(sp, r, v, times_kv, "older than fileReservedTime");
        return HALF_NEXT;
    }
    if (r->store_ts >= (int64_t)start)
        return HALF_STOP; /* stored after this round began */
    bool has_imm = false;
    int64_t imm = prop_long(v, "CHECK_IMMUNITY_TIME_IN_SECONDS", &has_imm);
    if (has_imm) {
        imm = imm == -1 ? f->tx_timeout_ms : imm * 1000;
        if (age < imm) {
            bool has_prep = false;
            int64_t prep = prop_long(v, "TRAN_PREPARED_QUEUE_OFFSET", &has_prep);
            if (has_prep && prep == -1)
                return HALF_STOP; /* Java retries it until its time budget ends */
            if (has_prep && set_has(done, prep))
                return HALF_NEXT; /* the original offset was resolved */
            char pq[24];
            snprintf(pq, sizeof pq, "%" PRId64, has_prep ? prep : i);
            const char *kv[] = {"TRANSACTION_CHECK_TIMES", ntimes, "TRAN_PREPARED_QUEUE_OFFSET", pq,
                                NULL};
            store_put_result pr;
            return put_back(sp, r, v, kv, &pr) == 0 ? HALF_NEXT : HALF_STOP;
        }
    } else if (age >= 0 && age < f->tx_timeout_ms) {
        return HALF_STOP; /* new arrival: check it later */
    }
    check_one(sp, r, v, ntimes);
    return HALF_NEXT;
}

/* TransactionalMessageServiceImpl.check over the one half queue: op records
 * name the resolved half offsets (read at once, at most OP_SCAN_MAX of
 * them); at most MAX_PROCESS_MS per round. */
static void check_round(void *ud)
{
    store_features *f = ud;
    store_plugin *sp = f->sp;
    if (ha_current_role(sp) == HA_SLAVE)
        return; /* a slave runs no TransactionalMessageCheckService */
    pthread_mutex_lock(&f->tx_mu);
    uint64_t start = sp->api->now_wall_ms();
    int64_t half_max = store_max_offset(sp->engine, HALF_TOPIC, 0);
    int64_t half_from = progress(sp, HALF_TOPIC);
    int64_t half_min = store_min_offset(sp->engine, HALF_TOPIC, 0);
    if (half_from < half_min)
        half_from = half_min;
    if (half_from >= half_max) {
        pthread_mutex_unlock(&f->tx_mu);
        return;
    }
    off_set done = {0};
    int64_t op_from = progress(sp, OP_HALF_TOPIC);
    int64_t op_max = store_max_offset(sp->engine, OP_HALF_TOPIC, 0);
    if (op_max - op_from > OP_SCAN_MAX)
        op_from = op_max - OP_SCAN_MAX;
    int64_t op_keep = op_max; /* first op entry still naming an offset >= the new progress */
    for (int64_t i = op_from; i < op_max; i++) {
        store_cq_entry e;
        if (store_read_cq(sp->engine, OP_HALF_TOPIC, 0, i, &e, 1) != 1)
            break;
        uint8_t *buf = NULL;
        stored_record r;
        if (features_read_record(sp, e.phys_offset, &buf, &r) != 0)
            continue;
        char num[32];
        snprintf(num, sizeof num, "%.*s", (int)(r.body_len < 31 ? r.body_len : 31),
                 (const char *)r.body);
        set_add(&done, strtoll(num, NULL, 10));
        free(buf);
    }
    set_sort(&done);
    int64_t i = half_from;
    props_view *v = malloc(sizeof *v);
    for (; v && i < half_max && !atomic_load(&sp->quiescing); i++) {
        if (sp->api->now_wall_ms() - start > MAX_PROCESS_MS)
            break;
        if (set_has(&done, i))
            continue;
        store_cq_entry e;
        if (store_read_cq(sp->engine, HALF_TOPIC, 0, i, &e, 1) != 1)
            break;
        uint8_t *buf = NULL;
        stored_record r;
        if (features_read_record(sp, e.phys_offset, &buf, &r) != 0)
            continue;
        props_parse(r.props, r.props_len, v);
        int what = scan_one(f, i, &r, v, &done, start);
        free(buf);
        if (what == HALF_STOP)
            break;
    }
    free(v);
    /* op entries for offsets below the new progress are no longer needed */
    for (int64_t k = op_from; k < op_max && op_keep == op_max; k++) {
        store_cq_entry e;
        uint8_t *buf = NULL;
        stored_record r;
        if (store_read_cq(sp->engine, OP_HALF_TOPIC, 0, k, &e, 1) != 1 ||
            features_read_record(sp, e.phys_offset, &buf, &r) != 0)
            break;
        char num[32];
        snprintf(num, sizeof num, "%.*s", (int)(r.body_len < 31 ? r.body_len : 31),
                 (const char *)r.body);
        if (strtoll(num, NULL, 10) >= i)
            op_keep = k;
        free(buf);
    }
    free(done.v);
    meta_offset_commit(sp, TRANS_GROUP, HALF_TOPIC, 0, i);
    meta_offset_commit(sp, TRANS_GROUP, OP_HALF_TOPIC, 0, op_keep);
    pthread_mutex_unlock(&f->tx_mu);
}

int transaction_service_init(store_plugin *sp, store_features *f)
{
    const rmq_host_api *a = sp->api;
    f->tx_timeout_ms = a->setting_int(sp->ctx, "transactionTimeOut");
    f->tx_check_max = a->setting_int(sp->ctx, "transactionCheckMax");
    f->tx_check_interval_ms = a->setting_int(sp->ctx, "transactionCheckInterval");
    f->tx_file_reserved_ms = sp->set.engine.file_reserved_hours * 3600 * 1000;
    pthread_mutex_init(&f->tx_mu, NULL);
    int rc = a->declare_executor(sp->ctx, "transaction", 2, END_TRANSACTION_QUEUE_CAPACITY);
    if (rc == 0)
        rc = a->register_processor(sp->ctx, 37, process_end_transaction, sp, "transaction");
    rmq_timer_id id;
    if (rc == 0)
        rc = a->add_timer(sp->ctx, (uint64_t)f->tx_check_interval_ms,
                          (uint64_t)f->tx_check_interval_ms, check_round, f, "transaction", &id);
    return rc;
}
