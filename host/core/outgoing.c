/* outgoing.c — requests the host sends for plugins (server push to a channel,
 * or client calls to an address): opaque allocation, in-flight semaphores,
 * the per-loop pending table matched by opaque, timeouts from the 1 s
 * sweep, and completion of oneway/async/sync calls. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host.h"

#define CLIENT_SEMAPHORE 65535u

static void call_done(pending_call *pc)
{
    if (pc->permit)
        atomic_fetch_sub(pc->permit, 1);
    if (pc->plugin)
        atomic_fetch_sub(&pc->plugin->inflight, 1);
    free(pc);
}

void pending_call_fail(rmq_host *h, pending_call *pc, int err)
{
    (void)h;
    if (pc->kind == CALL_ASYNC && pc->cb) {
        pc->cb(err, NULL, pc->ud);
    } else if (pc->kind == CALL_SYNC && pc->waiter) {
        sync_waiter *w = pc->waiter;
        pthread_mutex_lock(&w->mu);
        w->done = true;
        w->err = err;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
        sync_waiter_unref(w);
    }
    call_done(pc);
}

void pending_insert(io_loop *l, pending_call *pc)
{
    size_t b = (uint32_t)pc->opaque % PENDING_BUCKETS;
    pc->next = l->pending[b];
    l->pending[b] = pc;
    l->npending++;
}

/* A call on a draining connection ended: that connection may close now
 * (at the loop's next flush, outside the frame being processed). */
static void drain_notice(io_loop *l, uint64_t channel)
{
    connection *c = channel ? loop_find_conn(l, channel) : NULL;
    if (c && c->draining)
        conn_mark_dirty(c);
}

void outgoing_complete(io_loop *l, rmq_cmd *resp)
{
    size_t b = (uint32_t)resp->opaque % PENDING_BUCKETS;
    pending_call *pc = NULL;
    for (pending_call **pp = &l->pending[b]; *pp; pp = &(*pp)->next) {
        if ((*pp)->opaque == resp->opaque) {
            pc = *pp;
            *pp = pc->next;
            l->npending--;
            break;
        }
    }
    if (!pc) {
        HLOG_DEBUG(l->host, "receive response, but not matched any request: opaque %d code %d",
                   resp->opaque, resp->code);
        rmq_cmd_free(resp);
        return;
    }
    if (pc->kind == CALL_ASYNC && pc->cb) {
        pc->cb(0, resp, pc->ud);
        rmq_cmd_free(resp);
    } else if (pc->kind == CALL_SYNC && pc->waiter) {
        sync_waiter *w = pc->waiter;
        /* the caller's thread reads it after rbuf has moved on */
        int err = rmq_cmd_own_body(resp) == 0 ? 0 : RMQ_ENOMEM;
        if (err) {
            rmq_cmd_free(resp);
            resp = NULL;
        }
        pthread_mutex_lock(&w->mu);
        w->done = true;
        w->err = err;
        w->resp = resp;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
        sync_waiter_unref(w);
    } else {
        rmq_cmd_free(resp);
    }
    uint64_t channel = pc->channel;
    call_done(pc);
    drain_notice(l, channel);
}

void outgoing_sweep(io_loop *l, uint64_t channel, int err)
{
    if (l->npending == 0)
        return;
    uint64_t now = host_now_ms();
    for (size_t b = 0; b < PENDING_BUCKETS; b++) {
        pending_call **pp = &l->pending[b];
        while (*pp) {
            pending_call *pc = *pp;
            bool hit = channel == UINT64_MAX || (channel == 0 && pc->deadline_ms <= now) ||
                       (channel != 0 && pc->channel == channel);
            if (hit) {
                *pp = pc->next;
                l->npending--;
                uint64_t bound = pc->channel;
                pending_call_fail(l->host, pc, err);
                if (channel == 0)
                    drain_notice(l, bound);
            } else {
                pp = &pc->next;
            }
        }
    }
}

static unsigned addr_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

io_loop *outgoing_loop_of_addr(rmq_host *h, const char *addr)
{
    return &h->loops[addr_hash(addr) % (unsigned)h->nloops];
}

bool outgoing_has_calls_on(io_loop *l, uint64_t channel)
{
    if (l->npending == 0)
        return false;
    for (size_t b = 0; b < PENDING_BUCKETS; b++)
        for (pending_call *pc = l->pending[b]; pc; pc = pc->next)
            if (pc->channel == channel)
                return true;
    return false;
}

size_t outgoing_addr_host_len(const char *addr)
{
    const char *tag = strchr(addr, '#');
    if (!tag)
        return strlen(addr);
    size_t tl = strlen(tag + 1);
    return tl >= 1 && tl <= 63 ? (size_t)(tag - addr) : 0;
}

/* Encode `req` (consumed) as an outgoing request and post it. */
static int post_invoke(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                       uint32_t timeout_ms, call_kind kind, rmq_response_fn cb, void *ud,
                       sync_waiter *w)
{
    rmq_host *h = p->host;
    if (!req)
        return RMQ_EINVAL;
    if (h->stopping && !p->in_init && p->state == PLUGIN_DEAD) {
        rmq_cmd_free(req);
        return RMQ_ESHUTDOWN;
    }
    io_loop *l;
    if (addr) {
        size_t host_len = outgoing_addr_host_len(addr);
        if (!addr[0] || host_len == 0 || strlen(addr) >= sizeof(((loop_task *)0)->addr)) {
            rmq_cmd_free(req);
            return RMQ_EINVAL;
        }
        char host_part[sizeof(((loop_task *)0)->addr)];
        snprintf(host_part, sizeof host_part, "%.*s", (int)host_len, addr);
        /* Our own server stopped reading and its plugin may be gone: the call
         * could only wait for its timeout (e.g. UNREGISTER_BROKER of an
         * all-in-one broker to its own NameServer). */
        if (h->stopping && host_addr_served_here(h, host_part)) {
            HLOG_INFO(h,
                      "plugin %s: request code %d to %s not sent: served by this process, "
                      "which is stopping",
                      p->conf.name, req->code, addr);
            rmq_cmd_free(req);
            return RMQ_ESHUTDOWN;
        }
        l = outgoing_loop_of_addr(h, addr);
    } else {
        l = host_loop_of(h, ch);
        if (!l) {
            rmq_cmd_free(req);
            return RMQ_ENOTCONN;
        }
    }
    atomic_uint *permit;
    unsigned limit;
    if (addr) {
        permit = kind == CALL_ONEWAY ? &h->client_oneway_permits : &h->client_async_permits;
        limit = CLIENT_SEMAPHORE;
    } else if (p->srv) {
        permit = kind == CALL_ONEWAY ? &p->srv->oneway_permits : &p->srv->async_permits;
        limit = kind == CALL_ONEWAY ? p->srv->oneway_limit : p->srv->async_limit;
    } else {
        permit = kind == CALL_ONEWAY ? &h->client_oneway_permits : &h->client_async_permits;
        limit = CLIENT_SEMAPHORE;
    }
    if (kind == CALL_SYNC) {
        permit = NULL; /* Java bounds only oneway and async calls */
    } else if (atomic_fetch_add(permit, 1) >= limit) {
        atomic_fetch_sub(permit, 1);
        rmq_cmd_free(req);
        return RMQ_EBUSY;
    }
    req->opaque = atomic_fetch_add(&h->next_opaque, 1);
    req->flag = kind == CALL_ONEWAY ? RMQ_FLAG_ONEWAY : 0;
    size_t need = rmq_cmd_encoded_size_bound(req);
    uint8_t *frame = need ? malloc(need) : NULL;
    size_t n = frame ? rmq_cmd_encode(req, frame, need) : 0;
    int32_t opaque = req->opaque;
    rmq_cmd_free(req);
    loop_task *t = calloc(1, sizeof(*t));
    pending_call *pc = kind == CALL_ONEWAY ? NULL : calloc(1, sizeof(*pc));
    if (n == 0 || !t || (kind != CALL_ONEWAY && !pc)) {
        free(frame);
        free(t);
        free(pc);
        if (permit)
            atomic_fetch_sub(permit, 1);
        return n == 0 && frame ? RMQ_EINVAL : RMQ_ENOMEM;
    }
    t->type = addr ? LT_INVOKE_ADDR : LT_INVOKE;
    t->channel = ch;
    t->frame = frame;
    t->frame_len = n;
    if (addr)
        snprintf(t->addr, sizeof(t->addr), "%s", addr);
    if (pc) {
        pc->opaque = opaque;
        pc->kind = kind;
        pc->deadline_ms = host_now_ms() + timeout_ms;
        pc->channel = ch;
        pc->cb = cb;
        pc->ud = ud;
        pc->waiter = w;
        pc->permit = permit;
        pc->plugin = p;
        atomic_fetch_add(&p->inflight, 1);
        if (w)
            atomic_fetch_add(&w->refs, 1);
        t->call = pc;
    } else {
        t->permit = permit;
    }
    loop_post(l, t);
    return 0;
}

int outgoing_oneway(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                    uint32_t timeout_ms)
{
    return post_invoke(p, ch, addr, req, timeout_ms, CALL_ONEWAY, NULL, NULL, NULL);
}

int outgoing_async(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                   uint32_t timeout_ms, rmq_response_fn cb, void *ud)
{
    return post_invoke(p, ch, addr, req, timeout_ms, CALL_ASYNC, cb, ud, NULL);
}

int outgoing_sync(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                  uint32_t timeout_ms, rmq_cmd **resp)
{
    rmq_host *h = p->host;
    *resp = NULL;
    if (host_on_io_thread(h)) {
        rmq_cmd_free(req);
        return RMQ_EWOULDBLOCK;
    }
    sync_waiter *w = sync_waiter_new(1);
    if (!w) {
        rmq_cmd_free(req);
        return RMQ_ENOMEM;
    }
    int rc = post_invoke(p, ch, addr, req, timeout_ms, CALL_SYNC, NULL, NULL, w);
    if (rc != 0) {
        sync_waiter_unref(w);
        return rc;
    }
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if (pthread_cond_timedwait(&w->cv, &w->mu, &dl) == ETIMEDOUT)
            break;
    }
    if (w->done) {
        rc = w->err;
        *resp = w->resp;
        w->resp = NULL;
    } else {
        rc = RMQ_ETIMEDOUT;
    }
    pthread_mutex_unlock(&w->mu);
    sync_waiter_unref(w);
    return rc;
}
