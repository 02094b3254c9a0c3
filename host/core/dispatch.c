/* dispatch.c — turns a decoded request into a processor call: response
 * frames go to the pending-call table, unknown codes get code 3, reject
 * hooks and full executors get SYSTEM_BUSY, failures get SYSTEM_ERROR,
 * oneway requests never get an answer. Never touches sockets directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu.h>

#include "host.h"
#include "plugin_reload.h"

static const char REMARK_REJECT[] = "[REJECTREQUEST]system busy, start flow control for a while";
static const char REMARK_OVERLOAD[] = "[OVERLOAD]system busy, start flow control for a while";

static void dispatch_resume_held(rmq_request *req);

static void answer_now(connection *c, const rmq_cmd *req, int32_t code, const char *remark)
{
    if (req->flag & RMQ_FLAG_ONEWAY)
        return;
    rmq_cmd *resp = rmq_cmd_new_response(req, code, remark);
    if (!resp)
        return;
    if (conn_queue_cmd(c, resp) != 0)
        HLOG_WARN(c->loop->host, "cannot encode answer %d to %s", code, c->peer);
    rmq_cmd_free(resp);
}

void request_finish(rmq_request *req)
{
    rmq_host *h = req->host;
    if (req->start_ns)
        request_stats_latency(&req->srv->stats, request_stats_now_ns() - req->start_ns);
    if (req->entry.plugin) {
        atomic_fetch_add(&req->entry.plugin->served, 1);
        atomic_fetch_sub(&req->entry.plugin->inflight, 1);
    }
    atomic_fetch_sub(&h->inflight_requests, 1);
    if (req->local)
        local_invoke_finished(req);
    rmq_cmd_free(req->cmd);
    free(req->fail_remark);
    free(req);
}

void request_release(rmq_request *req)
{
    if (atomic_fetch_sub(&req->holds, 1) == 1)
        request_finish(req);
}

void request_send_response(rmq_request *req, rmq_cmd *resp)
{
    rmq_host *h = req->host;
    resp->opaque = req->cmd->opaque;
    resp->flag |= RMQ_FLAG_RESPONSE;
    resp->flag &= ~RMQ_FLAG_ONEWAY;
    resp->serialize_type = req->cmd->serialize_type;
    if (resp->code != 0) {
        atomic_fetch_add(&req->srv->errors, 1);
        request_stats_error(&req->srv->stats, req->cmd->code);
    }
    if (req->local) {
        local_invoke_deliver(req, resp);
        return;
    }
    if (loop_is_current(req->loop)) {
        connection *c = loop_find_conn(req->loop, req->channel);
        if (c && conn_queue_cmd(c, resp) != 0)
            HLOG_WARN(h, "cannot encode response to code %d for %s", req->cmd->code, req->peer);
        rmq_cmd_free(resp);
        return;
    }
    size_t need = rmq_cmd_encoded_size_bound(resp);
    uint8_t *frame = need ? malloc(need) : NULL;
    size_t n = frame ? rmq_cmd_encode(resp, frame, need) : 0;
    rmq_cmd_free(resp);
    if (n == 0) {
        free(frame);
        HLOG_WARN(h, "cannot encode response to code %d for %s", req->cmd->code, req->peer);
        return;
    }
    loop_task *t = calloc(1, sizeof(*t));
    if (!t) {
        free(frame);
        return;
    }
    t->type = LT_SEND;
    t->channel = req->channel;
    t->frame = frame;
    t->frame_len = n;
    loop_post(req->loop, t);
}

/* A refusing hook leaves its remark either behind *remark (the 1.0 hook: a
 * string of its own that outlives the call) or in `buf` (the 1.7 hook: the
 * caller's storage, on this thread's stack, so refusals in flight on other
 * threads never share it); *remark then points into buf. */
static int run_before_hooks(rmq_request *req, const char **remark, rmq_remark_buf *buf)
{
    int code = 0;
    rcu_read_lock();
    server_bindings *b = rcu_dereference(req->srv->bindings);
    for (size_t i = 0; b && i < b->nhooks && code == 0; i++) {
        const hook_entry *hk = &b->hooks[i];
        if (hk->before) {
            code = hk->before(req->channel, req->cmd, remark, hk->ud);
        } else if (hk->before_remark) {
            buf->data[0] = '\0';
            code = hk->before_remark(req->channel, req->cmd, buf, hk->ud);
            buf->data[buf->cap - 1] = '\0'; /* a hook that wrote cap bytes unterminated */
            if (code > 0)
                *remark = buf->data[0] ? buf->data : NULL;
        }
    }
    rcu_read_unlock();
    return code;
}

void request_run_after_hooks(rmq_request *req, const rmq_cmd *resp)
{
    rcu_read_lock();
    server_bindings *b = rcu_dereference(req->srv->bindings);
    for (size_t i = 0; b && i < b->nhooks; i++)
        if (b->hooks[i].after)
            b->hooks[i].after(req->channel, req->cmd, resp, b->hooks[i].ud);
    rcu_read_unlock();
}

/* Java's broker fast failure: a request that waited too long in a bounded
 * queue is answered busy instead of being processed late. */
static bool refused_for_queue_wait(rmq_request *req)
{
    executor *ex = req->entry.ex;
    uint64_t max_wait = ex ? atomic_load_explicit(&ex->max_wait_ms, memory_order_relaxed) : 0;
    if (!max_wait || !req->received_ms)
        return false;
    uint64_t waited = host_now_ms() - req->received_ms;
    if (waited <= max_wait)
        return false;
    atomic_fetch_add(&ex->timed_out, 1);
    atomic_fetch_add(&req->srv->errors, 1);
    request_stats_error(&req->srv->stats, req->cmd->code);
    if (!req->oneway) {
        char remark[256];
        snprintf(remark, sizeof(remark), "%s, period in queue: %llums, size of queue: %zu",
                 ex->busy_remark, (unsigned long long)waited, executor_depth(ex));
        rmq_cmd *resp = rmq_cmd_new_response(req->cmd, RMQ_RESPONSE_SYSTEM_BUSY, remark);
        if (resp)
            request_send_response(req, resp);
    }
    request_finish(req);
    return true;
}

/* A request deferred inline may still have its body in the connection's
 * read buffer, which moves once this pass ends: the request keeps that
 * buffer, so the body the processor saw stays where it is (loop thread;
 * the processor's hold keeps the command alive meanwhile). */
static void keep_deferred_body(rmq_request *req)
{
    if (!req->cmd->body_in_frame)
        return;
    connection *c = loop_find_conn(req->loop, req->channel);
    if (c ? conn_keep_body(c, req->cmd) : rmq_cmd_own_body(req->cmd) == 0)
        return;
    HLOG_ERROR(req->host, "out of memory keeping the body of deferred code %d from %s; dropped",
               req->cmd->code, req->peer);
    rmq_cmd_set_body(req->cmd, NULL, 0, NULL, NULL);
}

/* Before a request outlives the read pass (executor queue, reload hold) its
 * body leaves the read buffer; false (answered, finished) when it cannot. */
static bool own_body_or_refuse(connection *c, rmq_request *req)
{
    if (rmq_cmd_own_body(req->cmd) == 0)
        return true;
    atomic_fetch_add(&req->srv->errors, 1);
    request_stats_error(&req->srv->stats, req->cmd->code);
    answer_now(c, req->cmd, RMQ_RESPONSE_SYSTEM_ERROR, "out of memory");
    request_finish(req);
    return false;
}

static void run_request(void *arg)
{
    rmq_request *req = arg;
    rmq_host *h = req->host;
    if (refused_for_queue_wait(req))
        return;
    const char *remark = NULL;
    char remark_text[RMQ_REMARK_BUF_MIN_CAP];
    rmq_remark_buf remark_buf = {
        .size = sizeof(remark_buf), .data = remark_text, .cap = sizeof(remark_text)};
    atomic_store(&req->holds, 1); /* the processor's; defer() adds the handle's */
    int refuse = run_before_hooks(req, &remark, &remark_buf);
    int rc;
    if (refuse > 0) {
        rmq_cmd *resp = rmq_cmd_new_response(req->cmd, refuse, remark);
        if (resp)
            h->api.reply(req, resp);
        rc = 0;
    } else {
        rc = req->entry.fn(req, req->cmd, req->entry.ud);
    }
    if (req->deferred) {
        keep_deferred_body(req);
        request_release(req); /* deferred_reply finishes it, maybe already has */
        return;
    }
    if (rc == RMQ_DEFERRED)
        HLOG_ERROR(h, "plugin %s returned RMQ_DEFERRED for code %d without calling defer()",
                   req->entry.plugin->conf.name, req->cmd->code);
    if (rc < 0 && !req->replied && !req->oneway) {
        char buf[256];
        const char *r = req->fail_remark;
        if (!r) {
            snprintf(buf, sizeof(buf), "%s: processing request code %d failed: %s",
                     req->entry.plugin->conf.name, req->cmd->code, rmq_strerror(rc));
            r = buf;
        }
        rmq_cmd *resp = rmq_cmd_new_response(req->cmd, RMQ_RESPONSE_SYSTEM_ERROR, r);
        if (resp) {
            request_run_after_hooks(req, resp);
            req->replied = true;
            request_send_response(req, resp);
        }
    }
    request_finish(req);
}

void dispatch_command(connection *c, rmq_cmd *cmd)
{
    io_loop *l = c->loop;
    rmq_host *h = l->host;
    if (cmd->flag & RMQ_FLAG_RESPONSE) {
        outgoing_complete(l, cmd);
        return;
    }
    server *s = c->srv;
    if (!s) {
        /* a request arriving on a connection we dialled (client_requests.c) */
        client_request_dispatch(c, cmd);
        return;
    }
    unsigned long seq = atomic_fetch_add(&s->requests, 1);
    request_stats_count(&s->stats, cmd->code);
    rcu_read_lock();
    server_bindings *b = rcu_dereference(s->bindings);
    const proc_entry *pe = b ? bindings_lookup(b, cmd->code) : NULL;
    /* Java's VIP (fast) server has no such processor: code 3 there */
    if (pe && (pe->flags & RMQ_PROC_NOT_ON_VIP) && server_conn_on_vip(c))
        pe = NULL;
    if (!pe) {
        rcu_read_unlock();
        char remark[64];
        snprintf(remark, sizeof(remark), " request type %d not supported", cmd->code);
        atomic_fetch_add(&s->errors, 1);
        request_stats_error(&s->stats, cmd->code);
        answer_now(c, cmd, RMQ_RESPONSE_REQUEST_CODE_NOT_SUPPORTED, remark);
        rmq_cmd_free(cmd);
        return;
    }
    for (size_t i = 0; i < b->nrejects; i++) {
        if (b->rejects[i].fn(cmd, b->rejects[i].ud)) {
            rcu_read_unlock();
            atomic_fetch_add(&s->errors, 1);
            request_stats_error(&s->stats, cmd->code);
            answer_now(c, cmd, RMQ_RESPONSE_SYSTEM_BUSY, REMARK_REJECT);
            rmq_cmd_free(cmd);
            return;
        }
    }
    proc_entry entry = *pe;
    atomic_fetch_add(&entry.plugin->inflight, 1);
    rcu_read_unlock();

    /* malloc, not calloc: glibc's calloc skips the thread cache, and how
     * long its search takes depends on the heap's history */
    rmq_request *req = malloc(sizeof(*req));
    if (!req) {
        atomic_fetch_sub(&entry.plugin->inflight, 1);
        answer_now(c, cmd, RMQ_RESPONSE_SYSTEM_ERROR, "out of memory");
        rmq_cmd_free(cmd);
        return;
    }
    *req = (rmq_request){0};
    req->host = h;
    req->loop = l;
    req->channel = c->id;
    req->srv = s;
    req->cmd = cmd;
    req->entry = entry;
    req->oneway = (cmd->flag & RMQ_FLAG_ONEWAY) != 0;
    memcpy(req->peer, c->peer, sizeof(req->peer));
    cmd->peer = req->peer; /* api->cmd_peer: RPC hooks see only the command */
    /* Latency quantiles from one request in 8: the clock read is a
     * measurable share of an inline request's cost. */
    req->start_ns = (seq & 7) == 0 ? request_stats_now_ns() : 0;
    atomic_fetch_add(&h->inflight_requests, 1);
    /* inflight was raised before `held` is read: a reload that sets held and
     * then sees inflight 0 knows this request will queue, not run. */
    bool held = atomic_load(&entry.plugin->held);
    if (!held && !entry.ex) {
        run_request(req); /* the body may stay in rbuf: it does not move meanwhile */
        return;
    }
    if (!own_body_or_refuse(c, req))
        return;
    if (held) {
        dispatch_resume_held(req);
        return;
    }
    if (atomic_load_explicit(&entry.ex->max_wait_ms, memory_order_relaxed))
        req->received_ms = host_now_ms();
    int rc = executor_submit(entry.ex, run_request, req);
    if (rc != 0) {
        atomic_fetch_add(&s->errors, 1);
        request_stats_error(&s->stats, cmd->code);
        answer_now(c, cmd, RMQ_RESPONSE_SYSTEM_BUSY, REMARK_OVERLOAD);
        request_finish(req);
    }
}

/* Answer a request that can no longer be dispatched (any thread). */
static void refuse_request(rmq_request *req, int32_t code, const char *remark)
{
    if (!req->oneway) {
        rmq_cmd *resp = rmq_cmd_new_response(req->cmd, code, remark);
        if (resp)
            request_send_response(req, resp);
    }
    request_finish(req);
}

/* req->entry names a held generation and holds an inflight count on it.
 * Queue it there, or, when the hold ended meanwhile, bind it afresh: the
 * bindings were swapped before the hold was released. */
static void dispatch_resume_held(rmq_request *req)
{
    plugin_inst *was = req->entry.plugin;
    bool queued = plugin_hold_request(was, req);
    atomic_fetch_sub(&was->inflight, 1);
    if (!queued)
        dispatch_resume(req);
}

void dispatch_resume(rmq_request *req)
{
    rcu_read_lock();
    server_bindings *b = rcu_dereference(req->srv->bindings);
    const proc_entry *pe = b ? bindings_lookup(b, req->cmd->code) : NULL;
    if (pe) {
        req->entry = *pe;
        atomic_fetch_add(&pe->plugin->inflight, 1);
    } else {
        memset(&req->entry, 0, sizeof(req->entry));
    }
    rcu_read_unlock();
    if (!req->entry.plugin) {
        char remark[64];
        snprintf(remark, sizeof(remark), " request type %d not supported", req->cmd->code);
        refuse_request(req, RMQ_RESPONSE_REQUEST_CODE_NOT_SUPPORTED, remark);
        return;
    }
    if (atomic_load(&req->entry.plugin->held)) {
        dispatch_resume_held(req);
        return;
    }
    if (!req->entry.ex) {
        if (loop_is_current(req->loop)) {
            run_request(req);
            return;
        }
        loop_task *t = calloc(1, sizeof(*t));
        if (!t) {
            refuse_request(req, RMQ_RESPONSE_SYSTEM_ERROR, "out of memory");
            return;
        }
        t->type = LT_RUN_REQUEST;
        t->req = req;
        loop_post(req->loop, t);
        return;
    }
    if (executor_submit(req->entry.ex, run_request, req) != 0) {
        refuse_request(req, RMQ_RESPONSE_SYSTEM_BUSY, REMARK_OVERLOAD);
    }
}

void dispatch_run_on_loop(rmq_request *req)
{
    run_request(req);
}
