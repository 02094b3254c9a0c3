/* testkit_outgoing.c — outgoing calls of the plugins under test are
 * captured instead of sent: the test (or its responder) answers, fails or
 * times them out. Keeps the daemon's rules a plugin can observe: ownership
 * of the request always passes, invoke_sync on an I/O thread is refused
 * with RMQ_EWOULDBLOCK, a pending call holds its generation (inflight). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testkit_internal.h"

static void call_finish(rmq_testkit *kit, rmq_tk_outgoing *c, int err, rmq_cmd *resp);

/* Everything about the call is filled in before it is published: the test
 * may answer it the moment it appears. */
static rmq_tk_outgoing *capture(plugin_inst *p, rmq_tk_out_kind kind, rmq_channel_id ch,
                                const char *addr, rmq_cmd *req, uint32_t timeout_ms,
                                rmq_response_fn cb, void *ud)
{
    rmq_testkit *kit = tk_of_host(p->host);
    rmq_tk_outgoing *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->kind = kind;
    c->ch = ch;
    if (addr) {
        c->to_addr = true;
        snprintf(c->addr, sizeof(c->addr), "%s", addr);
    }
    c->req = req;
    c->cb = cb;
    c->ud = ud;
    c->timeout_ms = timeout_ms;
    c->deadline = kit->host.api.now_monotonic_ms() + timeout_ms;
    c->plugin = p;
    req->opaque = atomic_fetch_add(&kit->host.next_opaque, 1);
    if (kind == RMQ_TK_OUT_ONEWAY) {
        req->flag |= RMQ_FLAG_ONEWAY;
        c->done = true;
    } else {
        atomic_fetch_add(&p->inflight, 1);
    }
    pthread_mutex_lock(&kit->mu);
    if (kit->calls_tail)
        kit->calls_tail->next = c;
    else
        kit->calls_head = c;
    kit->calls_tail = c;
    kit->ncalls++;
    pthread_cond_broadcast(&kit->cv);
    pthread_mutex_unlock(&kit->mu);
    return c;
}

/* The responder sees the call as it is made; without one, a call made
 * while the kit stops fails at once (no test is left to answer it). */
static void auto_answer(rmq_testkit *kit, rmq_tk_outgoing *c)
{
    if (c->kind == RMQ_TK_OUT_ONEWAY)
        return;
    rmq_tk_responder_fn fn = kit->responder;
    rmq_cmd *resp = fn ? fn(c, kit->responder_ud) : NULL;
    if (resp)
        call_finish(kit, c, 0, resp);
    else if (kit->host.stopping)
        call_finish(kit, c, RMQ_ENOTCONN, NULL);
}

static int invoke(plugin_inst *p, rmq_tk_out_kind kind, rmq_channel_id ch, const char *addr,
                  rmq_cmd *req, uint32_t timeout_ms, rmq_response_fn cb, void *ud)
{
    if (!req)
        return RMQ_EINVAL;
    rmq_tk_outgoing *c = capture(p, kind, ch, addr, req, timeout_ms, cb, ud);
    if (!c) {
        rmq_cmd_free(req);
        return RMQ_ENOMEM;
    }
    auto_answer(tk_of_host(p->host), c);
    return 0;
}

static int invoke_sync(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                       uint32_t timeout_ms, rmq_cmd **resp)
{
    rmq_testkit *kit = tk_of_host(p->host);
    *resp = NULL;
    if (host_on_io_thread(p->host)) {
        rmq_cmd_free(req);
        return RMQ_EWOULDBLOCK;
    }
    rmq_tk_outgoing *c = capture(p, RMQ_TK_OUT_SYNC, ch, addr, req, timeout_ms, NULL, NULL);
    if (!c) {
        rmq_cmd_free(req);
        return RMQ_ENOMEM;
    }
    auto_answer(kit, c);
    /* Time is virtual: the call ends when the test answers it or advances
     * the clock past its timeout. The real-time bound only keeps a test
     * that forgets it from hanging forever. */
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 60;
    int rc = 0;
    pthread_mutex_lock(&kit->mu);
    while (!c->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&kit->cv, &kit->mu, &dl);
    bool done = c->done;
    pthread_mutex_unlock(&kit->mu);
    if (!done) {
        call_finish(kit, c, RMQ_ETIMEDOUT, NULL);
        HLOG_ERROR(&kit->host, "testkit: invoke_sync of %s was not answered within 60 s",
                   p->conf.name);
    }
    pthread_mutex_lock(&kit->mu);
    *resp = c->resp;
    c->resp = NULL;
    rc = c->err;
    pthread_mutex_unlock(&kit->mu);
    return rc;
}

static void call_finish(rmq_testkit *kit, rmq_tk_outgoing *c, int err, rmq_cmd *resp)
{
    pthread_mutex_lock(&kit->mu);
    if (c->done) {
        pthread_mutex_unlock(&kit->mu);
        rmq_cmd_free(resp);
        return;
    }
    c->done = true;
    if (resp) {
        resp->opaque = c->req->opaque;
        resp->flag |= RMQ_FLAG_RESPONSE;
    }
    if (c->kind == RMQ_TK_OUT_SYNC) {
        c->err = err;
        c->resp = resp;
        pthread_cond_broadcast(&kit->cv);
        pthread_mutex_unlock(&kit->mu);
        atomic_fetch_sub(&c->plugin->inflight, 1);
        return;
    }
    pthread_mutex_unlock(&kit->mu);
    if (c->cb)
        c->cb(err, err ? NULL : resp, c->ud);
    rmq_cmd_free(resp);
    atomic_fetch_sub(&c->plugin->inflight, 1);
}

void tk_calls_expire(rmq_testkit *kit, uint64_t now)
{
    for (;;) {
        rmq_tk_outgoing *due = NULL;
        pthread_mutex_lock(&kit->mu);
        for (rmq_tk_outgoing *c = kit->calls_head; c && !due; c = c->next)
            if (!c->done && c->deadline <= now)
                due = c;
        pthread_mutex_unlock(&kit->mu);
        if (!due)
            return;
        call_finish(kit, due, RMQ_ETIMEDOUT, NULL);
    }
}

/* Shutdown: nobody will answer what is still pending. */
void tk_calls_fail_pending(rmq_testkit *kit)
{
    for (;;) {
        rmq_tk_outgoing *c = NULL;
        pthread_mutex_lock(&kit->mu);
        for (rmq_tk_outgoing *x = kit->calls_head; x && !c; x = x->next)
            if (!x->done)
                c = x;
        pthread_mutex_unlock(&kit->mu);
        if (!c)
            return;
        call_finish(kit, c, RMQ_ENOTCONN, NULL);
    }
}

void tk_calls_free(rmq_testkit *kit)
{
    for (rmq_tk_outgoing *c = kit->calls_head; c;) {
        rmq_tk_outgoing *n = c->next;
        rmq_cmd_free(c->req);
        rmq_cmd_free(c->resp);
        free(c);
        c = n;
    }
    kit->calls_head = kit->calls_tail = NULL;
    kit->ncalls = 0;
}

/* ---- the API entries ---- */
static int capture_oneway(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                          uint32_t t)
{
    return invoke(p, RMQ_TK_OUT_ONEWAY, ch, addr, req, t, NULL, NULL);
}

static int capture_async(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                         uint32_t t, rmq_response_fn cb, void *ud)
{
    return invoke(p, RMQ_TK_OUT_ASYNC, ch, addr, req, t, cb, ud);
}

/* The host API's invoke_* entries (host_api.c) stay the daemon's; only the
 * transport under them is the kit's. */
/* no sockets here: close_outgoing has nothing to close */
static const outgoing_transport CAPTURE = {capture_oneway, capture_async, invoke_sync, NULL};

void tk_outgoing_install(rmq_host *h)
{
    h->outgoing = &CAPTURE;
}

/* ---- the test's side ---- */
rmq_tk_outgoing *rmq_tk_next_outgoing(rmq_testkit *kit, int timeout_ms)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    rmq_tk_outgoing *found = NULL;
    int rc = 0;
    pthread_mutex_lock(&kit->mu);
    for (;;) {
        for (rmq_tk_outgoing *c = kit->calls_head; c && !found; c = c->next)
            if (!c->handed)
                found = c;
        if (found || rc == ETIMEDOUT || timeout_ms <= 0)
            break;
        rc = pthread_cond_timedwait(&kit->cv, &kit->mu, &dl);
    }
    if (found)
        found->handed = true;
    pthread_mutex_unlock(&kit->mu);
    return found;
}

size_t rmq_tk_outgoing_count(rmq_testkit *kit)
{
    pthread_mutex_lock(&kit->mu);
    size_t n = kit->ncalls;
    pthread_mutex_unlock(&kit->mu);
    return n;
}

rmq_tk_out_kind rmq_tk_outgoing_kind(const rmq_tk_outgoing *c)
{
    return c->kind;
}
const rmq_cmd *rmq_tk_outgoing_request(const rmq_tk_outgoing *c)
{
    return c->req;
}
const char *rmq_tk_outgoing_addr(const rmq_tk_outgoing *c)
{
    return c->to_addr ? c->addr : NULL;
}
rmq_channel_id rmq_tk_outgoing_channel(const rmq_tk_outgoing *c)
{
    return c->ch;
}
uint32_t rmq_tk_outgoing_timeout_ms(const rmq_tk_outgoing *c)
{
    return c->timeout_ms;
}

int rmq_tk_outgoing_answer(rmq_testkit *kit, rmq_tk_outgoing *c, rmq_cmd *resp)
{
    if (!c || !resp) {
        rmq_cmd_free(resp);
        return RMQ_EINVAL;
    }
    if (c->kind == RMQ_TK_OUT_ONEWAY) {
        rmq_cmd_free(resp);
        return 0;
    }
    call_finish(kit, c, 0, resp);
    return 0;
}

int rmq_tk_outgoing_fail(rmq_testkit *kit, rmq_tk_outgoing *c, int err)
{
    if (!c || err >= 0)
        return RMQ_EINVAL;
    if (c->kind != RMQ_TK_OUT_ONEWAY)
        call_finish(kit, c, err, NULL);
    return 0;
}

void rmq_tk_set_responder(rmq_testkit *kit, rmq_tk_responder_fn fn, void *ud)
{
    kit->responder = fn;
    kit->responder_ud = ud;
}
