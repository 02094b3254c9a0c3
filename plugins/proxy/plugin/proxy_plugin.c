/* proxy_plugin.c — the proxy plugin: RocketMQ 5.x clients' gRPC service
 * apache.rocketmq.v2.MessagingService on a `protocol = "grpc"` server (the
 * default conf.d's `proxy`, Java's 8081), answered from the NameServer and
 * broker roles of this same process through invoke_local, as Java's proxy
 * answers in "local" mode. Settings, registration and the helpers the
 * handlers share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_backend.h"
#include "proxy_cluster.h"
#include "proxy_internal.h"

/* export_state's format: proxy_clients_export's JSON array */
#define PROXY_STATE_VERSION 1

static const rmq_setting_decl proxy_settings[] = {
    {.name = "proxyMode",
     .type = RMQ_SETTING_STRING,
     .default_value = "local",
     .description = "\"local\": answer from the roles of this process (namesrvServer, "
                    "brokerServer); \"cluster\": from the NameServers of namesrvAddr and the "
                    "brokers their routes name, over outgoing remoting (Java's proxyMode)"},
    {.name = "namesrvAddr",
     .type = RMQ_SETTING_STRING,
     .default_value = "",
     .description = "cluster mode: the NameServers, host:port[;host:port...]"},
    {.name = "namesrvServer",
     .type = RMQ_SETTING_STRING,
     .default_value = "namesrv",
     .description = "host.conf server whose NameServer role answers routes (invoke_local)"},
    {.name = "brokerServer",
     .type = RMQ_SETTING_STRING,
     .default_value = "broker",
     .description = "host.conf server whose broker roles store messages (invoke_local)"},
    {.name = "maxMessageSize",
     .type = RMQ_SETTING_INT,
     .default_value = "4194304",
     .description = "Publishing.max_body_size told to producers (Java's maxMessageSize)",
     .min = 1,
     .max = 1073741824},
    {.name = "localCallTimeoutMs",
     .type = RMQ_SETTING_INT,
     .default_value = "3000",
     .description = "longest wait for a NameServer's or broker's answer (then PROXY_TIMEOUT); "
                    "cluster mode adds a POP's polling time",
     .min = 1,
     .max = 600000},
    {.name = "minLongPollingTimeoutMs",
     .type = RMQ_SETTING_INT,
     .default_value = "5000",
     .description = "shortest ReceiveMessage long poll (Java's "
                    "grpcClientConsumerMinLongPollingTimeoutMillis)",
     .min = 0,
     .max = 600000},
    {.name = "maxLongPollingTimeoutMs",
     .type = RMQ_SETTING_INT,
     .default_value = "20000",
     .description = "longest ReceiveMessage long poll (Java's "
                    "grpcClientConsumerMaxLongPollingTimeoutMillis)",
     .min = 0,
     .max = 600000},
    {.name = "enableTopicMessageTypeCheck",
     .type = RMQ_SETTING_BOOL,
     .default_value = "true",
     .description = "Publishing.validate_message_type told to producers (Java's "
                    "enableTopicMessageTypeCheck); false lets 5.x clients send FIFO, delay and "
                    "transaction messages to topics routed as NORMAL"},
    {.name = "topicRouteServiceCacheRefreshSeconds",
     .type = RMQ_SETTING_INT,
     .default_value = "20",
     .description = "a send uses a topic's route for this long before asking the NameServer "
                    "role again (Java's proxy setting of this name)",
     .min = 0,
     .max = 86400},
    {.name = "topicRouteServiceCacheExpiredSeconds",
     .type = RMQ_SETTING_INT,
     .default_value = "300",
     .description = "a cached route unused this long is dropped; also how long a route is "
                    "served when the NameServer role does not answer (Java's proxy setting)",
     .min = 1,
     .max = 86400},
    {.name = "topicRouteServiceCacheMaxNum",
     .type = RMQ_SETTING_INT,
     .default_value = "20000",
     .description = "most topics whose routes are cached; 0 asks the NameServer role on "
                    "every send (Java's proxy setting)",
     .min = 0,
     .max = 10000000},
    {.name = "executorThreads",
     .type = RMQ_SETTING_INT,
     .default_value = "8",
     .description = "threads running the gRPC handlers",
     .min = 1,
     .max = 256},
    {.name = NULL},
};

void proxy_status(Apache__Rocketmq__V2__Status *st, Apache__Rocketmq__V2__Code code,
                  const char *message)
{
    apache__rocketmq__v2__status__init(st);
    st->code = code;
    st->message = (char *)(message ? message : proxy_code_name(code));
}

const char *proxy_code_name(Apache__Rocketmq__V2__Code code)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&apache__rocketmq__v2__code__descriptor, (int)code);
    return v ? v->name : "CODE_UNSPECIFIED";
}

Apache__Rocketmq__V2__Code proxy_code_of_remoting(int32_t code)
{
    switch (code) {
    case 0: return PX_OK;
    case 2: return PX_TOO_MANY_REQUESTS; /* SYSTEM_BUSY */
    case 3: return PX_NOT_IMPLEMENTED;   /* REQUEST_CODE_NOT_SUPPORTED */
    case 26: return PX_CONSUMER_GROUP_NOT_FOUND;
    default: return PX_INTERNAL_SERVER_ERROR;
    }
}

int proxy_reply(proxy *px, rmq_grpc_call *call, const ProtobufCMessage *msg)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t stackbuf[1024];
    uint8_t *buf = n <= sizeof(stackbuf) ? stackbuf : malloc(n);
    if (!buf)
        return RMQ_ENOMEM;
    protobuf_c_message_pack(msg, buf);
    int rc = px->api->grpc_send(call, buf, n);
    if (buf != stackbuf)
        free(buf);
    return rc;
}

int proxy_reply_free(proxy *px, rmq_grpc_call *call, const ProtobufCMessage *msg,
                     ProtobufCMessage *req)
{
    int rc = proxy_reply(px, call, msg);
    protobuf_c_message_free_unpacked(req, NULL);
    return rc;
}

int proxy_local(proxy *px, const char *server, rmq_cmd *req, rmq_cmd **resp)
{
    return px->api->invoke_local(px->ctx, server, req, px->local_timeout_ms, resp);
}

/* One teardown for a failed init and for fini: a failed init calls every
 * part's fini too, whichever of them had started. */
static void proxy_free(proxy *px)
{
    if (!px)
        return;
    proxy_group_cache_fini(px);
    proxy_route_cache_fini(px);
    proxy_clients_fini(px);
    proxy_telemetry_fini(px);
    proxy_backend_fini(px);
    proxy_acl_free(px);
    free(px);
}

static int proxy_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    if (api->abi_minor < 11) /* gRPC methods, invoke_local, held calls */
        return RMQ_EINVAL;
    proxy *px = calloc(1, sizeof(*px));
    if (!px)
        return RMQ_ENOMEM;
    px->api = api;
    px->ctx = ctx;
    px->namesrv_server = api->setting_string(ctx, "namesrvServer");
    px->broker_server = api->setting_string(ctx, "brokerServer");
    px->max_message_size = api->setting_int(ctx, "maxMessageSize");
    px->local_timeout_ms = (uint32_t)api->setting_int(ctx, "localCallTimeoutMs");
    px->min_poll_ms = api->setting_int(ctx, "minLongPollingTimeoutMs");
    px->max_poll_ms = api->setting_int(ctx, "maxLongPollingTimeoutMs");
    px->validate_message_type = api->setting_bool(ctx, "enableTopicMessageTypeCheck");
    api->set_userdata(ctx, px);
    static const struct {
        const char *method;
        rmq_grpc_kind kind;
        rmq_grpc_handler_fn fn;
    } methods[] = {
        {"QueryRoute", RMQ_GRPC_UNARY, proxy_query_route},
        {"QueryAssignment", RMQ_GRPC_UNARY, proxy_query_assignment},
        {"Heartbeat", RMQ_GRPC_UNARY, proxy_heartbeat},
        {"SendMessage", RMQ_GRPC_UNARY, proxy_send_message},
        {"NotifyClientTermination", RMQ_GRPC_UNARY, proxy_notify_client_termination},
        {"Telemetry", RMQ_GRPC_BIDI_STREAMING, proxy_telemetry},
        {"ReceiveMessage", RMQ_GRPC_SERVER_STREAMING, proxy_receive_message},
        {"AckMessage", RMQ_GRPC_UNARY, proxy_ack_message},
        {"ChangeInvisibleDuration", RMQ_GRPC_UNARY, proxy_change_invisible_duration},
        {"ForwardMessageToDeadLetterQueue", RMQ_GRPC_UNARY, proxy_forward_to_dlq},
        {"PullMessage", RMQ_GRPC_SERVER_STREAMING, proxy_pull_message},
        {"GetOffset", RMQ_GRPC_UNARY, proxy_get_offset},
        {"UpdateOffset", RMQ_GRPC_UNARY, proxy_update_offset},
        {"QueryOffset", RMQ_GRPC_UNARY, proxy_query_offset},
        {"RecallMessage", RMQ_GRPC_UNARY, proxy_recall_message},
        {"EndTransaction", RMQ_GRPC_UNARY, proxy_end_transaction},
    };
    int rc = proxy_backend_init(px);
    if (rc == 0)
        rc = proxy_telemetry_init(px);
    if (rc == 0)
        rc = proxy_clients_init(px);
    if (rc == 0)
        rc = proxy_route_cache_init(px);
    if (rc == 0)
        rc = proxy_group_cache_init(px);
    if (rc == 0)
        rc = api->declare_executor(ctx, "grpc", (int)api->setting_int(ctx, "executorThreads"),
                                   10000);
    for (size_t i = 0; rc == 0 && i < sizeof(methods) / sizeof(methods[0]); i++) {
        /* In local mode SendMessage and AckMessage never block
         * (proxy_send.c, proxy_receive.c): they run on the I/O loop, without
         * an executor hand-off. Cluster mode may look a broker up first
         * with a blocking call, so they stay on the executor there. */
        bool on_io =
            !proxy_backend_is_cluster(px) && (strcmp(methods[i].method, "SendMessage") == 0 ||
                                              strcmp(methods[i].method, "AckMessage") == 0);
        rc = proxy_acl_register(px, methods[i].method, methods[i].kind, methods[i].fn,
                                on_io ? NULL : "grpc");
    }
    if (rc == 0)
        rc = proxy_transaction_init(px);
    if (rc == 0)
        rc = proxy_cluster_check_init(px);
    if (rc == 0)
        rc = proxy_clients_start_heartbeats(px, "grpc");
    if (rc == 0)
        rc = proxy_client_call_init(px);
    if (rc == 0)
        rc = api->register_admin_command(ctx, "proxy-client-command",
                                         "proxy-client-command list | stack CLIENT_ID | verify "
                                         "CLIENT_ID COMMIT_LOG_OFFSET",
                                         proxy_telemetry_admin, px);
    if (rc != 0) {
        proxy_free(px);
        return rc;
    }
    api->log(ctx, RMQ_LOG_INFO,
             "MessagingService ready: QueryRoute, QueryAssignment, Heartbeat, SendMessage, "
             "NotifyClientTermination, Telemetry, ReceiveMessage, AckMessage, "
             "ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue, EndTransaction, "
             "PullMessage, GetOffset, UpdateOffset, QueryOffset, RecallMessage (%s mode: routes "
             "from %s, messages to %s)",
             proxy_backend_is_cluster(px) ? "cluster" : "local", proxy_backend_namesrv_label(px),
             proxy_backend_broker_label(px));
    return RMQ_OK;
}

/* Held calls end before the generation goes: Telemetry streams here;
 * long-polling receives when the host ends their POP right after. */
static void proxy_quiesce(rmq_plugin_ctx *ctx)
{
    proxy_telemetry_quiesce(rmq_ctx_userdata(ctx));
}

/* Hot reload: the clients' Settings go to the next generation, so a
 * Heartbeat or a ReceiveMessage right after the reload finds them (the
 * Telemetry streams end at quiesce and the clients resend Settings only
 * when they reopen one). */
static int proxy_export_state(rmq_plugin_ctx *ctx, void **blob, size_t *len)
{
    char *text = proxy_clients_export(rmq_ctx_userdata(ctx));
    if (!text)
        return RMQ_ENOMEM;
    *blob = text;
    *len = strlen(text);
    return 0;
}

static int proxy_import_state(rmq_plugin_ctx *ctx, uint32_t version, const void *blob, size_t len)
{
    if (version != PROXY_STATE_VERSION)
        return RMQ_EINVAL;
    return proxy_clients_import(rmq_ctx_userdata(ctx), blob, len);
}

static void proxy_fini(rmq_plugin_ctx *ctx)
{
    proxy_free(rmq_ctx_userdata(ctx));
}

RMQ_PLUGIN(.name = "proxy", .version = "0.1.0",
           .description = "RocketMQ 5.x gRPC endpoint (apache.rocketmq.v2.MessagingService)",
           .settings = proxy_settings, .init = proxy_init, .fini = proxy_fini,
           .quiesce = proxy_quiesce, .state_version = PROXY_STATE_VERSION,
           .export_state = proxy_export_state, .import_state = proxy_import_state);
