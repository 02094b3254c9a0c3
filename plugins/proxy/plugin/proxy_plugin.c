/* proxy_plugin.c — the proxy plugin: RocketMQ 5.x clients' gRPC service
 * apache.rocketmq.v2.MessagingService on a `protocol = "grpc"` server (the
 * default conf.d's `proxy`, Java's 8081), answered from the NameServer and
 * broker roles of this same process through invoke_local, as Java's proxy
 * answers in "local" mode. Settings, registration and the helpers the
 * handlers share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_internal.h"

static const rmq_setting_decl proxy_settings[] = {
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
     .description = "longest wait for a broker role's answer (then PROXY_TIMEOUT)",
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

int proxy_local(proxy *px, const char *server, rmq_cmd *req, rmq_cmd **resp)
{
    return px->api->invoke_local(px->ctx, server, req, px->local_timeout_ms, resp);
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
    int rc = proxy_telemetry_init(px);
    if (rc == 0)
        rc = proxy_clients_init(px);
    if (rc == 0)
        rc = api->declare_executor(ctx, "grpc", (int)api->setting_int(ctx, "executorThreads"),
                                   10000);
    for (size_t i = 0; rc == 0 && i < sizeof(methods) / sizeof(methods[0]); i++)
        rc = proxy_acl_register(px, methods[i].method, methods[i].kind, methods[i].fn);
    if (rc == 0)
        rc = proxy_transaction_init(px);
    if (rc == 0)
        rc = api->register_admin_command(ctx, "proxy-client-command",
                                         "proxy-client-command list | stack CLIENT_ID | verify "
                                         "CLIENT_ID COMMIT_LOG_OFFSET",
                                         proxy_telemetry_admin, px);
    if (rc != 0) {
        proxy_clients_fini(px);
        proxy_telemetry_fini(px);
        proxy_acl_free(px);
        free(px);
        return rc;
    }
    api->log(ctx, RMQ_LOG_INFO,
             "MessagingService ready: QueryRoute, QueryAssignment, Heartbeat, SendMessage, "
             "NotifyClientTermination, Telemetry, ReceiveMessage, AckMessage, "
             "ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue, EndTransaction, "
             "PullMessage, GetOffset, UpdateOffset, QueryOffset, RecallMessage (routes from server "
             "%s, "
             "messages to server %s)",
             px->namesrv_server, px->broker_server);
    return RMQ_OK;
}

/* Held calls end before the generation goes: Telemetry streams here;
 * long-polling receives when the host ends their POP right after. */
static void proxy_quiesce(rmq_plugin_ctx *ctx)
{
    proxy_telemetry_quiesce(rmq_ctx_userdata(ctx));
}

static void proxy_fini(rmq_plugin_ctx *ctx)
{
    proxy *px = rmq_ctx_userdata(ctx);
    if (px) {
        proxy_clients_fini(px);
        proxy_telemetry_fini(px);
        proxy_acl_free(px);
    }
    free(px);
}

RMQ_PLUGIN(.name = "proxy", .version = "0.1.0",
           .description = "RocketMQ 5.x gRPC endpoint (apache.rocketmq.v2.MessagingService)",
           .settings = proxy_settings, .init = proxy_init, .fini = proxy_fini,
           .quiesce = proxy_quiesce);
