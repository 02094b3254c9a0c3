/* grpc_echo_plugin.c — "grpc_echo", the SDK's example gRPC service, written
 * only against <rmqhost/rmqhost.h>. It binds to a server declared with
 * `protocol = "grpc"` and serves service rmqhost.example.Echo. Messages are
 * raw bytes (a plugin may use any serializer; protobuf is the usual one):
 *   Say     unary             the request echoed back
 *   Repeat  server-streaming  first byte n (0-100), the rest sent back n times
 *   Chat    bidi-streaming    each message echoed as it comes; "bye" once the
 *                             client has half-closed
 *   Fail    unary             finishes INVALID_ARGUMENT with the request text
 *                             as grpc-message
 *   Remote  unary             the request is a remoting request code in
 *                             decimal; it is sent with invoke_local to the
 *                             remoting server named by setting
 *                             `remoting_server` and the answer comes back as
 *                             "<code> <remark>"
 *   Later   unary             as Remote, but without blocking (ABI 1.11):
 *                             the call is held (grpc_hold), the request
 *                             goes out with invoke_local_async, and the
 *                             answer is sent and the call finished from the
 *                             callback, on whatever thread answered (code
 *                             9002 of the echo example: its executor, after
 *                             a delay)
 *   Hang    unary             held and never answered: it ends when the
 *                             client cancels or disconnects (on_done) or at
 *                             a reload or shutdown (quiesce: UNAVAILABLE)
 *   Burst   server-streaming  request "N SIZE STATUS": N messages of SIZE
 *                             bytes ("<i>:" then byte i % 251), then status
 *                             STATUS with grpc-message "burst", all in one
 *                             grpc_send_batch (ABI 1.13; registered on a
 *                             host that has it)
 * Executor "grpc" runs them all (Remote blocks on invoke_local).
 * Admin: `rmqhostctl grpc-echo-held` prints "held N ended_by_client M".
 */
#include <rmqhost/rmqhost.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVICE "/rmqhost.example.Echo/"

static const rmq_setting_decl grpc_echo_settings[] = {
    {.name = "remoting_server",
     .type = RMQ_SETTING_STRING,
     .default_value = "broker",
     .description = "remoting server the Remote method calls through invoke_local"},
    {.name = NULL},
};

/* A held Hang call. Whoever takes it off the list (on_done, quiesce)
 * finishes it if it can and releases it: exactly one of them. */
typedef struct grpc_echo grpc_echo;
typedef struct hung {
    struct hung *prev, *next;
    rmq_grpc_call *call;
    grpc_echo *g;
} hung;

struct grpc_echo {
    const rmq_host_api *api;
    rmq_plugin_ctx *ctx;
    const char *remoting_server; /* owned by the host until fini */
    pthread_mutex_t mu;          /* the hung list */
    hung *hung;
    atomic_long held;            /* Hang calls held now */
    atomic_long ended_by_client; /* Hang calls whose client cancelled or left */
};

static int say(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    grpc_echo *g = ud;
    return g->api->grpc_send(call, msg, len);
    /* returning without grpc_finish: the host finishes a unary call OK */
}

static int repeat(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    grpc_echo *g = ud;
    const unsigned char *m = msg;
    if (len == 0 || m[0] > 100)
        return g->api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT, "first byte: count 0-100");
    for (unsigned i = 0; i < m[0]; i++) {
        int rc = g->api->grpc_send(call, m + 1, len - 1);
        if (rc < 0)
            return rc; /* the client left */
    }
    return g->api->grpc_finish(call, RMQ_GRPC_OK, NULL);
}

static int burst(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    grpc_echo *g = ud;
    char text[64];
    snprintf(text, sizeof(text), "%.*s", (int)(len < 63 ? len : 63), (const char *)msg);
    unsigned n = 0, size = 0;
    int status = 0;
    if (sscanf(text, "%u %u %d", &n, &size, &status) != 3 || n > 4096 || size < 16 ||
        size > 65536 || status < 0 || status > 16)
        return g->api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT, "N SIZE STATUS");
    rmq_grpc_msg *m = calloc(n ? n : 1, sizeof(*m));
    unsigned char *bytes = malloc((size_t)n * size + 1);
    int rc = RMQ_ENOMEM;
    if (m && bytes) {
        for (unsigned i = 0; i < n; i++) {
            unsigned char *b = bytes + (size_t)i * size;
            memset(b, (int)(i % 251), size);
            int k = snprintf((char *)b, size, "%u:", i);
            b[k] = (unsigned char)(i % 251); /* over snprintf's NUL */
            m[i].data = b;
            m[i].len = size;
        }
        rc = g->api->grpc_send_batch(call, m, n, status, "burst");
    }
    free(m);
    free(bytes);
    return rc;
}

static int chat(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    grpc_echo *g = ud;
    if (msg == NULL) /* half-close: the last word, then the host ends the call OK */
        return g->api->grpc_send(call, "bye", 3);
    return g->api->grpc_send(call, msg, len);
}

static int fail(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    grpc_echo *g = ud;
    char text[256];
    snprintf(text, sizeof(text), "%.*s", (int)(len < 255 ? len : 255), (const char *)msg);
    return g->api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT, text);
}

static int remote(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    grpc_echo *g = ud;
    const rmq_host_api *api = g->api;
    char text[16];
    snprintf(text, sizeof(text), "%.*s", (int)(len < 15 ? len : 15), (const char *)msg);
    char *end;
    long code = strtol(text, &end, 10);
    if (end == text || *end)
        return api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT, "a request code in decimal");
    rmq_cmd *req = api->cmd_new_request((int32_t)code);
    if (!req)
        return RMQ_ENOMEM;
    rmq_cmd *resp = NULL;
    int rc = api->invoke_local(g->ctx, g->remoting_server, req, 3000, &resp);
    if (rc < 0)
        return api->grpc_finish(call, RMQ_GRPC_UNAVAILABLE, rmq_strerror(rc));
    char out[512];
    const char *remark = api->cmd_remark(resp);
    int n = snprintf(out, sizeof(out), "%d %s", api->cmd_code(resp), remark ? remark : "");
    api->cmd_free(resp);
    return api->grpc_send(call, out, (size_t)(n < (int)sizeof(out) ? n : (int)sizeof(out) - 1));
}

/* A Later call waiting for its remoting answer. */
typedef struct later {
    grpc_echo *g;
    rmq_grpc_call *call;
} later;

/* Later's callback: the answer to the remoting request, on the thread that
 * gave it (err < 0: none came). The call may be gone by now (the client
 * cancelled): grpc_send / grpc_finish then answer RMQ_ENOTCONN, harmlessly. */
static void later_answer(int err, const rmq_cmd *resp, void *ud)
{
    later *l = ud;
    const rmq_host_api *api = l->g->api;
    if (err < 0) {
        api->grpc_finish(l->call, RMQ_GRPC_UNAVAILABLE, rmq_strerror(err));
    } else {
        char out[512];
        const char *remark = api->cmd_remark(resp);
        int n = snprintf(out, sizeof(out), "%d %s", api->cmd_code(resp), remark ? remark : "");
        api->grpc_send(l->call, out, (size_t)(n < (int)sizeof(out) ? n : (int)sizeof(out) - 1));
        api->grpc_finish(l->call, RMQ_GRPC_OK, NULL);
    }
    api->grpc_release(l->call);
    free(l);
}

static int later_call(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    grpc_echo *g = ud;
    const rmq_host_api *api = g->api;
    char text[16];
    snprintf(text, sizeof(text), "%.*s", (int)(len < 15 ? len : 15), (const char *)msg);
    char *end;
    long code = strtol(text, &end, 10);
    if (end == text || *end)
        return api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT, "a request code in decimal");
    later *l = calloc(1, sizeof(*l));
    rmq_cmd *req = l ? api->cmd_new_request((int32_t)code) : NULL;
    if (!req) {
        free(l);
        return RMQ_ENOMEM;
    }
    l->g = g;
    l->call = call;
    /* no on_done: the remoting answer comes in bounded time and finds the
     * call gone if the client left */
    int rc = api->grpc_hold(call, NULL, NULL);
    if (rc < 0) {
        api->cmd_free(req);
        free(l);
        return rc;
    }
    rc = api->invoke_local_async(g->ctx, g->remoting_server, req, later_answer, l);
    if (rc < 0) {
        api->grpc_finish(call, RMQ_GRPC_UNAVAILABLE, rmq_strerror(rc));
        api->grpc_release(call);
        free(l);
    }
    return 0; /* held: the host leaves the call open */
}

/* Take h off the list; false when someone else already did. */
static bool hung_take(grpc_echo *g, hung *h)
{
    pthread_mutex_lock(&g->mu);
    bool mine = h->prev || h->next || g->hung == h;
    if (mine) {
        if (h->prev)
            h->prev->next = h->next;
        else
            g->hung = h->next;
        if (h->next)
            h->next->prev = h->prev;
        h->prev = h->next = NULL;
    }
    pthread_mutex_unlock(&g->mu);
    return mine;
}

/* on_done of a Hang call (IO thread): the client cancelled or left. */
static void hang_done(rmq_grpc_call *call, void *ud)
{
    hung *h = ud;
    grpc_echo *g = h->g;
    if (!hung_take(g, h))
        return; /* quiesce has it */
    atomic_fetch_sub(&g->held, 1);
    atomic_fetch_add(&g->ended_by_client, 1);
    g->api->grpc_release(call);
    free(h);
}

static int hang_call(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    (void)msg;
    (void)len;
    grpc_echo *g = ud;
    hung *h = calloc(1, sizeof(*h));
    if (!h)
        return RMQ_ENOMEM;
    h->call = call;
    h->g = g;
    /* listed before the hold: on_done may run as soon as the hold is taken */
    pthread_mutex_lock(&g->mu);
    h->next = g->hung;
    if (g->hung)
        g->hung->prev = h;
    g->hung = h;
    pthread_mutex_unlock(&g->mu);
    atomic_fetch_add(&g->held, 1);
    int rc = g->api->grpc_hold(call, hang_done, h);
    if (rc < 0 && hung_take(g, h)) {
        atomic_fetch_sub(&g->held, 1);
        free(h);
        return rc;
    }
    return 0;
}

/* Before a reload or shutdown waits for the generation: every held call is
 * answered now (the next generation knows nothing of them). */
static void grpc_echo_quiesce(rmq_plugin_ctx *ctx)
{
    grpc_echo *g = rmq_ctx_userdata(ctx);
    for (;;) {
        pthread_mutex_lock(&g->mu);
        hung *h = g->hung;
        pthread_mutex_unlock(&g->mu);
        if (!h || !hung_take(g, h))
            break;
        g->api->grpc_finish(h->call, RMQ_GRPC_UNAVAILABLE, "grpc_echo is reloading");
        g->api->grpc_release(h->call);
        atomic_fetch_sub(&g->held, 1);
        free(h);
    }
}

static int held_admin(rmq_admin_call *call, int argc, const char *const *argv, void *ud)
{
    (void)argc;
    (void)argv;
    grpc_echo *g = ud;
    g->api->admin_write(call, "held %ld ended_by_client %ld\n", atomic_load(&g->held),
                        atomic_load(&g->ended_by_client));
    return 0;
}

static int grpc_echo_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    /* register_grpc_method and invoke_local arrived with ABI 1.8, grpc_hold
     * and invoke_local_async with 1.11 */
    if (api->abi_minor < 11)
        return RMQ_EINVAL;
    grpc_echo *g = calloc(1, sizeof(*g));
    if (!g)
        return RMQ_ENOMEM;
    g->api = api;
    g->ctx = ctx;
    g->remoting_server = api->setting_string(ctx, "remoting_server");
    pthread_mutex_init(&g->mu, NULL);
    api->set_userdata(ctx, g);
    static const struct {
        const char *path;
        rmq_grpc_kind kind;
        rmq_grpc_handler_fn fn;
    } methods[] = {
        {SERVICE "Say", RMQ_GRPC_UNARY, say},
        {SERVICE "Repeat", RMQ_GRPC_SERVER_STREAMING, repeat},
        {SERVICE "Chat", RMQ_GRPC_BIDI_STREAMING, chat},
        {SERVICE "Fail", RMQ_GRPC_UNARY, fail},
        {SERVICE "Remote", RMQ_GRPC_UNARY, remote},
        {SERVICE "Later", RMQ_GRPC_UNARY, later_call},
        {SERVICE "Hang", RMQ_GRPC_UNARY, hang_call},
    };
    int rc = api->declare_executor(ctx, "grpc", 4, 1024);
    for (size_t i = 0; rc == 0 && i < sizeof(methods) / sizeof(methods[0]); i++)
        rc = api->register_grpc_method(ctx, methods[i].path, methods[i].kind, methods[i].fn, g,
                                       "grpc");
    if (rc == 0 && api->abi_minor >= 13) /* grpc_send_batch */
        rc = api->register_grpc_method(ctx, SERVICE "Burst", RMQ_GRPC_SERVER_STREAMING, burst, g,
                                       "grpc");
    if (rc == 0)
        rc = api->register_admin_command(ctx, "grpc-echo-held", "grpc-echo-held", held_admin, g);
    if (rc != 0) {
        pthread_mutex_destroy(&g->mu);
        free(g);
        return rc; /* init failed: fini is not called */
    }
    return RMQ_OK;
}

static void grpc_echo_fini(rmq_plugin_ctx *ctx)
{
    grpc_echo *g = rmq_ctx_userdata(ctx);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

RMQ_PLUGIN(.name = "grpc_echo", .version = "1.0.0",
           .description = "example gRPC service rmqhost.example.Echo (SDK example)",
           .settings = grpc_echo_settings, .init = grpc_echo_init, .fini = grpc_echo_fini,
           .quiesce = grpc_echo_quiesce);
