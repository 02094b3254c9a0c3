/* grpc_calls.c — dispatch of gRPC calls to plugin handlers, and the ABI 1.8
 * entries a handler answers with. A call's messages run one at a time, in
 * order, on the executor (or inline on the loop) of the method binding live
 * when each is dispatched, so a hot reload hands the next message to the new
 * generation as it hands the next remoting request. Answers made on another
 * thread travel to the connection's loop as loop tasks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <urcu.h>

#include "grpc_calls.h"
#include "grpc_wire.h"

typedef struct call_task {
    struct call_task *next;
    uint8_t *msg; /* NULL: the client half-closed (bidi) */
    size_t len;
} call_task;

struct rmq_grpc_call {
    rmq_host *host;
    io_loop *loop;
    server *srv;
    uint64_t channel;
    int32_t stream_id;
    char *path;
    char peer[64];
    char **md; /* name, value, name, value ... */
    size_t nmd;
    uint64_t deadline_ms;
    rmq_grpc_kind kind;
    atomic_int refs;
    atomic_bool gone;
    atomic_bool finished;
    atomic_bool sent_any;
    /* loop thread: the request message of a unary / server-streaming call */
    uint8_t *first;
    size_t first_len;
    int nmsgs;
    pthread_mutex_t mu; /* the task queue; the hold's on_done */
    call_task *head, *tail;
    bool running;
    grpc_method_entry entry; /* of the task being run */
    /* ABI 1.11 grpc_hold: the plugin keeps the call open past its handler.
     * on_done and the generation it belongs to are cleared (under mu) by
     * grpc_finish, or taken once by the stream's end. */
    atomic_bool held;
    rmq_grpc_done_fn on_done;
    void *on_done_ud;
    plugin_inst *on_done_plugin;
};

static void call_unref(rmq_grpc_call *call)
{
    if (atomic_fetch_sub(&call->refs, 1) != 1)
        return;
    for (call_task *t = call->head; t;) {
        call_task *n = t->next;
        free(t->msg);
        free(t);
        t = n;
    }
    free(call->md); /* the names, values and path too (grpc_call_start) */
    free(call->first);
    pthread_mutex_destroy(&call->mu);
    free(call);
}

/* ---- answers (any thread) -------------------------------------------------- */

/* One hand-off to the connection's loop: n messages (their bytes one after
 * another in msg, lens[i] each; lens NULL when n is 1: len), then the
 * finish when `finish`. */
typedef struct answer_op {
    uint64_t channel;
    int32_t stream_id;
    bool finish;
    int status;
    char *message;
    uint8_t *msg;
    size_t len;
    size_t n;
    size_t *lens;
} answer_op;

static void answer_free(answer_op *op)
{
    free(op->message);
    free(op->msg);
    free(op->lens);
    free(op);
}

static void answer_apply(io_loop *l, void *arg)
{
    answer_op *op = arg;
    connection *c = loop_find_conn(l, op->channel);
    if (c)
        grpc_conn_answer(c, op->stream_id, op->msg, op->lens ? op->lens : &op->len, op->n,
                         op->finish, op->status, op->message);
    answer_free(op);
}

static int answer_post(rmq_grpc_call *call, answer_op *op)
{
    op->channel = call->channel;
    op->stream_id = call->stream_id;
    if (loop_is_current(call->loop)) {
        answer_apply(call->loop, op);
        return 0;
    }
    loop_task *t = calloc(1, sizeof(*t));
    if (!t) {
        answer_free(op);
        return RMQ_ENOMEM;
    }
    t->type = LT_CALL;
    t->fn = answer_apply;
    t->arg = op;
    loop_post(call->loop, t);
    return 0;
}

static int call_send(rmq_grpc_call *call, const void *msg, size_t len)
{
    if (!call || (!msg && len))
        return RMQ_EINVAL;
    if (atomic_load(&call->gone) || atomic_load(&call->finished))
        return RMQ_ENOTCONN;
    answer_op *op = calloc(1, sizeof(*op));
    if (!op || (len && !(op->msg = malloc(len)))) {
        free(op);
        return RMQ_ENOMEM;
    }
    if (len)
        memcpy(op->msg, msg, len);
    op->len = len;
    op->n = 1;
    atomic_store(&call->sent_any, true);
    return answer_post(call, op);
}

static int call_finish(rmq_grpc_call *call, int status, const char *message)
{
    if (!call || status < 0 || status > 16)
        return RMQ_EINVAL;
    pthread_mutex_lock(&call->mu);
    bool was = atomic_exchange(&call->finished, true);
    call->on_done = NULL; /* never told after grpc_finish has returned */
    pthread_mutex_unlock(&call->mu);
    if (was || atomic_load(&call->gone))
        return RMQ_ENOTCONN;
    answer_op *op = calloc(1, sizeof(*op));
    if (!op)
        return RMQ_ENOMEM;
    op->finish = true;
    op->status = status;
    if (message && !(op->message = strdup(message))) {
        free(op);
        return RMQ_ENOMEM;
    }
    return answer_post(call, op);
}

/* ABI 1.13: the messages and the finish as one loop task. */
static int call_send_batch(rmq_grpc_call *call, const rmq_grpc_msg *msgs, size_t n,
                           int finish_status, const char *finish_message)
{
    bool finish = finish_status != RMQ_GRPC_NO_FINISH;
    if (!call || (n && !msgs) || (finish && (finish_status < 0 || finish_status > 16)))
        return RMQ_EINVAL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (!msgs[i].data && msgs[i].len)
            return RMQ_EINVAL;
        total += msgs[i].len;
    }
    if (atomic_load(&call->gone) || atomic_load(&call->finished))
        return RMQ_ENOTCONN;
    answer_op *op = calloc(1, sizeof(*op));
    if (!op || (total && !(op->msg = malloc(total))) ||
        (n && !(op->lens = malloc(n * sizeof(size_t)))) ||
        (finish && finish_message && !(op->message = strdup(finish_message)))) {
        if (op)
            answer_free(op);
        return RMQ_ENOMEM;
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (msgs[i].len)
            memcpy(op->msg + at, msgs[i].data, msgs[i].len);
        op->lens[i] = msgs[i].len;
        at += msgs[i].len;
    }
    op->len = total;
    op->n = n;
    if (n)
        atomic_store(&call->sent_any, true);
    if (finish) {
        /* as call_finish: claimed once, on_done no longer told */
        pthread_mutex_lock(&call->mu);
        bool was = atomic_exchange(&call->finished, true);
        call->on_done = NULL;
        pthread_mutex_unlock(&call->mu);
        if (was || atomic_load(&call->gone)) {
            answer_free(op);
            return RMQ_ENOTCONN;
        }
        op->finish = true;
        op->status = finish_status;
    }
    return answer_post(call, op);
}

/* ---- dispatch ------------------------------------------------------------------ */

static void dispatch_next(rmq_grpc_call *call);

/* Drop what is queued and let the call go idle for good. */
static void stop_running(rmq_grpc_call *call)
{
    pthread_mutex_lock(&call->mu);
    call_task *t = call->head;
    call->head = call->tail = NULL;
    call->running = false;
    pthread_mutex_unlock(&call->mu);
    while (t) {
        call_task *n = t->next;
        free(t->msg);
        free(t);
        t = n;
    }
    call_unref(call); /* the running reference */
}

static void after_handler(rmq_grpc_call *call, call_task *t, int rc)
{
    if (atomic_load(&call->finished))
        return;
    if (atomic_load(&call->held)) {
        /* the plugin answers later; a failing handler still ends it */
        if (rc < 0)
            call_finish(call, RMQ_GRPC_INTERNAL, rmq_strerror(rc));
        return;
    }
    char why[160];
    if (call->kind == RMQ_GRPC_BIDI_STREAMING) {
        if (!t->msg)
            call_finish(call, rc < 0 ? RMQ_GRPC_INTERNAL : RMQ_GRPC_OK,
                        rc < 0 ? rmq_strerror(rc) : NULL);
        else if (rc < 0) {
            snprintf(why, sizeof(why), "%s", rmq_strerror(rc));
            call_finish(call, RMQ_GRPC_INTERNAL, why);
        }
        return;
    }
    if (rc < 0)
        call_finish(call, RMQ_GRPC_INTERNAL, rmq_strerror(rc));
    else if (call->kind == RMQ_GRPC_UNARY && !atomic_load(&call->sent_any))
        call_finish(call, RMQ_GRPC_INTERNAL, "no response message");
    else
        call_finish(call, RMQ_GRPC_OK, NULL);
}

static void run_task(void *arg)
{
    rmq_grpc_call *call = arg;
    pthread_mutex_lock(&call->mu);
    call_task *t = call->head;
    if (t) {
        call->head = t->next;
        if (!call->head)
            call->tail = NULL;
    }
    pthread_mutex_unlock(&call->mu);
    grpc_method_entry e = call->entry;
    if (t && !atomic_load(&call->gone) && !atomic_load(&call->finished)) {
        if (call->deadline_ms && host_now_ms() > call->deadline_ms) {
            call_finish(call, RMQ_GRPC_DEADLINE_EXCEEDED, "deadline exceeded before processing");
        } else {
            int rc = e.fn(call, t->msg, t->len, e.ud); /* msg NULL: half-close */
            after_handler(call, t, rc);
        }
    }
    atomic_fetch_add(&e.plugin->served, 1);
    atomic_fetch_sub(&e.plugin->inflight, 1);
    if (t) {
        free(t->msg);
        free(t);
    }
    if (atomic_load(&call->gone) || atomic_load(&call->finished)) {
        stop_running(call);
        return;
    }
    pthread_mutex_lock(&call->mu);
    bool more = call->head != NULL;
    if (!more)
        call->running = false;
    pthread_mutex_unlock(&call->mu);
    if (more)
        dispatch_next(call);
    else
        call_unref(call);
}

static void run_on_loop(io_loop *l, void *arg)
{
    (void)l;
    run_task(arg);
}

static void retry_on_loop(io_loop *l, void *arg)
{
    (void)l;
    dispatch_next(arg);
}

static void post_to_loop(rmq_grpc_call *call, void (*fn)(io_loop *, void *))
{
    loop_task *lt = calloc(1, sizeof(*lt));
    if (!lt) {
        call_finish(call, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
        stop_running(call);
        return;
    }
    lt->type = LT_CALL;
    lt->fn = fn;
    lt->arg = call;
    loop_post(call->loop, lt);
}

/* Run the head task with the binding live now. Holds the running reference. */
static void dispatch_next(rmq_grpc_call *call)
{
    rcu_read_lock();
    server_bindings *b = rcu_dereference(call->srv->bindings);
    const grpc_method_entry *pe = b ? bindings_lookup_grpc(b, call->path) : NULL;
    grpc_method_entry e = pe ? *pe : (grpc_method_entry){0};
    if (pe)
        atomic_fetch_add(&e.plugin->inflight, 1);
    rcu_read_unlock();
    if (!pe) {
        call_finish(call, RMQ_GRPC_UNIMPLEMENTED, "the method's plugin is no longer loaded");
        stop_running(call);
        return;
    }
    if (atomic_load(&e.plugin->held)) {
        /* a reload is swapping this generation (about a millisecond): ask
         * again from the loop, which the swap does not wait for */
        atomic_fetch_sub(&e.plugin->inflight, 1);
        post_to_loop(call, retry_on_loop);
        return;
    }
    call->entry = e;
    if (e.ex) {
        if (executor_submit(e.ex, run_task, call) != 0) {
            atomic_fetch_sub(&e.plugin->inflight, 1);
            call_finish(call, RMQ_GRPC_RESOURCE_EXHAUSTED,
                        "[OVERLOAD]system busy, start flow control for a while");
            stop_running(call);
        }
        return;
    }
    if (loop_is_current(call->loop))
        run_task(call);
    else
        post_to_loop(call, run_on_loop);
}

static void enqueue(rmq_grpc_call *call, uint8_t *msg, size_t len)
{
    call_task *t = calloc(1, sizeof(*t));
    if (!t) {
        free(msg);
        call_finish(call, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    t->msg = msg;
    t->len = len;
    pthread_mutex_lock(&call->mu);
    if (call->tail)
        call->tail->next = t;
    else
        call->head = t;
    call->tail = t;
    bool start = !call->running;
    call->running = true;
    pthread_mutex_unlock(&call->mu);
    if (start) {
        atomic_fetch_add(&call->refs, 1); /* the running reference */
        dispatch_next(call);
    }
}

static uint8_t *copy_msg(const uint8_t *msg, size_t len)
{
    uint8_t *m = malloc(len ? len : 1);
    if (m && len)
        memcpy(m, msg, len);
    return m;
}

/* ---- the session's side (loop thread) ------------------------------------------- */

rmq_grpc_call *grpc_call_start(connection *c, int32_t stream_id, const grpc_h2_call_info *info)
{
    rmq_grpc_call *call = calloc(1, sizeof(*call));
    if (!call)
        return NULL;
    call->host = c->loop->host;
    call->loop = c->loop;
    call->srv = c->srv;
    call->channel = c->id;
    call->stream_id = stream_id;
    memcpy(call->peer, c->peer, sizeof(call->peer));
    pthread_mutex_init(&call->mu, NULL);
    atomic_init(&call->refs, 1); /* the session's */
    /* One block: the name/value pointers, then the texts they point to and
     * the path (a strdup each was ~20 mallocs and frees per call, a tenth
     * of a 5.x send's instructions with their frees). */
    size_t nptr = info->nheaders * 2 + 1, bytes = strlen(info->path) + 1;
    for (size_t i = 0; i < info->nheaders; i++)
        bytes += strlen(info->headers[i].name) + strlen(info->headers[i].value) + 2;
    call->md = malloc(nptr * sizeof(char *) + bytes);
    if (!call->md) {
        call_unref(call);
        return NULL;
    }
    char *text = (char *)(call->md + nptr);
    for (size_t i = 0; i < info->nheaders; i++) {
        for (int k = 0; k < 2; k++) {
            const char *v = k ? info->headers[i].value : info->headers[i].name;
            size_t len = strlen(v) + 1;
            memcpy(text, v, len);
            call->md[call->nmd++] = text;
            text += len;
        }
    }
    call->md[call->nmd] = NULL;
    memcpy(text, info->path, strlen(info->path) + 1);
    call->path = text;
    if (info->timeout_ms)
        call->deadline_ms = host_now_ms() + info->timeout_ms;
    atomic_fetch_add(&c->srv->requests, 1);
    rcu_read_lock();
    server_bindings *b = rcu_dereference(c->srv->bindings);
    const grpc_method_entry *pe = b ? bindings_lookup_grpc(b, call->path) : NULL;
    bool known = pe != NULL;
    if (pe)
        call->kind = pe->kind;
    rcu_read_unlock();
    if (!known) {
        /* grpc-java's words for an unknown method */
        char why[300];
        snprintf(why, sizeof(why), "Method not found: %s", call->path + 1);
        atomic_fetch_add(&c->srv->errors, 1);
        call_finish(call, RMQ_GRPC_UNIMPLEMENTED, why);
    }
    return call;
}

void grpc_call_message(rmq_grpc_call *call, const uint8_t *msg, size_t len)
{
    if (atomic_load(&call->finished))
        return;
    if (call->kind == RMQ_GRPC_BIDI_STREAMING) {
        uint8_t *m = copy_msg(msg, len);
        if (!m) {
            call_finish(call, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
            return;
        }
        enqueue(call, m, len);
        return;
    }
    if (++call->nmsgs > 1) {
        call_finish(call, RMQ_GRPC_INTERNAL, "Too many requests");
        return;
    }
    call->first = copy_msg(msg, len);
    call->first_len = len;
    if (!call->first)
        call_finish(call, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
}

void grpc_call_half_close(rmq_grpc_call *call)
{
    if (atomic_load(&call->finished))
        return;
    if (call->kind == RMQ_GRPC_BIDI_STREAMING) {
        enqueue(call, NULL, 0);
        return;
    }
    if (call->nmsgs == 0) {
        call_finish(call, RMQ_GRPC_INTERNAL, "Half-closed without a request");
        return;
    }
    uint8_t *m = call->first;
    call->first = NULL;
    enqueue(call, m, call->first_len);
}

/* Tell a held call's plugin that the call ended without its grpc_finish,
 * with its generation counted in flight so that an unload waits for the
 * callback (under mu: a concurrent grpc_finish either cleared on_done first
 * or finds the call finished). `finish` also marks the call finished, for an
 * end the host answers itself (the deadline). */
static void tell_done(rmq_grpc_call *call, bool finish)
{
    pthread_mutex_lock(&call->mu);
    bool was = atomic_load(&call->finished);
    if (finish)
        atomic_store(&call->finished, true);
    rmq_grpc_done_fn fn = was ? NULL : call->on_done;
    void *ud = call->on_done_ud;
    plugin_inst *p = call->on_done_plugin;
    call->on_done = NULL;
    if (fn)
        atomic_fetch_add(&p->inflight, 1);
    pthread_mutex_unlock(&call->mu);
    if (fn) {
        fn(call, ud);
        atomic_fetch_sub(&p->inflight, 1);
    }
}

void grpc_call_gone(rmq_grpc_call *call)
{
    atomic_store(&call->gone, true);
    tell_done(call, false);
    call_unref(call);
}

void grpc_call_tick(connection *c, rmq_grpc_call *call, uint64_t now_ms)
{
    /* only held calls: a running handler is not interrupted, and a call
     * nobody holds is finished when its handler returns */
    if (!atomic_load(&call->held) || !call->deadline_ms || now_ms <= call->deadline_ms ||
        atomic_load(&call->finished) || atomic_load(&call->gone))
        return;
    pthread_mutex_lock(&call->mu);
    bool was = atomic_load(&call->finished);
    pthread_mutex_unlock(&call->mu);
    if (was)
        return;
    /* finished (no more answers from the plugin) and on_done told, then the
     * status, as grpc-java's server answers DEADLINE_EXCEEDED when the
     * deadline passes. Writing it may close the stream, whose end drops the
     * session's reference, and on_done may drop the plugin's: ours keeps the
     * call alive meanwhile. */
    atomic_fetch_add(&call->refs, 1);
    tell_done(call, true);
    grpc_conn_finish(c, call->stream_id, RMQ_GRPC_DEADLINE_EXCEEDED, "deadline exceeded");
    call_unref(call);
}

/* ---- the ABI 1.8 entries --------------------------------------------------------- */

static const char *call_metadata(const rmq_grpc_call *call, const char *name)
{
    if (!call || !name)
        return NULL;
    for (size_t i = 0; i + 1 < call->nmd; i += 2)
        if (strcasecmp(call->md[i], name) == 0)
            return call->md[i + 1];
    return NULL;
}

static const char *call_path(const rmq_grpc_call *call)
{
    return call ? call->path : NULL;
}

static const char *call_peer(const rmq_grpc_call *call)
{
    return call ? call->peer : NULL;
}

static rmq_channel_id call_channel(const rmq_grpc_call *call)
{
    return call ? call->channel : 0;
}

static uint64_t call_deadline(const rmq_grpc_call *call)
{
    return call ? call->deadline_ms : 0;
}

static int call_hold(rmq_grpc_call *call, rmq_grpc_done_fn on_done, void *ud)
{
    if (!call)
        return RMQ_EINVAL;
    pthread_mutex_lock(&call->mu);
    int rc = 0;
    if (atomic_load(&call->held))
        rc = RMQ_EEXIST;
    else if (atomic_load(&call->gone) || atomic_load(&call->finished))
        rc = RMQ_ENOTCONN;
    else if (!call->entry.plugin)
        rc = RMQ_EINVAL; /* not during a handler */
    else if (atomic_load(&call->entry.plugin->quiesced))
        rc = RMQ_ESHUTDOWN; /* its quiesce could no longer answer it */
    if (rc == 0) {
        atomic_fetch_add(&call->refs, 1); /* the plugin's, until grpc_release */
        atomic_store(&call->held, true);
        call->on_done = on_done;
        call->on_done_ud = ud;
        call->on_done_plugin = call->entry.plugin;
    }
    pthread_mutex_unlock(&call->mu);
    return rc;
}

static void call_release(rmq_grpc_call *call)
{
    if (call)
        call_unref(call);
}

void grpc_api_fill(rmq_host_api *a)
{
    a->grpc_hold = call_hold;
    a->grpc_release = call_release;
    a->grpc_send = call_send;
    a->grpc_finish = call_finish;
    a->grpc_send_batch = call_send_batch;
    a->grpc_metadata = call_metadata;
    a->grpc_call_path = call_path;
    a->grpc_call_peer = call_peer;
    a->grpc_call_channel = call_channel;
    a->grpc_call_deadline_ms = call_deadline;
}
