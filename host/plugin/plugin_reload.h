/* plugin_reload.h — replacing, starting and stopping plugin generations in a
 * running daemon (control thread only), and the hold queue dispatch uses
 * while a generation is being swapped. */
#ifndef RMQHOST_PLUGIN_RELOAD_H
#define RMQHOST_PLUGIN_RELOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "host.h"

/* Old generations still referenced after a swap: unloaded by
 * plugin_retired_sweep once nothing refers to them. */
typedef struct plugin_retired {
    plugin_inst **items;
    size_t n;
} plugin_retired;

/* Queue req on p while p is held (any thread). False when the hold has
 * ended: the caller binds the request again. */
bool plugin_hold_request(plugin_inst *p, rmq_request *req);

/* The live generation named `name`, or NULL. */
plugin_inst *plugin_find_live(rmq_host *h, const char *name);

/* Hot reload of the live plugin `name`, with `pc` (NULL = its current
 * configuration). 0: swapped, msg says what happened (warnings included);
 * -1: refused, the old generation keeps serving, msg says why. */
int plugin_reload(rmq_host *h, plugin_retired *r, const char *name, const plugin_conf *pc,
                  char *msg, size_t msglen);

/* Load, init and make live a plugin that is not running (binds its server
 * if nobody listens there yet). 0 or -1 with msg. */
int plugin_start(rmq_host *h, const plugin_conf *pc, char *msg, size_t msglen);

/* Take the live plugin `name` out of service and unload it (or retire it
 * while something still refers to it). 0 or -1 with msg. */
int plugin_stop(rmq_host *h, plugin_retired *r, const char *name, char *msg, size_t msglen);

/* Unload retired generations that nothing refers to any more. Returns how
 * many remain; `why` (may be NULL) describes the first one still waiting. */
size_t plugin_retired_sweep(rmq_host *h, plugin_retired *r, char *why, size_t whylen);
/* Shutdown: wait for and unload every retired generation. */
void plugin_retired_drain(rmq_host *h, plugin_retired *r);

#endif
