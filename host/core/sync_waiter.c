/* sync_waiter.c — the waiter a blocked caller sleeps on until its answer
 * comes: made and released the same way for outgoing calls (outgoing.c)
 * and for calls to a role of this process (local_invoke.c). */
#include <stdlib.h>

#include "host.h"

sync_waiter *sync_waiter_new(int refs)
{
    sync_waiter *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    pthread_mutex_init(&w->mu, NULL);
    /* monotonic: a wall clock step must not end or stretch a wait */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&w->refs, refs);
    return w;
}

void sync_waiter_unref(sync_waiter *w)
{
    if (atomic_fetch_sub(&w->refs, 1) != 1)
        return;
    if (w->resp)
        rmq_cmd_free(w->resp);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}
