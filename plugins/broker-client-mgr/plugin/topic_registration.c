/* topic_registration.c — owns the incremental registration of changed
 * topics: a client answered for the request that created a topic (a send,
 * a heartbeat's retry topic, UPDATE_AND_CREATE_TOPIC) must find its route at
 * the NameServers at once, as with Java 4.9.8, which registers inside the
 * creating request. A REGISTER_BROKER carrying only the changed topics and
 * the current DataVersion is enough for that (protocol.md §5.16: 4.9.8 does
 * not remove topics absent from the body; 5.3.3 takes them after a full
 * registration), and costs the same whatever the table's size.
 *
 * The creator waits as for the topics.journal group commit: per NameServer,
 * a waiter that finds no round in flight starts one carrying every change
 * noted since that NameServer's previous round; changes made while it is in
 * flight wait for the next one. NameServers are independent: a slow one
 * holds up the creators (up to the cap), never the others' routes. A
 * NameServer whose last registration failed is left out: it gets the change
 * from its next full round (nameserver_registration.c), and rounds go to it
 * again once one that covers what it missed has succeeded — a full round in
 * flight after a successful one gets them too, so this ends while topics
 * keep coming. */
#include "broker_context.h"

#include "register_body.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The longest a creator waits (and at most registerBrokerTimeoutMills):
 * a NameServer that does not answer costs late answers during its first
 * round, then it is left to the full rounds. */
#define WAIT_CAP_MS 3000

/* A created or updated topic, by its change count. */
typedef struct bcm_inc_change {
    uint64_t seq;
    char *name;
} bcm_inc_change;

typedef struct inc_call {
    bcm_ctx *c;
    size_t ns;
} inc_call;

void bcm_topic_registration_init(bcm_ctx *c)
{
    pthread_cond_init(&c->reg_inc_cond, NULL);
}

void bcm_topic_registration_free(bcm_ctx *c)
{
    for (size_t i = 0; i < c->reg_inc_nlog; i++)
        free(c->reg_inc_log[i].name);
    free(c->reg_inc_log);
    c->reg_inc_log = NULL;
    c->reg_inc_nlog = c->reg_inc_caplog = 0;
    pthread_cond_destroy(&c->reg_inc_cond);
}

void bcm_topic_registration_note_locked(bcm_ctx *c, const char *name)
{
    if (c->nnamesrvs == 0)
        return;
    uint64_t seq = ++c->reg_inc_noted;
    /* A deletion has nothing to register (the NameServers learn it from
     * DELETE_TOPIC_IN_NAMESRV). On OOM the name misses the incremental
     * rounds, not the full ones. */
    if (!bcm_topic_table_has(&c->topics, name))
        return;
    if (c->reg_inc_nlog == c->reg_inc_caplog) {
        size_t cap = c->reg_inc_caplog ? c->reg_inc_caplog * 2 : 64;
        bcm_inc_change *v = realloc(c->reg_inc_log, cap * sizeof *v);
        if (!v)
            return;
        c->reg_inc_log = v;
        c->reg_inc_caplog = cap;
    }
    char *copy = strdup(name);
    if (copy)
        c->reg_inc_log[c->reg_inc_nlog++] = (bcm_inc_change){.seq = seq, .name = copy};
}

/* Tables lock held: the changes every NameServer has (seq <= upto) go. */
static void trim_log_locked(bcm_ctx *c, uint64_t upto)
{
    size_t k = 0;
    while (k < c->reg_inc_nlog && c->reg_inc_log[k].seq <= upto)
        free(c->reg_inc_log[k++].name);
    if (k) {
        memmove(c->reg_inc_log, c->reg_inc_log + k, (c->reg_inc_nlog - k) * sizeof *c->reg_inc_log);
        c->reg_inc_nlog -= k;
    }
}

/* reg_lock held: left out of incremental rounds (see the file comment). */
static bool left_out(const bcm_namesrv *n)
{
    return n->inc_skip && !(n->outstanding && n->last_ok);
}

static void left_out_up_to(bcm_namesrv *n, uint64_t upto)
{
    if (n->inc_gap_upto < upto)
        n->inc_gap_upto = upto;
    if (n->inc_sent < upto)
        n->inc_sent = upto;
    if (n->inc_done < upto)
        n->inc_done = upto;
}

/* reg_lock held. One call of NameServer ns's round ended; `reservation`:
 * the starter's own count, held until every call is out. */
static void finish_locked(bcm_ctx *c, size_t ns, bool ok, bool reservation)
{
    bcm_namesrv *n = &c->namesrvs[ns];
    if (!reservation && !ok) {
        n->inc_skip = true;
        if (n->inc_gap_upto < n->inc_upto)
            n->inc_gap_upto = n->inc_upto;
        /* its full round brings the change: soon, not at the next period */
        if (n->outstanding)
            n->again = true;
        else if (n->next_due_ms > c->api->now_monotonic_ms())
            n->next_due_ms = c->api->now_monotonic_ms();
    }
    if (--n->inc_outstanding == 0) {
        if (n->inc_done < n->inc_upto)
            n->inc_done = n->inc_upto;
        n->inc_in_flight = false;
        pthread_cond_broadcast(&c->reg_inc_cond);
    }
    if (--c->reg_calls_in_flight == 0)
        pthread_cond_broadcast(&c->reg_idle);
}

/* On IO: record the outcome only (the full rounds read the answers). */
static void on_inc_response(int err, const rmq_cmd *resp, void *ud)
{
    inc_call *call = ud;
    bcm_ctx *c = call->c;
    const rmq_host_api *a = c->api;
    bool ok = err == 0 && resp && a->cmd_code(resp) == RMQ_RESPONSE_SUCCESS;
    if (!ok)
        a->log(c->pctx, RMQ_LOG_WARN,
               "registering new topics with name server %s failed: %s; a full registration "
               "follows",
               c->namesrvs[call->ns].addr,
               err ? rmq_strerror(err)
                   : (resp && a->cmd_remark(resp) ? a->cmd_remark(resp) : "error"));
    pthread_mutex_lock(&c->reg_lock);
    finish_locked(c, call->ns, ok, false);
    pthread_mutex_unlock(&c->reg_lock);
    free(call);
}

/* The configs of the topics changed after `from` and the DataVersion, read
 * together: every change the DataVersion counts is in this body or in an
 * earlier round. -1 when it cannot be encoded. */
static int build_round(bcm_ctx *c, uint64_t from, bcm_body **bodies, uint64_t *upto)
{
    json_t *filters = bcm_filter_server_list(c);
    bcm_topic_snapshot snap;
    pthread_mutex_lock(&c->lock);
    *upto = c->reg_inc_noted;
    const char **names = malloc((c->reg_inc_nlog ? c->reg_inc_nlog : 1) * sizeof *names);
    size_t n = 0;
    for (size_t k = 0; names && k < c->reg_inc_nlog; k++)
        if (c->reg_inc_log[k].seq > from)
            names[n++] = c->reg_inc_log[k].name;
    int src = names ? bcm_topic_table_snapshot_of(&c->topics, names, n, &snap) : -1;
    pthread_mutex_unlock(&c->lock);
    free(names);
    int nb = -1;
    if (src == 0) {
        nb = bcm_register_bodies(&snap, filters, c->s.broker_permission, c->s.compressed_register,
                                 0, bodies);
        bcm_topic_snapshot_free(&snap);
    }
    json_decref(filters);
    return nb;
}

/* reg_lock held on entry and on return (released meanwhile): a round to
 * NameServer ns, which has none in flight. */
static void start_round_locked(bcm_ctx *c, size_t ns)
{
    bcm_namesrv *n = &c->namesrvs[ns];
    n->inc_in_flight = true;
    uint64_t from = n->inc_sent;
    pthread_mutex_unlock(&c->reg_lock);
    bcm_body *bodies = NULL;
    uint64_t upto = 0;
    int nb = build_round(c, from, &bodies, &upto);
    if (nb <= 0)
        c->api->log(c->pctx, RMQ_LOG_ERROR, "cannot encode the new topics' registration body");
    pthread_mutex_lock(&c->reg_lock);
    if (n->inc_sent < upto)
        n->inc_sent = upto;
    n->inc_upto = upto;
    n->inc_outstanding = 1;
    c->reg_calls_in_flight++;
    if (nb > 0) {
        n->inc_outstanding += (size_t)nb;
        c->reg_calls_in_flight += (size_t)nb;
    }
    pthread_mutex_unlock(&c->reg_lock);
    for (int b = 0; b < nb; b++) {
        inc_call *call = malloc(sizeof *call);
        rmq_cmd *req = call ? bcm_register_request(c, &bodies[b]) : NULL;
        int rc = RMQ_ENOMEM;
        if (req) {
            *call = (inc_call){.c = c, .ns = ns};
            rc = c->api->invoke_async_addr(
                c->pctx, n->addr, req, (uint32_t)c->s.register_timeout_ms, on_inc_response, call);
        }
        if (rc != 0) {
            /* req ownership passed even on failure; no callback will run */
            c->api->log(c->pctx, RMQ_LOG_WARN, "registering new topics with %s: %s", n->addr,
                        rmq_strerror(rc));
            free(call);
            pthread_mutex_lock(&c->reg_lock);
            finish_locked(c, ns, false, false);
            pthread_mutex_unlock(&c->reg_lock);
        }
    }
    if (nb > 0)
        bcm_bodies_free(bodies, nb);
    pthread_mutex_lock(&c->reg_lock);
    finish_locked(c, ns, nb > 0, nb > 0);
}

void bcm_topic_registration_wait(bcm_ctx *c)
{
    if (c->nnamesrvs == 0)
        return;
    pthread_mutex_lock(&c->lock);
    uint64_t mine = c->reg_inc_noted;
    pthread_mutex_unlock(&c->lock);
    int64_t timeout = c->s.register_timeout_ms; /* may change meanwhile: read once */
    int64_t cap = timeout < WAIT_CAP_MS ? timeout : WAIT_CAP_MS;
    if (cap < 0)
        cap = 0;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += cap / 1000;
    until.tv_nsec += (cap % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    bool late = false;
    pthread_mutex_lock(&c->reg_lock);
    while (!c->reg_stopping) {
        bool all = true;
        size_t lead = SIZE_MAX;
        for (size_t i = 0; i < c->nnamesrvs; i++) {
            bcm_namesrv *n = &c->namesrvs[i];
            if (n->inc_done >= mine)
                continue;
            if (!n->inc_in_flight && left_out(n)) {
                left_out_up_to(n, mine);
                continue;
            }
            all = false;
            if (!n->inc_in_flight && lead == SIZE_MAX)
                lead = i;
        }
        if (all)
            break;
        if (lead != SIZE_MAX)
            start_round_locked(c, lead);
        else if (pthread_cond_timedwait(&c->reg_inc_cond, &c->reg_lock, &until) == ETIMEDOUT) {
            late = true;
            break;
        }
    }
    /* what every NameServer has taken (or was left out of) goes: with a
     * dead NameServer no round runs, and the names would pile up */
    uint64_t trim = UINT64_MAX;
    for (size_t i = 0; i < c->nnamesrvs; i++)
        if (c->namesrvs[i].inc_sent < trim)
            trim = c->namesrvs[i].inc_sent;
    pthread_mutex_unlock(&c->reg_lock);
    pthread_mutex_lock(&c->lock);
    trim_log_locked(c, trim);
    pthread_mutex_unlock(&c->lock);
    if (late)
        c->api->log(c->pctx, RMQ_LOG_WARN,
                    "new topics not registered with every name server after %lld ms; answering "
                    "anyway (the full registration follows)",
                    (long long)cap);
}
