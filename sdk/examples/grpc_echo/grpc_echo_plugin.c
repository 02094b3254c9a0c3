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
 * Executor "grpc" runs them all (Remote blocks on invoke_local).
 */
#include <rmqhost/rmqhost.h>

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

typedef struct grpc_echo {
    const rmq_host_api *api;
    rmq_plugin_ctx *ctx;
    const char *remoting_server; /* owned by the host until fini */
} grpc_echo;

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

static int grpc_echo_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    /* register_grpc_method and invoke_local arrived with ABI 1.8 */
    if (api->abi_minor < 8)
        return RMQ_EINVAL;
    grpc_echo *g = calloc(1, sizeof(*g));
    if (!g)
        return RMQ_ENOMEM;
    g->api = api;
    g->ctx = ctx;
    g->remoting_server = api->setting_string(ctx, "remoting_server");
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
    };
    int rc = api->declare_executor(ctx, "grpc", 4, 1024);
    for (size_t i = 0; rc == 0 && i < sizeof(methods) / sizeof(methods[0]); i++)
        rc = api->register_grpc_method(ctx, methods[i].path, methods[i].kind, methods[i].fn, g,
                                       "grpc");
    if (rc != 0) {
        free(g);
        return rc; /* init failed: fini is not called */
    }
    return RMQ_OK;
}

static void grpc_echo_fini(rmq_plugin_ctx *ctx)
{
    free(rmq_ctx_userdata(ctx));
}

RMQ_PLUGIN(.name = "grpc_echo", .version = "1.0.0",
           .description = "example gRPC service rmqhost.example.Echo (SDK example)",
           .settings = grpc_echo_settings, .init = grpc_echo_init, .fini = grpc_echo_fini);
