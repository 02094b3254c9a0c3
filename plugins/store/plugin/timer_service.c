/* timer_service.c — 5.x timer messages (TimerMessageStore's behaviour): a
 * send with TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS due later is
 * stored under rmq_sys_wheel_timer queue 0 with TIMER_OUT_MS, REAL_TOPIC and
 * REAL_QID (the delay levels' pattern, tagsCode = delivery time); one
 * "timer" thread moves new entries of that consume queue into the on-disk
 * wheel (timer_wheel.c) and, at their time, re-stores the records in their
 * real queue with TIMER_ENQUEUE_MS / TIMER_DEQUEUE_MS, REAL_* removed.
 * Progress is config/timercheck; the slot files are <root>/timerwheel/. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha.h"
#include "header_numbers.h"
#include "store_features.h"
#include "timer_wheel.h"

#define ENQUEUE_BATCH 64
#define ENQUEUE_MAX_PER_TICK 65536
#define DELIVER_MAX_PER_TICK 65536
#define CHECKPOINT_EVERY_MS 1000

struct timer_service {
    store_plugin *sp;
    timer_wheel *wheel; /* NULL: disabled or not opened */
    bool enabled;
    int64_t max_delay_sec;
    int64_t precision_ms;
    uint64_t checkpointed_mono;
    bool failed_logged;
    /* recall markers (TIMER_DEL_UNIQKEY "realTopic+uniqKey") of the bucket
     * being delivered: its messages with those keys are dropped */
    int64_t del_bucket;
    char **del_keys;
    size_t ndel, capdel;
};

static void del_clear(struct timer_service *t, int64_t bucket)
{
    for (size_t i = 0; i < t->ndel; i++)
        free(t->del_keys[i]);
    t->ndel = 0;
    t->del_bucket = bucket;
}

static void del_add(struct timer_service *t, int64_t bucket, const char *k, size_t len)
{
    if (bucket != t->del_bucket)
        del_clear(t, bucket);
    for (size_t i = 0; i < t->ndel; i++)
        if (strlen(t->del_keys[i]) == len && memcmp(t->del_keys[i], k, len) == 0)
            return; /* the bucket's markers come again when a tick resumes it */
    if (t->ndel == t->capdel) {
        size_t ncap = t->capdel ? t->capdel * 2 : 8;
        char **nk = realloc(t->del_keys, ncap * sizeof *nk);
        if (!nk)
            return;
        t->del_keys = nk;
        t->capdel = ncap;
    }
    char *copy = strndup(k, len);
    if (copy)
        t->del_keys[t->ndel++] = copy;
}

/* Whether the record (topic, uniq key) was recalled in its bucket. */
static bool del_has(struct timer_service *t, int64_t bucket, const props_view *v)
{
    if (t->ndel == 0 || bucket != t->del_bucket)
        return false;
    size_t tl = 0, ul = 0;
    const char *topic = props_get(v, "REAL_TOPIC", &tl), *uk = props_get(v, "UNIQ_KEY", &ul);
    if (!topic || !uk)
        return false;
    for (size_t i = 0; i < t->ndel; i++) {
        const char *k = t->del_keys[i];
        if (strlen(k) == tl + 1 + ul && memcmp(k, topic, tl) == 0 && k[tl] == '+' &&
            memcmp(k + tl + 1, uk, ul) == 0)
            return true;
    }
    return false;
}

/* ---- send side (HookUtils.transformTimerMessage) --------------------------- */

bool timer_props_present(const props_view *v)
{
    return props_get(v, "TIMER_DELIVER_MS", NULL) || props_get(v, "TIMER_DELAY_SEC", NULL) ||
           props_get(v, "TIMER_DELAY_MS", NULL);
}

/* Long.parseLong of a property value (header_numbers' parser). */
static bool prop_long(const char *s, size_t len, int64_t *out)
{
    char text[32];
    if (len == 0 || len >= sizeof text)
        return false;
    memcpy(text, s, len);
    text[len] = '\0';
    return java_parse_long(text, out) == 0;
}

static int32_t illegal(struct timer_service *t, char *remark, size_t cap)
{
    snprintf(remark, cap,
             "timer message illegal, the delay time should not be bigger than the max delay "
             "%" PRId64 "ms; or if set del msg, the delay time should be bigger than the current "
             "time",
             t->max_delay_sec * 1000);
    return RC_MESSAGE_ILLEGAL;
}

int timer_route(store_plugin *sp, send_message *m, const char *cluster, char *remark, size_t cap)
{
    struct timer_service *t = features_of(sp)->timer;
    const props_view *pv = &m->props;
    props_view *parsed = NULL;
    if (m->props_override) {
        parsed = malloc(sizeof *parsed);
        if (!parsed)
            return RMQ_ENOMEM;
        props_parse(m->props_override, m->props_override_len, parsed);
        pv = parsed;
    }
    int rc = 0;
    /* a re-stored timer message (TIMER_OUT_MS) is not a new timer */
    if (strcmp(m->topic, TIMER_TOPIC) == 0 || props_get(pv, "TIMER_OUT_MS", NULL))
        goto out;
    if (!t || !t->enabled) {
        snprintf(remark, cap, "accurate timer message is not enabled, timerWheelEnable is false");
        rc = RC_SYSTEM_ERROR;
        goto out;
    }
    int64_t now = (int64_t)sp->api->now_wall_ms(), v = 0, deliver;
    size_t l = 0;
    const char *s;
    if ((s = props_get(pv, "TIMER_DELAY_SEC", &l)) != NULL) {
        if (!prop_long(s, l, &v) || v > INT64_MAX / 1000 || v < INT64_MIN / 1000) {
            rc = illegal(t, remark, cap);
            goto out;
        }
        deliver = now + v * 1000;
    } else if ((s = props_get(pv, "TIMER_DELAY_MS", &l)) != NULL) {
        if (!prop_long(s, l, &v) || v > INT64_MAX - now) {
            rc = illegal(t, remark, cap);
            goto out;
        }
        deliver = now + v;
    } else {
        s = props_get(pv, "TIMER_DELIVER_MS", &l);
        if (!s || !prop_long(s, l, &deliver)) {
            rc = illegal(t, remark, cap);
            goto out;
        }
    }
    if (deliver <= now) {
        /* due already: stored in its own queue as it is */
        if (props_get(pv, "TIMER_DEL_UNIQKEY", NULL))
            rc = illegal(t, remark, cap);
        goto out;
    }
    if (deliver - now > t->max_delay_sec * 1000) {
        rc = illegal(t, remark, cap);
        goto out;
    }
    /* Java's rounding: down to the precision, one step earlier when exact */
    if (deliver % t->precision_ms == 0)
        deliver -= t->precision_ms;
    else
        deliver = deliver / t->precision_ms * t->precision_ms;
    char out_ms[24], qid[16], topic[256];
    snprintf(out_ms, sizeof out_ms, "%" PRId64, deliver);
    snprintf(qid, sizeof qid, "%d", m->queue_id);
    snprintf(topic, sizeof topic, "%s", m->topic);
    const char *kv[] = {"TIMER_OUT_MS", out_ms, "REAL_TOPIC", topic, "REAL_QID", qid, NULL};
    char *props = NULL;
    size_t plen = 0;
    rc = props_rewrite(pv, kv, NULL, cluster, &props, &plen);
    if (rc != 0)
        goto out;
    free(m->props_override);
    m->props_override = props;
    m->props_override_len = plen;
    snprintf(m->topic, sizeof m->topic, "%s", TIMER_TOPIC);
    m->queue_id = 0;
    m->has_tags_code = true;
    /* the wheel reads delivery times from the consume queue; a recall
     * marker's is negated, so the wheel knows it without reading it */
    m->tags_code = props_get(pv, "TIMER_DEL_UNIQKEY", NULL) ? -deliver : deliver;
out:
    free(parsed);
    return rc;
}

/* ---- delivery (TimerMessageStore's dequeue and convert) -------------------- */

/* Re-store one due timer record in its real queue. false: try later. */
static bool deliver_entry(void *ud, const timer_entry *e)
{
    struct timer_service *t = ud;
    store_plugin *sp = t->sp;
    uint8_t *buf = NULL;
    stored_record r;
    props_view *v = NULL;
    int rrc = features_read_record_props(sp, e->phys_offset, &buf, &r, &v);
    if (rrc == RMQ_ENOMEM)
        return false;
    if (rrc != 0) {
        sp->api->log(sp->ctx, RMQ_LOG_WARN,
                     "timer message at commit-log offset %" PRId64 " is gone: not delivered",
                     e->phys_offset);
        return true;
    }
    bool ok = true;
    char topic[256];
    store_msg m;
    int64_t bucket = e->deliver_ms / t->precision_ms;
    size_t dl = 0;
    const char *dk = props_get(v, "TIMER_DEL_UNIQKEY", &dl);
    if (e->deleting || dk) {
        /* a recall marker: remembered for its bucket, never delivered */
        if (dk)
            del_add(t, bucket, dk, dl);
    } else if (del_has(t, bucket, v)) {
        sp->api->log(sp->ctx, RMQ_LOG_DEBUG, "timer message at %" PRId64 " recalled: dropped",
                     e->phys_offset);
    } else if (store_msg_to_real_queue(&r, v, topic, &m)) {
        char enq[24], deq[24];
        snprintf(enq, sizeof enq, "%" PRId64, r.store_ts);
        snprintf(deq, sizeof deq, "%" PRIu64, sp->api->now_wall_ms());
        const char *kv[] = {"TIMER_ENQUEUE_MS", enq, "TIMER_DEQUEUE_MS", deq, NULL};
        const char *drop[] = {"REAL_TOPIC", "REAL_QID", NULL};
        char *props = NULL;
        size_t plen = 0;
        /* CLUSTER stays where the send put it */
        if (props_rewrite(v, kv, drop, NULL, &props, &plen) != 0) {
            ok = false;
        } else {
            m.props = props;
            m.props_len = plen;
            ok = store_put_due(sp, &m, "timer", topic);
            free(props);
        }
    }
    free(v);
    free(buf);
    return ok;
}

/* New rmq_sys_wheel_timer entries into the wheel (due ones at once). */
static void enqueue_new(struct timer_service *t)
{
    store_plugin *sp = t->sp;
    int64_t off = timer_wheel_enqueue_offset(t->wheel);
    int64_t min = store_min_offset(sp->engine, TIMER_TOPIC, 0);
    if (off < min)
        off = min;
    for (int64_t moved = 0; moved < ENQUEUE_MAX_PER_TICK && !atomic_load(&sp->quiescing);) {
        store_cq_entry e[ENQUEUE_BATCH];
        size_t n = store_read_cq(sp->engine, TIMER_TOPIC, 0, off, e, ENQUEUE_BATCH);
        if (n == 0)
            break;
        size_t i = 0;
        for (; i < n; i++) {
            /* a negative delivery time marks a recall (timer_route) */
            timer_entry te = {e[i].phys_offset,
                              e[i].tags_code < 0 ? -e[i].tags_code : e[i].tags_code, e[i].size,
                              e[i].tags_code < 0};
            int rc = timer_wheel_add(t->wheel, &te);
            if (rc == 1 && !deliver_entry(t, &te))
                break;
            if (rc < 0) {
                if (!t->failed_logged)
                    sp->api->log(sp->ctx, RMQ_LOG_ERROR, "timer wheel: cannot add: %s",
                                 strerror(-rc));
                t->failed_logged = true;
                break;
            }
        }
        off += (int64_t)i;
        moved += (int64_t)i;
        timer_wheel_set_enqueue_offset(t->wheel, off);
        if (i < n)
            break;
    }
}

/* Opened by the first tick that finds the engine open: a reload's new
 * generation waits for the old one to hand the store (and wheel) over. */
static bool wheel_open(struct timer_service *t)
{
    store_plugin *sp = t->sp;
    if (t->wheel)
        return true;
    if (!sp->engine)
        return false;
    char dir[1100], ckpt[1100];
    snprintf(dir, sizeof dir, "%s/timerwheel", sp->set.root_dir);
    snprintf(ckpt, sizeof ckpt, "%s/config/timercheck", sp->set.root_dir);
    int rc =
        timer_wheel_open(dir, ckpt, t->precision_ms, (int64_t)sp->api->now_wall_ms(), &t->wheel);
    if (rc != 0) {
        if (!t->failed_logged)
            sp->api->log(sp->ctx, RMQ_LOG_ERROR, "cannot open the timer wheel in %s: %s", dir,
                         strerror(-rc));
        t->failed_logged = true;
        return false;
    }
    return true;
}

static void timer_tick(void *ud)
{
    struct timer_service *t = ud;
    store_plugin *sp = t->sp;
    if (ha_current_role(sp) == HA_SLAVE || atomic_load(&sp->quiescing))
        return; /* a slave delivers nothing (its master does) */
    if (!wheel_open(t))
        return;
    enqueue_new(t);
    long n = timer_wheel_deliver_due(t->wheel, (int64_t)sp->api->now_wall_ms(),
                                     DELIVER_MAX_PER_TICK, deliver_entry, t);
    if (n < 0 && !t->failed_logged) {
        sp->api->log(sp->ctx, RMQ_LOG_ERROR, "timer wheel: delivery stopped: %s",
                     strerror((int)-n));
        t->failed_logged = true;
    }
    uint64_t mono = sp->api->now_monotonic_ms();
    if (mono - t->checkpointed_mono >= CHECKPOINT_EVERY_MS) {
        t->checkpointed_mono = mono;
        /* written by the wheel's writer thread: this tick never waits for it */
        int rc = timer_wheel_checkpoint_async(t->wheel);
        if (rc != 0)
            sp->api->log(sp->ctx, RMQ_LOG_WARN, "cannot write the timer checkpoint: %s",
                         strerror(-rc));
    }
}

int timer_service_init(store_plugin *sp, store_features *f)
{
    const rmq_host_api *a = sp->api;
    struct timer_service *t = calloc(1, sizeof *t);
    if (!t)
        return RMQ_ENOMEM;
    t->sp = sp;
    t->enabled = a->setting_bool(sp->ctx, "timerWheelEnable");
    t->max_delay_sec = a->setting_int(sp->ctx, "timerMaxDelaySec");
    t->precision_ms = a->setting_int(sp->ctx, "timerPrecisionMs");
    f->timer = t;
    if (!t->enabled)
        return 0;
    t->checkpointed_mono = a->now_monotonic_ms();
    int rc = a->declare_executor(sp->ctx, "timer", 1, 4);
    rmq_timer_id id;
    /* a bucket is noticed within a tenth of the precision (at most 100 ms) */
    uint64_t period = (uint64_t)(t->precision_ms / 10 < 100 ? t->precision_ms / 10 : 100);
    if (period < 10)
        period = 10;
    if (rc == 0)
        rc = a->add_timer(sp->ctx, 1000, period, timer_tick, t, "timer", &id);
    return rc;
}

void timer_service_handover(store_plugin *sp)
{
    store_features *f = features_of(sp);
    if (f && f->timer) {
        timer_wheel_close(f->timer->wheel);
        f->timer->wheel = NULL;
    }
}

void timer_service_fini(store_plugin *sp, store_features *f)
{
    (void)sp;
    if (!f->timer)
        return;
    timer_wheel_close(f->timer->wheel);
    del_clear(f->timer, 0);
    free(f->timer->del_keys);
    free(f->timer);
    f->timer = NULL;
}
