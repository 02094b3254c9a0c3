/* nameserver_registration.c — owns this broker's full registration (the
 * whole table) with every NameServer (protocol.md §5.16): asynchronous and
 * independent per NameServer (a dead or hanging one never delays the others
 * beyond the timeout), periodic, soon after a change of the broker's
 * identity or permission, retried soon after a failure; result handling;
 * UNREGISTER_BROKER to all at shutdown. Start-up never waits on a
 * NameServer. New topics go out in incremental rounds first
 * (topic_registration.c); a NameServer an incremental round missed gets
 * them from its next full round here. */
#include "broker_context.h"
#include "request_signing.h"

#include <rmqhost/services/filter_service.h>

#include "register_body.h"
#include "topic_config_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RETRY_FIRST_MS 1000
#define TICK_MS 500
#define REGISTER_SOON_MS 10
#define REGISTER_SOON_SPACING 20 /* rounds after changes: >= 20 x the last one's encoding */
/* Largest body sent in one frame before the table is split (Java's frame
 * limit is 16 MiB; leave room for the header). */
#define MAX_BODY_BYTES (8u * 1024u * 1024u)

typedef struct reg_call {
    bcm_ctx *c;
    size_t ns;
} reg_call;

json_t *bcm_filter_server_list(bcm_ctx *c)
{
    const void *table = NULL;
    void *tud = NULL;
    rmq_service_ref ref = 0;
    json_t *list = NULL;
    if (c->api->service_acquire(c->pctx, RMQ_FILTER_SERVERS_SERVICE, RMQ_FILTER_SERVERS_VERSION,
                                &table, &tud, &ref) == 0) {
        const rmq_filter_servers_service *svc = table;
        char buf[4096];
        size_t need = svc->to_json(tud, buf, sizeof buf);
        if (need < sizeof buf)
            list = json_loads(buf, 0, NULL);
        c->api->service_release(c->pctx, ref);
    }
    return json_is_array(list) ? list : (json_decref(list), json_array());
}

static void finish_call(bcm_ctx *c, size_t ns, bool ok)
{
    uint64_t now = c->api->now_monotonic_ms();
    pthread_mutex_lock(&c->reg_lock);
    bcm_namesrv *n = &c->namesrvs[ns];
    if (!ok)
        n->round_failed = true;
    if (--n->outstanding == 0) {
        if (n->round_failed) {
            if (n->last_ok || n->backoff_ms == 0)
                n->backoff_ms = RETRY_FIRST_MS;
            else if (n->backoff_ms < (uint64_t)c->s.register_period_ms)
                n->backoff_ms *= 2;
            if (n->backoff_ms > (uint64_t)c->s.register_period_ms)
                n->backoff_ms = (uint64_t)c->s.register_period_ms;
            n->next_due_ms = now + n->backoff_ms;
            n->last_ok = false;
            n->inc_skip = true;
        } else {
            n->backoff_ms = 0;
            n->last_ok = true;
            n->next_due_ms = now + (uint64_t)c->s.register_period_ms;
            /* it holds the whole table now, unless an incremental round
             * newer than this body left it out or failed there: then once
             * more (spaced like any round after changes) */
            if (n->inc_gap_upto <= n->full_covers)
                n->inc_skip = false;
            else
                n->again = true;
        }
        if (n->again)
            n->next_due_ms = now > c->reg_soon_not_before ? now : c->reg_soon_not_before;
        n->again = false;
    }
    if (--c->reg_calls_in_flight == 0)
        pthread_cond_broadcast(&c->reg_idle);
    pthread_mutex_unlock(&c->reg_lock);
}

/* On IO: record the result, never touch disk. */
static void on_register_response(int err, const rmq_cmd *resp, void *ud)
{
    reg_call *call = ud;
    bcm_ctx *c = call->c;
    const rmq_host_api *a = c->api;
    bool ok = err == 0 && resp && a->cmd_code(resp) == RMQ_RESPONSE_SUCCESS;
    if (!ok) {
        a->log(c->pctx, RMQ_LOG_WARN, "register broker to name server %s failed: %s",
               c->namesrvs[call->ns].addr,
               err ? rmq_strerror(err)
                   : (resp && a->cmd_remark(resp) ? a->cmd_remark(resp) : "error"));
    } else {
        const char *master = a->cmd_ext_get(resp, "masterAddr");
        const char *ha = a->cmd_ext_get(resp, "haServerAddr");
        pthread_mutex_lock(&c->reg_lock);
        /* Java overwrites SlaveSynchronize's masterAddr with every answer,
         * null included (protocol-ha.md §4.4) */
        snprintf(c->master_addr, sizeof c->master_addr, "%s", master ? master : "");
        if (ha && __atomic_load_n(&c->s.broker_id, __ATOMIC_RELAXED) != 0)
            snprintf(c->ha_master_addr, sizeof c->ha_master_addr, "%s", ha);
        pthread_mutex_unlock(&c->reg_lock);
        size_t len = 0;
        const char *body = a->cmd_body(resp, &len);
        json_t *kv = (body && len) ? json_loadb(body, len, 0, NULL) : NULL;
        if (kv) {
            pthread_mutex_lock(&c->lock);
            bool changed = bcm_topic_table_apply_order_conf(&c->topics, kv, a->now_wall_ms());
            pthread_mutex_unlock(&c->lock);
            if (changed) {
                pthread_mutex_lock(&c->reg_lock);
                c->reg_topics_dirty = true;
                pthread_mutex_unlock(&c->reg_lock);
            }
            json_decref(kv);
        }
    }
    finish_call(c, call->ns, ok);
    free(call);
}

/* haServerAddr: the setting when given, else brokerIP1 and the port the
 * store's HA listener is really on (its haListenPort), so setting the port
 * once, in the store, is enough. Without a store: port + 1 (settings_load). */
static void refresh_ha_addr(bcm_ctx *c, char *out, size_t cap)
{
    int32_t port = 0;
    if (!c->s.ha_server_addr[0]) {
        bcm_store st;
        bcm_store_acquire(c, &st);
        port = bcm_store_ha_listen_port(&st);
        bcm_store_release(c, &st);
    }
    pthread_mutex_lock(&c->reg_lock);
    if (port > 0)
        snprintf(c->ha_addr, sizeof c->ha_addr, "%s:%d", c->s.advertised_ip, (int)port);
    snprintf(out, cap, "%s", c->ha_addr);
    pthread_mutex_unlock(&c->reg_lock);
}

rmq_cmd *bcm_register_request(bcm_ctx *c, const bcm_body *b)
{
    const rmq_host_api *a = c->api;
    char ha[sizeof c->ha_addr];
    refresh_ha_addr(c, ha, sizeof ha);
    rmq_cmd *req = a->cmd_new_request(BCM_REGISTER_BROKER);
    if (!req)
        return NULL;
    char num[32];
    a->cmd_ext_set(req, "brokerAddr", c->broker_addr);
    snprintf(num, sizeof num, "%lld",
             (long long)__atomic_load_n(&c->s.broker_id, __ATOMIC_RELAXED));
    a->cmd_ext_set(req, "brokerId", num);
    a->cmd_ext_set(req, "brokerName", c->s.broker_name);
    a->cmd_ext_set(req, "clusterName", c->s.cluster_name);
    a->cmd_ext_set(req, "haServerAddr", ha);
    a->cmd_ext_set(req, "compressed", b->compressed ? "true" : "false");
    snprintf(num, sizeof num, "%u", bcm_body_crc32(b->data, b->len));
    a->cmd_ext_set(req, "bodyCrc32", num);
    a->cmd_set_body(req, b->data, b->len, NULL, NULL);
    bcm_sign_request(c, req);
    return req;
}

/* The bodies are encoded from a copy of the table taken under the lock:
 * with 100,000 topics the encoding takes tens of ms, and every SEND takes
 * this lock. */
static int build_bodies(bcm_ctx *c, bcm_body **bodies, uint64_t *covers)
{
    json_t *filters = bcm_filter_server_list(c);
    bcm_topic_snapshot snap;
    pthread_mutex_lock(&c->lock);
    int src = bcm_topic_table_snapshot(&c->topics, &snap);
    *covers = c->reg_inc_noted;
    pthread_mutex_unlock(&c->lock);
    if (src != 0) {
        json_decref(filters);
        return -1;
    }
    size_t chunk = c->s.enable_split_registration ? (size_t)c->s.split_registration_size : 0;
    bool compressed = c->s.compressed_register; /* read per registration, as Java */
    /* a JSON body surely too large for one frame is split at once (its
     * size is known from the names before it is written) */
    if (chunk == 0 && !compressed &&
        bcm_topic_configs_size_hint(snap.v, snap.n) > MAX_BODY_BYTES + MAX_BODY_BYTES / 8)
        chunk = (size_t)c->s.split_registration_size;
    int n = bcm_register_bodies(&snap, filters, c->s.broker_permission, compressed, chunk, bodies);
    if (n == 1 && (*bodies)[0].len > MAX_BODY_BYTES) {
        /* too large for one frame: split as Java 5.x does */
        bcm_bodies_free(*bodies, n);
        n = bcm_register_bodies(&snap, filters, c->s.broker_permission, compressed,
                                (size_t)c->s.split_registration_size, bodies);
    }
    bcm_topic_snapshot_free(&snap);
    json_decref(filters);
    return n;
}

/* Start a round to every due NameServer that has none in flight. Selecting
 * a NameServer reserves it (one pseudo call) so concurrent callers (tick and
 * topic changes) never start two rounds to the same NameServer. */
static void register_due(bcm_ctx *c, bool force)
{
    uint64_t now = c->api->now_monotonic_ms();
    bool *due = calloc(c->nnamesrvs ? c->nnamesrvs : 1, sizeof *due);
    if (!due)
        return;
    size_t ndue = 0;
    pthread_mutex_lock(&c->reg_lock);
    for (size_t i = 0; i < c->nnamesrvs && !c->reg_stopping; i++) {
        bcm_namesrv *n = &c->namesrvs[i];
        if (n->outstanding) {
            if (force)
                n->again = true;
        } else if (force || now >= n->next_due_ms) {
            due[i] = true;
            ndue++;
            n->outstanding = 1;
            n->round_failed = false;
            c->reg_calls_in_flight++;
        }
    }
    pthread_mutex_unlock(&c->reg_lock);
    if (ndue == 0) {
        free(due);
        return;
    }
    bcm_body *bodies = NULL;
    uint64_t covers = 0;
    int nb = build_bodies(c, &bodies, &covers);
    if (nb <= 0)
        c->api->log(c->pctx, RMQ_LOG_ERROR, "cannot encode the registration body");
    /* Any full round (periodic ones too) is spaced like the rounds after
     * changes: a NameServer catching up after a failed incremental round
     * must not have whole tables encoded back to back. */
    uint64_t spent = c->api->now_monotonic_ms() - now;
    for (size_t i = 0; i < c->nnamesrvs; i++) {
        if (!due[i])
            continue;
        pthread_mutex_lock(&c->reg_lock);
        c->namesrvs[i].full_covers = covers;
        if (now + spent * REGISTER_SOON_SPACING > c->reg_soon_not_before)
            c->reg_soon_not_before = now + spent * REGISTER_SOON_SPACING;
        if (nb > 0) {
            c->namesrvs[i].outstanding += (size_t)nb;
            c->reg_calls_in_flight += (size_t)nb;
        }
        pthread_mutex_unlock(&c->reg_lock);
        for (int b = 0; b < nb; b++) {
            reg_call *call = malloc(sizeof *call);
            rmq_cmd *req = call ? bcm_register_request(c, &bodies[b]) : NULL;
            int rc = RMQ_ENOMEM;
            if (req) {
                call->c = c;
                call->ns = i;
                rc = c->api->invoke_async_addr(c->pctx, c->namesrvs[i].addr, req,
                                               (uint32_t)c->s.register_timeout_ms,
                                               on_register_response, call);
            }
            if (rc != 0) {
                /* req ownership passed even on failure; no callback will run */
                c->api->log(c->pctx, RMQ_LOG_WARN, "register broker to name server %s: %s",
                            c->namesrvs[i].addr, rmq_strerror(rc));
                free(call);
                finish_call(c, i, false);
            }
        }
        finish_call(c, i, nb > 0); /* the reservation */
    }
    size_t body_bytes = 0;
    for (int b = 0; b < nb; b++)
        body_bytes += bodies[b].len;
    if (nb > 0)
        bcm_bodies_free(bodies, nb);
    free(due);
    bcm_heap_return_after(c, body_bytes);
}

static void registration_tick(void *ud)
{
    bcm_ctx *c = ud;
    pthread_mutex_lock(&c->reg_lock);
    bool dirty = c->reg_topics_dirty;
    c->reg_topics_dirty = false;
    pthread_mutex_unlock(&c->reg_lock);
    if (dirty)
        bcm_persist_topics(c);
    register_due(c, false);
}

/* A change that needs a full round (brokerId, brokerPermission, a slave's
 * sync) only asks for one, which this timer starts on the registration
 * executor within REGISTER_SOON_MS, carrying every change made meanwhile.
 * (Topic creations register incrementally: topic_registration.c.) */
static void registration_soon(void *ud)
{
    bcm_ctx *c = ud;
    uint64_t now = c->api->now_monotonic_ms();
    pthread_mutex_lock(&c->reg_lock);
    bool later = now < c->reg_soon_not_before;
    pthread_mutex_unlock(&c->reg_lock);
    if (later || !atomic_exchange(&c->reg_soon, false))
        return;
    register_due(c, true);
    /* The body holds every topic: its encoding (and the NameServer's
     * parsing) grows with the table. Spacing these rounds by a multiple of
     * what the last one cost keeps them a bounded share of the CPU, so a
     * creation costs the same at 100,000 topics as at 10. */
    uint64_t spent = c->api->now_monotonic_ms() - now;
    pthread_mutex_lock(&c->reg_lock);
    c->reg_soon_not_before = now + spent * REGISTER_SOON_SPACING;
    pthread_mutex_unlock(&c->reg_lock);
}

void bcm_registration_request_now(bcm_ctx *c)
{
    atomic_store(&c->reg_soon, true);
}

int bcm_registration_init(bcm_ctx *c, const char *namesrv_addr)
{
    char *copy = strdup(namesrv_addr ? namesrv_addr : "");
    if (!copy)
        return RMQ_ENOMEM;
    char *save = NULL;
    for (char *tok = strtok_r(copy, "; ", &save); tok; tok = strtok_r(NULL, "; ", &save)) {
        bcm_namesrv *v = realloc(c->namesrvs, (c->nnamesrvs + 1) * sizeof *v);
        if (!v) {
            free(copy);
            return RMQ_ENOMEM;
        }
        c->namesrvs = v;
        memset(&v[c->nnamesrvs], 0, sizeof *v);
        snprintf(v[c->nnamesrvs].addr, sizeof v->addr, "%s", tok);
        c->nnamesrvs++;
    }
    free(copy);
    if (c->nnamesrvs == 0)
        c->api->log(c->pctx, RMQ_LOG_WARN, "namesrvAddr is empty: this broker registers nowhere");
    int rc = c->api->declare_executor(c->pctx, "registration", 1, 16);
    rmq_timer_id id;
    /* first tick at once: the round is asynchronous, start-up does not wait */
    if (rc == 0)
        rc = c->api->add_timer(c->pctx, 0, TICK_MS, registration_tick, c, "registration", &id);
    if (rc == 0)
        rc = c->api->add_timer(c->pctx, REGISTER_SOON_MS, REGISTER_SOON_MS, registration_soon, c,
                               "registration", &id);
    return rc;
}

typedef struct unreg_job {
    bcm_ctx *c;
    const char *addr;
    pthread_t th;
    bool started;
} unreg_job;

static void *unregister_one(void *ud)
{
    unreg_job *j = ud;
    bcm_ctx *c = j->c;
    const rmq_host_api *a = c->api;
    rmq_cmd *req = a->cmd_new_request(BCM_UNREGISTER_BROKER);
    if (!req)
        return NULL;
    char num[32];
    snprintf(num, sizeof num, "%lld",
             (long long)__atomic_load_n(&c->s.broker_id, __ATOMIC_RELAXED));
    a->cmd_ext_set(req, "brokerAddr", c->broker_addr);
    a->cmd_ext_set(req, "brokerId", num);
    a->cmd_ext_set(req, "brokerName", c->s.broker_name);
    a->cmd_ext_set(req, "clusterName", c->s.cluster_name);
    bcm_sign_request(c, req);
    rmq_cmd *resp = NULL;
    int rc =
        a->invoke_sync_addr(c->pctx, j->addr, req, (uint32_t)c->s.unregister_timeout_ms, &resp);
    if (rc == RMQ_ESHUTDOWN)
        /* the NameServer is in this stopping process (all-in-one): its
         * table goes with it, so there is nothing to warn about */
        a->log(c->pctx, RMQ_LOG_INFO, "not unregistered from name server %s: shutting down",
               j->addr);
    else if (rc != 0 || !resp || a->cmd_code(resp) != RMQ_RESPONSE_SUCCESS)
        a->log(c->pctx, RMQ_LOG_WARN, "unregister broker from name server %s failed: %s", j->addr,
               rc ? rmq_strerror(rc) : "error response");
    else
        a->log(c->pctx, RMQ_LOG_INFO, "unregistered broker from name server %s", j->addr);
    if (resp)
        a->cmd_free(resp);
    return NULL;
}

void bcm_registration_shutdown(bcm_ctx *c)
{
    pthread_mutex_lock(&c->reg_lock);
    c->reg_stopping = true;
    pthread_mutex_unlock(&c->reg_lock);
    unreg_job *jobs = calloc(c->nnamesrvs ? c->nnamesrvs : 1, sizeof *jobs);
    if (!jobs)
        return;
    /* in parallel: one hanging NameServer costs the timeout once, not N times */
    for (size_t i = 0; i < c->nnamesrvs; i++) {
        jobs[i] = (unreg_job){.c = c, .addr = c->namesrvs[i].addr};
        jobs[i].started = pthread_create(&jobs[i].th, NULL, unregister_one, &jobs[i]) == 0;
        if (!jobs[i].started)
            unregister_one(&jobs[i]);
    }
    for (size_t i = 0; i < c->nnamesrvs; i++)
        if (jobs[i].started)
            pthread_join(jobs[i].th, NULL);
    free(jobs);
}

void bcm_registration_free(bcm_ctx *c)
{
    /* callbacks of in-flight registrations still point at c: wait for them
     * (each ends by its timeout at the latest) */
    pthread_mutex_lock(&c->reg_lock);
    c->reg_stopping = true;
    uint64_t deadline = c->api->now_monotonic_ms() + (uint64_t)c->s.register_timeout_ms + 2000;
    while (c->reg_calls_in_flight > 0 && c->api->now_monotonic_ms() < deadline) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&c->reg_idle, &c->reg_lock, &ts);
    }
    size_t left = c->reg_calls_in_flight;
    pthread_mutex_unlock(&c->reg_lock);
    if (left)
        c->api->log(c->pctx, RMQ_LOG_ERROR, "%zu registration calls still in flight at fini", left);
    free(c->namesrvs);
    c->namesrvs = NULL;
    c->nnamesrvs = 0;
}
