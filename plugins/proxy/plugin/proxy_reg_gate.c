/* proxy_reg_gate.c — a client's registration gate (proxy_reg_gate.h). A
 * HEART_BEAT is decided on one thread (a Heartbeat relayed on the grpc
 * executor, or the periodic pass) from a copy of the client taken under the
 * table lock, and its broker addresses may need a NameServer call, so it
 * cannot be posted under that lock; the gate is the client's own small
 * lock, held only around the oneway posts (each a loop_post onto the I/O
 * loop of the address), which the removal takes once to mark the client
 * gone. The host runs the posts of one address on one loop in the order
 * they were posted, so a HEART_BEAT posted under the gate reaches the
 * broker before the UNREGISTER_CLIENT the removal posts after shutting
 * it, and none is posted after. No I/O loop ever takes the gate. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "proxy_reg_gate.h"

struct proxy_reg_gate {
    pthread_mutex_t mu; /* held while registrations are posted; guards gone */
    bool gone;
    atomic_int refs;
};

proxy_reg_gate *proxy_reg_gate_new(void)
{
    proxy_reg_gate *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    if (pthread_mutex_init(&g->mu, NULL) != 0) {
        free(g);
        return NULL;
    }
    atomic_init(&g->refs, 1);
    return g;
}

proxy_reg_gate *proxy_reg_gate_ref(proxy_reg_gate *g)
{
    if (g)
        atomic_fetch_add(&g->refs, 1);
    return g;
}

void proxy_reg_gate_unref(proxy_reg_gate *g)
{
    if (!g || atomic_fetch_sub(&g->refs, 1) != 1)
        return;
    pthread_mutex_destroy(&g->mu);
    free(g);
}

bool proxy_reg_gate_enter(proxy_reg_gate *g)
{
    pthread_mutex_lock(&g->mu);
    if (!g->gone)
        return true;
    pthread_mutex_unlock(&g->mu);
    return false;
}

void proxy_reg_gate_leave(proxy_reg_gate *g)
{
    pthread_mutex_unlock(&g->mu);
}

void proxy_reg_gate_shut(proxy_reg_gate *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    g->gone = true;
    pthread_mutex_unlock(&g->mu);
}

bool proxy_reg_gate_is_shut(proxy_reg_gate *g)
{
    if (!g)
        return false;
    pthread_mutex_lock(&g->mu);
    bool gone = g->gone;
    pthread_mutex_unlock(&g->mu);
    return gone;
}
