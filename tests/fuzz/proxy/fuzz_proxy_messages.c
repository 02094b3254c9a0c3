/* fuzz_proxy_messages.c — every protobuf message the proxy plugin decodes
 * from a client (QueryRouteRequest, SendMessageRequest, HeartbeatRequest,
 * NotifyClientTerminationRequest, TelemetryCommand, QueryAssignmentRequest,
 * ReceiveMessageRequest, AckMessageRequest, ChangeInvisibleDurationRequest,
 * ForwardMessageToDeadLetterQueueRequest, GetOffsetRequest,
 * UpdateOffsetRequest, QueryOffsetRequest, PullMessageRequest,
 * RecallMessageRequest), through the same
 * protobuf-c generated code: the first byte picks the message, the rest is
 * unpacked, walked the way the handlers read it, re-packed and freed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apache/rocketmq/v2/service.pb-c.h"

static const ProtobufCMessageDescriptor *const DESCRIPTORS[] = {
    &apache__rocketmq__v2__query_route_request__descriptor,
    &apache__rocketmq__v2__send_message_request__descriptor,
    &apache__rocketmq__v2__heartbeat_request__descriptor,
    &apache__rocketmq__v2__notify_client_termination_request__descriptor,
    &apache__rocketmq__v2__telemetry_command__descriptor,
    &apache__rocketmq__v2__query_assignment_request__descriptor,
    &apache__rocketmq__v2__receive_message_request__descriptor,
    &apache__rocketmq__v2__ack_message_request__descriptor,
    &apache__rocketmq__v2__change_invisible_duration_request__descriptor,
    &apache__rocketmq__v2__forward_message_to_dead_letter_queue_request__descriptor,
    &apache__rocketmq__v2__get_offset_request__descriptor,
    &apache__rocketmq__v2__update_offset_request__descriptor,
    &apache__rocketmq__v2__query_offset_request__descriptor,
    &apache__rocketmq__v2__pull_message_request__descriptor,
    &apache__rocketmq__v2__recall_message_request__descriptor,
};

static volatile size_t sink;

/* What proxy_send.c reads of a message. */
static void walk_send(const Apache__Rocketmq__V2__SendMessageRequest *r)
{
    for (size_t i = 0; i < r->n_messages; i++) {
        const Apache__Rocketmq__V2__Message *m = r->messages[i];
        if (m->topic && m->topic->name)
            sink += strlen(m->topic->name);
        for (size_t k = 0; k < m->n_user_properties; k++)
            sink += m->user_properties[k]->key ? strlen(m->user_properties[k]->key) : 0;
        const Apache__Rocketmq__V2__SystemProperties *sp = m->system_properties;
        if (sp) {
            for (size_t k = 0; k < sp->n_keys; k++)
                sink += strlen(sp->keys[k]);
            if (sp->message_id)
                sink += strlen(sp->message_id);
            if (sp->message_group)
                sink += strlen(sp->message_group);
            if (sp->born_timestamp)
                sink += (size_t)sp->born_timestamp->seconds;
        }
        sink += m->body.len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const ProtobufCMessageDescriptor *d =
        DESCRIPTORS[data[0] % (sizeof(DESCRIPTORS) / sizeof(DESCRIPTORS[0]))];
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, size - 1, data + 1);
    if (!m)
        return 0;
    if (d == &apache__rocketmq__v2__send_message_request__descriptor)
        walk_send((const Apache__Rocketmq__V2__SendMessageRequest *)m);
    if (d == &apache__rocketmq__v2__telemetry_command__descriptor) {
        const Apache__Rocketmq__V2__TelemetryCommand *t = (const void *)m;
        if (t->command_case == APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_SETTINGS &&
            t->settings && t->settings->backoff_policy)
            sink += (size_t)t->settings->backoff_policy->max_attempts;
        /* what proxy_clients.c keeps of a consumer's Settings */
        if (t->command_case == APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_SETTINGS &&
            t->settings &&
            t->settings->pub_sub_case == APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_SUBSCRIPTION &&
            t->settings->subscription)
            for (size_t i = 0; i < t->settings->subscription->n_subscriptions; i++) {
                const Apache__Rocketmq__V2__SubscriptionEntry *e =
                    t->settings->subscription->subscriptions[i];
                if (e->topic && e->topic->name)
                    sink += strlen(e->topic->name);
                if (e->expression && e->expression->expression)
                    sink += strlen(e->expression->expression);
            }
    }
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *out = malloc(n ? n : 1);
    if (out) {
        protobuf_c_message_pack(m, out);
        free(out);
    }
    protobuf_c_message_free_unpacked(m, NULL);
    return 0;
}
