/* grpc_bench_msgs.c — packs rmqbench's 5.x requests and reads the answers'
 * codes. Field choices follow the Go 5.x client (publishing_message.go,
 * simple_consumer.go and its settings): a NORMAL message with message_id,
 * born_timestamp, born_host and body_encoding IDENTITY (no body digest: the
 * Go client sends none); a SimpleConsumer's Settings with its subscription
 * and long-polling timeout; ReceiveMessage with auto_renew false. */
#include "grpc_bench_msgs.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "apache/rocketmq/v2/service.pb-c.h"

typedef Apache__Rocketmq__V2__Resource resource;

static size_t pack(const ProtobufCMessage *m, uint8_t *out, size_t cap)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    if (n > cap)
        return 0;
    return protobuf_c_message_pack(m, out);
}

static void duration_ms(Google__Protobuf__Duration *d, unsigned ms)
{
    d->seconds = ms / 1000;
    d->nanos = (int32_t)(ms % 1000) * 1000000;
}

size_t gbm_send(uint8_t *out, size_t cap, const char *topic, const uint8_t *body, size_t len,
                const char *message_id, const char *born_host)
{
    resource t = APACHE__ROCKETMQ__V2__RESOURCE__INIT;
    t.name = (char *)topic;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    Google__Protobuf__Timestamp born = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
    born.seconds = ts.tv_sec;
    born.nanos = (int32_t)ts.tv_nsec;
    Apache__Rocketmq__V2__SystemProperties sp = APACHE__ROCKETMQ__V2__SYSTEM_PROPERTIES__INIT;
    sp.message_id = (char *)message_id;
    sp.born_timestamp = &born;
    sp.born_host = (char *)born_host;
    sp.body_encoding = APACHE__ROCKETMQ__V2__ENCODING__IDENTITY;
    sp.message_type = APACHE__ROCKETMQ__V2__MESSAGE_TYPE__NORMAL;
    Apache__Rocketmq__V2__Message m = APACHE__ROCKETMQ__V2__MESSAGE__INIT;
    m.topic = &t;
    m.system_properties = &sp;
    m.body.data = (uint8_t *)body;
    m.body.len = len;
    Apache__Rocketmq__V2__Message *ms[] = {&m};
    Apache__Rocketmq__V2__SendMessageRequest r = APACHE__ROCKETMQ__V2__SEND_MESSAGE_REQUEST__INIT;
    r.n_messages = 1;
    r.messages = ms;
    return pack(&r.base, out, cap);
}

size_t gbm_settings(uint8_t *out, size_t cap, const char *topic, const char *group,
                    unsigned long_poll_ms, unsigned request_timeout_ms)
{
    resource t = APACHE__ROCKETMQ__V2__RESOURCE__INIT, g = APACHE__ROCKETMQ__V2__RESOURCE__INIT;
    t.name = (char *)topic;
    g.name = (char *)(group ? group : "");
    resource *topics[] = {&t};
    Google__Protobuf__Duration timeout = GOOGLE__PROTOBUF__DURATION__INIT;
    Google__Protobuf__Duration poll = GOOGLE__PROTOBUF__DURATION__INIT;
    duration_ms(&timeout, request_timeout_ms);
    duration_ms(&poll, long_poll_ms);
    Apache__Rocketmq__V2__UA ua = APACHE__ROCKETMQ__V2__UA__INIT;
    ua.language = APACHE__ROCKETMQ__V2__LANGUAGE__CPP;
    ua.version = "5.0.0";
    ua.platform = "linux";
    ua.hostname = "rmqbench";
    Apache__Rocketmq__V2__Settings s = APACHE__ROCKETMQ__V2__SETTINGS__INIT;
    s.request_timeout = &timeout;
    s.user_agent = &ua;
    Apache__Rocketmq__V2__Publishing pub = APACHE__ROCKETMQ__V2__PUBLISHING__INIT;
    Apache__Rocketmq__V2__FilterExpression fe = APACHE__ROCKETMQ__V2__FILTER_EXPRESSION__INIT;
    Apache__Rocketmq__V2__SubscriptionEntry se = APACHE__ROCKETMQ__V2__SUBSCRIPTION_ENTRY__INIT;
    Apache__Rocketmq__V2__SubscriptionEntry *ses[] = {&se};
    Apache__Rocketmq__V2__Subscription sub = APACHE__ROCKETMQ__V2__SUBSCRIPTION__INIT;
    if (!group) {
        s.client_type = APACHE__ROCKETMQ__V2__CLIENT_TYPE__PRODUCER;
        pub.n_topics = 1;
        pub.topics = topics;
        s.pub_sub_case = APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_PUBLISHING;
        s.publishing = &pub;
    } else {
        s.client_type = APACHE__ROCKETMQ__V2__CLIENT_TYPE__SIMPLE_CONSUMER;
        fe.type = APACHE__ROCKETMQ__V2__FILTER_TYPE__TAG;
        fe.expression = "*";
        se.topic = &t;
        se.expression = &fe;
        sub.group = &g;
        sub.n_subscriptions = 1;
        sub.subscriptions = ses;
        sub.long_polling_timeout = &poll;
        s.pub_sub_case = APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_SUBSCRIPTION;
        s.subscription = &sub;
    }
    Apache__Rocketmq__V2__TelemetryCommand tc = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__INIT;
    tc.command_case = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_SETTINGS;
    tc.settings = &s;
    return pack(&tc.base, out, cap);
}

size_t gbm_heartbeat(uint8_t *out, size_t cap, const char *group)
{
    resource g = APACHE__ROCKETMQ__V2__RESOURCE__INIT;
    Apache__Rocketmq__V2__HeartbeatRequest r = APACHE__ROCKETMQ__V2__HEARTBEAT_REQUEST__INIT;
    if (group) {
        g.name = (char *)group;
        r.group = &g;
        r.client_type = APACHE__ROCKETMQ__V2__CLIENT_TYPE__SIMPLE_CONSUMER;
    } else {
        r.client_type = APACHE__ROCKETMQ__V2__CLIENT_TYPE__PRODUCER;
    }
    return pack(&r.base, out, cap);
}

size_t gbm_receive(uint8_t *out, size_t cap, const char *group, const char *topic, unsigned batch,
                   unsigned invisible_ms, unsigned long_poll_ms)
{
    resource t = APACHE__ROCKETMQ__V2__RESOURCE__INIT, g = APACHE__ROCKETMQ__V2__RESOURCE__INIT;
    t.name = (char *)topic;
    g.name = (char *)group;
    /* no broker named: either server picks a readable queue (Java's
     * ReceiveMessageQueueSelector.selectOne, rmqhost's queueId -1) */
    Apache__Rocketmq__V2__MessageQueue mq = APACHE__ROCKETMQ__V2__MESSAGE_QUEUE__INIT;
    mq.topic = &t;
    mq.id = -1;
    Apache__Rocketmq__V2__FilterExpression fe = APACHE__ROCKETMQ__V2__FILTER_EXPRESSION__INIT;
    fe.type = APACHE__ROCKETMQ__V2__FILTER_TYPE__TAG;
    fe.expression = "*";
    Google__Protobuf__Duration inv = GOOGLE__PROTOBUF__DURATION__INIT;
    Google__Protobuf__Duration poll = GOOGLE__PROTOBUF__DURATION__INIT;
    duration_ms(&inv, invisible_ms);
    duration_ms(&poll, long_poll_ms);
    Apache__Rocketmq__V2__ReceiveMessageRequest r =
        APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_REQUEST__INIT;
    r.group = &g;
    r.message_queue = &mq;
    r.filter_expression = &fe;
    r.batch_size = (int32_t)batch;
    r.invisible_duration = &inv;
    r.long_polling_timeout = &poll;
    return pack(&r.base, out, cap);
}

size_t gbm_ack(uint8_t *out, size_t cap, const char *group, const char *topic,
               const char *message_id, const char *receipt_handle)
{
    resource t = APACHE__ROCKETMQ__V2__RESOURCE__INIT, g = APACHE__ROCKETMQ__V2__RESOURCE__INIT;
    t.name = (char *)topic;
    g.name = (char *)group;
    Apache__Rocketmq__V2__AckMessageEntry e = APACHE__ROCKETMQ__V2__ACK_MESSAGE_ENTRY__INIT;
    e.message_id = (char *)message_id;
    e.receipt_handle = (char *)receipt_handle;
    Apache__Rocketmq__V2__AckMessageEntry *es[] = {&e};
    Apache__Rocketmq__V2__AckMessageRequest r = APACHE__ROCKETMQ__V2__ACK_MESSAGE_REQUEST__INIT;
    r.group = &g;
    r.topic = &t;
    r.n_entries = 1;
    r.entries = es;
    return pack(&r.base, out, cap);
}

static int status_code(const Apache__Rocketmq__V2__Status *s)
{
    return s ? (int)s->code : -1;
}

int gbm_send_code(const uint8_t *msg, size_t len)
{
    Apache__Rocketmq__V2__SendMessageResponse *r =
        apache__rocketmq__v2__send_message_response__unpack(NULL, len, msg);
    if (!r)
        return -1;
    int code = status_code(r->status);
    if (code == APACHE__ROCKETMQ__V2__CODE__OK)
        code = r->n_entries == 1 ? status_code(r->entries[0]->status) : -1;
    apache__rocketmq__v2__send_message_response__free_unpacked(r, NULL);
    return code;
}

int gbm_heartbeat_code(const uint8_t *msg, size_t len)
{
    Apache__Rocketmq__V2__HeartbeatResponse *r =
        apache__rocketmq__v2__heartbeat_response__unpack(NULL, len, msg);
    if (!r)
        return -1;
    int code = status_code(r->status);
    apache__rocketmq__v2__heartbeat_response__free_unpacked(r, NULL);
    return code;
}

int gbm_ack_code(const uint8_t *msg, size_t len)
{
    Apache__Rocketmq__V2__AckMessageResponse *r =
        apache__rocketmq__v2__ack_message_response__unpack(NULL, len, msg);
    if (!r)
        return -1;
    int code = status_code(r->status);
    if (code == APACHE__ROCKETMQ__V2__CODE__OK && r->n_entries == 1)
        code = status_code(r->entries[0]->status);
    apache__rocketmq__v2__ack_message_response__free_unpacked(r, NULL);
    return code;
}

int gbm_is_settings(const uint8_t *msg, size_t len)
{
    Apache__Rocketmq__V2__TelemetryCommand *r =
        apache__rocketmq__v2__telemetry_command__unpack(NULL, len, msg);
    if (!r)
        return 0;
    int yes = r->command_case == APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_SETTINGS;
    apache__rocketmq__v2__telemetry_command__free_unpacked(r, NULL);
    return yes;
}

static int copy(char *dst, size_t cap, const char *src)
{
    return snprintf(dst, cap, "%s", src ? src : "") < (int)cap ? 0 : -1;
}

int gbm_parse_receive(const uint8_t *msg, size_t len, gbm_received *out)
{
    memset(out, 0, sizeof *out);
    out->code = -1;
    Apache__Rocketmq__V2__ReceiveMessageResponse *r =
        apache__rocketmq__v2__receive_message_response__unpack(NULL, len, msg);
    if (!r)
        return -1;
    int rc = 0;
    if (r->content_case == APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_STATUS) {
        out->code = status_code(r->status);
    } else if (r->content_case == APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_MESSAGE) {
        const Apache__Rocketmq__V2__Message *m = r->message;
        out->is_message = 1;
        if (!m->system_properties || !m->topic ||
            copy(out->message_id, sizeof out->message_id, m->system_properties->message_id) ||
            copy(out->receipt_handle, sizeof out->receipt_handle,
                 m->system_properties->receipt_handle) ||
            copy(out->topic, sizeof out->topic, m->topic->name))
            rc = -1;
    }
    apache__rocketmq__v2__receive_message_response__free_unpacked(r, NULL);
    return rc;
}
