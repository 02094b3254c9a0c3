/* proxy_client_call_event.h — event "broker.proxy_client_call": the broker
 * role relays a request to a client that a gRPC endpoint (plugins/proxy)
 * registered for a 5.x client — GET_CONSUMER_RUNNING_INFO (307) or
 * CONSUME_MESSAGE_DIRECTLY (309) from an admin — and no connection carries
 * that client: the endpoint that owns the client's channel answers it over
 * the client's own stream (Telemetry's PrintThreadStackTraceCommand and
 * VerifyMessageCommand), as Java's proxy does in its GrpcClientChannel.
 * Such clients are registered (HEART_BEAT through invoke_local) with a
 * channel id that has RMQ_PROXY_CHANNEL_BIT set: no connection has one, so
 * the broker knows not to write remoting frames to it (and sends it no
 * NOTIFY_CONSUMER_IDS_CHANGED: a 5.x client does not rebalance). The
 * in-process HEART_BEAT also names the client's language and version
 * (proxyClientLanguage, proxyClientVersion: LanguageCode byte, MQVersion
 * ordinal) since the request's own header carries the endpoint's.
 * Header-only. */
#ifndef RMQHOST_SERVICES_PROXY_CLIENT_CALL_EVENT_H
#define RMQHOST_SERVICES_PROXY_CLIENT_CALL_EVENT_H

#include <rmqhost/rmqhost.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RMQ_PROXY_CLIENT_CALL_EVENT "broker.proxy_client_call"

/* Set in the channel id of every client a gRPC endpoint registers. */
#define RMQ_PROXY_CHANNEL_BIT (1ULL << 62)

/* What the subscriber that owns the channel fills in. */
typedef struct rmq_proxy_client_call_result {
    bool handled;      /* the channel is this subscriber's */
    int err;           /* 0, or RMQ_ETIMEDOUT (no answer in time), RMQ_ENOTCONN */
    rmq_cmd *response; /* err 0: the client's answer as a remoting response
                        * (cmd_new_response to `request`); the publisher frees it */
} rmq_proxy_client_call_result;

/* Payload of api->publish_event(ctx, RMQ_PROXY_CLIENT_CALL_EVENT, &ev,
 * sizeof ev); valid during the subscriber call only. Published from the
 * broker's admin executor: the subscriber may block up to timeout_ms. */
typedef struct rmq_proxy_client_call_event {
    uint32_t size;          /* sizeof(rmq_proxy_client_call_event) of the publisher */
    rmq_channel_id channel; /* as registered, RMQ_PROXY_CHANNEL_BIT set */
    const char *client_id;
    const char *group;
    /* the request as a remoting client would get it (309: the stored
     * message as its body, brokerName set) */
    const rmq_cmd *request;
    uint32_t timeout_ms;
    rmq_proxy_client_call_result *result;
} rmq_proxy_client_call_event;

#ifdef __cplusplus
}
#endif
#endif
