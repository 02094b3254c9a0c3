/* event_thread.c — one thread per server that delivers channel events
 * (CONNECT, CLOSE, IDLE, EXCEPTION) to the plugins' listeners in the order
 * they happened, so a slow listener never stalls an I/O loop. Like Java's
 * event executor the queue is bounded (10,000); overflow is counted and
 * logged, never blocks the loop. */
#include <stdlib.h>
#include <string.h>
#include <urcu.h>

#include "host.h"

#define EVENT_QUEUE_CAP 10000

static void deliver(event_thread *et, const chan_event *e)
{
    rcu_read_lock();
    server_bindings *b = rcu_dereference(et->srv->bindings);
    if (b) {
        for (size_t i = 0; i < b->nlisteners; i++) {
            listener_entry *l = &b->listeners[i];
            atomic_fetch_add(&l->plugin->inflight, 1);
            l->fn(e->ev, e->ch, e->peer, l->ud);
            atomic_fetch_sub(&l->plugin->inflight, 1);
        }
    }
    rcu_read_unlock();
}

static void *event_main(void *arg)
{
    event_thread *et = arg;
    rcu_register_thread();
    for (;;) {
        pthread_mutex_lock(&et->mu);
        while (et->count == 0 && !et->stopping)
            pthread_cond_wait(&et->cv, &et->mu);
        if (et->count == 0) {
            pthread_mutex_unlock(&et->mu);
            break;
        }
        chan_event e = et->ring[et->head];
        et->head = (et->head + 1) % et->cap;
        et->count--;
        pthread_mutex_unlock(&et->mu);
        deliver(et, &e);
    }
    rcu_unregister_thread();
    return NULL;
}

/* The mutex and condition variable live from the first start until
 * event_thread_destroy, which the host calls once no I/O loop runs: an I/O
 * thread closing a connection may post at any moment of a stop (shutdown
 * closes every connection after the event threads stopped), so stop never
 * destroys what post locks. */
int event_thread_start(event_thread *et, server *srv)
{
    if (!atomic_load_explicit(&et->ready, memory_order_acquire)) {
        pthread_mutex_init(&et->mu, NULL);
        pthread_cond_init(&et->cv, NULL);
        atomic_store_explicit(&et->ready, true, memory_order_release);
    }
    chan_event *ring = calloc(EVENT_QUEUE_CAP, sizeof(chan_event));
    if (!ring)
        return RMQ_ENOMEM;
    pthread_mutex_lock(&et->mu);
    if (et->started) {
        pthread_mutex_unlock(&et->mu);
        free(ring);
        return 0;
    }
    et->srv = srv;
    et->cap = EVENT_QUEUE_CAP;
    et->head = et->count = 0;
    et->ring = ring;
    et->stopping = false;
    et->started = true;
    pthread_mutex_unlock(&et->mu);
    if (pthread_create(&et->thread, NULL, event_main, et) != 0) {
        pthread_mutex_lock(&et->mu);
        et->started = false;
        et->ring = NULL;
        pthread_mutex_unlock(&et->mu);
        free(ring);
        return RMQ_ENOMEM;
    }
    return 0;
}

void event_thread_post(event_thread *et, rmq_channel_event ev, rmq_channel_id ch, const char *peer)
{
    if (!atomic_load_explicit(&et->ready, memory_order_acquire))
        return; /* never started: no listener to tell */
    pthread_mutex_lock(&et->mu);
    if (!et->started || et->stopping) {
        pthread_mutex_unlock(&et->mu);
        return;
    }
    if (et->count == et->cap) {
        pthread_mutex_unlock(&et->mu);
        unsigned long n = atomic_fetch_add(&et->dropped, 1);
        if (n % 1000 == 0)
            HLOG_WARN(et->srv->host, "server %s: channel event queue full, event dropped",
                      et->srv->name);
        return;
    }
    chan_event *e = &et->ring[(et->head + et->count) % et->cap];
    e->ev = ev;
    e->ch = ch;
    snprintf(e->peer, sizeof(e->peer), "%s", peer ? peer : "");
    et->count++;
    pthread_cond_signal(&et->cv);
    pthread_mutex_unlock(&et->mu);
}

bool event_thread_running(event_thread *et)
{
    if (!atomic_load_explicit(&et->ready, memory_order_acquire))
        return false;
    pthread_mutex_lock(&et->mu);
    bool r = et->started;
    pthread_mutex_unlock(&et->mu);
    return r;
}

void event_thread_stop(event_thread *et)
{
    if (!atomic_load_explicit(&et->ready, memory_order_acquire))
        return;
    pthread_mutex_lock(&et->mu);
    if (!et->started || et->stopping) {
        pthread_mutex_unlock(&et->mu);
        return;
    }
    et->stopping = true; /* posts are refused from here on */
    pthread_cond_broadcast(&et->cv);
    pthread_mutex_unlock(&et->mu);
    pthread_join(et->thread, NULL); /* it delivers what was queued first */
    pthread_mutex_lock(&et->mu);
    chan_event *ring = et->ring;
    et->ring = NULL;
    et->count = 0;
    et->started = false;
    pthread_mutex_unlock(&et->mu);
    free(ring);
}

void event_thread_destroy(event_thread *et)
{
    if (!atomic_load_explicit(&et->ready, memory_order_acquire))
        return;
    event_thread_stop(et);
    atomic_store_explicit(&et->ready, false, memory_order_release);
    pthread_mutex_destroy(&et->mu);
    pthread_cond_destroy(&et->cv);
}
