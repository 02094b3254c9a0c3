/* timers.c — the housekeeping thread: a libuv loop that runs plugin timers
 * (or hands their ticks to the plugin's executor). Timers are added and
 * cancelled through a mutex-protected queue; a plugin generation is only
 * unloaded after all its timer handles are closed and no tick runs. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <urcu.h>

#include "host.h"

static void on_timer_closed(uv_handle_t *hd)
{
    timer_rec *t = hd->data;
    rmq_host *h = t->plugin->host;
    pthread_mutex_lock(&h->timer_mu);
    t->closed = true;
    pthread_cond_broadcast(&h->timer_cv);
    pthread_mutex_unlock(&h->timer_mu);
}

static void tick_task(void *arg)
{
    timer_rec *t = arg;
    if (!atomic_load(&t->cancelled))
        t->fn(t->ud);
    atomic_store(&t->running, 0);
    atomic_fetch_sub(&t->plugin->inflight, 1);
}

static void on_tick(uv_timer_t *hd)
{
    timers_fire(hd->data);
}

void timers_fire(timer_rec *t)
{
    if (atomic_load(&t->cancelled))
        return;
    atomic_fetch_add(&t->plugin->inflight, 1);
    if (t->ex) {
        /* A slow tick is not stacked up behind itself. */
        if (atomic_exchange(&t->running, 1)) {
            atomic_fetch_sub(&t->plugin->inflight, 1);
            return;
        }
        if (executor_submit(t->ex, tick_task, t) != 0) {
            atomic_store(&t->running, 0);
            atomic_fetch_sub(&t->plugin->inflight, 1);
        }
        return;
    }
    t->fn(t->ud);
    atomic_fetch_sub(&t->plugin->inflight, 1);
}

static void close_timer(timer_rec *t)
{
    if (t->started && !uv_is_closing((uv_handle_t *)&t->handle)) {
        uv_timer_stop(&t->handle);
        uv_close((uv_handle_t *)&t->handle, on_timer_closed);
    } else if (!t->started) {
        t->closed = true;
    }
}

static void on_wake(uv_async_t *a)
{
    rmq_host *h = a->data;
    pthread_mutex_lock(&h->timer_mu);
    timer_rec *add = h->timer_add_q;
    h->timer_add_q = NULL;
    size_t ncancel = h->ncancel_q;
    rmq_timer_id *cancel = NULL;
    if (ncancel) {
        cancel = malloc(ncancel * sizeof(*cancel));
        if (cancel)
            memcpy(cancel, h->timer_cancel_q, ncancel * sizeof(*cancel));
        h->ncancel_q = 0;
    }
    bool stopping = h->timer_stopping;
    pthread_mutex_unlock(&h->timer_mu);

    for (timer_rec *t = add; t;) {
        timer_rec *n = t->qnext;
        t->anext = h->timer_all;
        h->timer_all = t;
        if (!atomic_load(&t->cancelled)) {
            uv_timer_init(&h->timer_loop, &t->handle);
            t->handle.data = t;
            t->started = true;
            uv_timer_start(&t->handle, on_tick, t->first_ms, t->period_ms);
        } else {
            pthread_mutex_lock(&h->timer_mu);
            t->closed = true;
            pthread_cond_broadcast(&h->timer_cv);
            pthread_mutex_unlock(&h->timer_mu);
        }
        t = n;
    }
    for (size_t i = 0; cancel && i < ncancel; i++) {
        for (timer_rec **pp = &h->timer_all; *pp; pp = &(*pp)->anext) {
            if ((*pp)->id == cancel[i]) {
                timer_rec *t = *pp;
                *pp = t->anext;
                atomic_store(&t->cancelled, true);
                pthread_mutex_lock(&h->timer_mu);
                close_timer(t);
                pthread_cond_broadcast(&h->timer_cv);
                pthread_mutex_unlock(&h->timer_mu);
                break;
            }
        }
    }
    free(cancel);
    if (stopping) {
        for (timer_rec *t = h->timer_all; t; t = t->anext) {
            atomic_store(&t->cancelled, true);
            close_timer(t);
        }
        h->timer_all = NULL;
        uv_close((uv_handle_t *)&h->timer_wake, NULL);
    }
}

static void timer_main(void *arg)
{
    rmq_host *h = arg;
    rcu_register_thread();
    uv_run(&h->timer_loop, UV_RUN_DEFAULT);
    rcu_unregister_thread();
}

int timers_start(rmq_host *h)
{
    pthread_mutex_init(&h->timer_mu, NULL);
    pthread_cond_init(&h->timer_cv, NULL);
    if (uv_loop_init(&h->timer_loop) != 0)
        return RMQ_ENOMEM;
    uv_async_init(&h->timer_loop, &h->timer_wake, on_wake);
    h->timer_wake.data = h;
    return uv_thread_create(&h->timer_thread, timer_main, h) == 0 ? 0 : RMQ_ENOMEM;
}

void timers_stop(rmq_host *h)
{
    pthread_mutex_lock(&h->timer_mu);
    h->timer_stopping = true;
    pthread_mutex_unlock(&h->timer_mu);
    uv_async_send(&h->timer_wake);
    uv_thread_join(&h->timer_thread);
    uv_run(&h->timer_loop, UV_RUN_NOWAIT);
    uv_loop_close(&h->timer_loop);
    free(h->timer_cancel_q);
    h->timer_cancel_q = NULL;
    pthread_mutex_destroy(&h->timer_mu);
    pthread_cond_destroy(&h->timer_cv);
}

void timers_activate(rmq_host *h, plugin_inst *p)
{
    if (h->timer_takeover) {
        h->timer_takeover(h, p, true);
        return;
    }
    pthread_mutex_lock(&h->timer_mu);
    for (timer_rec *t = p->timers; t; t = t->next) {
        t->qnext = h->timer_add_q;
        h->timer_add_q = t;
    }
    pthread_mutex_unlock(&h->timer_mu);
    uv_async_send(&h->timer_wake);
}

int timers_cancel(rmq_host *h, rmq_timer_id id)
{
    pthread_mutex_lock(&h->timer_mu);
    if (h->ncancel_q == h->cap_cancel_q) {
        size_t ncap = h->cap_cancel_q ? h->cap_cancel_q * 2 : 16;
        rmq_timer_id *nq = realloc(h->timer_cancel_q, ncap * sizeof(*nq));
        if (!nq) {
            pthread_mutex_unlock(&h->timer_mu);
            return RMQ_ENOMEM;
        }
        h->timer_cancel_q = nq;
        h->cap_cancel_q = ncap;
    }
    h->timer_cancel_q[h->ncancel_q++] = id;
    pthread_mutex_unlock(&h->timer_mu);
    uv_async_send(&h->timer_wake);
    return 0;
}

void timers_cancel_plugin(rmq_host *h, plugin_inst *p)
{
    if (!p->timers)
        return;
    if (h->timer_takeover) {
        /* Virtual time fires ticks on the caller's thread and waits for
         * executor ticks, so none is running now. */
        for (timer_rec *t = p->timers; t; t = t->next) {
            atomic_store(&t->cancelled, true);
            t->closed = true;
        }
        h->timer_takeover(h, p, false);
        return;
    }
    for (timer_rec *t = p->timers; t; t = t->next) {
        atomic_store(&t->cancelled, true);
        timers_cancel(h, t->id);
    }
    /* Wait until the timer thread has closed every handle of this plugin. */
    pthread_mutex_lock(&h->timer_mu);
    for (;;) {
        bool all = true;
        for (timer_rec *t = p->timers; t; t = t->next)
            if (!t->closed)
                all = false;
        if (all || h->timer_stopping)
            break;
        pthread_cond_wait(&h->timer_cv, &h->timer_mu);
    }
    pthread_mutex_unlock(&h->timer_mu);
}
