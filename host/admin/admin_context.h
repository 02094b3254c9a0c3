/* admin_context.h — the admin channel's state (one per daemon, owned by the
 * control thread) and the entry points its parts share: command execution,
 * configuration reload, figures for `stats` and the metrics endpoint. */
#ifndef RMQHOST_ADMIN_CONTEXT_H
#define RMQHOST_ADMIN_CONTEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <uv.h>

#include "host.h"
#include "plugin_reload.h"

typedef struct metrics_http metrics_http;

typedef struct admin_ctx {
    rmq_host *host;
    uv_loop_t *loop;
    uv_pipe_t listener;
    bool listening;
    char path[CONF_PATH_MAX];
    uv_timer_t sweep; /* unloads retired generations once released */
    bool sweep_init;
    uv_timer_t ready; /* first loop turn after start-up: readiness */
    bool ready_init;
    plugin_retired retired;
    metrics_http *metrics;
} admin_ctx;

/* Entry points rmqhostd_main.c declares for itself. */
int admin_server_start(rmq_host *h, uv_loop_t *loop, char *err, size_t errlen);
void admin_server_stop(rmq_host *h);
int host_reload_config(rmq_host *h, char *msg, size_t msglen);

/* Run one request {"cmd": "...", "args": [...], "json": bool}. Returns the
 * response {"exit": 0|1|2, "text": "...", "data": {...}} (caller decrefs). */
json_t *admin_execute(admin_ctx *a, const json_t *req);

/* Re-read conf.d and apply the difference (also SIGHUP). 0 or -1 + msg. */
int admin_reload_config(admin_ctx *a, char *msg, size_t msglen);
/* enable/disable NAME against the files in conf.d (enable) or the running
 * plugin (disable). 0 or -1 + msg. */
int admin_enable(admin_ctx *a, const char *name, char *msg, size_t msglen);
int admin_disable(admin_ctx *a, const char *name, char *msg, size_t msglen);

/* Figures shared by `stats` and the Prometheus endpoint. */
json_t *admin_stats_json(rmq_host *h);
/* Prometheus text exposition of the same figures; malloc'd. */
char *admin_stats_prometheus(rmq_host *h, size_t *len);

/* Once the retired list is non-empty, sweep it until it empties. */
void admin_schedule_sweep(admin_ctx *a);

#endif
