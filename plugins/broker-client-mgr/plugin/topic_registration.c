/* topic_registration.c — owns the incremental registration of changed
 * topics: a client answered for the request that created a topic (a send,
 * a heartbeat's retry topic, UPDATE_AND_CREATE_TOPIC) must find its route at
 * the NameServers at once, as with Java 4.9.8, which registers inside the
 * creating request. A REGISTER_BROKER carrying only the changed topics and
 * the current DataVersion is enough for that (protocol.md §5.16: 4.9.8 does
 * not remove topics absent from the body; 5.3.3 takes them after a full
 * registration), and costs the same whatever the table's size.
 *
 * The creator waits as for the topics.journal group commit: the first
 * waiter starts a round carrying every change noted so far; changes made
 * while it is in flight wait for the next one, which one of their creators
 * starts. A round goes to every NameServer but those whose last
 * registration failed: they get the change from their next full round
 * (nameserver_registration.c), and rounds go to them again once one that
 * covers what they missed has succeeded — a full round in flight after a
 * successful one gets them too, so this ends while topics keep coming. */
#include "broker_context.h"

#include "register_body.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* The longest a creator waits (and at most registerBrokerTimeoutMills):
 * a NameServer that does not answer costs one late answer, then it is left
 * to the full rounds. */
#define WAIT_CAP_MS 3000

typedef struct inc_call {
    bcm_ctx *c;
    size_t ns;
} inc_call;

int bcm_topic_registration_init(bcm_ctx *c)
{
    pthread_cond_init(&c->reg_inc_cond, NULL);
    c->reg_inc_names = json_object();
    return c->reg_inc_names ? 0 : RMQ_ENOMEM;
}

void bcm_topic_registration_free(bcm_ctx *c)
{
    json_decref(c->reg_inc_names);
    c->reg_inc_names = NULL;
    pthread_cond_destroy(&c->reg_inc_cond);
}

void bcm_topic_registration_note_locked(bcm_ctx *c, const char *name)
{
    if (c->nnamesrvs == 0)
        return;
    c->reg_inc_noted++;
    /* A deletion has nothing to register (the NameServers learn it from
     * DELETE_TOPIC_IN_NAMESRV): its name would only be held until some
     * creation's round. On OOM the name misses the round, not the full
     * ones. */
    if (c->reg_inc_names && json_object_get(c->topics.topics, name))
        (void)json_object_set_new(c->reg_inc_names, name, json_null());
}

/* reg_lock held. One call of the round ended (ns SIZE_MAX: the starter's
 * reservation). */
static void finish_locked(bcm_ctx *c, size_t ns, bool ok)
{
    if (ns != SIZE_MAX && !ok) {
        bcm_namesrv *n = &c->namesrvs[ns];
        n->inc_skip = true;
        if (n->inc_gap_upto < c->reg_inc_upto)
            n->inc_gap_upto = c->reg_inc_upto;
        /* its full round brings the change: soon, not at the next period */
        if (n->outstanding)
            n->again = true;
        else if (n->next_due_ms > c->api->now_monotonic_ms())
            n->next_due_ms = c->api->now_monotonic_ms();
    }
    if (--c->reg_inc_outstanding == 0) {
        c->reg_inc_done = c->reg_inc_upto;
        c->reg_inc_in_flight = false;
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
    finish_locked(c, call->ns, ok);
    pthread_mutex_unlock(&c->reg_lock);
    free(call);
}

/* The changed topics' configs and the DataVersion, read together: every
 * change the DataVersion counts is in this body or an earlier round's. */
static int build_round(bcm_ctx *c, bcm_body **bodies, uint64_t *upto)
{
    json_t *filters = bcm_filter_server_list(c);
    json_t *topics = json_object();
    json_t *fresh = json_object();
    int n = -1;
    if (!topics || !fresh) {
        json_decref(fresh);
        pthread_mutex_lock(&c->lock);
        *upto = c->reg_inc_noted; /* the full rounds carry them */
        pthread_mutex_unlock(&c->lock);
        goto out;
    }
    pthread_mutex_lock(&c->lock);
    json_t *names = c->reg_inc_names;
    c->reg_inc_names = fresh;
    *upto = c->reg_inc_noted;
    const char *k;
    json_t *v;
    /* shared configs (never changed in place): encoded unlocked */
    json_object_foreach(names, k, v)
    {
        json_t *cfg = json_object_get(c->topics.topics, k);
        if (cfg) /* deleted since: nothing to register */
            (void)json_object_set(topics, k, cfg);
    }
    bcm_data_version dv = c->topics.dv;
    pthread_mutex_unlock(&c->lock);
    json_decref(names);
    n = bcm_register_bodies(topics, &dv, filters, c->s.broker_permission, c->s.compressed_register,
                            0, bodies);
out:
    json_decref(topics);
    json_decref(filters);
    return n;
}

/* reg_lock held on entry and on return (released meanwhile). */
static void start_round_locked(bcm_ctx *c)
{
    c->reg_inc_in_flight = true;
    pthread_mutex_unlock(&c->reg_lock);
    bcm_body *bodies = NULL;
    uint64_t upto = 0;
    int nb = build_round(c, &bodies, &upto);
    if (nb <= 0)
        c->api->log(c->pctx, RMQ_LOG_ERROR, "cannot encode the new topics' registration body");
    bool *send = calloc(c->nnamesrvs ? c->nnamesrvs : 1, sizeof *send);
    pthread_mutex_lock(&c->reg_lock);
    c->reg_inc_upto = upto;
    c->reg_inc_outstanding = 1; /* the reservation, until every call is out */
    c->reg_calls_in_flight++;
    for (size_t i = 0; i < c->nnamesrvs; i++) {
        bcm_namesrv *n = &c->namesrvs[i];
        if (send && nb > 0 && !c->reg_stopping && (!n->inc_skip || (n->outstanding && n->last_ok))) {
            send[i] = true;
            c->reg_inc_outstanding += (size_t)nb;
            c->reg_calls_in_flight += (size_t)nb;
        } else if (n->inc_gap_upto < upto) {
            n->inc_gap_upto = upto; /* left to its full round */
        }
    }
    pthread_mutex_unlock(&c->reg_lock);
    for (size_t i = 0; send && i < c->nnamesrvs; i++) {
        if (!send[i])
            continue;
        for (int b = 0; b < nb; b++) {
            inc_call *call = malloc(sizeof *call);
            rmq_cmd *req = call ? bcm_register_request(c, &bodies[b]) : NULL;
            int rc = RMQ_ENOMEM;
            if (req) {
                *call = (inc_call){.c = c, .ns = i};
                rc = c->api->invoke_async_addr(c->pctx, c->namesrvs[i].addr, req,
                                               (uint32_t)c->s.register_timeout_ms, on_inc_response,
                                               call);
            }
            if (rc != 0) {
                /* req ownership passed even on failure; no callback will run */
                c->api->log(c->pctx, RMQ_LOG_WARN, "registering new topics with %s: %s",
                            c->namesrvs[i].addr, rmq_strerror(rc));
                free(call);
                pthread_mutex_lock(&c->reg_lock);
                finish_locked(c, i, false);
                pthread_mutex_unlock(&c->reg_lock);
            }
        }
    }
    free(send);
    if (nb > 0)
        bcm_bodies_free(bodies, nb);
    pthread_mutex_lock(&c->reg_lock);
    finish_locked(c, SIZE_MAX, true);
}

void bcm_topic_registration_wait(bcm_ctx *c)
{
    if (c->nnamesrvs == 0)
        return;
    pthread_mutex_lock(&c->lock);
    uint64_t mine = c->reg_inc_noted;
    pthread_mutex_unlock(&c->lock);
    int64_t cap = c->s.register_timeout_ms < WAIT_CAP_MS ? c->s.register_timeout_ms : WAIT_CAP_MS;
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
    while (c->reg_inc_done < mine && !c->reg_stopping) {
        if (!c->reg_inc_in_flight)
            start_round_locked(c);
        else if (pthread_cond_timedwait(&c->reg_inc_cond, &c->reg_lock, &until) == ETIMEDOUT) {
            late = c->reg_inc_done < mine;
            break;
        }
    }
    pthread_mutex_unlock(&c->reg_lock);
    if (late)
        c->api->log(c->pctx, RMQ_LOG_WARN,
                    "new topics not registered with every name server after %lld ms; answering "
                    "anyway (the full registration follows)",
                    (long long)cap);
}
