/* proxy_client.c — the client-session RPCs: Heartbeat and
 * NotifyClientTermination (registering and unregistering the client in the
 * broker role, proxy_clients.c), and the answer to the Settings a client
 * sends on its Telemetry stream (proxy_telemetry.c): the client's own
 * settings merged with what this
 * proxy enforces (Java's GrpcClientSettingsManager): a publishing client
 * gets max_body_size and validate_message_type, every client an
 * exponential backoff policy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_internal.h"

static int reply_status_only(proxy *px, rmq_grpc_call *call, const ProtobufCMessage *msg)
{
    return proxy_reply(px, call, msg);
}

int proxy_heartbeat(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    Apache__Rocketmq__V2__HeartbeatRequest *req =
        apache__rocketmq__v2__heartbeat_request__unpack(NULL, len, msg);
    if (!req)
        return px->api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                    "HeartbeatRequest: undecodable protobuf");
    Apache__Rocketmq__V2__HeartbeatResponse resp = APACHE__ROCKETMQ__V2__HEARTBEAT_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st;
    char why[256] = "";
    const char *client_id = px->api->grpc_metadata(call, "x-mq-client-id");
    if (!client_id || !client_id[0])
        proxy_status(&st, PX_CLIENT_ID_REQUIRED, "client id cannot be empty");
    else /* registered in the broker role's client housekeeping */
        proxy_clients_heartbeat(px, call, client_id, req, &st, why, sizeof why);
    resp.status = &st;
    int rc = reply_status_only(px, call, &resp.base);
    apache__rocketmq__v2__heartbeat_request__free_unpacked(req, NULL);
    return rc;
}

int proxy_notify_client_termination(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    Apache__Rocketmq__V2__NotifyClientTerminationRequest *req =
        apache__rocketmq__v2__notify_client_termination_request__unpack(NULL, len, msg);
    if (!req)
        return px->api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                    "NotifyClientTerminationRequest: undecodable protobuf");
    Apache__Rocketmq__V2__NotifyClientTerminationResponse resp =
        APACHE__ROCKETMQ__V2__NOTIFY_CLIENT_TERMINATION_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st;
    const char *client_id = px->api->grpc_metadata(call, "x-mq-client-id");
    if (!client_id || !client_id[0]) {
        proxy_status(&st, PX_CLIENT_ID_REQUIRED, "client id cannot be empty");
    } else {
        proxy_clients_terminate(px, client_id);
        proxy_status(&st, PX_OK, NULL);
    }
    resp.status = &st;
    apache__rocketmq__v2__notify_client_termination_request__free_unpacked(req, NULL);
    return reply_status_only(px, call, &resp.base);
}

/* Answer one Settings command with the merged settings (Telemetry,
 * proxy_telemetry.c). */
int proxy_answer_settings(proxy *px, rmq_grpc_call *call, Apache__Rocketmq__V2__Settings *s)
{
    Google__Protobuf__Duration initial = GOOGLE__PROTOBUF__DURATION__INIT;
    Google__Protobuf__Duration max = GOOGLE__PROTOBUF__DURATION__INIT;
    initial.nanos = 10 * 1000 * 1000; /* 10 ms */
    max.seconds = 1;
    Apache__Rocketmq__V2__ExponentialBackoff eb = APACHE__ROCKETMQ__V2__EXPONENTIAL_BACKOFF__INIT;
    eb.initial = &initial;
    eb.max = &max;
    eb.multiplier = 2;
    Apache__Rocketmq__V2__RetryPolicy rp = APACHE__ROCKETMQ__V2__RETRY_POLICY__INIT;
    rp.max_attempts = s->backoff_policy && s->backoff_policy->max_attempts > 0
                          ? s->backoff_policy->max_attempts
                          : 3;
    rp.strategy_case = APACHE__ROCKETMQ__V2__RETRY_POLICY__STRATEGY_EXPONENTIAL_BACKOFF;
    rp.exponential_backoff = &eb;
    Apache__Rocketmq__V2__RetryPolicy *was = s->backoff_policy;
    s->backoff_policy = &rp;
    if (s->pub_sub_case == APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_PUBLISHING && s->publishing) {
        s->publishing->max_body_size = (int32_t)px->max_message_size;
        s->publishing->validate_message_type = px->validate_message_type;
    }
    Apache__Rocketmq__V2__TelemetryCommand out = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__INIT;
    Apache__Rocketmq__V2__Status st;
    proxy_status(&st, PX_OK, NULL);
    out.status = &st;
    out.command_case = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_SETTINGS;
    out.settings = s;
    int rc = proxy_reply(px, call, &out.base);
    s->backoff_policy = was; /* the unpacked message frees its own */
    return rc;
}
