/* testkit.h — librmqhost-testkit: the rmqhost host running inside a test
 * process, for unit tests of a plugin without a daemon, a conf.d or a port
 * to choose.
 *
 * The kit is the daemon's own host code (dispatch, host API, plugin loader,
 * executors, event threads, hot reload) built into a library; only what a
 * test must control is replaced: the clock of timers is virtual
 * (rmq_tk_advance), outgoing calls are captured for the test to answer, and
 * the log goes to a buffer the test reads. Requests travel over loopback
 * connections to an in-process server, so a request is dispatched exactly as
 * the daemon dispatches it (inline or on an executor, reject hook, RPC hooks,
 * SYSTEM_BUSY, unknown codes, oneway).
 *
 *   rmq_testkit *kit = rmq_tk_new();
 *   rmq_tk_add_plugin(kit, "echo", "/path/echo.so", (const char *[]){"greeting", "hi", NULL});
 *   rmq_tk_start(kit, err, sizeof(err));
 *   int ch = rmq_tk_open_channel(kit);
 *   rmq_cmd *answer = rmq_tk_call(kit, ch, rmq_tk_request(9001, RMQ_TK_JSON, false, NULL), 3000);
 *   ... rmq_tk_code(answer) ...
 *   rmq_tk_cmd_free(answer);
 *   rmq_tk_free(kit);
 *
 * Threads: every rmq_tk_* function is called from the test's thread (the
 * kit's control thread: init, fini, reload and timers not bound to an
 * executor run there, as on the daemon's control and housekeeping threads).
 * The virtual clock is per process: run one kit at a time. An async call's
 * response callback runs on the thread that answers it (the test's), not on
 * an I/O thread; the in-flight limits of outgoing calls are not modelled. */
#ifndef RMQHOST_TESTKIT_H
#define RMQHOST_TESTKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rmqhost/rmqhost.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmq_testkit rmq_testkit;
typedef struct rmq_tk_outgoing rmq_tk_outgoing; /* a captured outgoing call */

#define RMQ_TK_JSON 0
#define RMQ_TK_ROCKETMQ 1

/* ---- set-up (before rmq_tk_start) ---------------------------------------- */
/* A kit with its own temporary state directory (removed by rmq_tk_free).
 * NULL when out of memory or the directory cannot be made. */
rmq_testkit *rmq_tk_new(void);
/* Load the plugin .so at `so_path` as instance `name`. `settings` is a
 * NULL-terminated list "key", "value", ... (text as written in a conf file;
 * may be NULL); they are validated against the plugin's declaration exactly
 * as rmqhostd does, at rmq_tk_start. Plugins start in the order added. */
int rmq_tk_add_plugin(rmq_testkit *kit, const char *name, const char *so_path,
                      const char *const *settings);
/* Same, for a descriptor linked into the test program. */
int rmq_tk_add_plugin_descriptor(rmq_testkit *kit, const char *name,
                                 const rmq_plugin_descriptor *desc, const char *const *settings);
/* Test doubles: a service another plugin would export (table and table_ud
 * must outlive the kit) and a subscriber to an event the plugin publishes.
 * They are live before the plugins' init runs. */
int rmq_tk_add_service(rmq_testkit *kit, const char *name, uint32_t version, const void *table,
                       void *table_ud);
int rmq_tk_subscribe_event(rmq_testkit *kit, const char *event, rmq_event_fn fn, void *ud);
/* Threads for inline processors (default 1). */
int rmq_tk_set_io_threads(rmq_testkit *kit, int n);
/* Start: load, validate, init, go live. 0, or -1 with the daemon's own
 * message in err (e.g. "plugin 'echo' setting 'x': 'abc' is not an integer"). */
int rmq_tk_start(rmq_testkit *kit, char *err, size_t errlen);
/* Stop everything (fini runs), remove the state directory, free. */
void rmq_tk_free(rmq_testkit *kit);

/* The host API table the plugins get (build and read commands with it). */
const rmq_host_api *rmq_tk_api(rmq_testkit *kit);
const char *rmq_tk_state_dir(rmq_testkit *kit);

/* ---- commands --------------------------------------------------------------- */
/* A request: code, serialization, oneway flag, ext fields from a
 * NULL-terminated "key", "value", ... list (may be NULL). Version 409,
 * language JAVA. NULL when out of memory. */
rmq_cmd *rmq_tk_request(int32_t code, int serialize_type, bool oneway, const char *const *ext);
/* An answer to a captured outgoing call (code, remark may be NULL). */
rmq_cmd *rmq_tk_response(int32_t code, const char *remark);
int rmq_tk_set_ext(rmq_cmd *cmd, const char *key, const char *value);
int rmq_tk_set_body(rmq_cmd *cmd, const void *data, size_t len); /* copies */
/* One frame as on the wire (with its 4-byte length prefix), e.g. a file of
 * tests/vectors; NULL with the reason in err. */
rmq_cmd *rmq_tk_decode(const void *frame, size_t len, char *err, size_t errlen);
int32_t rmq_tk_code(const rmq_cmd *cmd);
int32_t rmq_tk_flag(const rmq_cmd *cmd);
int32_t rmq_tk_opaque(const rmq_cmd *cmd);
const char *rmq_tk_remark(const rmq_cmd *cmd);               /* NULL = none */
const char *rmq_tk_ext(const rmq_cmd *cmd, const char *key); /* NULL = absent */
const void *rmq_tk_body(const rmq_cmd *cmd, size_t *len);    /* NULL = none */
void rmq_tk_cmd_free(rmq_cmd *cmd);

/* ---- channels and requests ------------------------------------------------------ */
/* Open a client connection (a channel; CONNECT is raised as in the daemon).
 * Returns a handle > 0 for the functions below, or a negative rmq error. */
int rmq_tk_open_channel(rmq_testkit *kit);
/* The rmq_channel_id the plugin sees for handle ch (0 if unknown). */
rmq_channel_id rmq_tk_channel_id(rmq_testkit *kit, int ch);
/* Close the client side: the plugin sees CLOSE. */
int rmq_tk_close_channel(rmq_testkit *kit, int ch);
/* True when the host closed the channel (e.g. a plugin called
 * channel_close) within timeout_ms (real time). */
bool rmq_tk_channel_closed_by_host(rmq_testkit *kit, int ch, int timeout_ms);
/* Raise IDLE or EXCEPTION on the channel's listeners (the connection stays
 * open, as an event the daemon would raise before closing it). */
int rmq_tk_raise_event(rmq_testkit *kit, int ch, rmq_channel_event ev);
/* Deliver req on ch (ownership passes; a fresh opaque is set) and wait up to
 * timeout_ms (real time) for its answer. NULL for a oneway request, or when
 * no answer came in time (a deferred request: advance the clock or answer
 * the call it made, then rmq_tk_wait_answer). Caller frees the answer. */
rmq_cmd *rmq_tk_call(rmq_testkit *kit, int ch, rmq_cmd *req, int timeout_ms);
/* Deliver without waiting; *opaque (may be NULL) receives the opaque to
 * wait for. */
int rmq_tk_send(rmq_testkit *kit, int ch, rmq_cmd *req, int32_t *opaque);
/* Deliver a raw frame as is (its own opaque; e.g. a recorded vector). */
int rmq_tk_send_frame(rmq_testkit *kit, int ch, const void *frame, size_t len);
/* The answer carrying `opaque`, waiting up to timeout_ms; NULL if none. */
rmq_cmd *rmq_tk_wait_answer(rmq_testkit *kit, int ch, int32_t opaque, int timeout_ms);

/* ---- virtual clock ---------------------------------------------------------------- */
/* What api->now_monotonic_ms returns (starts at 1000000 when the kit starts;
 * api->now_wall_ms moves with it). Timers never fire on their own. */
uint64_t rmq_tk_now_ms(rmq_testkit *kit);
/* Move the clock ms forward, firing every timer that falls due, in order,
 * each at its exact due time (the clock reads the due time during the tick);
 * ticks bound to an executor are run there and waited for. Captured
 * outgoing calls whose timeout passes fail with RMQ_ETIMEDOUT. */
int rmq_tk_advance(rmq_testkit *kit, uint64_t ms);

/* ---- captured outgoing calls -------------------------------------------------------- */
typedef enum rmq_tk_out_kind {
    RMQ_TK_OUT_ONEWAY,
    RMQ_TK_OUT_ASYNC,
    RMQ_TK_OUT_SYNC
} rmq_tk_out_kind;
/* The oldest captured call not yet returned by this function, waiting up to
 * timeout_ms (real time) for one; NULL if none. The kit owns it (valid until
 * rmq_tk_free). */
rmq_tk_outgoing *rmq_tk_next_outgoing(rmq_testkit *kit, int timeout_ms);
/* Calls captured so far (all kinds, answered or not). */
size_t rmq_tk_outgoing_count(rmq_testkit *kit);
rmq_tk_out_kind rmq_tk_outgoing_kind(const rmq_tk_outgoing *c);
const rmq_cmd *rmq_tk_outgoing_request(const rmq_tk_outgoing *c);
const char *rmq_tk_outgoing_addr(const rmq_tk_outgoing *c);       /* NULL: to a channel */
rmq_channel_id rmq_tk_outgoing_channel(const rmq_tk_outgoing *c); /* 0: to an address */
uint32_t rmq_tk_outgoing_timeout_ms(const rmq_tk_outgoing *c);
/* Complete a pending call: answer (ownership of resp passes; the response
 * callback or the blocked invoke_sync gets it), fail with a negative rmq
 * code, or time it out (RMQ_ETIMEDOUT). Oneway calls need nothing. */
int rmq_tk_outgoing_answer(rmq_testkit *kit, rmq_tk_outgoing *c, rmq_cmd *resp);
int rmq_tk_outgoing_fail(rmq_testkit *kit, rmq_tk_outgoing *c, int err);
/* Optional: answer calls as they are made (return a response, or NULL to
 * leave the call pending). Needed when a timer run by rmq_tk_advance makes
 * a blocking invoke_sync. Runs on the calling plugin's thread. */
typedef rmq_cmd *(*rmq_tk_responder_fn)(const rmq_tk_outgoing *c, void *ud);
void rmq_tk_set_responder(rmq_testkit *kit, rmq_tk_responder_fn fn, void *ud);

/* ---- log, services, events, state ----------------------------------------------------- */
/* Everything the host and the plugins logged (level debug), in order. */
bool rmq_tk_log_contains(rmq_testkit *kit, const char *needle);
char *rmq_tk_log_text(rmq_testkit *kit); /* malloc'd, caller frees */
/* A service a plugin exports, as another plugin would acquire it. */
int rmq_tk_service_acquire(rmq_testkit *kit, const char *name, uint32_t min_version,
                           const void **table, void **table_ud, rmq_service_ref *ref);
void rmq_tk_service_release(rmq_testkit *kit, rmq_service_ref ref);
/* Publish an event to the plugins' subscribers (on this thread). */
int rmq_tk_publish_event(rmq_testkit *kit, const char *event, const void *data, size_t len);
/* Hot reload of plugin `name` as `rmqhostctl reload` does it: a new
 * generation is loaded and inited, requests are held, the old one exports
 * its state and the new one imports it. 0, or -1 with the reason in msg. */
int rmq_tk_reload(rmq_testkit *kit, const char *name, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif
