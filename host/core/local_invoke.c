/* local_invoke.c — invoke_local (ABI 1.8): a plugin calls a remoting request
 * handler of another plugin in this process without a socket. The request
 * takes the path a request arriving on the named server takes (bindings,
 * reload hold, executor or loop, hooks, deferral), and the answer, instead
 * of being encoded for a connection, is handed to the waiting caller. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host.h"

static void waiter_unref(sync_waiter *w)
{
    if (atomic_fetch_sub(&w->refs, 1) != 1)
        return;
    if (w->resp)
        rmq_cmd_free(w->resp);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}

/* dispatch.c: the request's answer (takes resp). */
void local_invoke_deliver(rmq_request *req, rmq_cmd *resp)
{
    sync_waiter *w = req->local;
    resp->opaque = req->cmd->opaque;
    resp->flag |= RMQ_FLAG_RESPONSE;
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
    pthread_mutex_lock(&w->mu);
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    waiter_unref(w);
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
    server *s = host_server(h, server_name);
    if (!s || s->protocol != SERVER_PROTOCOL_REMOTING || !h->loops) {
        rmq_cmd_free(cmd);
        return RMQ_ENOENT;
    }
    sync_waiter *w = calloc(1, sizeof(*w));
    rmq_request *req = malloc(sizeof(*req));
    if (!w || !req) {
        free(w);
        free(req);
        rmq_cmd_free(cmd);
        return RMQ_ENOMEM;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&w->refs, 2); /* ours and the request's */
    cmd->opaque = atomic_fetch_add(&h->next_opaque, 1);
    cmd->flag &= ~(RMQ_FLAG_RESPONSE | RMQ_FLAG_ONEWAY);
    *req = (rmq_request){0};
    req->host = h;
    /* an inline processor runs on an I/O loop as it expects */
    req->loop = &h->loops[(unsigned)cmd->opaque % (unsigned)h->nloops];
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
    waiter_unref(w);
    return result;
}
