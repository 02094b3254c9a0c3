/* executor.c — bounded thread pools that plugins bind blocking processors
 * and timers to. A full queue is refused at once (the caller answers
 * [OVERLOAD]); nothing waits for room. Each queued task keeps its submit
 * time so the queue's head wait can be reported (ABI 1.6). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <urcu.h>

#include "host.h"

/* The clock plugins read (the test kit's virtual one under the kit), so a
 * head wait compares with the plugin's own now_monotonic_ms. Read outside
 * the lock: a submit pays one clock read, not a longer critical section. */
static uint64_t executor_now_ms(executor *ex)
{
    return ex->host && ex->host->api.now_monotonic_ms ? ex->host->api.now_monotonic_ms() : 0;
}

static void *worker_main(void *arg)
{
    executor *ex = arg;
    rcu_register_thread();
    for (;;) {
        pthread_mutex_lock(&ex->mu);
        while (ex->count == 0 && !ex->stopping)
            pthread_cond_wait(&ex->cv, &ex->mu);
        if (ex->count == 0 && ex->stopping) {
            pthread_mutex_unlock(&ex->mu);
            break;
        }
        exec_task t = ex->ring[ex->head];
        ex->head = (ex->head + 1) % ex->slots;
        ex->count--;
        pthread_mutex_unlock(&ex->mu);
        t.fn(t.arg);
        atomic_fetch_add(&ex->executed, 1);
    }
    rcu_unregister_thread();
    return NULL;
}

/* Slots allocated at start; the ring doubles (up to the queue's capacity)
 * when a submit finds them all taken. */
#define FIRST_SLOTS 256

/* Locked: twice the slots (at most cap), the queued tasks moved to the
 * front in order. false when out of memory (the submit is refused). */
static bool grow_locked(executor *ex)
{
    size_t n = ex->slots * 2 < ex->cap ? ex->slots * 2 : ex->cap;
    exec_task *r = malloc(n * sizeof *r);
    if (!r)
        return false;
    for (size_t i = 0; i < ex->count; i++)
        r[i] = ex->ring[(ex->head + i) % ex->slots];
    free(ex->ring);
    ex->ring = r;
    ex->slots = n;
    ex->head = 0;
    return true;
}

int executor_start(executor *ex, rmq_host *h, const char *name, int threads, int queue_cap)
{
    memset(ex, 0, sizeof(*ex));
    ex->host = h;
    snprintf(ex->name, sizeof(ex->name), "%s", name);
    if (threads < 1)
        threads = 1;
    if (queue_cap < 1)
        queue_cap = 1;
    ex->cap = (size_t)queue_cap;
    ex->slots = ex->cap < FIRST_SLOTS ? ex->cap : FIRST_SLOTS;
    ex->ring = calloc(ex->slots, sizeof(exec_task));
    ex->threads = calloc((size_t)threads, sizeof(pthread_t));
    if (!ex->ring || !ex->threads) {
        free(ex->ring);
        free(ex->threads);
        return RMQ_ENOMEM;
    }
    pthread_mutex_init(&ex->mu, NULL);
    pthread_cond_init(&ex->cv, NULL);
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&ex->threads[i], NULL, worker_main, ex) != 0) {
            ex->nthreads = i;
            executor_stop(ex);
            return RMQ_ENOMEM;
        }
        ex->nthreads = i + 1;
    }
    return 0;
}

int executor_submit(executor *ex, task_fn fn, void *arg)
{
    uint64_t now = executor_now_ms(ex);
    pthread_mutex_lock(&ex->mu);
    if (ex->stopping) {
        pthread_mutex_unlock(&ex->mu);
        return RMQ_ESHUTDOWN;
    }
    if (ex->count == ex->cap || (ex->count == ex->slots && !grow_locked(ex))) {
        pthread_mutex_unlock(&ex->mu);
        atomic_fetch_add(&ex->rejected, 1);
        return RMQ_EBUSY;
    }
    ex->ring[(ex->head + ex->count) % ex->slots] = (exec_task){fn, arg, now};
    ex->count++;
    pthread_cond_signal(&ex->cv);
    pthread_mutex_unlock(&ex->mu);
    return 0;
}

size_t executor_depth(executor *ex)
{
    pthread_mutex_lock(&ex->mu);
    size_t n = ex->count;
    pthread_mutex_unlock(&ex->mu);
    return n;
}

void executor_queue_info(executor *ex, size_t *length, size_t *capacity, uint64_t *head_wait_ms)
{
    uint64_t now = executor_now_ms(ex);
    pthread_mutex_lock(&ex->mu);
    size_t n = ex->count;
    uint64_t queued = n ? ex->ring[ex->head].queued_ms : now;
    pthread_mutex_unlock(&ex->mu);
    if (length)
        *length = n;
    if (capacity)
        *capacity = ex->cap;
    /* a submit after our clock read may carry a later time: never negative */
    if (head_wait_ms)
        *head_wait_ms = now > queued ? now - queued : 0;
}

void executor_stop(executor *ex)
{
    if (!ex->ring)
        return;
    pthread_mutex_lock(&ex->mu);
    ex->stopping = true;
    pthread_cond_broadcast(&ex->cv);
    pthread_mutex_unlock(&ex->mu);
    for (int i = 0; i < ex->nthreads; i++)
        pthread_join(ex->threads[i], NULL);
    pthread_mutex_destroy(&ex->mu);
    pthread_cond_destroy(&ex->cv);
    free(ex->ring);
    free(ex->threads);
    ex->ring = NULL;
    ex->threads = NULL;
}
