/* ha_resend.c — `rmqhostctl ha-setaside resend FILE [BROKER_ADDR]`: deliver
 * the messages a rejoin set aside (ha_rejoin.c) after all, by sending each
 * record of FILE to the master of this broker name (BROKER_ADDR, else the
 * master address the NameServer answered broker-client-mgr's registration
 * with) as SEND_MESSAGE_V2 with its topic, queue, flag, born time,
 * reconsume count, properties and body as stored. The properties keep
 * UNIQ_KEY, so the message id stays the one a consumer may have seen before
 * the failover. Each record is sent as what its producer sent, so the new
 * master treats it as the old one did:
 *  - a delayed message waiting in SCHEDULE_TOPIC_XXXX goes to its REAL_TOPIC
 *    / REAL_QID with its DELAY level (the level's delay counts again from
 *    the resend: a 4.x master knows levels only), or without it when its
 *    delivery time has passed; a 5.x timer message (rmq_sys_wheel_timer)
 *    likewise, with TIMER_DELIVER_MS = its TIMER_OUT_MS;
 *  - one whose delivery record is in FILE too is not resent twice;
 *  - a transaction half without its end in FILE (no op record, no
 *    committed copy) is resent as a half (TRAN_MSG, prepared): the new
 *    master asks its producer group, as Java does for any pending half;
 *  - a committed transaction message is resent without TRAN_MSG (that
 *    property would make the master store it as a new half), a delivered
 *    delayed or timer message without DELAY / TIMER_* (delayed again);
 *  - op records, rolled-back records and other system topics are skipped
 *    and counted. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ha.h"
#include "ha_broker_info.h"
#include "store_features.h"
#include "stored_record.h"

#define SEND_MESSAGE_V2 310
/* compressed, multi tags: the client's bits; a half gets PREPARED back */
#define CLIENT_SYSFLAGS (STORED_SYSFLAG_COMPRESSED | STORED_SYSFLAG_MULTI_TAGS)

/* What goes on the wire for one record. */
typedef struct resend_msg {
    char topic[256];
    int queue_id;
    int sys_flag;
    char *props; /* owned */
} resend_msg;

/* UNIQ_KEYs (or op offsets as text) seen in FILE: a sorted list. */
typedef struct key_set {
    char **v;
    size_t n, cap;
    bool sorted;
} key_set;

static void keys_add(key_set *k, const char *s, size_t len)
{
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        char **nv = realloc(k->v, cap * sizeof *nv);
        if (!nv)
            return;
        k->v = nv;
        k->cap = cap;
    }
    char *c = malloc(len + 1);
    if (!c)
        return;
    memcpy(c, s, len);
    c[len] = 0;
    k->v[k->n++] = c;
    k->sorted = false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool keys_has(key_set *k, const char *s, size_t len)
{
    if (!k->n)
        return false;
    if (!k->sorted) {
        qsort(k->v, k->n, sizeof *k->v, cmp_str);
        k->sorted = true;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < 255 ? len : 255), s);
    const char *key = buf;
    return bsearch(&key, k->v, k->n, sizeof *k->v, cmp_str) != NULL;
}

static void keys_free(key_set *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->v[i]);
    free(k->v);
}

static bool prop(const stored_record *r, const char *name, const char **v, size_t *vl)
{
    return stored_props_get(r->props, (size_t)r->props_len, name, v, vl);
}

static bool topic_is(const stored_record *r, const char *t)
{
    return r->topic_len == strlen(t) && memcmp(r->topic, t, r->topic_len) == 0;
}

static bool system_topic(const stored_record *r)
{
    static const char *const prefixes[] = {"SCHEDULE_TOPIC_XXXX", "RMQ_SYS_", "rmq_sys_"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (r->topic_len >= n && memcmp(r->topic, prefixes[i], n) == 0)
            return true;
    }
    return false;
}

/* r's properties without those named in drop (NULL-terminated), plus
 * add_name=add_value when add_name is set; NUL-terminated, malloc'd. */
static char *props_without(const stored_record *r, const char *const *drop, const char *add_name,
                           const char *add_value)
{
    /* + a separator after a last pair stored without one, + the NUL */
    size_t cap =
        (size_t)r->props_len + 2 + (add_name ? strlen(add_name) + strlen(add_value) + 2 : 0);
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t o = 0, i = 0, n = (size_t)r->props_len;
    const char *p = r->props;
    while (i < n) {
        size_t j = i;
        while (j < n && p[j] != 2)
            j++;
        const char *eq = memchr(p + i, 1, j - i);
        bool keep = true;
        for (size_t d = 0; eq && drop[d]; d++)
            if ((size_t)(eq - (p + i)) == strlen(drop[d]) &&
                memcmp(p + i, drop[d], strlen(drop[d])) == 0)
                keep = false;
        if (keep && j > i) {
            memcpy(out + o, p + i, j - i);
            o += j - i;
            out[o++] = 2;
        }
        i = j + 1;
    }
    if (add_name)
        o += (size_t)sprintf(out + o, "%s\001%s\002", add_name, add_value);
    out[o] = 0;
    return out;
}

/* The real topic and queue of a delayed, timer or half record. */
static bool real_target(const stored_record *r, resend_msg *m)
{
    const char *t, *q;
    size_t tl, ql;
    if (!prop(r, "REAL_TOPIC", &t, &tl) || tl == 0 || tl >= sizeof m->topic)
        return false;
    memcpy(m->topic, t, tl);
    m->topic[tl] = 0;
    char qid[16] = "0";
    if (prop(r, "REAL_QID", &q, &ql))
        snprintf(qid, sizeof qid, "%.*s", (int)(ql < 15 ? ql : 15), q);
    m->queue_id = atoi(qid);
    return true;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t prop_ll(const stored_record *r, const char *name, int64_t dflt)
{
    const char *v;
    size_t vl;
    char buf[32];
    if (!prop(r, name, &v, &vl) || vl == 0 || vl >= sizeof buf)
        return dflt;
    memcpy(buf, v, vl);
    buf[vl] = 0;
    return strtoll(buf, NULL, 10);
}

static const char *const REAL_PROPS[] = {"REAL_TOPIC", "REAL_QID", NULL};
static const char *const DELAY_PROPS[] = {"REAL_TOPIC", "REAL_QID", "DELAY", NULL};
static const char *const TIMER_PROPS[] = {
    "REAL_TOPIC",     "REAL_QID", "TIMER_OUT_MS", "TIMER_DELIVER_MS", "TIMER_DELAY_SEC",
    "TIMER_DELAY_MS", NULL};
/* a record of a user topic is delivered: its DELAY (kept on delivery, as
 * Java's messageTimeup does) or timer property would delay it again, its
 * TRAN_MSG make it a new half */
static const char *const PLAIN_PROPS[] = {"TRAN_MSG",        "DELAY",          "TIMER_DELIVER_MS",
                                          "TIMER_DELAY_SEC", "TIMER_DELAY_MS", NULL};

typedef enum resend_kind {
    RESEND_PLAIN,
    RESEND_DELAYED,
    RESEND_HALF,
    RESEND_SKIP,
} resend_kind;

/* Decide what to send for r; m->props set unless RESEND_SKIP. */
static resend_kind classify(store_plugin *sp, const stored_record *r, key_set *delivered,
                            key_set *ended, key_set *halves_sent, resend_msg *m)
{
    const char *uk = NULL;
    size_t ul = 0;
    bool has_uk = prop(r, "UNIQ_KEY", &uk, &ul);
    int tx = r->sys_flag & STORED_SYSFLAG_TX_MASK;
    m->sys_flag = r->sys_flag & CLIENT_SYSFLAGS;
    m->queue_id = r->queue_id;
    snprintf(m->topic, sizeof m->topic, "%.*s", (int)r->topic_len, (const char *)r->topic);
    if (topic_is(r, SCHEDULE_TOPIC) || topic_is(r, TIMER_TOPIC)) {
        if ((has_uk && keys_has(delivered, uk, ul)) || !real_target(r, m))
            return RESEND_SKIP; /* delivered in FILE already: that copy goes */
        if (topic_is(r, TIMER_TOPIC)) {
            int64_t due = prop_ll(r, "TIMER_OUT_MS", 0);
            char at[32];
            snprintf(at, sizeof at, "%lld", (long long)due);
            m->props =
                props_without(r, TIMER_PROPS, due > now_ms() ? "TIMER_DELIVER_MS" : NULL, at);
            return RESEND_DELAYED;
        }
        int64_t level = prop_ll(r, "DELAY", 0);
        store_features *f = features_of(sp);
        bool due =
            f && level >= 1 && level <= f->nlevels && r->store_ts + f->level_ms[level] <= now_ms();
        m->props = props_without(r, due ? DELAY_PROPS : REAL_PROPS, NULL, NULL);
        return RESEND_DELAYED;
    }
    if (topic_is(r, HALF_TOPIC)) {
        char qo[32];
        int ql = snprintf(qo, sizeof qo, "%lld", (long long)r->queue_offset);
        /* its end (op record or committed copy) in FILE: not pending; a
         * half re-appended by transaction checks goes once */
        if (keys_has(ended, qo, (size_t)ql) || (has_uk && keys_has(delivered, uk, ul)) ||
            (has_uk && keys_has(halves_sent, uk, ul)) || !real_target(r, m))
            return RESEND_SKIP;
        if (has_uk)
            keys_add(halves_sent, uk, ul);
        m->props = props_without(r, REAL_PROPS, NULL, NULL);
        m->sys_flag |= STORED_SYSFLAG_TX_PREPARED;
        return RESEND_HALF;
    }
    if (system_topic(r) || tx == STORED_SYSFLAG_TX_PREPARED || tx == STORED_SYSFLAG_TX_ROLLBACK)
        return RESEND_SKIP;
    m->props = props_without(r, PLAIN_PROPS, NULL, NULL);
    return RESEND_PLAIN;
}

/* Pass 1: UNIQ_KEYs delivered to a user topic in FILE, and the half queue
 * offsets an op record in FILE ends. */
static void scan(FILE *f, key_set *delivered, key_set *ended)
{
    uint8_t head[4];
    while (fread(head, 1, 4, f) == 4) {
        uint32_t size = stored_be32(head);
        uint8_t *rec = size >= 8 && size <= (64u << 20) ? malloc(size) : NULL;
        if (!rec)
            break;
        memcpy(rec, head, 4);
        stored_record r;
        if (fread(rec + 4, 1, size - 4, f) != size - 4 ||
            stored_record_decode(rec, size, false, &r) != STORED_RECORD_OK) {
            free(rec);
            break;
        }
        int tx = r.sys_flag & STORED_SYSFLAG_TX_MASK;
        const char *uk;
        size_t ul;
        if (topic_is(&r, OP_HALF_TOPIC)) {
            /* body: the half's queue offset(s), comma separated */
            const char *b = (const char *)r.body, *e = b + r.body_len;
            while (b < e) {
                const char *c = memchr(b, ',', (size_t)(e - b));
                if (!c)
                    c = e;
                if (c > b)
                    keys_add(ended, b, (size_t)(c - b));
                b = c + 1;
            }
        } else if (!system_topic(&r) && tx != STORED_SYSFLAG_TX_PREPARED &&
                   tx != STORED_SYSFLAG_TX_ROLLBACK && prop(&r, "UNIQ_KEY", &uk, &ul)) {
            keys_add(delivered, uk, ul);
        }
        free(rec);
    }
}

static bool master_broker_addr(store_plugin *sp, char *out, size_t cap)
{
    char ha[128] = "";
    return broker_info_master_addrs(sp, out, cap, ha, sizeof ha) == 0 && out[0];
}

/* One record as SEND_MESSAGE_V2 (as m says); 0 when answered SEND_OK (or
 * one of the stored-anyway answers 10-12), else -1 with why. */
static int send_record(store_plugin *sp, const char *addr, const stored_record *r,
                       const resend_msg *m, char *why, size_t why_cap)
{
    const rmq_host_api *a = sp->api;
    rmq_cmd *req = a->cmd_new_request(SEND_MESSAGE_V2);
    if (!req || !m->props) {
        if (req)
            a->cmd_free(req);
        snprintf(why, why_cap, "out of memory");
        return -1;
    }
    char num[32];
    a->cmd_ext_set(req, "a", "RMQHOST_SETASIDE_RESEND");
    a->cmd_ext_set(req, "b", m->topic);
    a->cmd_ext_set(req, "c", "TBW102");
    a->cmd_ext_set(req, "d", "4");
    snprintf(num, sizeof num, "%d", m->queue_id);
    a->cmd_ext_set(req, "e", num);
    snprintf(num, sizeof num, "%d", m->sys_flag);
    a->cmd_ext_set(req, "f", num);
    snprintf(num, sizeof num, "%lld", (long long)r->born_ts);
    a->cmd_ext_set(req, "g", num);
    snprintf(num, sizeof num, "%d", (int)r->flag);
    a->cmd_ext_set(req, "h", num);
    a->cmd_ext_set(req, "i", m->props);
    snprintf(num, sizeof num, "%d", (int)r->reconsume_times);
    a->cmd_ext_set(req, "j", num);
    a->cmd_ext_set(req, "k", "false");
    a->cmd_ext_set(req, "m", "false");
    a->cmd_set_body(req, r->body, (size_t)r->body_len, NULL, NULL);
    rmq_cmd *resp = NULL;
    int rc = a->invoke_sync_addr(sp->ctx, addr, req, 10000, &resp);
    if (rc != 0 || !resp) {
        snprintf(why, why_cap, "no answer from %s (%d)", addr, rc);
        return -1;
    }
    int code = a->cmd_code(resp);
    if (code != RC_SUCCESS && code != RC_FLUSH_DISK_TIMEOUT && code != RC_SLAVE_NOT_AVAILABLE &&
        code != RC_FLUSH_SLAVE_TIMEOUT) {
        const char *remark = a->cmd_remark(resp);
        snprintf(why, why_cap, "%s answered %d: %s", addr, code, remark ? remark : "");
        rc = -1;
    }
    a->cmd_free(resp);
    return rc;
}

int ha_resend(store_plugin *sp, rmq_admin_call *call, const char *dir, const char *file,
              const char *addr_arg)
{
    const rmq_host_api *a = sp->api;
    char addr[128] = "";
    if (addr_arg)
        snprintf(addr, sizeof addr, "%s", addr_arg);
    else if (!master_broker_addr(sp, addr, sizeof addr)) {
        a->admin_write(call, "no master address known yet: give BROKER_HOST:PORT\n");
        return 1;
    }
    if (strchr(file, '/') || !strstr(file, ".commitlog")) {
        a->admin_write(call, "FILE is a .commitlog name as `ha-setaside` lists it\n");
        return 2;
    }
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    if (!f) {
        a->admin_write(call, "%s: %s\n", path, strerror(errno));
        return 1;
    }
    key_set delivered = {0}, ended = {0}, halves_sent = {0};
    scan(f, &delivered, &ended);
    rewind(f);
    uint8_t head[4];
    long sent = 0, skipped = 0, failed = 0, delayed = 0, halves = 0;
    char why[512] = "";
    while (fread(head, 1, 4, f) == 4) {
        uint32_t size = stored_be32(head);
        uint8_t *rec = size >= 8 && size <= (64u << 20) ? malloc(size) : NULL;
        if (!rec) {
            snprintf(why, sizeof why, "record of %u bytes: not a set-aside file", size);
            failed++;
            break;
        }
        memcpy(rec, head, 4);
        stored_record r;
        bool whole = fread(rec + 4, 1, size - 4, f) == size - 4;
        if (!whole || stored_record_decode(rec, size, true, &r) != STORED_RECORD_OK) {
            snprintf(why, sizeof why, "a damaged record after %ld messages", sent + skipped);
            free(rec);
            failed++;
            break;
        }
        resend_msg m = {.props = NULL};
        resend_kind k = classify(sp, &r, &delivered, &ended, &halves_sent, &m);
        if (k == RESEND_SKIP) {
            skipped++;
        } else if (send_record(sp, addr, &r, &m, why, sizeof why) == 0) {
            sent++;
            delayed += k == RESEND_DELAYED;
            halves += k == RESEND_HALF;
        } else {
            failed++;
        }
        free(m.props);
        free(rec);
    }
    fclose(f);
    keys_free(&delivered);
    keys_free(&ended);
    keys_free(&halves_sent);
    a->admin_write(call,
                   "resent %ld messages of %s to %s (%ld delayed, %ld transaction halves); %ld "
                   "skipped (transaction ops and ends, delayed copies delivered in the file, "
                   "other system topics); %ld failed%s%s\n",
                   sent, file, addr, delayed, halves, skipped, failed, failed ? ": " : "",
                   failed ? why : "");
    if (sent > 0 || failed > 0)
        a->log(sp->ctx, failed ? RMQ_LOG_ERROR : RMQ_LOG_WARN,
               "HA set-aside %s: %ld messages resent to %s, %ld skipped, %ld failed", file, sent,
               addr, skipped, failed);
    return failed ? 1 : 0;
}
