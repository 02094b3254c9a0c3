/* io_loop.c — one libuv loop per I/O thread: owns its connections (by slot,
 * so a 64-bit channel id names a connection without a shared lock), its
 * pending outgoing calls and a task queue that other threads post to.
 * Never runs blocking plugin code: inline processors must not block. */
#include <stdlib.h>
#include <string.h>
#include <urcu.h>

#include "host.h"

#define CHANNEL_LOOP_SHIFT 56
#define CHANNEL_GEN_SHIFT 32

io_loop *host_loop_of(rmq_host *h, uint64_t channel)
{
    uint64_t idx = channel >> CHANNEL_LOOP_SHIFT;
    if (idx == 0 || idx > (uint64_t)h->nloops)
        return NULL;
    return &h->loops[idx - 1];
}

bool loop_is_current(io_loop *l)
{
    return l && pthread_equal(pthread_self(), l->tid);
}

io_loop *host_current_loop(rmq_host *h)
{
    for (int i = 0; i < h->nloops; i++)
        if (h->loops[i].tid && pthread_equal(pthread_self(), h->loops[i].tid))
            return &h->loops[i];
    return NULL;
}

bool host_on_io_thread(rmq_host *h)
{
    return host_current_loop(h) != NULL;
}

connection *loop_find_conn(io_loop *l, uint64_t id)
{
    uint32_t slot = (uint32_t)(id & 0xffffffffu);
    if (slot >= l->nslots)
        return NULL;
    connection *c = l->slots[slot];
    if (!c || c->id != id || c->closing)
        return NULL;
    return c;
}

void loop_post(io_loop *l, loop_task *t)
{
    t->next = NULL;
    pthread_mutex_lock(&l->mu);
    if (l->tasks_tail)
        l->tasks_tail->next = t;
    else
        l->tasks_head = t;
    l->tasks_tail = t;
    pthread_mutex_unlock(&l->mu);
    uv_async_send(&l->wake);
}

static void task_free(loop_task *t)
{
    free(t->frame);
    free(t);
}

static void close_all(io_loop *l)
{
    for (connection *c = l->conns; c;) {
        connection *n = c->next;
        conn_close(c, RMQ_CHANNEL_CLOSE);
        c = n;
    }
}

static void on_handle_closed(uv_handle_t *h)
{
    (void)h;
}

static void run_task(io_loop *l, loop_task *t)
{
    connection *c;
    switch (t->type) {
    case LT_ADOPT: conn_adopt(l, t->srv, t->fd); break;
    case LT_SEND:
        c = loop_find_conn(l, t->channel);
        if (c)
            conn_queue_frame(c, t->frame, t->frame_len);
        break;
    case LT_CLOSE:
        c = loop_find_conn(l, t->channel);
        if (c)
            conn_close(c, RMQ_CHANNEL_CLOSE);
        break;
    case LT_INVOKE:
        c = loop_find_conn(l, t->channel);
        if (!c) {
            if (t->call)
                pending_call_fail(l->host, t->call, RMQ_ENOTCONN);
        } else {
            if (t->call)
                pending_insert(l, t->call);
            conn_queue_frame(c, t->frame, t->frame_len);
        }
        if (t->permit)
            atomic_fetch_sub(t->permit, 1);
        break;
    case LT_INVOKE_ADDR:
        loop_connect_and_invoke(l, t);
        if (t->permit)
            atomic_fetch_sub(t->permit, 1);
        break;
    case LT_CLOSE_ADDR: loop_close_addr(l, t->addr); break;
    case LT_STOP_READING:
        l->stop_reading = true;
        for (c = l->conns; c; c = c->next)
            if (c->srv && c->reading) {
                uv_read_stop((uv_stream_t *)&c->tcp);
                c->reading = false;
            }
        break;
    case LT_RESUME:
        c = loop_find_conn(l, t->channel);
        if (c && !c->read_paused)
            conn_process_frames(c);
        break;
    case LT_START_ACCEPT: server_poll_start(l, t->srv); break;
    case LT_RUN_REQUEST: dispatch_run_on_loop(t->req); break;
    case LT_CALL: t->fn(l, t->arg); break;
    case LT_STOP_ACCEPT:
        if (t->srv->polling) {
            uv_poll_stop(&t->srv->poll);
            uv_close((uv_handle_t *)&t->srv->poll, on_handle_closed);
            t->srv->polling = false;
        }
        if (t->srv->vip_polling) {
            uv_poll_stop(&t->srv->vip_poll);
            uv_close((uv_handle_t *)&t->srv->vip_poll, on_handle_closed);
            t->srv->vip_polling = false;
        }
        if (t->srv->backoff_inited) {
            uv_timer_stop(&t->srv->accept_backoff);
            uv_close((uv_handle_t *)&t->srv->accept_backoff, on_handle_closed);
            t->srv->backoff_inited = false;
        }
        break;
    case LT_STOP:
        l->stopping = true;
        loop_flush_dirty(l);
        close_all(l);
        outgoing_sweep(l, UINT64_MAX, RMQ_ESHUTDOWN);
        uv_timer_stop(&l->tick);
        uv_close((uv_handle_t *)&l->tick, on_handle_closed);
        uv_close((uv_handle_t *)&l->wake, on_handle_closed);
        break;
    }
}

static void on_wake(uv_async_t *a)
{
    io_loop *l = a->data;
    pthread_mutex_lock(&l->mu);
    loop_task *t = l->tasks_head;
    l->tasks_head = l->tasks_tail = NULL;
    pthread_mutex_unlock(&l->mu);
    while (t) {
        loop_task *n = t->next;
        bool stop = t->type == LT_STOP;
        run_task(l, t);
        task_free(t);
        t = n;
        if (stop) {
            /* Anything posted after STOP is answered with "gone". */
            while (t) {
                n = t->next;
                if (t->call)
                    pending_call_fail(l->host, t->call, RMQ_ESHUTDOWN);
                if (t->permit)
                    atomic_fetch_sub(t->permit, 1);
                if (t->type == LT_ADOPT)
                    close(t->fd);
                task_free(t);
                t = n;
            }
            return;
        }
    }
    loop_flush_dirty(l);
}

static void on_tick(uv_timer_t *t)
{
    io_loop *l = t->data;
    /* Activity is stamped with the loop's cached clock (no syscall per read). */
    uint64_t now = uv_now(&l->loop);
    for (connection *c = l->conns; c;) {
        connection *n = c->next;
        if (c->srv && !c->closing && now - c->last_active_ms >= (uint64_t)c->srv->idle_ms) {
            HLOG_INFO(l->host, "server %s: closing idle connection %s (no traffic for %d s)",
                      c->srv->name, c->peer, c->srv->idle_ms / 1000);
            conn_close(c, RMQ_CHANNEL_IDLE);
        } else if (c->grpc) {
            grpc_conn_tick(c);
        }
        c = n;
    }
    outgoing_sweep(l, 0, RMQ_ETIMEDOUT);
    loop_flush_dirty(l);
}

static void loop_main(void *arg)
{
    io_loop *l = arg;
    l->tid = pthread_self();
    rcu_register_thread();
    uv_run(&l->loop, UV_RUN_DEFAULT);
    rcu_unregister_thread();
}

int io_loop_start(io_loop *l, rmq_host *h, int index)
{
    memset(l, 0, sizeof(*l));
    l->host = h;
    l->index = index;
    if (uv_loop_init(&l->loop) != 0)
        return RMQ_ENOMEM;
    pthread_mutex_init(&l->mu, NULL);
    uv_async_init(&l->loop, &l->wake, on_wake);
    l->wake.data = l;
    uv_timer_init(&l->loop, &l->tick);
    l->tick.data = l;
    uv_timer_start(&l->tick, on_tick, 1000, 1000);
    return 0;
}

int io_loop_run_thread(io_loop *l)
{
    return uv_thread_create(&l->thread, loop_main, l) == 0 ? 0 : RMQ_ENOMEM;
}

void io_loop_join(io_loop *l)
{
    uv_thread_join(&l->thread);
    /* Let close callbacks of the last connections run. */
    uv_run(&l->loop, UV_RUN_NOWAIT);
    if (uv_loop_close(&l->loop) != 0)
        HLOG_WARN(l->host, "io loop %d closed with open handles", l->index);
    pthread_mutex_destroy(&l->mu);
    free(l->slots);
    byte_buf_free(&l->spare_rbuf);
    loop_free_returned_rbuf(l);
    free(l->free_slots);
}

uint64_t loop_assign_slot(io_loop *l, connection *c)
{
    uint32_t slot;
    if (l->nfree) {
        slot = l->free_slots[--l->nfree];
    } else {
        connection **ns = realloc(l->slots, (l->nslots + 1) * sizeof(*ns));
        uint32_t *nf = realloc(l->free_slots, (l->nslots + 1) * sizeof(*nf));
        if (ns)
            l->slots = ns;
        if (nf)
            l->free_slots = nf;
        if (!ns || !nf)
            return 0;
        slot = l->nslots++;
    }
    l->slots[slot] = c;
    c->slot = slot;
    l->gen = (l->gen + 1) & 0xffffffu;
    return ((uint64_t)(l->index + 1) << CHANNEL_LOOP_SHIFT) |
           ((uint64_t)l->gen << CHANNEL_GEN_SHIFT) | slot;
}

void loop_release_slot(io_loop *l, connection *c)
{
    if (c->slot < l->nslots && l->slots[c->slot] == c) {
        l->slots[c->slot] = NULL;
        l->free_slots[l->nfree++] = c->slot;
    }
}
