/* proxy_topic_type.c — a topic's message type as Java 5's proxy reads it for
 * QueryRoute (MetadataService.getTopicMessageType): the `message.type`
 * attribute of the topic's config on the broker role (GET_TOPIC_CONFIG,
 * 351, through invoke_local). No attribute: NORMAL; no such topic on the
 * broker: UNSPECIFIED; MIXED: every type (RouteActivity's
 * parseTopicMessageType). The 5.x clients refuse to send a message whose
 * type the route does not accept. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "proxy_backend.h"
#include "proxy_internal.h"

#define GET_TOPIC_CONFIG 351
#define REQUEST_CODE_NOT_SUPPORTED 3

static const Apache__Rocketmq__V2__MessageType T_NORMAL[] = {
    APACHE__ROCKETMQ__V2__MESSAGE_TYPE__NORMAL};
static const Apache__Rocketmq__V2__MessageType T_FIFO[] = {
    APACHE__ROCKETMQ__V2__MESSAGE_TYPE__FIFO};
static const Apache__Rocketmq__V2__MessageType T_DELAY[] = {
    APACHE__ROCKETMQ__V2__MESSAGE_TYPE__DELAY};
static const Apache__Rocketmq__V2__MessageType T_TRANSACTION[] = {
    APACHE__ROCKETMQ__V2__MESSAGE_TYPE__TRANSACTION};
static const Apache__Rocketmq__V2__MessageType T_MIXED[] = {
    APACHE__ROCKETMQ__V2__MESSAGE_TYPE__NORMAL, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__FIFO,
    APACHE__ROCKETMQ__V2__MESSAGE_TYPE__DELAY, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__TRANSACTION};
static const Apache__Rocketmq__V2__MessageType T_UNSPECIFIED[] = {
    APACHE__ROCKETMQ__V2__MESSAGE_TYPE__MESSAGE_TYPE_UNSPECIFIED};

static const Apache__Rocketmq__V2__MessageType *types_of(const char *v, size_t *n)
{
    static const struct {
        const char *name;
        const Apache__Rocketmq__V2__MessageType *t;
        size_t n;
    } map[] = {{"NORMAL", T_NORMAL, 1},
               {"FIFO", T_FIFO, 1},
               {"DELAY", T_DELAY, 1},
               {"TRANSACTION", T_TRANSACTION, 1},
               {"MIXED", T_MIXED, 4}};
    for (size_t i = 0; v && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(v, map[i].name) == 0) {
            *n = map[i].n;
            return map[i].t;
        }
    *n = 1;
    return T_UNSPECIFIED;
}

const Apache__Rocketmq__V2__MessageType *proxy_topic_accept_types(proxy *px, const char *topic,
                                                                  size_t *n)
{
    char name[16];
    proxy_topic_type_name(px, topic, name, sizeof(name));
    return types_of(name, n);
}

rmq_cmd *proxy_topic_type_request(proxy *px, const char *topic)
{
    const rmq_host_api *api = px->api;
    rmq_cmd *req = api->cmd_new_request(GET_TOPIC_CONFIG);
    if (req &&
        (api->cmd_ext_set(req, "topic", topic) < 0 || api->cmd_ext_set(req, "lo", "false") < 0)) {
        api->cmd_free(req);
        req = NULL;
    }
    return req;
}

void proxy_topic_type_parse(proxy *px, int err, const rmq_cmd *resp, char *out, size_t cap)
{
    const rmq_host_api *api = px->api;
    snprintf(out, cap, "UNSPECIFIED");
    if (err < 0 || !resp)
        return;
    if (api->cmd_code(resp) == REQUEST_CODE_NOT_SUPPORTED) {
        /* a 4.x broker (cluster mode): its topics have no message type */
        snprintf(out, cap, "NORMAL");
    } else if (api->cmd_code(resp) == 0) { /* else TOPIC_NOT_EXIST: UNSPECIFIED */
        size_t blen = 0;
        const char *body = api->cmd_body(resp, &blen);
        json_t *cfg = body ? json_loadb(body, blen, 0, NULL) : NULL;
        const char *v =
            json_string_value(json_object_get(json_object_get(cfg, "attributes"), "message.type"));
        snprintf(out, cap, "%s", v ? v : "NORMAL"); /* TopicConfig.getTopicMessageType */
        json_decref(cfg);
    }
}

void proxy_topic_type_name(proxy *px, const char *topic, char *out, size_t cap)
{
    snprintf(out, cap, "UNSPECIFIED");
    rmq_cmd *req = proxy_topic_type_request(px, topic);
    if (!req)
        return;
    rmq_cmd *resp = NULL;
    /* cluster mode: the topic's config on the first broker of its route */
    int rc = proxy_broker_call(px, topic, NULL, req, &resp);
    proxy_topic_type_parse(px, rc, rc < 0 ? NULL : resp, out, cap);
    if (rc >= 0)
        px->api->cmd_free(resp);
}
