/* proxy_reg_gate.h — one 5.x client's registration gate in cluster mode
 * (proxy_reg_gate.c): the HEART_BEATs that register the client at the
 * brokers are posted through it, and its removal shuts it, so no
 * HEART_BEAT decided before the removal is posted after the client's
 * UNREGISTER_CLIENT and the close of its connections (proxy_clients.c). */
#ifndef PROXY_REG_GATE_H
#define PROXY_REG_GATE_H

#include <stdbool.h>

typedef struct proxy_reg_gate proxy_reg_gate;

/* An open gate with one reference; NULL when out of memory. */
proxy_reg_gate *proxy_reg_gate_new(void);
/* Another reference (g may be NULL: returns NULL). */
proxy_reg_gate *proxy_reg_gate_ref(proxy_reg_gate *g);
/* Drops a reference; the last frees the gate. NULL: nothing. */
void proxy_reg_gate_unref(proxy_reg_gate *g);
/* Holds the gate for posting a registration: true, held, while the client
 * is not gone (then proxy_reg_gate_leave); false, not held, once it is. */
bool proxy_reg_gate_enter(proxy_reg_gate *g);
void proxy_reg_gate_leave(proxy_reg_gate *g);
/* The client is gone: waits for a registration being posted through the
 * gate (a few loop_posts, never I/O), then refuses every later one. */
void proxy_reg_gate_shut(proxy_reg_gate *g);
/* Whether the gate was shut (the client removed). Local mode's in-process
 * HEART_BEAT is a synchronous call that cannot be held under the gate: it
 * asks this after the call and, when the removal came during it, undoes
 * the registration (proxy_clients.c). NULL: false. */
bool proxy_reg_gate_is_shut(proxy_reg_gate *g);

#endif
