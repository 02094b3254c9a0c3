/* slow_worker.c — one plugin thread for the rare steps of an inline request
 * that may block (topic or subscription-group auto-creation writes a file):
 * the IO thread defers the request and posts the rest here. */
#include <stdlib.h>

#include "store_plugin.h"

typedef struct slow_job {
    struct slow_job *next;
    void (*fn)(store_plugin *sp, void *arg);
    void *arg;
} slow_job;

struct slow_worker {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    slow_job *head, *tail;
    bool stop;
    bool started;
};

static void *run(void *arg)
{
    store_plugin *sp = arg;
    slow_worker *w = sp->worker;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        slow_job *j = w->head;
        if (j) {
            w->head = j->next;
            if (!w->head)
                w->tail = NULL;
        }
        pthread_mutex_unlock(&w->mu);
        if (!j)
            return NULL; /* stopping and drained */
        j->fn(sp, j->arg);
        free(j);
    }
}

int slow_worker_start(store_plugin *sp)
{
    slow_worker *w = calloc(1, sizeof *w);
    if (!w)
        return RMQ_ENOMEM;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    sp->worker = w;
    if (pthread_create(&w->thread, NULL, run, sp) != 0) {
        sp->worker = NULL;
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        free(w);
        return RMQ_ENOMEM;
    }
    w->started = true;
    return 0;
}

void slow_worker_stop(store_plugin *sp)
{
    slow_worker *w = sp->worker;
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (w->started)
        pthread_join(w->thread, NULL); /* runs the queued jobs first: each answers its request */
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
    sp->worker = NULL;
}

int slow_worker_post(store_plugin *sp, void (*fn)(store_plugin *sp, void *arg), void *arg)
{
    slow_worker *w = sp->worker;
    slow_job *j = malloc(sizeof *j);
    if (!j)
        return RMQ_ENOMEM;
    j->next = NULL;
    j->fn = fn;
    j->arg = arg;
    pthread_mutex_lock(&w->mu);
    if (w->stop) {
        pthread_mutex_unlock(&w->mu);
        free(j);
        return RMQ_ESHUTDOWN;
    }
    if (w->tail)
        w->tail->next = j;
    else
        w->head = j;
    w->tail = j;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return 0;
}
