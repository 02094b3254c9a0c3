/* rmqhost.h — the public plugin ABI of rmqhost.
 *
 * A plugin is a shared object that exports one symbol, `rmq_plugin`, of type
 * rmq_plugin_descriptor (use the RMQ_PLUGIN macro). The host checks the ABI
 * version at the very start of the descriptor before reading anything else,
 * then calls init() with its host API table. Everything a plugin does with the
 * host goes through that table: a plugin never links against host symbols.
 *
 * Conventions (as libuv): functions return 0 or a negative rmq error code
 * (rmq_strerror() turns it into text). Each function below says who owns what
 * it returns and on which threads it may be called.
 *
 * Threads a plugin's code runs on:
 *   - INIT    the host's control thread (init, fini, export/import_state,
 *             admin commands). Nothing else of the plugin runs concurrently
 *             with init/fini/export/import for the same plugin instance.
 *   - IO      one of the io_threads event loops: inline processors, async
 *             response callbacks. Must never block.
 *   - EXEC    a thread of one of the plugin's executors (bounded pools):
 *             processors and timers bound to that executor. May block.
 *   - EVENT   the server's channel-event thread: channel listeners, in order
 *             per channel. May block briefly (it delays other events only).
 *   - TIMER   the host's housekeeping thread: timers bound to no executor.
 *             Must not block for long.
 * A plugin's tables are therefore read concurrently from several threads:
 * publish read-mostly tables with RCU (liburcu's rcu_assign_pointer /
 * rcu_dereference between rcu_read_lock/unlock; every host thread that runs
 * plugin code is registered with liburcu's default flavour, so plugins may
 * call rcu_read_lock() on any of the threads above) and serialise writers with
 * a mutex of their own.
 */
#ifndef RMQHOST_RMQHOST_H
#define RMQHOST_RMQHOST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version. A plugin built for another MAJOR is refused. MINOR grows when
 * entries are appended to rmq_host_api; a plugin may test api->abi_minor (or
 * api->size) before calling an entry newer than the one it was built for. */
#define RMQ_ABI_MAJOR 1
#define RMQ_ABI_MINOR 15

#if defined(__GNUC__)
#define RMQ_EXPORT __attribute__((visibility("default")))
#define RMQ_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define RMQ_EXPORT
#define RMQ_PRINTF(a, b)
#endif

/* ---- error codes -------------------------------------------------------- */
#define RMQ_OK 0
#define RMQ_EINVAL (-22)     /* bad argument */
#define RMQ_ENOMEM (-12)     /* out of memory */
#define RMQ_ENOENT (-2)      /* no such thing (channel, service, setting...) */
#define RMQ_EEXIST (-17)     /* already registered */
#define RMQ_EBUSY (-16)      /* bounded queue or semaphore full */
#define RMQ_ETIMEDOUT (-110) /* outgoing call timed out */
#define RMQ_ENOTCONN (-107)  /* peer gone / connection closed */
#define RMQ_ECONNREFUSED (-111)
#define RMQ_EWOULDBLOCK (-11) /* blocking call made on a thread that must not block */
#define RMQ_ESHUTDOWN (-108)  /* host or plugin generation is stopping */
#define RMQ_ERANGE (-34)      /* value outside a declared range */
#define RMQ_EIO (-5)          /* file or socket I/O failed */
#define RMQ_DEFERRED 1        /* processor return: the answer comes later (rmq_deferred) */

static inline const char *rmq_strerror(int err)
{
    switch (err) {
    case RMQ_OK: return "success";
    case RMQ_EINVAL: return "invalid argument";
    case RMQ_ENOMEM: return "out of memory";
    case RMQ_ENOENT: return "not found";
    case RMQ_EEXIST: return "already exists";
    case RMQ_EBUSY: return "busy";
    case RMQ_ETIMEDOUT: return "timed out";
    case RMQ_ENOTCONN: return "not connected";
    case RMQ_ECONNREFUSED: return "connection refused";
    case RMQ_EWOULDBLOCK: return "would block on a non-blocking thread";
    case RMQ_ESHUTDOWN: return "shutting down";
    case RMQ_ERANGE: return "out of range";
    case RMQ_EIO: return "I/O error";
    default: return "unknown error";
    }
}

/* ---- remoting constants (protocol.md §2.4, §3.1) ------------------------ */
#define RMQ_RESPONSE_SUCCESS 0
#define RMQ_RESPONSE_SYSTEM_ERROR 1
#define RMQ_RESPONSE_SYSTEM_BUSY 2
#define RMQ_RESPONSE_REQUEST_CODE_NOT_SUPPORTED 3

#define RMQ_CMD_FLAG_RESPONSE 0x1
#define RMQ_CMD_FLAG_ONEWAY 0x2

/* ---- opaque types -------------------------------------------------------- */
typedef struct rmq_plugin_ctx rmq_plugin_ctx; /* one per loaded plugin generation */
typedef struct rmq_cmd rmq_cmd;               /* a remoting command */
typedef struct rmq_request rmq_request;       /* an incoming request being processed */
typedef struct rmq_deferred rmq_deferred;     /* a request answered later */
typedef struct rmq_admin_call rmq_admin_call; /* one admin command invocation */
typedef uint64_t rmq_channel_id;              /* stable id of a connection; 0 = none */
typedef uint64_t rmq_timer_id;
typedef uint64_t rmq_service_ref;
typedef struct rmq_grpc_call rmq_grpc_call;   /* one gRPC call (ABI 1.8) */
typedef struct rmq_gauge_sink rmq_gauge_sink; /* a plugin's gauges being read (ABI 1.10) */
/* ABI 1.10: report the plugin's gauges into `sink` with api->gauge. */
typedef void (*rmq_gauges_fn)(void *ud, rmq_gauge_sink *sink);

typedef enum rmq_log_level {
    RMQ_LOG_ERROR = 0,
    RMQ_LOG_WARN = 1,
    RMQ_LOG_INFO = 2,
    RMQ_LOG_DEBUG = 3
} rmq_log_level;

typedef enum rmq_channel_event {
    RMQ_CHANNEL_CONNECT = 0,
    RMQ_CHANNEL_CLOSE = 1,
    RMQ_CHANNEL_IDLE = 2,
    RMQ_CHANNEL_EXCEPTION = 3
} rmq_channel_event;

/* ---- settings declaration ------------------------------------------------ */
typedef enum rmq_setting_type {
    RMQ_SETTING_STRING = 0,
    RMQ_SETTING_INT = 1, /* int64, optional [min, max] */
    RMQ_SETTING_BOOL = 2,
    RMQ_SETTING_DOUBLE = 3
} rmq_setting_type;

/* One declared setting. default_value is text in the setting's type
 * ("120000", "true", "DefaultCluster"); NULL = no default (empty string for
 * STRING, 0/false otherwise). When min < max the host checks INT values
 * against [min, max]. An array of these ends with an entry whose name is NULL. */
typedef struct rmq_setting_decl {
    const char *name;
    rmq_setting_type type;
    const char *default_value;
    const char *description;
    int64_t min;
    int64_t max;
} rmq_setting_decl;

/* ---- callback types ------------------------------------------------------- */

/* A request processor. Runs on IO (inline) or EXEC (bound to an executor).
 * `cmd` is owned by the host and valid until the processor returns (or, after
 * defer(), until deferred_reply()). Return:
 *   RMQ_OK        after api->reply() (or without it: no response is sent, as a
 *                 Java processor returning null);
 *   RMQ_DEFERRED  after api->defer(): the answer is given later;
 *   < 0           failure: the host answers SYSTEM_ERROR with the remark set
 *                 by api->request_fail() or a generic one (unless oneway). */
typedef int (*rmq_processor_fn)(rmq_request *req, const rmq_cmd *cmd, void *ud);

/* Optional flow-control check, called on IO before dispatch. Return true to
 * answer SYSTEM_BUSY "[REJECTREQUEST]system busy, start flow control for a while". */
typedef bool (*rmq_reject_fn)(const rmq_cmd *cmd, void *ud);

/* Channel events on EVENT. `peer` is "ip:port", valid during the call. */
typedef void (*rmq_channel_event_fn)(rmq_channel_event ev, rmq_channel_id ch, const char *peer,
                                     void *ud);

/* RPC hooks: before runs before the processor (on the processor's thread);
 * returning a response code > 0 refuses the request with that code and the
 * remark stored in *remark (a string that must outlive the call, e.g. static;
 * a remark built per request wants rmq_rpc_before_remark_fn, ABI 1.7).
 * after sees the response (NULL when none is sent) before it is encoded. */
typedef int (*rmq_rpc_before_fn)(rmq_channel_id ch, const rmq_cmd *req, const char **remark,
                                 void *ud);
typedef void (*rmq_rpc_after_fn)(rmq_channel_id ch, const rmq_cmd *req, const rmq_cmd *resp,
                                 void *ud);

/* ABI 1.7: host-owned storage for a before hook's refusal remark. The host
 * gives each call of a hook its own buffer (on the stack of the thread that
 * runs the hook), so concurrent refusals on several threads never share one
 * and the plugin keeps no buffer of its own. Check `size` before reading a
 * member added after `cap`. */
typedef struct rmq_remark_buf {
    uint32_t size; /* sizeof(rmq_remark_buf) of the host */
    uint32_t reserved0;
    char *data; /* host-owned, `cap` bytes, "" on entry */
    size_t cap; /* at least RMQ_REMARK_BUF_MIN_CAP */
} rmq_remark_buf;

/* Every host of ABI >= 1.7 provides at least this many bytes (NUL included);
 * a longer remark is cut to cap - 1 bytes. */
#define RMQ_REMARK_BUF_MIN_CAP 1024u

/* ABI 1.7 before hook (add_rpc_hook_remark): as rmq_rpc_before_fn, but a
 * refusal (return > 0) writes its remark into `remark->data` (a
 * NUL-terminated string of at most remark->cap bytes; rmq_remark_set in
 * <rmqhost/helpers.h> does it). Leaving it "" refuses with no remark. The
 * host copies the text into the response after the hook returns. */
typedef int (*rmq_rpc_before_remark_fn)(rmq_channel_id ch, const rmq_cmd *req,
                                        rmq_remark_buf *remark, void *ud);

/* Timer tick: on TIMER, or EXEC when bound to an executor. */
typedef void (*rmq_timer_fn)(void *ud);

/* Completion of invoke_async, on IO (must not block). err is 0 with a
 * response (owned by the callee: freed by the host after the callback
 * returns) or a negative code with resp == NULL. */
typedef void (*rmq_response_fn)(int err, const rmq_cmd *resp, void *ud);

/* ABI 1.12: a request a peer sent on one of the host's outgoing
 * connections (register_client_processor), on that connection's IO thread:
 * must not block. `addr` is the peer's "ip:port" (the address given to
 * invoke_*_addr when that was numeric, with its "#tag" on a tagged
 * connection, ABI 1.14); `req` is valid during the call. Return the answer to a
 * request that expects one (a response built with cmd_new_response;
 * ownership passes to the host), or NULL for none. */
typedef rmq_cmd *(*rmq_client_request_fn)(const char *addr, const rmq_cmd *req, void *ud);

/* Body release for zero-copy bodies: called exactly once, on any thread. */
typedef void (*rmq_free_fn)(void *ud, const void *data);

/* Plugin event bus: events are published by name; subscribers are called
 * synchronously on the publisher's thread, in subscription order. `data`
 * is valid during the call only. */
typedef void (*rmq_event_fn)(const char *event, const void *data, size_t len, void *ud);

/* Admin command served through rmqhostctl, on INIT. Write output with
 * api->admin_write(); return the exit status for the CLI (0 ok, 1 failure
 * of the command, 2 usage error). */
typedef int (*rmq_admin_fn)(rmq_admin_call *call, int argc, const char *const *argv, void *ud);

/* ---- gRPC methods (ABI 1.8) ---------------------------------------------- */
/* A server declared `protocol = "grpc"` in host.conf speaks gRPC over
 * HTTP/2 (TLS with ALPN "h2" through its `tls` group). A plugin bound to it
 * registers a handler per method path "/package.Service/Method".
 *   RMQ_GRPC_UNARY             one request message, one answer: the handler
 *                              runs once, after the client's half-close;
 *   RMQ_GRPC_SERVER_STREAMING  one request message, any number of answers;
 *   RMQ_GRPC_BIDI_STREAMING    the handler runs once per request message, in
 *                              order, never two at a time for one call, and
 *                              once more with msg NULL when the client has
 *                              half-closed.
 * Messages are the serialized protobuf bytes (an empty message is a non-NULL
 * msg of length 0). During the handler (and only then) the call may be
 * answered with grpc_send / grpc_finish (after it too when the handler
 * took grpc_hold, ABI 1.11). When the handler returns without grpc_finish
 * or grpc_hold: unary and server-streaming calls are finished by the host
 * (a return < 0 → INTERNAL with rmq_strerror's text; a unary call that sent
 * nothing → INTERNAL; otherwise OK); a bidi call stays open until its
 * half-close run returns, then it is finished OK. The handler runs on the
 * executor named at registration (EXEC), or inline on IO (must not block). */
typedef enum rmq_grpc_kind {
    RMQ_GRPC_UNARY = 0,
    RMQ_GRPC_SERVER_STREAMING = 1,
    RMQ_GRPC_BIDI_STREAMING = 2
} rmq_grpc_kind;

typedef int (*rmq_grpc_handler_fn)(rmq_grpc_call *call, const void *msg, size_t len, void *ud);

/* ABI 1.11: a held call (grpc_hold) ended without the plugin's grpc_finish:
 * the client cancelled it (RST_STREAM), its connection closed, or the host
 * finished it at its deadline. Runs once,
 * on the connection's IO thread (must not block), possibly while the
 * handler that held the call is still running. grpc_send / grpc_finish
 * answer RMQ_ENOTCONN from now on; the plugin still owes grpc_release. */
typedef void (*rmq_grpc_done_fn)(rmq_grpc_call *call, void *ud);

/* ABI 1.13: one answer message of grpc_send_batch (serialized bytes; an
 * empty message is a non-NULL data of length 0). */
typedef struct rmq_grpc_msg {
    const void *data;
    size_t len;
} rmq_grpc_msg;

/* grpc_send_batch's finish_status when the call stays open. */
#define RMQ_GRPC_NO_FINISH (-1)

/* gRPC status codes used with grpc_finish. */
#define RMQ_GRPC_OK 0
#define RMQ_GRPC_CANCELLED 1
#define RMQ_GRPC_UNKNOWN 2
#define RMQ_GRPC_INVALID_ARGUMENT 3
#define RMQ_GRPC_DEADLINE_EXCEEDED 4
#define RMQ_GRPC_NOT_FOUND 5
#define RMQ_GRPC_PERMISSION_DENIED 7
#define RMQ_GRPC_RESOURCE_EXHAUSTED 8
#define RMQ_GRPC_UNIMPLEMENTED 12
#define RMQ_GRPC_INTERNAL 13
#define RMQ_GRPC_UNAVAILABLE 14

/* ---- the host API table --------------------------------------------------- */
typedef struct rmq_host_api {
    uint32_t size;      /* sizeof(rmq_host_api) of the host */
    uint32_t abi_major; /* RMQ_ABI_MAJOR of the host */
    uint32_t abi_minor; /* RMQ_ABI_MINOR of the host */
    uint32_t reserved0;

    /* -- identity, settings, logging (any thread) -- */
    /* Log one line "LEVEL time plugin: message". */
    void (*log)(rmq_plugin_ctx *ctx, rmq_log_level level, const char *fmt, ...) RMQ_PRINTF(3, 4);
    /* Plugin instance name from its conf file; owned by the host. */
    const char *(*plugin_name)(rmq_plugin_ctx *ctx);
    /* Settings, already validated against the plugin's declaration. The
     * string is owned by the host and valid until fini. Asking for an
     * undeclared name returns NULL / 0 and logs a warning. */
    const char *(*setting_string)(rmq_plugin_ctx *ctx, const char *name);
    int64_t (*setting_int)(rmq_plugin_ctx *ctx, const char *name);
    bool (*setting_bool)(rmq_plugin_ctx *ctx, const char *name);
    double (*setting_double)(rmq_plugin_ctx *ctx, const char *name);
    /* Host state directory (absolute); plugins keep their files below it. */
    const char *(*state_dir)(rmq_plugin_ctx *ctx);
    /* Address the plugin's server actually bound ("127.0.0.1", port 9876).
     * Valid from init on. RMQ_ENOENT if the plugin has no server. */
    int (*server_address)(rmq_plugin_ctx *ctx, char *host, size_t host_len, int *port);
    /* Plugin private pointer (any thread; set it during init). */
    void (*set_userdata)(rmq_plugin_ctx *ctx, void *data);
    void *(*get_userdata)(rmq_plugin_ctx *ctx);
    /* Monotonic and wall clocks in milliseconds. */
    uint64_t (*now_monotonic_ms)(void);
    uint64_t (*now_wall_ms)(void);

    /* -- registration (INIT only; effective when the generation goes live) -- */
    /* A bounded pool: `threads` workers, `queue_capacity` waiting requests;
     * a full queue answers SYSTEM_BUSY [OVERLOAD]. Name is per plugin. */
    int (*declare_executor)(rmq_plugin_ctx *ctx, const char *name, int threads, int queue_capacity);
    /* Bind `code` on the plugin's server. executor NULL = inline on IO. */
    int (*register_processor)(rmq_plugin_ctx *ctx, int32_t code, rmq_processor_fn fn, void *ud,
                              const char *executor);
    /* Processor for codes nobody registered on this server. */
    int (*set_default_processor)(rmq_plugin_ctx *ctx, rmq_processor_fn fn, void *ud,
                                 const char *executor);
    int (*set_reject_hook)(rmq_plugin_ctx *ctx, rmq_reject_fn fn, void *ud);
    int (*add_channel_listener)(rmq_plugin_ctx *ctx, rmq_channel_event_fn fn, void *ud);
    int (*add_rpc_hook)(rmq_plugin_ctx *ctx, rmq_rpc_before_fn before, rmq_rpc_after_fn after,
                        void *ud);
    /* Periodic timer, first tick after first_ms, then every period_ms
     * (0 = once). Stopped by cancel_timer or when the generation ends. */
    int (*add_timer)(rmq_plugin_ctx *ctx, uint64_t first_ms, uint64_t period_ms, rmq_timer_fn fn,
                     void *ud, const char *executor, rmq_timer_id *out_id);
    int (*cancel_timer)(rmq_plugin_ctx *ctx, rmq_timer_id id); /* any thread */
    /* Export a named, versioned function table. `table` and `table_ud` must
     * stay valid until fini. The provider's functions get table_ud back from
     * service_acquire's caller. */
    int (*export_service)(rmq_plugin_ctx *ctx, const char *name, uint32_t version,
                          const void *table, void *table_ud);
    /* Admin command `name` for rmqhostctl (e.g. "expr"). */
    int (*register_admin_command)(rmq_plugin_ctx *ctx, const char *name, const char *usage,
                                  rmq_admin_fn fn, void *ud);
    int (*subscribe_event)(rmq_plugin_ctx *ctx, const char *event, rmq_event_fn fn, void *ud);

    /* -- services and events (any thread) -- */
    /* Look up a service with version >= min_version. On success *table and
     * *table_ud are valid until service_release(ref): hold it for one
     * operation, not across calls, so the provider can be reloaded (the
     * next acquire returns the new generation). RMQ_ENOENT if absent.
     * While the provider is being hot-reloaded (about a millisecond) a caller
     * off the IO threads waits for the new generation; on IO the old one
     * answers, so use services for reads there. */
    int (*service_acquire)(rmq_plugin_ctx *ctx, const char *name, uint32_t min_version,
                           const void **table, void **table_ud, rmq_service_ref *ref);
    void (*service_release)(rmq_plugin_ctx *ctx, rmq_service_ref ref);
    /* Call every subscriber of `event` on this thread. Waits like
     * service_acquire while a subscriber is being hot-reloaded, so publish
     * from EXEC, EVENT or TIMER, not from IO. */
    int (*publish_event)(rmq_plugin_ctx *ctx, const char *event, const void *data, size_t len);

    /* -- commands (any thread; a command is used by one thread at a time) -- */
    int32_t (*cmd_code)(const rmq_cmd *cmd);
    int32_t (*cmd_flag)(const rmq_cmd *cmd);
    int32_t (*cmd_opaque)(const rmq_cmd *cmd);
    int32_t (*cmd_version)(const rmq_cmd *cmd);
    int32_t (*cmd_language)(const rmq_cmd *cmd);        /* byte value, protocol.md §2.6 */
    const char *(*cmd_language_name)(int32_t language); /* "JAVA", "CPP", ... */
    int (*cmd_serialize_type)(const rmq_cmd *cmd);      /* 0 JSON, 1 ROCKETMQ */
    const char *(*cmd_remark)(const rmq_cmd *cmd);      /* NULL = none; owned by cmd */
    /* Ext field value or NULL (absent or null); owned by cmd. */
    const char *(*cmd_ext_get)(const rmq_cmd *cmd, const char *key);
    size_t (*cmd_ext_count)(const rmq_cmd *cmd);
    int (*cmd_ext_at)(const rmq_cmd *cmd, size_t i, const char **key, const char **value);
    /* Body bytes (NULL, *len 0 when absent); owned by cmd. */
    const void *(*cmd_body)(const rmq_cmd *cmd, size_t *len);
    /* Setters on commands the plugin built (responses, outgoing requests). */
    int (*cmd_ext_set)(rmq_cmd *cmd, const char *key, const char *value); /* copies */
    int (*cmd_set_remark)(rmq_cmd *cmd, const char *remark);              /* copies */
    int (*cmd_set_code)(rmq_cmd *cmd, int32_t code);
    /* free_fn NULL: bytes copied. Else borrowed until free_fn(ud, data). */
    int (*cmd_set_body)(rmq_cmd *cmd, const void *data, size_t len, rmq_free_fn free_fn,
                        void *free_ud);
    /* New response to `req` (same opaque and serialize type, flag RESPONSE,
     * version 409, language JAVA). Owned by the caller until passed to reply. */
    rmq_cmd *(*cmd_new_response)(const rmq_cmd *req, int32_t code, const char *remark);
    /* New request for outgoing calls; owned by the caller until invoked. */
    rmq_cmd *(*cmd_new_request)(int32_t code);
    void (*cmd_free)(rmq_cmd *cmd);

    /* -- the request being processed (processor's thread) -- */
    rmq_channel_id (*request_channel)(const rmq_request *req);
    const char *(*request_peer)(const rmq_request *req); /* "ip:port", valid with req */
    /* Send `resp` (ownership passes to the host, even on error). At most once. */
    int (*reply)(rmq_request *req, rmq_cmd *resp);
    /* Remark for the SYSTEM_ERROR sent when the processor returns < 0. */
    void (*request_fail)(rmq_request *req, const char *remark);
    /* Keep the request open: returns a handle to complete later from any
     * thread with deferred_reply (resp NULL = no answer). The handle copies
     * what it needs (opaque, serialize type, channel); the cmd given to the
     * processor stays valid until deferred_reply. */
    rmq_deferred *(*defer)(rmq_request *req);
    int (*deferred_reply)(rmq_deferred *d, rmq_cmd *resp);
    const rmq_cmd *(*deferred_cmd)(const rmq_deferred *d);
    rmq_channel_id (*deferred_channel)(const rmq_deferred *d);

    /* -- channels -- */
    /* "ip:port" of a channel; only on that channel's IO thread (elsewhere
     * RMQ_EWOULDBLOCK: use the peer passed with each request and event). */
    int (*channel_peer)(rmq_plugin_ctx *ctx, rmq_channel_id ch, char *buf, size_t len);
    /* Any thread: close the channel (CLOSE is raised as usual). */
    int (*channel_close)(rmq_plugin_ctx *ctx, rmq_channel_id ch);

    /* -- outgoing calls (any thread; `req` ownership always passes) -- */
    /* To a connected channel (server push) or to "ip:port" (the host keeps
     * and reuses one client connection per address). Oneway/async in-flight
     * calls are bounded (Java: 256 oneway, 64 async per server; 65535 each
     * for client connections); a full semaphore → RMQ_EBUSY. */
    int (*invoke_oneway)(rmq_plugin_ctx *ctx, rmq_channel_id ch, rmq_cmd *req, uint32_t timeout_ms);
    int (*invoke_oneway_addr)(rmq_plugin_ctx *ctx, const char *addr, rmq_cmd *req,
                              uint32_t timeout_ms);
    int (*invoke_async)(rmq_plugin_ctx *ctx, rmq_channel_id ch, rmq_cmd *req, uint32_t timeout_ms,
                        rmq_response_fn cb, void *ud);
    int (*invoke_async_addr)(rmq_plugin_ctx *ctx, const char *addr, rmq_cmd *req,
                             uint32_t timeout_ms, rmq_response_fn cb, void *ud);
    /* Blocking; only on EXEC, EVENT, TIMER or INIT (RMQ_EWOULDBLOCK on IO).
     * On success *resp is owned by the caller (cmd_free). */
    int (*invoke_sync)(rmq_plugin_ctx *ctx, rmq_channel_id ch, rmq_cmd *req, uint32_t timeout_ms,
                       rmq_cmd **resp);
    int (*invoke_sync_addr)(rmq_plugin_ctx *ctx, const char *addr, rmq_cmd *req,
                            uint32_t timeout_ms, rmq_cmd **resp);

    /* -- files (any thread) -- */
    /* Write temp, fsync, keep the old file as PATH.bak, rename, fsync dir. */
    int (*write_file_atomic)(rmq_plugin_ctx *ctx, const char *path, const void *data, size_t len);
    /* Read PATH; if missing, empty or rejected by `valid` (may be NULL), try
     * PATH.bak and log which was used. *data is malloc'd (caller frees) and
     * NUL-terminated; RMQ_ENOENT when neither exists. */
    int (*read_file_with_backup)(rmq_plugin_ctx *ctx, const char *path,
                                 bool (*valid)(const char *data, size_t len, void *ud),
                                 void *valid_ud, char **data, size_t *len);

    /* -- admin command output (INIT, inside an rmq_admin_fn) -- */
    void (*admin_write)(rmq_admin_call *call, const char *fmt, ...) RMQ_PRINTF(2, 3);
    bool (*admin_wants_json)(const rmq_admin_call *call);

    /* -- ABI 1.1 -- */
    /* Write "extFields":{} even when the command has no ext field, as Java
     * does for answers built from a header object whose fields are all null
     * (e.g. a master's REGISTER_BROKER answer). */
    int (*cmd_set_ext_present)(rmq_cmd *cmd);

    /* -- ABI 1.3 -- */
    /* INIT. A request that waited longer than max_wait_ms in the queue of
     * executor `name` is not processed: it is answered SYSTEM_BUSY with the
     * remark "<remark_prefix>, period in queue: <ms>ms, size of queue: <n>"
     * (Java's broker fast failure, e.g. "[TIMEOUT_CLEAN_QUEUE]broker busy,
     * start flow control for a while"). 0 disables (the remark is kept for
     * a later set_executor_queue_wait). */
    int (*set_executor_queue_timeout)(rmq_plugin_ctx *ctx, const char *name, uint64_t max_wait_ms,
                                      const char *remark_prefix);

    /* -- ABI 1.4 -- */
    /* INIT. register_processor with RMQ_PROC_* flags (0 = register_processor):
     *   RMQ_PROC_FALLBACK    the binding yields to any other plugin's
     *                        registration of `code` on the same server,
     *                        whatever the order the plugins load or reload
     *                        in (a broker without a store answers the
     *                        storage codes this way; a store plugin takes
     *                        them over by registering them plainly);
     *   RMQ_PROC_NOT_ON_VIP  not served on the server's VIP listener
     *                        (host.conf `vip_listen`, Java's fast remoting
     *                        server on listenPort - 2): a request arriving
     *                        there is answered REQUEST_CODE_NOT_SUPPORTED
     *                        " request type <code> not supported", as Java
     *                        answers PULL_MESSAGE on its VIP port. */
    int (*register_processor_flags)(rmq_plugin_ctx *ctx, int32_t code, rmq_processor_fn fn,
                                    void *ud, const char *executor, uint32_t flags);

    /* -- ABI 1.5 -- */
    /* Any thread. "ip:port" of the connection an incoming request arrived on,
     * for code that sees only the command: RPC before/after hooks (which get a
     * channel id, and channel_peer works only on that channel's IO thread).
     * Valid as long as `cmd`; NULL for commands a plugin built and for
     * responses to outgoing calls. */
    const char *(*cmd_peer)(const rmq_cmd *cmd);

    /* -- ABI 1.6 -- */
    /* Any thread, cheap (a lock held for a few loads, no allocation). The
     * queue of the calling plugin's executor `name` as it is now: *length
     * requests and timer ticks waiting for a worker (those running are not
     * counted), *capacity as declared, and *head_wait_ms how long the oldest
     * waiting one has waited, by now_monotonic_ms (0 when none waits); the
     * figures behind Java's `…ThreadPoolQueueSize` / `…Capacity` /
     * `…QueueHeadWaitTimeMills`. Any out pointer may be NULL. RMQ_ENOENT for
     * a name the plugin did not declare. */
    int (*executor_queue_info)(rmq_plugin_ctx *ctx, const char *name, size_t *length,
                               size_t *capacity, uint64_t *head_wait_ms);

    /* -- ABI 1.7 -- */
    /* INIT. add_rpc_hook whose before hook writes its refusal remark into a
     * buffer the host provides for that call (rmq_remark_buf) instead of
     * returning a pointer that must outlive the call: no static or
     * per-thread buffer in the plugin. Hooks of both kinds run in the order
     * they were added; `before` and `after` may each be NULL, not both. */
    int (*add_rpc_hook_remark)(rmq_plugin_ctx *ctx, rmq_rpc_before_remark_fn before,
                               rmq_rpc_after_fn after, void *ud);

    /* -- ABI 1.8 -- */
    /* INIT. Serve gRPC method `path` ("/package.Service/Method") on the
     * plugin's server, which must be a gRPC server (RMQ_EINVAL otherwise).
     * executor NULL = inline on IO. A path nobody registered is answered
     * UNIMPLEMENTED. Hot reload swaps handlers as it swaps processors: each
     * message is dispatched to the generation live when it arrives. */
    int (*register_grpc_method)(rmq_plugin_ctx *ctx, const char *path, rmq_grpc_kind kind,
                                rmq_grpc_handler_fn fn, void *ud, const char *executor);
    /* The handler's thread, during the handler. Queue one answer message
     * (bytes copied). RMQ_ENOTCONN when the client is gone or the call is
     * finished. */
    int (*grpc_send)(rmq_grpc_call *call, const void *msg, size_t len);
    /* End the call with a gRPC status (RMQ_GRPC_*) and message (may be NULL;
     * sent percent-encoded in grpc-message). At most once. */
    int (*grpc_finish)(rmq_grpc_call *call, int status, const char *message);
    /* Request metadata (lower-case name, e.g. "x-mq-client-id"); NULL when
     * absent. Owned by the call, valid during the handler. */
    const char *(*grpc_metadata)(const rmq_grpc_call *call, const char *name);
    const char *(*grpc_call_path)(const rmq_grpc_call *call);
    const char *(*grpc_call_peer)(const rmq_grpc_call *call); /* "ip:port" */
    rmq_channel_id (*grpc_call_channel)(const rmq_grpc_call *call);
    /* The client's deadline (grpc-timeout) by now_monotonic_ms; 0 = none. */
    uint64_t (*grpc_call_deadline_ms)(const rmq_grpc_call *call);
    /* In-process call of a remoting request handler of any plugin in this
     * process, without a socket: `req` (ownership passes, as invoke_sync)
     * is dispatched on server `server` ("broker", "namesrv") exactly as a
     * request arriving there would be — its processor, executor, hooks,
     * deferral and hot-reload hold — and *resp receives the answer (caller
     * frees). Blocking: EXEC, EVENT, TIMER or INIT only (RMQ_EWOULDBLOCK on
     * IO). RMQ_ENOENT: no such server; RMQ_ETIMEDOUT: no answer in time;
     * RMQ_EIO: the processor sent no answer. The processor sees channel 0
     * and peer "local". */
    int (*invoke_local)(rmq_plugin_ctx *ctx, const char *server, rmq_cmd *req, uint32_t timeout_ms,
                        rmq_cmd **resp);

    /* -- ABI 1.9 -- */
    /* Any thread, any time after init: change the longest queue wait of
     * executor `name` that set_executor_queue_timeout configured (its remark
     * stays; 0 disables). Requests queued from now on are measured against
     * the new value, so a setting read per use (Java's
     * waitTimeMillsInHeartbeatQueue, brokerFastFailureEnable) can change at
     * run time. RMQ_ENOENT: no such executor. */
    int (*set_executor_queue_wait)(rmq_plugin_ctx *ctx, const char *name, uint64_t max_wait_ms);
    /* Any thread: whether the host's outgoing connections (invoke_*_addr)
     * use TLS now (host.conf tls_client.enable, changed by reload-config):
     * Java's NettyClientConfig.useTLS. */
    bool (*outgoing_tls)(rmq_plugin_ctx *ctx);

    /* -- ABI 1.10 -- */
    /* INIT. fn reports the plugin's own figures each time `rmqhostctl
     * stats` or the metrics endpoint is read (on the admin thread, while
     * the plugin is live: keep it short and non-blocking). One per plugin;
     * a hot reload's new generation registers its own. */
    int (*register_gauges)(rmq_plugin_ctx *ctx, rmq_gauges_fn fn, void *ud);
    /* Inside fn only. One value: `name` ([a-z_][a-z0-9_]*, served as
     * rmqhost_<name> with label plugin="<instance>"), `help` (one line, the
     * same for every value of a name), `labels` NULL-terminated key/value
     * pairs or NULL. Values of one name come one after another. Label
     * values must be bounded by the plugin (no topic, no client). */
    void (*gauge)(rmq_gauge_sink *sink, const char *name, const char *help,
                  const char *const *labels, double value);

    /* -- ABI 1.11 -- */
    /* The handler's thread, during the handler. Keep the call open after the
     * handler returns: the host no longer finishes it (unary and
     * server-streaming) nor ends a bidi call after its half-close run, and
     * grpc_send / grpc_finish work from any thread until grpc_finish (the
     * remoting defer / deferred_reply, for gRPC). on_done (may be NULL) is
     * told once if the call ends first (rmq_grpc_done_fn); it does not
     * start after grpc_finish has returned. At most one hold per call
     * (RMQ_EEXIST); RMQ_ENOTCONN when the call is already gone or finished.
     * Each successful hold owes exactly one grpc_release, after the plugin's
     * last use of the call, from any thread. The plugin's quiesce must
     * grpc_finish every call it holds (a hot reload or shutdown waits for
     * running on_done callbacks, not for held calls). A held call still
     * open a second past its deadline (grpc_call_deadline_ms) is finished
     * DEADLINE_EXCEEDED by the host, which then tells on_done as for a
     * cancel (most clients cancel at their deadline themselves). */
    int (*grpc_hold)(rmq_grpc_call *call, rmq_grpc_done_fn on_done, void *ud);
    void (*grpc_release)(rmq_grpc_call *call);
    /* invoke_local without blocking, from any thread (IO too): `cb` gets the
     * answer exactly once — err 0 and resp (owned by the host, valid during
     * cb), or err < 0 and resp NULL: RMQ_EIO the processor sent no answer,
     * RMQ_ESHUTDOWN the calling plugin's generation is quiescing (the
     * callee's late answer is then dropped). cb runs on the thread that
     * answered (the callee's executor, timer or IO thread): keep it short.
     * There is no host timeout: the callee bounds the wait (a held POP
     * answers after its pollTime). Called on IO, a processor bound inline
     * runs at once on the calling thread, so cb may run before this
     * returns. Returns 0 when cb will be called (or was), else the error
     * (cb is not called; `req` is freed). */
    int (*invoke_local_async)(rmq_plugin_ctx *ctx, const char *server, rmq_cmd *req,
                              rmq_response_fn cb, void *ud);

    /* -- ABI 1.12 -- */
    /* INIT. Serve requests with `code` that a peer sends on the host's
     * outgoing connections (invoke_*_addr), as Java's NettyRemotingClient
     * runs the processors its owner registered: a broker sends
     * CHECK_TRANSACTION_STATE (39) to the connection a producer group's
     * HEART_BEAT came on. fn runs on the connection's IO thread
     * (rmq_client_request_fn). When several live plugins register a code,
     * the first loaded serves it; a code nobody registered, or whose
     * plugin is in a hot reload's hand-over, is answered
     * REQUEST_CODE_NOT_SUPPORTED (nothing for a oneway request), as before
     * 1.12. RMQ_EEXIST: the plugin registered the code already. */
    int (*register_client_processor)(rmq_plugin_ctx *ctx, int32_t code, rmq_client_request_fn fn,
                                     void *ud);

    /* -- ABI 1.13 -- */
    /* grpc_send of msgs[0..n) in order then, unless finish_status is
     * RMQ_GRPC_NO_FINISH, grpc_finish(call, finish_status, finish_message):
     * the same frames in the same order as those separate calls, handed to
     * the connection's I/O loop in one go (one wake-up of the loop from
     * another thread instead of n + 1). Bytes copied. Same threads and
     * rules as grpc_send / grpc_finish; HTTP/2 flow control is unchanged
     * (what the client's window cannot take yet waits in the stream's
     * queue). n may be 0 (a finish alone). RMQ_EINVAL: a bad argument
     * (nothing sent); RMQ_ENOTCONN: the client is gone or the call already
     * finished (nothing sent). */
    int (*grpc_send_batch)(rmq_grpc_call *call, const rmq_grpc_msg *msgs, size_t n,
                           int finish_status, const char *finish_message);

    /* -- ABI 1.14 -- */
    /* The header's language (byte value, protocol.md §2.6) and version
     * (MQVersion ordinal) of a command the plugin built: a request sent for
     * someone else (a proxy's HEART_BEAT for one of its clients) carries
     * that client's, as the broker records them from the request's header.
     * RMQ_EINVAL: language outside 0..255 or version outside int16. Also
     * since 1.14, invoke_*_addr takes "ip:port#tag": each distinct tag
     * (1..63 bytes after the '#') has its own connection to ip:port,
     * apart from the untagged one, as each Java client owns its
     * connections; register_client_processor's fn gets that full string
     * as addr for a request arriving on a tagged connection. A peer closes
     * an idle one (Java: channelMaxIdleTimeSeconds, 120 s); close_outgoing
     * (1.15) closes it sooner. */
    int (*cmd_set_language)(rmq_cmd *cmd, int32_t language);
    int (*cmd_set_version)(rmq_cmd *cmd, int32_t version);

    /* -- ABI 1.15 -- */
    /* Any thread, never blocks. Close the host's outgoing connection to
     * `addr` exactly as given to invoke_*_addr ("ip:port" or
     * "ip:port#tag"; a tag names one connection, the untagged address
     * another), as Java closes a channel it no longer needs (a proxy's
     * connection for a client that is gone). It takes effect after the
     * requests the plugin sent to `addr` before this call: those are
     * still written, and each one waiting for an answer still gets it,
     * or its error at its timeout, exactly once (as on any connection
     * loss: RMQ_ENOTCONN if the peer closes first); the connection closes
     * once nothing is left to write or to wait for. A request sent to
     * `addr` after this call dials a new connection. 0 when the close was
     * handed to the connection's thread (also when there is no such
     * connection: nothing to do); RMQ_EINVAL for an address
     * invoke_*_addr would refuse; RMQ_ENOMEM. */
    int (*close_outgoing)(rmq_plugin_ctx *ctx, const char *addr);

    void *reserved[5]; /* grows here; never reordered */
} rmq_host_api;

/* Flags of register_processor_flags (ABI 1.4). */
#define RMQ_PROC_FALLBACK 0x1u
#define RMQ_PROC_NOT_ON_VIP 0x2u

/* ---- reaching the API from a context -------------------------------------- */
/* Every rmq_plugin_ctx starts with this head, so callbacks that receive only
 * the ctx (fini, export_state, import_state, timers given the ctx) reach the
 * host API and the plugin's userdata without any file-scope variable. */
typedef struct rmq_plugin_ctx_head {
    const rmq_host_api *api;
    void *userdata; /* same as api->get_userdata(ctx) */
} rmq_plugin_ctx_head;

/* Any thread. The table is owned by the host and valid for the ctx's life. */
static inline const rmq_host_api *rmq_ctx_api(rmq_plugin_ctx *ctx)
{
    return ((const rmq_plugin_ctx_head *)(const void *)ctx)->api;
}

/* Any thread: the pointer given to set_userdata. */
static inline void *rmq_ctx_userdata(rmq_plugin_ctx *ctx)
{
    return ((const rmq_plugin_ctx_head *)(const void *)ctx)->userdata;
}

/* ---- the plugin descriptor ------------------------------------------------ */
typedef struct rmq_plugin_descriptor {
    /* Read first, before anything else: */
    uint32_t abi_major;
    uint32_t abi_minor;
    uint32_t descriptor_size;
    uint32_t state_version; /* format version of export_state blobs */

    const char *name;    /* default instance name, e.g. "namesrv" */
    const char *version; /* plugin version, e.g. "1.0.0" */
    const char *description;
    const rmq_setting_decl *settings; /* NULL-name terminated; may be NULL */

    /* INIT. Register everything here; return 0 or a negative code (the
     * generation is then discarded and fini is NOT called). */
    int (*init)(rmq_plugin_ctx *ctx, const rmq_host_api *api);
    /* INIT. Free everything; no plugin code runs after it returns. */
    void (*fini)(rmq_plugin_ctx *ctx);
    /* Optional, INIT, for hot reload: the old generation serialises its state
     * (malloc'd blob, freed by the host) while its requests are held; the new
     * generation imports it before going live. `version` is the exporter's
     * state_version; refuse unknown versions with RMQ_EINVAL. */
    int (*export_state)(rmq_plugin_ctx *ctx, void **blob, size_t *len);
    int (*import_state)(rmq_plugin_ctx *ctx, uint32_t version, const void *blob, size_t len);
    /* Optional (ABI 1.2), INIT: answer or release now every request the
     * plugin holds with defer() (held PULLs, relays). Called before the host
     * waits for the generation's in-flight work: at shutdown, before a
     * reload swaps generations and before a disable. Without it a request
     * deferred until a timer fires would keep that wait going: the host has
     * stopped the plugin's timers by then. New requests may still arrive
     * afterwards until the generation is taken out of dispatch; answer them
     * at once. May be called more than once. */
    void (*quiesce)(rmq_plugin_ctx *ctx);

    void *reserved[15];
} rmq_plugin_descriptor;

#define RMQ_PLUGIN_SYMBOL "rmq_plugin"

/* Define the descriptor: ABI fields first, unknown members zeroed.
 *   RMQ_PLUGIN(.name = "echo", .version = "1.0.0", .init = my_init, .fini = my_fini);
 */
#define RMQ_PLUGIN(...)                                                                            \
    RMQ_EXPORT const rmq_plugin_descriptor rmq_plugin = {.abi_major = RMQ_ABI_MAJOR,               \
                                                         .abi_minor = RMQ_ABI_MINOR,               \
                                                         .descriptor_size =                        \
                                                             sizeof(rmq_plugin_descriptor),        \
                                                         __VA_ARGS__}

#ifdef __cplusplus
}
#endif
#endif
