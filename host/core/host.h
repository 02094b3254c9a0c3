/* host.h — the host context and the runtime objects it owns: I/O loops,
 * connections, servers, executors, event threads, plugin instances. This is
 * the only place host-wide mutable state lives. Internal to the daemon. */
#ifndef RMQHOST_HOST_H
#define RMQHOST_HOST_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "host_config.h"
#include "host_log.h"
#include "request_stats.h"
#include "remoting_command.h"
#include "rmqhost/rmqhost.h"

typedef struct rmq_host rmq_host;
typedef struct io_loop io_loop;
typedef struct connection connection;
typedef struct server server;
typedef struct executor executor;
typedef struct plugin_inst plugin_inst;

/* ---- byte buffer --------------------------------------------------------- */
typedef struct byte_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} byte_buf;

int byte_buf_reserve(byte_buf *b, size_t extra);
void byte_buf_free(byte_buf *b);
/* Append printf-style text; the text stays NUL-terminated. 0 or RMQ_ENOMEM. */
int byte_buf_vappendf(byte_buf *b, const char *fmt, va_list ap);
int byte_buf_appendf(byte_buf *b, const char *fmt, ...) RMQ_PRINTF(2, 3);

/* ---- executors (bounded pools) ------------------------------------------- */
typedef void (*task_fn)(void *arg);
typedef struct exec_task {
    task_fn fn;
    void *arg;
    uint64_t queued_ms; /* api.now_monotonic_ms at submit: head wait (ABI 1.6) */
} exec_task;

struct executor {
    rmq_host *host;
    char name[128]; /* "plugin/name" */
    plugin_inst *owner;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* `slots` entries allocated, grown by doubling up to cap: a queue of
     * 1,000,000 (Java's client and consumer pools) would otherwise become
     * 24 MB resident as the ring turns, however short the queue stays */
    exec_task *ring;
    size_t cap, slots, head, count;
    pthread_t *threads;
    int nthreads;
    bool stopping;
    atomic_ulong rejected;
    atomic_ulong executed;
    /* requests older than this are refused busy; 0 = off. Changed at run
     * time by set_executor_queue_wait while the dispatcher reads it */
    _Atomic uint64_t max_wait_ms;
    char busy_remark[160]; /* remark prefix for those refusals (set in init) */
    atomic_ulong timed_out;
};

int executor_start(executor *ex, rmq_host *h, const char *name, int threads, int queue_cap);
/* 0 or RMQ_EBUSY when the queue is full, RMQ_ESHUTDOWN when stopping. */
int executor_submit(executor *ex, task_fn fn, void *arg);
size_t executor_depth(executor *ex);
/* Any thread: queue length, capacity and the head's wait in ms (0 = empty). */
void executor_queue_info(executor *ex, size_t *length, size_t *capacity, uint64_t *head_wait_ms);
/* Runs what is queued, then joins the threads. */
void executor_stop(executor *ex);

/* ---- processor table (per server, RCU-published) ------------------------- */
typedef struct proc_entry {
    rmq_processor_fn fn;
    void *ud;
    executor *ex; /* NULL = inline */
    plugin_inst *plugin;
    uint32_t flags; /* RMQ_PROC_* (ABI 1.4) */
} proc_entry;

typedef struct code_entry {
    int32_t code;
    proc_entry e;
} code_entry;

typedef struct listener_entry {
    rmq_channel_event_fn fn;
    void *ud;
    plugin_inst *plugin;
} listener_entry;

/* A processor of requests arriving on outgoing connections (ABI 1.12). */
typedef struct client_proc_entry {
    int32_t code;
    rmq_client_request_fn fn;
    void *ud;
} client_proc_entry;

typedef struct hook_entry {
    rmq_rpc_before_fn before;               /* at most one of the two befores */
    rmq_rpc_before_remark_fn before_remark; /* ABI 1.7: remark into a host buffer */
    rmq_rpc_after_fn after;
    void *ud;
    plugin_inst *plugin;
} hook_entry;

typedef struct reject_entry {
    rmq_reject_fn fn;
    void *ud;
    plugin_inst *plugin;
} reject_entry;

/* A gRPC method binding (ABI 1.8). path is owned by the plugin generation. */
typedef struct grpc_method_entry {
    char *path;
    rmq_grpc_kind kind;
    rmq_grpc_handler_fn fn;
    void *ud;
    executor *ex; /* NULL = inline */
    plugin_inst *plugin;
} grpc_method_entry;

#define PROC_DIRECT_CODES 1024
/* Everything a server dispatches to, rebuilt whenever the set of live
 * plugin generations bound to the server changes, read under rcu_read_lock. */
typedef struct server_bindings {
    proc_entry direct[PROC_DIRECT_CODES];
    code_entry *sparse; /* sorted by code, for codes outside [0, 1024) */
    size_t nsparse;
    proc_entry deflt; /* fn NULL = none */
    reject_entry *rejects;
    size_t nrejects;
    listener_entry *listeners;
    size_t nlisteners;
    hook_entry *hooks;
    size_t nhooks;
    grpc_method_entry *grpc; /* sorted by path */
    size_t ngrpc;
} server_bindings;

const proc_entry *bindings_lookup(const server_bindings *b, int32_t code);
const grpc_method_entry *bindings_lookup_grpc(const server_bindings *b, const char *path);
void bindings_free(server_bindings *b);

/* ---- channel events -------------------------------------------------------- */
typedef struct chan_event {
    rmq_channel_event ev;
    rmq_channel_id ch;
    char peer[64];
} chan_event;

typedef struct event_thread {
    server *srv;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    chan_event *ring;
    size_t cap, head, count;
    bool stopping;     /* under mu */
    bool started;      /* under mu */
    atomic_bool ready; /* mu and cv initialised (first start .. destroy) */
    atomic_ulong dropped;
} event_thread;

/* Start (or restart after a stop) the server's event thread. A zeroed
 * event_thread is a valid never-started one. */
int event_thread_start(event_thread *et, server *srv);
/* Queue an event; dropped when the thread is not running. Safe from any
 * thread at any time until event_thread_destroy. */
void event_thread_post(event_thread *et, rmq_channel_event ev, rmq_channel_id ch, const char *peer);
bool event_thread_running(event_thread *et);
/* Deliver what is queued, then stop the thread; later posts are dropped. */
void event_thread_stop(event_thread *et);
/* Stop, and free the lock: only once no other thread can post (after the
 * I/O loops are joined). */
void event_thread_destroy(event_thread *et);

/* ---- servers -------------------------------------------------------------- */
struct server {
    rmq_host *host;
    char name[CONF_NAME_MAX];
    char listen_spec[128];
    int protocol; /* SERVER_PROTOCOL_*; fixed for the server's life */
    int idle_ms;
    bool needed; /* an enabled plugin binds to it */
    bool listening;
    uv_os_sock_t fd; /* bound listening socket */
    uv_poll_t poll;  /* readability of fd, on loop 0: we accept4() ourselves */
    bool polling;
    uv_timer_t accept_backoff; /* out of descriptors: pause accepting (loop 0) */
    bool backoff_inited;
    char bound_host[64];
    int bound_port;
    /* VIP listener (host.conf vip_listen): a second address served like the
     * first except for RMQ_PROC_NOT_ON_VIP codes (Java's fast server) */
    char vip_spec[128];
    uv_os_sock_t vip_fd; /* -1 = none */
    uv_poll_t vip_poll;
    bool vip_polling;
    char vip_bound_host[64];
    int vip_bound_port;
    server_bindings *bindings; /* RCU */
    event_thread events;
    atomic_uint oneway_permits; /* in flight; Java serverOnewaySemaphoreValue */
    atomic_uint async_permits;
    unsigned oneway_limit, async_limit;
    atomic_ulong connections;
    atomic_ulong requests;
    atomic_ulong errors;
    unsigned next_loop;
    request_stats stats; /* per-code counts and latency, for `stats` and metrics */
    /* TLS settings and context (tls_host.c): set at init, never replaced */
    struct tls_endpoint *tls;
};

/* ---- outgoing calls ------------------------------------------------------- */
typedef struct sync_waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    int err;
    rmq_cmd *resp;
    atomic_int refs;
    /* invoke_local_async (ABI 1.11): told instead of a blocked caller; the
     * caller's generation is counted in flight until cb has run, and the
     * waiter sits on the host's local_async list (under local_async_mu) so
     * that the caller's quiesce can end it */
    rmq_response_fn cb;
    void *cb_ud;
    plugin_inst *caller;
    struct sync_waiter *async_prev, *async_next;
} sync_waiter;
/* sync_waiter.c: a waiter holding refs references (its wait on a monotonic
 * clock); the last unref frees it and the answer it still holds. */
sync_waiter *sync_waiter_new(int refs);
void sync_waiter_unref(sync_waiter *w);

typedef enum { CALL_ONEWAY, CALL_ASYNC, CALL_SYNC } call_kind;

/* Where a plugin's outgoing calls go: outgoing.c's sockets in the daemon,
 * the test kit's capture in a kit. The host API's invoke_* entries
 * (host_api.c) check their arguments once and call through it. `addr` NULL
 * = to channel ch. Each function owns `req` from the call on. */
typedef struct outgoing_transport {
    int (*oneway)(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                  uint32_t timeout_ms);
    int (*async)(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                 uint32_t timeout_ms, rmq_response_fn cb, void *ud);
    int (*sync)(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                uint32_t timeout_ms, rmq_cmd **resp);
    /* close_outgoing (ABI 1.15); NULL = no connections to close (the kit) */
    int (*close_addr)(plugin_inst *p, const char *addr);
} outgoing_transport;

typedef struct pending_call {
    int32_t opaque;
    call_kind kind;
    uint64_t deadline_ms;
    uint64_t channel;
    rmq_response_fn cb;
    void *ud;
    sync_waiter *waiter;
    atomic_uint *permit; /* released when done; NULL = none */
    plugin_inst *plugin;
    struct pending_call *next;
} pending_call;

#define PENDING_BUCKETS 1024

/* ---- loop tasks (cross-thread messages to an I/O loop) --------------------- */
typedef enum {
    LT_ADOPT,        /* a freshly accepted socket */
    LT_SEND,         /* pre-encoded frame to a channel */
    LT_CLOSE,        /* close a channel */
    LT_INVOKE,       /* outgoing request (frame + pending call) to a channel */
    LT_INVOKE_ADDR,  /* same, to an address (connect if needed) */
    LT_CLOSE_ADDR,   /* drain then close the outgoing connections to addr (ABI 1.15) */
    LT_STOP_READING, /* shutdown: stop reading on server connections */
    LT_STOP_ACCEPT,  /* shutdown: stop polling a listener (loop 0) */
    LT_START_ACCEPT, /* start polling a listener (loop 0) */
    LT_RESUME,       /* process frames left in a connection's buffer */
    LT_RUN_REQUEST,  /* a request held during a hot reload, released to this loop */
    LT_CALL,         /* run fn(loop, arg) on the loop (server_reconfigure.c) */
    LT_STOP          /* close everything and leave the loop */
} loop_task_type;

typedef struct loop_task {
    loop_task_type type;
    struct loop_task *next;
    uint64_t channel;
    uv_os_sock_t fd;
    server *srv;
    uint8_t *frame; /* malloc'd */
    size_t frame_len;
    pending_call *call;  /* NULL for oneway */
    atomic_uint *permit; /* oneway permit released once queued */
    char addr[128];
    rmq_request *req; /* LT_RUN_REQUEST */

    void (*fn)(io_loop *l, void *arg); /* LT_CALL */
    void *arg;
} loop_task;

/* ---- large receive buffers (frame_pool.c, large_frame.c) ------------------ */
/* Frames at least this large are read straight into a buffer of their own
 * and their command borrows the body (no copy through rbuf). */
#define LARGE_FRAME_MIN (128 * 1024)
#define FRAME_POOL_SLOTS 8
typedef struct frame_buf frame_buf;
typedef struct frame_pool {
    pthread_mutex_t mu;
    frame_buf *free[FRAME_POOL_SLOTS];
    size_t n;
    size_t bytes;     /* capacity held in free[] */
    size_t max_bytes; /* beyond this, released buffers are freed */
    uint64_t hits;
} frame_pool;
void frame_pool_init(frame_pool *fp, size_t max_bytes);
void frame_pool_destroy(frame_pool *fp);
frame_buf *frame_pool_get(frame_pool *fp, size_t need);
void frame_pool_put(frame_buf *b);
uint8_t *frame_buf_data(frame_buf *b);
size_t frame_buf_cap(const frame_buf *b);
void frame_buf_release_body(void *ud, const void *body);

/* A large frame being received (large_frame.c). */
typedef struct large_frame {
    frame_buf *buf; /* NULL: frames go through rbuf */
    size_t total;   /* the frame's length incl. its 4-byte prefix */
    size_t have;
} large_frame;
bool large_frame_alloc(connection *c, uv_buf_t *buf);
void large_frame_read(connection *c, size_t nread);
void large_frame_maybe_start(connection *c);
void large_frame_drop(connection *c);

/* Requests decoded from rbuf point into it (rmq_cmd_decode_in_place) while
 * they are handled inline (read_buffer_pin.c). A request deferred then keeps
 * the buffer: conn_keep_body pins it for the command (loop thread; false
 * when it could neither pin nor copy), and conn_rbuf_unpin, at the end of
 * the processing pass, moves the unprocessed bytes past `consumed` into a
 * fresh rbuf. RMQ_ENOMEM when that fresh buffer cannot be had. */
typedef struct rbuf_pin rbuf_pin;
bool conn_keep_body(connection *c, rmq_cmd *cmd);
int conn_rbuf_unpin(connection *c, size_t consumed);
/* Loop thread, for an empty rbuf: take a buffer handed back (true) so a
 * deferred send per read does not cost a fresh 64 KiB each time. */
bool conn_rbuf_take_returned(connection *c);
/* io_loop_join: free what is parked. */
void loop_free_returned_rbuf(io_loop *l);

/* ---- connections ---------------------------------------------------------- */
struct connection {
    io_loop *loop;
    uint64_t id;
    server *srv; /* NULL for our outgoing client connections */
    uv_tcp_t tcp;
    uv_connect_t connect_req;
    char peer[64];
    char addr_key[128]; /* client connections: the address we dialled */
    byte_buf rbuf;
    byte_buf out;       /* accumulating */
    byte_buf inflight;  /* being written by wreq */
    large_frame large;  /* a large frame bypassing rbuf */
    rbuf_pin *rbuf_pin; /* rbuf's bytes are kept by deferred requests */
    uv_write_t wreq;
    bool writing;
    bool read_paused; /* back-pressure */
    bool reading;
    bool connected;
    bool closing;
    /* outgoing, close_outgoing (ABI 1.15): takes no new request; closed once
     * its output is written and no call waits on it (outgoing_close.c) */
    bool draining;
    bool dirty;                    /* has unflushed output */
    rmq_channel_event close_event; /* what to report besides CLOSE */
    uint64_t last_active_ms;
    uint32_t slot;
    uint8_t vip_state; /* 0 not known yet, 1 main listener, 2 VIP listener */
    connection *dirty_next;
    connection *prev, *next; /* loop's connection list */
    /* TLS on this connection, and (server side) whether its first byte is
     * still to be seen (tls_connection.c) */
    struct tls_session *tls;
    bool tls_detect;
    /* gRPC servers: the HTTP/2 session and its calls (grpc_conn.c) */
    struct grpc_conn *grpc;
};

/* ---- I/O loops ------------------------------------------------------------- */
struct io_loop {
    rmq_host *host;
    int index;
    uv_loop_t loop;
    uv_thread_t thread;
    pthread_t tid;
    uv_async_t wake;
    uv_timer_t tick; /* 1 s: idle sweep, pending-call sweep */
    pthread_mutex_t mu;
    loop_task *tasks_head, *tasks_tail;
    connection **slots;
    uint32_t nslots;
    uint32_t *free_slots;
    uint32_t nfree;
    uint32_t gen;
    connection *conns; /* list of all */
    connection *dirty;
    /* One receive buffer lent to whichever connection reads next: idle
     * connections hold none (connection.c) */
    byte_buf spare_rbuf;
    /* a read buffer a deferred request kept, handed back from any thread
     * when it let go (read_buffer_pin.c) */
    _Atomic(uint8_t *) returned_rbuf;
    pending_call *pending[PENDING_BUCKETS];
    size_t npending;
    bool stopping;
    bool stop_reading;
    atomic_ulong nconns;
};

io_loop *host_loop_of(rmq_host *h, uint64_t channel);
bool host_on_io_thread(rmq_host *h);
/* The I/O loop the calling thread runs, or NULL. */
io_loop *host_current_loop(rmq_host *h);
bool loop_is_current(io_loop *l);
/* Post a task (takes ownership) and wake the loop. */
void loop_post(io_loop *l, loop_task *t);
int io_loop_start(io_loop *l, rmq_host *h, int index);
int io_loop_run_thread(io_loop *l);
void server_poll_start(io_loop *l0, server *s);
void io_loop_join(io_loop *l);
connection *loop_find_conn(io_loop *l, uint64_t id);
/* Append an encoded frame to a connection's output (loop thread). */
int conn_queue_frame(connection *c, const uint8_t *data, size_t len);
/* Encode cmd straight into a connection's output (loop thread). */
int conn_queue_cmd(connection *c, const rmq_cmd *cmd);
void conn_close(connection *c, rmq_channel_event why);
void conn_process_frames(connection *c);
void loop_flush_dirty(io_loop *l);
void conn_adopt(io_loop *l, server *srv, uv_os_sock_t fd);
void loop_connect_and_invoke(io_loop *l, loop_task *t);
/* The connection has output to flush at the end of this loop pass. */
void conn_mark_dirty(connection *c);

/* grpc_conn.c — a gRPC server connection (loop thread): the bytes read
 * (after TLS) go to its HTTP/2 session; conn_close frees it. */
void grpc_conn_input(connection *c);
void grpc_conn_free(connection *c);
/* the loop's tick: held calls past their deadline (grpc_calls.c) */
void grpc_conn_tick(connection *c);

/* ---- requests --------------------------------------------------------------- */
struct rmq_request {
    rmq_host *host;
    io_loop *loop;
    uint64_t channel;
    server *srv;
    rmq_cmd *cmd;
    proc_entry entry;
    char peer[64];
    bool oneway;
    bool replied;
    bool deferred;
    char *fail_remark;
    uint64_t start_ns;
    uint64_t received_ms;   /* monotonic ms at dispatch, for executor queue timeouts */
    rmq_request *held_next; /* plugin_inst.held_head list during a hot reload */
    /* The running processor and a defer() handle each hold the request; the
     * last to let go finishes it (deferred_reply may come from another
     * thread before the processor has returned). */
    atomic_int holds;
    /* invoke_local (local_invoke.c): the answer goes to this waiter, not to
     * a connection; NULL for requests that arrived on a socket */
    struct sync_waiter *local;
};

/* Dispatch one decoded command that arrived on `c` (loop thread). Takes
 * ownership of cmd. */
void dispatch_command(connection *c, rmq_cmd *cmd);
/* client_requests.c: a request on an outgoing connection (IO thread);
 * takes cmd. */
void client_request_dispatch(connection *c, rmq_cmd *cmd);
/* Send `resp` for `req` from any thread (takes ownership of resp). */
void request_send_response(rmq_request *req, rmq_cmd *resp);
void request_finish(rmq_request *req);
/* Drop one hold (see rmq_request.holds); the last finishes the request. */
void request_release(rmq_request *req);
/* Run a request released from a reload hold: look its code up again in the
 * server's current bindings and run it (any thread; inline processors are
 * posted to the request's loop). */
void dispatch_resume(rmq_request *req);
/* LT_RUN_REQUEST: run a resumed request bound to an inline processor. */
void dispatch_run_on_loop(rmq_request *req);
/* Complete a pending outgoing call by a response frame (loop thread). */
void outgoing_complete(io_loop *l, rmq_cmd *resp);
/* Fail pending calls: those bound to `channel` (0 = those past deadline). */
void outgoing_sweep(io_loop *l, uint64_t channel, int err);
/* An invoke_*_addr address "ip:port[#tag]" (ABI 1.14): the length of its
 * ip:port part, or 0 when the tag is empty or longer than 63 bytes. */
size_t outgoing_addr_host_len(const char *addr);
void pending_insert(io_loop *l, pending_call *pc);
/* The loop that owns the connections to `addr` (an invoke_*_addr address). */
io_loop *outgoing_loop_of_addr(rmq_host *h, const char *addr);
/* Loop thread: whether a call waits for an answer on `channel`. */
bool outgoing_has_calls_on(io_loop *l, uint64_t channel);
/* outgoing_close.c (ABI 1.15): post the drain-and-close of the outgoing
 * connections to `addr` (any thread); on the loop, start it; and close a
 * draining connection once it has nothing left to write or to wait for. */
int outgoing_close_addr(plugin_inst *p, const char *addr);
void loop_close_addr(io_loop *l, const char *addr);
void conn_drain_check(connection *c);
void pending_call_fail(rmq_host *h, pending_call *pc, int err);

/* ---- plugin instances --------------------------------------------------------- */
typedef struct resolved_setting {
    const rmq_setting_decl *decl;
    char *value;
} resolved_setting;

typedef struct staged_proc {
    int32_t code;
    proc_entry e;
} staged_proc;

typedef struct timer_rec {
    rmq_timer_id id;
    plugin_inst *plugin;
    uint64_t first_ms, period_ms;
    rmq_timer_fn fn;
    void *ud;
    executor *ex;
    uv_timer_t handle;
    bool started;
    atomic_bool cancelled;
    bool closed;
    atomic_int running;      /* ticks queued or running on an executor */
    struct timer_rec *next;  /* plugin's list */
    struct timer_rec *qnext; /* timer thread's add queue */
    struct timer_rec *anext; /* timer thread's list of all timers */
} timer_rec;

typedef struct service_rec {
    char name[128];
    uint32_t version;
    const void *table;
    void *table_ud;
    plugin_inst *plugin;
} service_rec;

typedef struct admin_cmd_rec {
    char name[64];
    char usage[256];
    rmq_admin_fn fn;
    void *ud;
    plugin_inst *plugin;
} admin_cmd_rec;

typedef struct event_sub {
    char name[128];
    rmq_event_fn fn;
    void *ud;
    plugin_inst *plugin;
} event_sub;

typedef enum { PLUGIN_LOADED, PLUGIN_LIVE, PLUGIN_DRAINING, PLUGIN_DEAD } plugin_state;

/* One loaded generation of a plugin. The SDK's rmq_plugin_ctx is this. */
struct plugin_inst {
    rmq_plugin_ctx_head head; /* first: the SDK reads it (rmq_ctx_api) */
    rmq_host *host;
    plugin_conf conf;
    server *srv;
    void *dl;
    const rmq_plugin_descriptor *desc;
    char so_copy[CONF_PATH_MAX + 64];
    char so_path[CONF_PATH_MAX];
    uint32_t generation;
    uint64_t loaded_at_ms;
    plugin_state state;
    resolved_setting *settings;
    size_t nsettings;
    bool in_init;
    bool inited; /* init succeeded: fini is owed */

    staged_proc *procs;
    size_t nprocs;
    proc_entry deflt;
    reject_entry reject;
    listener_entry *listeners;
    size_t nlisteners;
    client_proc_entry *client_procs; /* ABI 1.12 */
    size_t nclient_procs;
    hook_entry *hooks;
    size_t nhooks;
    grpc_method_entry *grpc_methods; /* ABI 1.8, paths owned here */
    size_t ngrpc_methods;
    executor **executors;
    size_t nexecutors;
    timer_rec *timers;
    service_rec *services;
    size_t nservices;
    admin_cmd_rec *admin_cmds;
    size_t nadmin;
    rmq_gauges_fn gauges_fn; /* ABI 1.10 */
    void *gauges_ud;
    event_sub *subs;
    size_t nsubs;

    atomic_long inflight; /* requests, timer ticks, service refs, pending calls */
    atomic_ulong served;
    /* set before the plugin's quiesce runs: from then on it may take no new
     * grpc_hold nor start invoke_local_async (ABI 1.11), so that what its
     * quiesce answered stays answered */
    atomic_bool quiesced;
    /* Hot reload: while set, new requests for this generation are queued on
     * held_head (under host registry_mu) instead of run; see plugin_reload.c. */
    atomic_bool held;
    rmq_request *held_head, *held_tail;
};

/* ---- admin command output ---- */
struct rmq_admin_call {
    byte_buf out;
    bool json;
};

/* ---- the host ---------------------------------------------------------------- */
struct rmq_host {
    host_conf conf;
    host_log log;
    rmq_host_api api;
    char exe_dir[CONF_PATH_MAX];

    io_loop *loops;
    int nloops;
    io_loop acceptor; /* loop 0 is the acceptor too; see server_listen.c */

    server *servers;
    size_t nservers;

    plugin_inst **plugins; /* live generations */
    size_t nplugins;
    pthread_mutex_t registry_mu;    /* services, event subs, admin commands, plugin list */
    pthread_cond_t hold_cv;         /* broadcast (under registry_mu) when a reload hold ends */
    pthread_mutex_t local_async_mu; /* invoke_local_async calls in flight */
    sync_waiter *local_async;

    /* housekeeping thread: timers */
    uv_loop_t timer_loop;
    uv_thread_t timer_thread;
    uv_async_t timer_wake;
    pthread_mutex_t timer_mu;
    timer_rec *timer_add_q;
    timer_rec *timer_all; /* timer thread only */
    pthread_cond_t timer_cv;
    rmq_timer_id *timer_cancel_q;
    size_t ncancel_q, cap_cancel_q;
    bool timer_stopping;
    atomic_ullong next_timer_id;

    atomic_int next_opaque;
    atomic_uint client_oneway_permits; /* Java client semaphores: 65535 each */
    atomic_uint client_async_permits;
    atomic_long inflight_requests;
    atomic_ulong outgoing_conns; /* open connections the host dialled (stats) */
    atomic_ullong next_service_ref;
    bool started;
    bool stopping;
    int lock_fd;
    uint64_t started_at_ms;
    void *admin; /* admin_server.c's context (control thread only) */

    frame_pool large_frames; /* receive buffers of large frames, all loops */
    size_t servers_cap;      /* slots of `servers`: reload-config may add servers */
    char **conf_overrides;   /* -o KEY=VALUE of the command line, re-applied by reload-config */
    size_t nconf_overrides;
    /* TLS of outgoing connections (tls_host.c) */
    struct tls_endpoint *tls_client;
    /* The test kit (host/testkit/) drives the same host in-process. NULL in
     * the daemon. timer_takeover: a virtual clock owns the plugins' timers
     * (activate true: p's timers start counting; false: p's timers stop).
     * linked_descriptor: a descriptor linked into the test for `pc`, or NULL
     * to dlopen pc->path as usual. */
    void (*timer_takeover)(rmq_host *h, plugin_inst *p, bool activate);
    const rmq_plugin_descriptor *(*linked_descriptor)(rmq_host *h, const plugin_conf *pc);
    /* outgoing: the kit's capture of outgoing calls; NULL = outgoing.c's. */
    const outgoing_transport *outgoing;
};

/* server_reconfigure.c — reload-config's part for servers and host settings */
#define HOST_SERVERS_MAX 64
int host_keep_overrides(rmq_host *h, char *const *kv, size_t n);
int host_apply_overrides(const rmq_host *h, host_conf *c, char *err, size_t errlen);
typedef struct server_plan server_plan;
/* Binds the new listening sockets nc needs (moved servers): 0, or -1 with
 * nothing changed and the reason in msg. */
int servers_prepare(rmq_host *h, const host_conf *nc, server_plan **out, char *msg, size_t msglen);
/* Moves listeners to their new sockets (old ones serve until then), declares
 * new servers, applies channel_max_idle_seconds; appends what it did. */
void servers_commit(rmq_host *h, const host_conf *nc, server_plan *plan, char *msg, size_t msglen);
/* After the plugins were reconciled: servers that nc no longer declares stop
 * listening (their connections stay until they close). */
void servers_retire_removed(rmq_host *h, const host_conf *nc, char *msg, size_t msglen);
/* Host settings: io_threads-independent ones take effect, the others are
 * reported as needing a restart. */
void host_settings_apply(rmq_host *h, const host_conf *nc, char *msg, size_t msglen);

uint64_t host_now_ms(void);
uint64_t host_wall_ms(void);

/* host_api.c */
void host_api_fill(rmq_host_api *api);
/* grpc_calls.c: the ABI 1.8 call entries; local_invoke.c: invoke_local */
void grpc_api_fill(rmq_host_api *api);
int local_invoke(rmq_host *h, plugin_inst *caller, const char *server, rmq_cmd *req,
                 uint32_t timeout_ms, rmq_cmd **resp);
/* dispatch.c hands a local request's answer and its end to local_invoke.c */
void local_invoke_deliver(rmq_request *req, rmq_cmd *resp);
void local_invoke_finished(rmq_request *req);
int local_invoke_async(rmq_host *h, plugin_inst *caller, const char *server, rmq_cmd *req,
                       rmq_response_fn cb, void *ud);
/* plugin_quiesce: end p's invoke_local_async calls (RMQ_ESHUTDOWN) */
void local_invoke_cancel_plugin(rmq_host *h, plugin_inst *p);

/* plugin_loader.c */
plugin_inst *plugin_load(rmq_host *h, const plugin_conf *pc, uint32_t generation, char *err,
                         size_t errlen);
int plugin_run_init(plugin_inst *p, char *err, size_t errlen);
void plugin_unload(plugin_inst *p); /* fini (if inited) + dlclose + free */
/* Ask a generation to answer what it holds deferred (descriptor quiesce). */
void plugin_quiesce(plugin_inst *p);
const char *plugin_setting_value(plugin_inst *p, const char *name);
/* Validate pc's settings against the loaded descriptor (also used by --check). */
int plugin_resolve_settings(plugin_inst *p, char *err, size_t errlen);

/* server_bindings.c */
int server_rebuild_bindings(rmq_host *h, server *s);

/* timers.c */
int timers_start(rmq_host *h);
void timers_stop(rmq_host *h);
void timers_activate(rmq_host *h, plugin_inst *p);
void timers_cancel_plugin(rmq_host *h, plugin_inst *p);
int timers_cancel(rmq_host *h, rmq_timer_id id);
/* One tick of t as the housekeeping thread runs it (inline, or handed to
 * t's executor unless a tick is still running there). */
void timers_fire(timer_rec *t);

/* server_listen.c */
int server_bind(rmq_host *h, server *s, char *err, size_t errlen);
/* Close the listening sockets (main and VIP). */
void server_close_listeners(server *s);
/* The connection came through the server's VIP listener (its I/O thread). */
bool server_conn_on_vip(connection *c);
int server_start_accepting(rmq_host *h, server *s);
void server_stop_accepting(rmq_host *h, server *s);

/* host_lifecycle.c */
int host_init(rmq_host *h, const host_conf *conf, const char *exe_dir, char *err, size_t errlen);
int host_start(rmq_host *h, char *err, size_t errlen);
void host_shutdown(rmq_host *h);
void host_destroy(rmq_host *h);
server *host_server(rmq_host *h, const char *name);
/* state_dir/listen.addrs: "NAME HOST:PORT" per listening server (tests, scripts). */
int host_write_listen_addrs(rmq_host *h);

/* socket_address.c: "ip:port", "[v6]:port" (and "localhost:port"); an
 * empty host means any address when empty_host_is_any. 0 or -1. */
struct sockaddr_storage;
int socket_address_parse(const char *spec, bool empty_host_is_any, struct sockaddr_storage *ss,
                         socklen_t *len);

/* own_address.c: addr ("ip:port") reaches one of this process's listeners. */
bool host_addr_served_here(rmq_host *h, const char *addr);

/* state_dir.c */
int state_dir_prepare(rmq_host *h, char *err, size_t errlen);
int atomic_file_write(const char *path, const void *data, size_t len);
/* Copy src to dst (created with mode); 0 or -errno (-ENOENT: no src). */
int file_copy(const char *src, const char *dst, int mode, bool sync);
int file_read_with_backup(const char *path, bool (*valid)(const char *, size_t, void *), void *ud,
                          char **data, size_t *len, bool *used_backup);

/* ABI 1.10 api->gauge (admin_stats.c): one value of a plugin's gauges into
 * the stats JSON or the Prometheus text being built. */
void admin_stats_gauge(rmq_gauge_sink *sink, const char *name, const char *help,
                       const char *const *labels, double value);

#endif
