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

int event_thread_start(event_thread *et, server *srv)
{
    memset(et, 0, sizeof(*et));
    et->srv = srv;
    et->cap = EVENT_QUEUE_CAP;
    et->ring = calloc(et->cap, sizeof(chan_event));
    if (!et->ring)
        return RMQ_ENOMEM;
    pthread_mutex_init(&et->mu, NULL);
    pthread_cond_init(&et->cv, NULL);
    if (pthread_create(&et->thread, NULL, event_main, et) != 0) {
        free(et->ring);
        et->ring = NULL;
        return RMQ_ENOMEM;
    }
    et->started = true;
    return 0;
}

void event_thread_post(event_thread *et, rmq_channel_event ev, rmq_channel_id ch, const char *peer)
{
    if (!et->started)
        return;
    pthread_mutex_lock(&et->mu);
    if (et->count == et->cap || et->stopping) {
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

void event_thread_stop(event_thread *et)
{
    if (!et->started)
        return;
    pthread_mutex_lock(&et->mu);
    et->stopping = true;
    pthread_cond_broadcast(&et->cv);
    pthread_mutex_unlock(&et->mu);
    pthread_join(et->thread, NULL);
    pthread_mutex_destroy(&et->mu);
    pthread_cond_destroy(&et->cv);
    free(et->ring);
    et->ring = NULL;
    et->started = false;
}
