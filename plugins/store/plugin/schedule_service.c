/* schedule_service.c — delay levels (protocol-messages.md §10.6): the
 * messageDelayLevel table, the rewrite of a DELAY message to
 * SCHEDULE_TOPIC_XXXX (tagsCode = delivery time), the delivery timer that
 * re-stores due messages in their real queue, and config/delayOffset.json.
 * Also the record/property helpers the other feature files share. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "header_numbers.h"
#include "message_id.h"
#include "ha.h"
#include "store_features.h"

#define DELIVER_BATCH 32
#define DELAY_FLUSH_MS 10000 /* Java flushDelayOffsetInterval */

/* ---- shared helpers ------------------------------------------------------ */

int props_rewrite(const props_view *base, const char *const *set_kv, const char *const *drop,
                  const char *cluster, char **out, size_t *len)
{
    props_view *v = malloc(sizeof *v);
    if (!v)
        return RMQ_ENOMEM;
    *v = *base;
    for (size_t i = 0; set_kv && set_kv[i]; i += 2) {
        const char *name = set_kv[i], *val = set_kv[i + 1];
        size_t nl = strlen(name);
        size_t k = 0;
        while (k < v->n && !(v->e[k].name_len == nl && memcmp(v->e[k].name, name, nl) == 0))
            k++;
        if (k == v->n) {
            if (v->n == PROPS_MAX)
                continue;
            v->n++;
        }
        v->e[k] = (prop_span){name, nl, val, strlen(val)};
    }
    size_t need = props_encode_stored(v, drop, cluster, NULL, 0);
    *out = malloc(need + 1);
    if (!*out) {
        free(v);
        return RMQ_ENOMEM;
    }
    *len = props_encode_stored(v, drop, cluster, *out, need + 1);
    (*out)[*len] = '\0'; /* callers also use it as a C string (ext fields) */
    free(v);
    return 0;
}

int features_read_record(store_plugin *sp, int64_t phys, uint8_t **rec_buf, stored_record *out)
{
    size_t len = 0;
    *rec_buf = NULL;
    if (phys < 0 || store_read_record(sp->engine, phys, rec_buf, &len) != 0 || !*rec_buf)
        return RMQ_ENOENT;
    if (stored_record_decode(*rec_buf, len, false, out) != STORED_RECORD_OK) {
        free(*rec_buf);
        *rec_buf = NULL;
        return RMQ_ENOENT;
    }
    return 0;
}

int features_read_record_props(store_plugin *sp, int64_t phys, uint8_t **rec_buf,
                               stored_record *out, props_view **v)
{
    if (features_read_record(sp, phys, rec_buf, out) != 0)
        return RMQ_ENOENT;
    *v = malloc(sizeof **v);
    if (!*v) {
        free(*rec_buf);
        *rec_buf = NULL;
        return RMQ_ENOMEM;
    }
    props_parse(out->props, out->props_len, *v);
    return 0;
}

static void addr_of(const uint8_t *ip, uint8_t ip_len, int32_t port, store_addr *a)
{
    memset(a, 0, sizeof *a);
    a->ip_len = ip_len == 16 ? 16 : 4;
    memcpy(a->ip, ip, a->ip_len);
    a->port = port;
}

void store_msg_from_record(const stored_record *r, store_msg *m)
{
    memset(m, 0, sizeof *m);
    m->queue_id = r->queue_id;
    m->flag = r->flag;
    /* the engine sets the address-size bits itself */
    m->sys_flag = r->sys_flag & ~(STORED_SYSFLAG_BORNHOST_V6 | STORED_SYSFLAG_STOREHOST_V6);
    m->born_ts = r->born_ts;
    addr_of(r->born_ip, r->born_ip_len, r->born_port, &m->born_host);
    addr_of(r->store_ip, r->store_ip_len, r->store_port, &m->store_host);
    m->reconsume_times = r->reconsume_times;
    m->prepared_tx_offset = r->prepared_tx_offset;
    m->body = r->body;
    m->body_len = (size_t)r->body_len;
    m->props = r->props;
    m->props_len = r->props_len;
}

bool store_msg_to_real_queue(const stored_record *r, const props_view *v, char topic[256],
                             store_msg *m)
{
    size_t tl = 0, ql = 0;
    const char *t = props_get(v, "REAL_TOPIC", &tl);
    const char *q = props_get(v, "REAL_QID", &ql);
    if (!t || !q || tl > 255)
        return false;
    char qid[16];
    snprintf(topic, 256, "%.*s", (int)tl, t);
    snprintf(qid, sizeof qid, "%.*s", (int)(ql < 15 ? ql : 15), q);
    store_msg_from_record(r, m);
    m->topic = topic;
    m->queue_id = atoi(qid);
    size_t tgl = 0;
    const char *tags = props_get(v, "TAGS", &tgl);
    m->tags_code = tags ? (int64_t)java_string_hash(tags, tgl) : 0;
    return true;
}

int64_t props_tags_code(const char *props, size_t len)
{
    props_view *v = malloc(sizeof *v);
    if (!v)
        return 0;
    props_parse(props, len, v);
    size_t tl = 0;
    const char *t = props_get(v, "TAGS", &tl);
    int64_t code = t ? (int64_t)java_string_hash(t, tl) : 0;
    free(v);
    return code;
}

void features_uniq_key(store_plugin *sp, char out[33])
{
    store_features *f = features_of(sp);
    uint32_t c = atomic_fetch_add(&f->uniq_counter, 1);
    uint64_t now = sp->api->now_wall_ms();
    snprintf(out, 33, "%08X%08X%08X%08X", (unsigned)getpid(), (unsigned)(now >> 32),
             (unsigned)(now & 0xFFFFFFFFu), c);
}

/* ---- levels -------------------------------------------------------------- */

/* ScheduleMessageService.parseDelayLevel: "1s 5s ... 2h", units s m h d. */
static int parse_levels(const char *spec, int64_t *ms, int max)
{
    int n = 0;
    const char *p = spec ? spec : "";
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        char *end = NULL;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || n == max)
            return -1;
        int64_t unit;
        switch (*end) {
        case 's': unit = 1000; break;
        case 'm': unit = 60000; break;
        case 'h': unit = 3600000; break;
        case 'd': unit = 86400000; break;
        default: return -1;
        }
        ms[++n] = v * unit;
        p = end + 1;
    }
    return n > 0 ? n : -1;
}

int schedule_route(store_plugin *sp, send_message *m, int32_t level, const char *cluster)
{
    store_features *f = features_of(sp);
    if (level > f->nlevels)
        level = f->nlevels;
    char qid[16];
    snprintf(qid, sizeof qid, "%d", m->queue_id);
    char topic[256];
    snprintf(topic, sizeof topic, "%s", m->topic);
    const char *kv[] = {"REAL_TOPIC", topic, "REAL_QID", qid, NULL};
    /* HookUtils.checkIfTimerMessage: a delay level clears the 5.x timer
     * properties */
    const char *drop[] = {"TIMER_DELIVER_MS", "TIMER_DELAY_SEC", "TIMER_DELAY_MS", NULL};
    char *props = NULL;
    size_t plen = 0;
    int rc;
    if (m->props_override) {
        /* already rewritten (a DLQ or retry copy): parse that one */
        props_view *v = malloc(sizeof *v);
        if (!v)
            return RMQ_ENOMEM;
        props_parse(m->props_override, m->props_override_len, v);
        rc = props_rewrite(v, kv, drop, cluster, &props, &plen);
        free(v);
    } else {
        rc = props_rewrite(&m->props, kv, drop, cluster, &props, &plen);
    }
    if (rc != 0)
        return rc;
    free(m->props_override);
    m->props_override = props;
    m->props_override_len = plen;
    snprintf(m->topic, sizeof m->topic, "%s", SCHEDULE_TOPIC);
    m->queue_id = level - 1;
    m->has_tags_code = true;
    /* computeDeliverTimestamp: store time + the level's delay */
    m->tags_code = (int64_t)sp->api->now_wall_ms() + f->level_ms[level];
    return 0;
}

static int timer_send(store_plugin *sp, send_message *m, char *remark, size_t cap)
{
    rmq_broker_config bc;
    if (meta_broker_config(sp, &bc) != 0)
        snprintf(bc.cluster_name, sizeof bc.cluster_name, "DefaultCluster");
    return timer_route(sp, m, bc.cluster_name, remark, cap);
}

int features_special_send(store_plugin *sp, const send_header *h, send_message *m, char *remark,
                          size_t cap)
{
    if (props_value_is(&m->props, "TRAN_MSG", "true"))
        return transaction_prepare(sp, h, m, remark, cap);
    size_t dl = 0;
    const char *d = props_get(&m->props, "DELAY", &dl);
    int tx = m->sys_flag & STORED_SYSFLAG_TX_MASK;
    if (tx != 0 && tx != STORED_SYSFLAG_TX_COMMIT)
        return 0;
    /* HookUtils: a delay level wins over the TIMER_* properties */
    if (!d)
        return timer_props_present(&m->props) ? timer_send(sp, m, remark, cap) : 0;
    char text[256];
    snprintf(text, sizeof text, "%.*s", (int)(dl < 255 ? dl : 255), d);
    int32_t v = 0;
    if (dl > 255 || java_parse_int(text, &v) != 0) {
        /* Integer.parseInt throws inside the store: an exception answer */
        number_format_remark(text, remark, cap);
        return SEND_CHECK_EXCEPTION;
    }
    if (v <= 0)
        return timer_props_present(&m->props) ? timer_send(sp, m, remark, cap) : 0;
    rmq_broker_config bc;
    if (meta_broker_config(sp, &bc) != 0)
        snprintf(bc.cluster_name, sizeof bc.cluster_name, "DefaultCluster");
    return schedule_route(sp, m, v, bc.cluster_name);
}

/* ---- delayOffset.json ------------------------------------------------------ */

/* {"offsetTable":{1:5,3:2}} (fastjson: bare integer keys, any spacing). */
static void load_offsets(store_features *f)
{
    char *data = NULL;
    size_t len = 0;
    if (f->sp->api->read_file_with_backup(f->sp->ctx, f->delay_path, NULL, NULL, &data, &len) != 0)
        return;
    const char *p = strstr(data, "offsetTable");
    p = p ? strchr(p, '{') : NULL;
    while (p && *p && *p != '}') {
        p++;
        while (*p && (isspace((unsigned char)*p) || *p == '"'))
            p++;
        char *end = NULL;
        long lvl = strtol(p, &end, 10);
        if (end == p)
            break;
        p = end;
        while (*p && (*p == '"' || isspace((unsigned char)*p) || *p == ':'))
            p++;
        long long off = strtoll(p, &end, 10);
        if (end == p)
            break;
        if (lvl >= 1 && lvl <= MAX_DELAY_LEVELS)
            f->delay_offset[lvl] = off;
        p = end;
        while (*p && isspace((unsigned char)*p))
            p++;
    }
    free(data);
}

static void persist_offsets(store_features *f, bool force)
{
    char buf[4096];
    size_t n = 0;
    pthread_mutex_lock(&f->delay_mu);
    if (!f->delay_dirty && !force) {
        pthread_mutex_unlock(&f->delay_mu);
        return;
    }
    n += (size_t)snprintf(buf, sizeof buf, "{\n\t\"offsetTable\":{");
    bool first = true;
    for (int l = 1; l <= f->nlevels && n < sizeof buf - 64; l++) {
        if (f->delay_offset[l] <= 0)
            continue;
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%d:%" PRId64, first ? "" : ",", l,
                              f->delay_offset[l]);
        first = false;
    }
    n += (size_t)snprintf(buf + n, sizeof buf - n, "\n\t}\n}");
    f->delay_dirty = false;
    pthread_mutex_unlock(&f->delay_mu);
    if (f->sp->api->write_file_atomic(f->sp->ctx, f->delay_path, buf, n) != 0)
        f->sp->api->log(f->sp->ctx, RMQ_LOG_WARN, "cannot write %s", f->delay_path);
}

/* GET_ALL_DELAY_OFFSET (45) body: compact, fastjson's bare integer keys. */
char *schedule_offsets_encode(store_features *f)
{
    char *buf = malloc(4096);
    if (!buf)
        return NULL;
    size_t n = (size_t)snprintf(buf, 4096, "{\"offsetTable\":{");
    bool first = true;
    pthread_mutex_lock(&f->delay_mu);
    for (int l = 1; l <= f->nlevels && n < 4096 - 64; l++) {
        if (f->delay_offset[l] <= 0)
            continue;
        n += (size_t)snprintf(buf + n, 4096 - n, "%s%d:%" PRId64, first ? "" : ",", l,
                              f->delay_offset[l]);
        first = false;
    }
    pthread_mutex_unlock(&f->delay_mu);
    snprintf(buf + n, 4096 - n, "}}");
    return buf;
}

/* A slave's sync (SlaveSynchronize#syncDelayOffset): the master's body is
 * written verbatim to delayOffset.json; unlike Java the levels are also
 * taken into memory, so a promoted slave delivers from the master's
 * progress. */
void schedule_offsets_take(store_features *f, const char *text, size_t len)
{
    if (f->sp->api->write_file_atomic(f->sp->ctx, f->delay_path, text, len) != 0) {
        f->sp->api->log(f->sp->ctx, RMQ_LOG_WARN, "cannot write %s", f->delay_path);
        return;
    }
    pthread_mutex_lock(&f->delay_mu);
    load_offsets(f);
    f->delay_dirty = false;
    pthread_mutex_unlock(&f->delay_mu);
}

/* ---- delivery (DeliverDelayedMessageTimerTask) ------------------------------ */

/* Re-store one due schedule record in its real queue. false: try later. */
static bool deliver_one(store_plugin *sp, const store_cq_entry *e)
{
    uint8_t *buf = NULL;
    stored_record r;
    props_view *v = NULL;
    int rrc = features_read_record_props(sp, e->phys_offset, &buf, &r, &v);
    if (rrc != 0)
        return rrc == RMQ_ENOENT; /* gone (retention): skip it */
    bool ok = true;
    char topic[256];
    store_msg m;
    /* the stored string keeps DELAY, REAL_TOPIC and REAL_QID, as
     * Java's messageTimeup serialises before it clears DELAY */
    if (store_msg_to_real_queue(&r, v, topic, &m))
        ok = store_put_due(sp, &m, "delayed", topic);
    free(v);
    free(buf);
    return ok;
}

static void deliver_level(store_features *f, int level, uint64_t now)
{
    store_plugin *sp = f->sp;
    int32_t q = level - 1;
    for (;;) {
        pthread_mutex_lock(&f->delay_mu);
        int64_t off = f->delay_offset[level];
        pthread_mutex_unlock(&f->delay_mu);
        int64_t min = store_min_offset(sp->engine, SCHEDULE_TOPIC, q);
        if (off < min)
            off = min;
        store_cq_entry e[DELIVER_BATCH];
        size_t n = store_read_cq(sp->engine, SCHEDULE_TOPIC, q, off, e, DELIVER_BATCH);
        if (n == 0)
            return;
        size_t done = 0;
        for (; done < n; done++) {
            int64_t due = e[done].tags_code;
            /* a delivery time further ahead than the level itself is due now */
            if (due > (int64_t)now && due - (int64_t)now <= f->level_ms[level])
                break;
            if (!deliver_one(sp, &e[done]))
                break;
        }
        pthread_mutex_lock(&f->delay_mu);
        f->delay_offset[level] = off + (int64_t)done;
        if (done)
            f->delay_dirty = true;
        pthread_mutex_unlock(&f->delay_mu);
        if (done < n || atomic_load(&sp->quiescing))
            return;
    }
}

static void delivery_timer(void *ud)
{
    store_features *f = ud;
    if (ha_current_role(f->sp) == HA_SLAVE)
        return; /* a slave runs no ScheduleMessageService */
    uint64_t now = f->sp->api->now_wall_ms();
    for (int l = 1; l <= f->nlevels && !atomic_load(&f->sp->quiescing); l++)
        deliver_level(f, l, now);
    uint64_t mono = f->sp->api->now_monotonic_ms();
    if (mono - f->delay_flushed_ms >= DELAY_FLUSH_MS) {
        f->delay_flushed_ms = mono;
        persist_offsets(f, false);
    }
}

int schedule_service_init(store_plugin *sp, store_features *f)
{
    const char *spec = sp->api->setting_string(sp->ctx, "messageDelayLevel");
    f->nlevels = parse_levels(spec, f->level_ms, MAX_DELAY_LEVELS);
    if (f->nlevels < 0) {
        sp->api->log(sp->ctx, RMQ_LOG_ERROR,
                     "messageDelayLevel '%s': expected numbers with s, m, h or d separated by "
                     "spaces (at most %d levels)",
                     spec ? spec : "", MAX_DELAY_LEVELS);
        return RMQ_EINVAL;
    }
    pthread_mutex_init(&f->delay_mu, NULL);
    snprintf(f->delay_path, sizeof f->delay_path, "%s/config/delayOffset.json", sp->set.root_dir);
    load_offsets(f);
    f->delay_flushed_ms = sp->api->now_monotonic_ms();
    int rc = sp->api->declare_executor(sp->ctx, "schedule", 1, 4);
    rmq_timer_id id;
    /* Java: first run 1 s after start, then every 100 ms */
    if (rc == 0)
        rc = sp->api->add_timer(sp->ctx, 1000, 100, delivery_timer, f, "schedule", &id);
    return rc;
}

void schedule_service_fini(store_plugin *sp, store_features *f)
{
    (void)sp;
    if (f->nlevels > 0) {
        persist_offsets(f, true);
        pthread_mutex_destroy(&f->delay_mu);
    }
}
