/* echo_plugin.c — "echo", the SDK's example plugin, written only against the
 * installed <rmqhost/rmqhost.h>. Owns its settings, counters and one executor;
 * shows every registration a real plugin needs. Must not include host headers,
 * link host symbols, or block on an IO thread.
 *
 * Request codes (pick codes no RocketMQ role uses; the host refuses a code
 * registered twice on one server):
 *   9001  inline: SUCCESS, ext "echo" = request ext "msg", body echoed,
 *         ext "greeting" = the `greeting` setting.
 *   9002  on executor "slow": the same answer after sleeping `delay_ms`.
 * Admin: `rmqhostctl echo-stats` (add --json for scripts).
 */
/* nanosleep() is POSIX, not C11: ask for it before any system header. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <rmqhost/rmqhost.h>

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ECHO_CODE_INLINE 9001
#define ECHO_CODE_DELAYED 9002
#define ECHO_EXECUTOR "slow"
/* Bumped whenever the export_state blob layout changes, so a reload from an
 * older plugin build can be refused instead of misread. */
#define ECHO_STATE_VERSION 1
#define ECHO_STATE_FIELDS 4

/* Declared settings: the host validates conf values against these before
 * init runs (types, INT ranges), so init never parses text itself. */
static const rmq_setting_decl echo_settings[] = {
    {.name = "greeting",
     .type = RMQ_SETTING_STRING,
     .default_value = "hello",
     .description = "sent back in ext field `greeting` of every echo"},
    {.name = "delay_ms",
     .type = RMQ_SETTING_INT,
     .default_value = "100",
     .description = "how long code 9002 waits before answering",
     .min = 0,
     .max = 10000},
    {.name = "stats_interval_ms",
     .type = RMQ_SETTING_INT,
     .default_value = "60000",
     .description = "period of the debug log line with the counters",
     .min = 100,
     .max = 3600000},
    {.name = NULL},
};

/* Everything one plugin instance owns. It is reached from IO, EXEC, EVENT,
 * TIMER and INIT threads at once, so the counters are atomics; the rest is
 * written during init only and read-only afterwards. */
typedef struct echo_plugin {
    const rmq_host_api *api;
    rmq_plugin_ctx *ctx;
    const char *greeting; /* owned by the host, valid until fini */
    int64_t delay_ms;
    rmq_timer_id stats_timer;
    atomic_uint_fast64_t echoed;   /* answers sent by 9001 and 9002 */
    atomic_uint_fast64_t delayed;  /* of which by 9002 */
    atomic_uint_fast64_t connects; /* CONNECT events seen */
    atomic_uint_fast64_t open;     /* CONNECT minus CLOSE */
    atomic_uint_fast64_t ticks;    /* stats timer runs */
} echo_plugin;

/* fini/export_state/import_state receive only the ctx: rmq_ctx_userdata()
 * reaches the instance from it, so the plugin needs no file-scope variable
 * (two instances of one .so, or two generations during a reload, never
 * share state by accident). */
static echo_plugin *echo_from_ctx(rmq_plugin_ctx *ctx)
{
    return rmq_ctx_userdata(ctx);
}

/* Fill `resp` with the echo of `req`. Both processors share it: the only
 * difference between them is the thread they run on. */
static int echo_fill_response(echo_plugin *p, const rmq_cmd *req, rmq_cmd *resp)
{
    const rmq_host_api *api = p->api;
    int rc;
    const char *msg = api->cmd_ext_get(req, "msg");
    if (msg != NULL && (rc = api->cmd_ext_set(resp, "echo", msg)) < 0) {
        return rc;
    }
    if ((rc = api->cmd_ext_set(resp, "greeting", p->greeting)) < 0) {
        return rc;
    }
    size_t len = 0;
    const void *body = api->cmd_body(req, &len);
    /* free_fn NULL = the host copies: the request's body dies when the
     * processor returns, so it cannot be lent to the response. */
    if (body != NULL && len > 0 && (rc = api->cmd_set_body(resp, body, len, NULL, NULL)) < 0) {
        return rc;
    }
    return RMQ_OK;
}

static int echo_answer(echo_plugin *p, rmq_request *req, const rmq_cmd *cmd, bool delayed)
{
    const rmq_host_api *api = p->api;
    /* A oneway request must get no response; doing the work and returning
     * RMQ_OK without reply() is how a processor says "nothing to send". */
    if (api->cmd_flag(cmd) & RMQ_CMD_FLAG_ONEWAY) {
        return RMQ_OK;
    }
    rmq_cmd *resp = api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (resp == NULL) {
        return RMQ_ENOMEM; /* the host answers SYSTEM_ERROR for us */
    }
    int rc = echo_fill_response(p, cmd, resp);
    if (rc < 0) {
        api->cmd_free(resp); /* still ours: only reply() takes ownership */
        api->request_fail(req, "echo: cannot build the response");
        return rc;
    }
    atomic_fetch_add(&p->echoed, 1);
    if (delayed) {
        atomic_fetch_add(&p->delayed, 1);
    }
    return api->reply(req, resp); /* resp belongs to the host from here on */
}

/* 9001 runs inline on an IO loop: cheap and non-blocking, so no executor
 * hop (and its queueing) is worth paying for. */
static int echo_inline_processor(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return echo_answer(ud, req, cmd, false);
}

/* 9002 blocks, so it is bound to the "slow" executor: blocking an IO loop
 * would stall every connection sharing it. A full executor queue is answered
 * SYSTEM_BUSY [OVERLOAD] by the host before this function is ever called. */
static int echo_delayed_processor(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    echo_plugin *p = ud;
    struct timespec left = {.tv_sec = (time_t)(p->delay_ms / 1000),
                            .tv_nsec = (long)(p->delay_ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
    return echo_answer(p, req, cmd, true);
}

/* Channel events arrive on the EVENT thread, in order per channel, for every
 * connection of the server the plugin is bound to — also connections that
 * never send an echo request. */
static void echo_channel_listener(rmq_channel_event ev, rmq_channel_id ch, const char *peer,
                                  void *ud)
{
    echo_plugin *p = ud;
    switch (ev) {
    case RMQ_CHANNEL_CONNECT:
        atomic_fetch_add(&p->connects, 1);
        atomic_fetch_add(&p->open, 1);
        break;
    case RMQ_CHANNEL_CLOSE: atomic_fetch_sub(&p->open, 1); break;
    case RMQ_CHANNEL_IDLE:
    case RMQ_CHANNEL_EXCEPTION:
        /* The host closes the channel after these; CLOSE follows. */
        p->api->log(p->ctx, RMQ_LOG_DEBUG, "channel %" PRIu64 " (%s): %s", ch, peer,
                    ev == RMQ_CHANNEL_IDLE ? "idle" : "exception");
        break;
    }
}

/* Bound to no executor, so it runs on the host's TIMER thread, shared by all
 * plugins: do little and never block here. */
static void echo_stats_timer(void *ud)
{
    echo_plugin *p = ud;
    atomic_fetch_add(&p->ticks, 1);
    p->api->log(p->ctx, RMQ_LOG_DEBUG, "echoed %" PRIu64 " (delayed %" PRIu64 "), open %" PRIu64,
                (uint64_t)atomic_load(&p->echoed), (uint64_t)atomic_load(&p->delayed),
                (uint64_t)atomic_load(&p->open));
}

/* `rmqhostctl echo-stats [--json]`. Runs on INIT; output goes through
 * admin_write so the CLI, not the daemon's stdout, shows it. */
static int echo_stats_command(rmq_admin_call *call, int argc, const char *const *argv, void *ud)
{
    (void)argv;
    echo_plugin *p = ud;
    const rmq_host_api *api = p->api;
    if (argc > 1) {
        api->admin_write(call, "usage: echo-stats\n");
        return 2;
    }
    uint64_t echoed = atomic_load(&p->echoed), delayed = atomic_load(&p->delayed),
             connects = atomic_load(&p->connects), open = atomic_load(&p->open),
             ticks = atomic_load(&p->ticks);
    if (api->admin_wants_json(call)) {
        api->admin_write(call,
                         "{\"echoed\":%" PRIu64 ",\"delayed\":%" PRIu64 ",\"connects\":%" PRIu64
                         ",\"open\":%" PRIu64 ",\"timer_ticks\":%" PRIu64 "}\n",
                         echoed, delayed, connects, open, ticks);
    } else {
        api->admin_write(call,
                         "echoed       %" PRIu64 "\ndelayed      %" PRIu64 "\nconnects     %" PRIu64
                         "\nopen         %" PRIu64 "\ntimer_ticks  %" PRIu64 "\n",
                         echoed, delayed, connects, open, ticks);
    }
    return 0;
}

static int echo_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    /* Entries appended after ABI 1.0 would need an api->abi_minor check
     * here; everything used below is in 1.0. */
    echo_plugin *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return RMQ_ENOMEM;
    }
    p->api = api;
    p->ctx = ctx;
    p->greeting = api->setting_string(ctx, "greeting");
    p->delay_ms = api->setting_int(ctx, "delay_ms");
    atomic_init(&p->echoed, 0);
    atomic_init(&p->delayed, 0);
    atomic_init(&p->connects, 0);
    atomic_init(&p->open, 0);
    atomic_init(&p->ticks, 0);
    api->set_userdata(ctx, p);

    /* Registrations take effect only when this generation goes live, so a
     * failure half-way leaves nothing behind: return the error and the host
     * drops the generation (without calling fini, hence the free below). */
    int rc;
    const char *what;
    if ((rc = api->declare_executor(ctx, ECHO_EXECUTOR, 2, 64)) < 0) {
        what = "declare_executor";
    } else if ((rc = api->register_processor(ctx, ECHO_CODE_INLINE, echo_inline_processor, p,
                                             NULL)) < 0) {
        what = "register_processor 9001";
    } else if ((rc = api->register_processor(ctx, ECHO_CODE_DELAYED, echo_delayed_processor, p,
                                             ECHO_EXECUTOR)) < 0) {
        what = "register_processor 9002";
    } else if ((rc = api->add_channel_listener(ctx, echo_channel_listener, p)) < 0) {
        what = "add_channel_listener";
    } else if ((rc = api->add_timer(ctx, (uint64_t)api->setting_int(ctx, "stats_interval_ms"),
                                    (uint64_t)api->setting_int(ctx, "stats_interval_ms"),
                                    echo_stats_timer, p, NULL, &p->stats_timer)) < 0) {
        what = "add_timer";
    } else if ((rc = api->register_admin_command(ctx, "echo-stats", "echo-stats",
                                                 echo_stats_command, p)) < 0) {
        what = "register_admin_command";
    } else {
        api->log(ctx, RMQ_LOG_INFO, "echo ready: codes %d (inline) and %d (%s, %" PRId64 " ms)",
                 ECHO_CODE_INLINE, ECHO_CODE_DELAYED, ECHO_EXECUTOR, p->delay_ms);
        return RMQ_OK;
    }
    api->log(ctx, RMQ_LOG_ERROR, "%s failed: %s", what, rmq_strerror(rc));
    api->set_userdata(ctx, NULL);
    free(p);
    return rc;
}

/* The host has already stopped the timer, the listener and the processors
 * of this generation: nothing of ours runs any more, so freeing is safe. */
static void echo_fini(rmq_plugin_ctx *ctx)
{
    echo_plugin *p = echo_from_ctx(ctx);
    if (p != NULL) {
        rmq_ctx_api(ctx)->set_userdata(ctx, NULL);
        free(p);
    }
}

/* Hot reload carries the counters over. The blob has a fixed big-endian
 * layout (not a struct dump) so a rebuilt plugin with another compiler or
 * padding still reads it. */
static int echo_export_state(rmq_plugin_ctx *ctx, void **blob, size_t *len)
{
    echo_plugin *p = echo_from_ctx(ctx);
    if (p == NULL) {
        return RMQ_EINVAL;
    }
    uint64_t v[ECHO_STATE_FIELDS] = {atomic_load(&p->echoed), atomic_load(&p->delayed),
                                     atomic_load(&p->connects), atomic_load(&p->open)};
    unsigned char *out = malloc(sizeof(v)); /* freed by the host */
    if (out == NULL) {
        return RMQ_ENOMEM;
    }
    for (size_t i = 0; i < ECHO_STATE_FIELDS; i++) {
        for (size_t b = 0; b < 8; b++) {
            out[i * 8 + b] = (unsigned char)(v[i] >> (56 - 8 * b));
        }
    }
    *blob = out;
    *len = sizeof(v);
    return RMQ_OK;
}

static int echo_import_state(rmq_plugin_ctx *ctx, uint32_t version, const void *blob, size_t len)
{
    echo_plugin *p = echo_from_ctx(ctx);
    if (p == NULL || version != ECHO_STATE_VERSION || len != ECHO_STATE_FIELDS * 8) {
        return RMQ_EINVAL; /* the host keeps the old generation running */
    }
    const unsigned char *in = blob;
    uint64_t v[ECHO_STATE_FIELDS];
    for (size_t i = 0; i < ECHO_STATE_FIELDS; i++) {
        v[i] = 0;
        for (size_t b = 0; b < 8; b++) {
            v[i] = (v[i] << 8) | in[i * 8 + b];
        }
    }
    atomic_store(&p->echoed, v[0]);
    atomic_store(&p->delayed, v[1]);
    atomic_store(&p->connects, v[2]);
    atomic_store(&p->open, v[3]);
    return RMQ_OK;
}

/* The one exported symbol. RMQ_PLUGIN puts the ABI version first and zeroes
 * every member not named, so this file keeps compiling as the descriptor
 * grows. Build with -fvisibility=hidden: nothing else needs exporting. */
RMQ_PLUGIN(.state_version = ECHO_STATE_VERSION, .name = "echo", .version = "1.0.0",
           .description = "SDK example: echoes ext field msg and the body (codes 9001, 9002)",
           .settings = echo_settings, .init = echo_init, .fini = echo_fini,
           .export_state = echo_export_state, .import_state = echo_import_state);
