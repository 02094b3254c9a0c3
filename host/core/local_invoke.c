/* local_invoke.c — invoke_local (ABI 1.8): a plugin calls a remoting request
 * handler of another plugin in this process without a socket. The request
 * takes the path a request arriving on the named server takes (bindings,
 * reload hold, executor or loop, hooks, deferral), and the answer, instead
 * of being encoded for a connection, is handed to the waiting caller — or,
 * for invoke_local_async (ABI 1.11), to its callback on the answering
 * thread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host.h"

/* Under h->local_async_mu. */
static void async_unlink_locked(rmq_host *h, sync_waiter *w)
{
    if (w->async_prev)
        w->async_prev->async_next = w->async_next;
    else
        h->local_async = w->async_next;
    if (w->async_next)
        w->async_next->async_prev = w->async_prev;
    w->async_prev = w->async_next = NULL;
}

/* An async waiter's one answer: the first of the callee's answer, its end
 * without one, or the caller's quiesce claims it (done, under mu); the
 * claimer unlinks it, runs cb and drops the registration's reference. */
static void async_complete(sync_waiter *w, int err, const rmq_cmd *resp)
{
    pthread_mutex_lock(&w->mu);
    bool mine = !w->done;
    w->done = true;
    pthread_mutex_unlock(&w->mu);
    if (!mine)
        return;
    rmq_host *h = w->caller->host;
    pthread_mutex_lock(&h->local_async_mu);
    async_unlink_locked(h, w);
    pthread_mutex_unlock(&h->local_async_mu);
    plugin_inst *caller = w->caller;
    w->cb(err, resp, w->cb_ud);
    atomic_fetch_sub(&caller->inflight, 1);
    sync_waiter_unref(w);
}

void local_invoke_cancel_plugin(rmq_host *h, plugin_inst *p)
{
    sync_waiter *mine = NULL;
    pthread_mutex_lock(&h->local_async_mu);
    for (sync_waiter *w = h->local_async, *next; w; w = next) {
        next = w->async_next;
        if (w->caller != p)
            continue;
        pthread_mutex_lock(&w->mu);
        bool claimed = !w->done;
        w->done = true;
        pthread_mutex_unlock(&w->mu);
        if (!claimed)
            continue; /* its answer is being delivered; that side unlinks it */
        async_unlink_locked(h, w);
        w->async_next = mine;
        mine = w;
    }
    pthread_mutex_unlock(&h->local_async_mu);
    while (mine) {
        sync_waiter *w = mine;
        mine = w->async_next;
        w->cb(RMQ_ESHUTDOWN, NULL, w->cb_ud);
        atomic_fetch_sub(&p->inflight, 1);
        sync_waiter_unref(w);
    }
}

/* dispatch.c: the request's answer (takes resp). */
void local_invoke_deliver(rmq_request *req, rmq_cmd *resp)
{
    sync_waiter *w = req->local;
    resp->opaque = req->cmd->opaque;
    resp->flag |= RMQ_FLAG_RESPONSE;
    if (w->cb) {
        async_complete(w, 0, resp);
        rmq_cmd_free(resp);
        return;
    }
    pthread_mutex_lock(&w->mu);
    if (!w->done && !w->resp) {
        w->resp = resp;
        resp = NULL;
    }
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (resp)
        rmq_cmd_free(resp);
}

/* dispatch.c: the request is finished (answered or not). */
void local_invoke_finished(rmq_request *req)
{
    sync_waiter *w = req->local;
    if (w->cb) {
        async_complete(w, RMQ_EIO, NULL); /* nothing when answered already */
        sync_waiter_unref(w);
        return;
    }
    pthread_mutex_lock(&w->mu);
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    sync_waiter_unref(w);
}

/* Dispatch cmd on server_name for waiter w (which gets the request's
 * reference). 0, or an error with cmd freed. */
static int local_start(rmq_host *h, const char *server_name, rmq_cmd *cmd, sync_waiter *w)
{
    server *s = host_server(h, server_name);
    if (!s || s->protocol != SERVER_PROTOCOL_REMOTING || !h->loops) {
        rmq_cmd_free(cmd);
        return RMQ_ENOENT;
    }
    rmq_request *req = malloc(sizeof(*req));
    if (!req) {
        rmq_cmd_free(cmd);
        return RMQ_ENOMEM;
    }
    cmd->opaque = atomic_fetch_add(&h->next_opaque, 1);
    cmd->flag &= ~(RMQ_FLAG_RESPONSE | RMQ_FLAG_ONEWAY);
    *req = (rmq_request){0};
    req->host = h;
    /* An inline processor runs on an I/O loop as it expects: the caller's
     * own when it calls from one (invoke_local_async on IO), so the request
     * runs at once on this thread instead of crossing to another loop and
     * back — a 5.x client's send costs no thread hand-off at all. */
    io_loop *here = host_current_loop(h);
    req->loop = here ? here : &h->loops[(unsigned)cmd->opaque % (unsigned)h->nloops];
    req->channel = 0;
    req->srv = s;
    req->cmd = cmd;
    req->local = w;
    snprintf(req->peer, sizeof(req->peer), "local");
    cmd->peer = req->peer;
    atomic_fetch_add(&s->requests, 1);
    request_stats_count(&s->stats, cmd->code);
    atomic_fetch_add(&h->inflight_requests, 1);
    dispatch_resume(req);
    return 0;
}

int local_invoke_async(rmq_host *h, plugin_inst *caller, const char *server_name, rmq_cmd *cmd,
                       rmq_response_fn cb, void *ud)
{
    if (!cmd)
        return RMQ_EINVAL;
    if (!server_name || !cb) {
        rmq_cmd_free(cmd);
        return RMQ_EINVAL;
    }
    sync_waiter *w = sync_waiter_new(2); /* the request's and the registration's */
    if (!w) {
        rmq_cmd_free(cmd);
        return RMQ_ENOMEM;
    }
    w->cb = cb;
    w->cb_ud = ud;
    w->caller = caller;
    pthread_mutex_lock(&h->local_async_mu);
    /* checked under the list's lock: plugin_quiesce sets the flag before
     * local_invoke_cancel_plugin walks the list, so a call is either
     * refused here or on the list that walk ends */
    if (atomic_load(&caller->quiesced)) {
        pthread_mutex_unlock(&h->local_async_mu);
        sync_waiter_unref(w);
        sync_waiter_unref(w);
        rmq_cmd_free(cmd);
        return RMQ_ESHUTDOWN;
    }
    atomic_fetch_add(&caller->inflight, 1);
    w->async_next = h->local_async;
    if (h->local_async)
        h->local_async->async_prev = w;
    h->local_async = w;
    pthread_mutex_unlock(&h->local_async_mu);
    int rc = local_start(h, server_name, cmd, w);
    if (rc != 0) {
        /* never dispatched: take it back without telling cb — unless the
         * caller's quiesce claimed it meanwhile and tells cb itself */
        pthread_mutex_lock(&w->mu);
        bool mine = !w->done;
        w->done = true;
        pthread_mutex_unlock(&w->mu);
        sync_waiter_unref(w); /* the request's: there is none */
        if (!mine)
            return 0;
        pthread_mutex_lock(&h->local_async_mu);
        async_unlink_locked(h, w);
        pthread_mutex_unlock(&h->local_async_mu);
        atomic_fetch_sub(&caller->inflight, 1);
        sync_waiter_unref(w);
    }
    return rc;
}

int local_invoke(rmq_host *h, plugin_inst *caller, const char *server_name, rmq_cmd *cmd,
                 uint32_t timeout_ms, rmq_cmd **resp)
{
    (void)caller;
    if (resp)
        *resp = NULL;
    if (!cmd)
        return RMQ_EINVAL;
    if (!server_name || !resp) {
        rmq_cmd_free(cmd);
        return RMQ_EINVAL;
    }
    if (host_on_io_thread(h)) {
        rmq_cmd_free(cmd);
        return RMQ_EWOULDBLOCK;
    }
    sync_waiter *w = sync_waiter_new(2); /* ours and the request's */
    if (!w) {
        rmq_cmd_free(cmd);
        return RMQ_ENOMEM;
    }
    int src = local_start(h, server_name, cmd, w);
    if (src != 0) {
        sync_waiter_unref(w);
        sync_waiter_unref(w);
        return src;
    }

    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)timeout_ms * 1000000u;
    until.tv_sec += (time_t)(ns / 1000000000u);
    until.tv_nsec = (long)(ns % 1000000000u);
    int rc = 0;
    pthread_mutex_lock(&w->mu);
    while (!w->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->cv, &w->mu, &until);
    int result;
    if (w->resp) {
        *resp = w->resp;
        w->resp = NULL;
        result = 0;
    } else {
        result = w->done ? RMQ_EIO : RMQ_ETIMEDOUT;
    }
    w->done = true; /* a late answer is dropped */
    pthread_mutex_unlock(&w->mu);
    sync_waiter_unref(w);
    return result;
}
