/* topic_config_processor.c — 5.x topic attributes on this broker: the
 * `attributes` field of UPDATE_AND_CREATE_TOPIC (Java 5's
 * AdminBrokerProcessor.updateAndCreateTopic: "+message.type=FIFO") and
 * GET_TOPIC_CONFIG (351), which answers one topic's TopicConfig with its
 * attributes (TopicConfigAndQueueMapping, no queue mapping). The gRPC proxy
 * reads message.type from it for QueryRoute's accept_message_types and
 * SendMessage's type check. */
#include "broker_context.h"

#include "topic_attributes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INVALID_PARAMETER 29
#define TOPIC_NOT_EXIST 17

int32_t bcm_topic_attributes_set(bcm_ctx *c, json_t *cfg, const char *topic,
                                 const char *modification, bool is_new, char *remark, size_t cap)
{
    if (!modification || !*modification) {
        /* an update without attributes keeps the topic's own */
        json_t *cur = is_new ? NULL : bcm_topic_table_config_json(&c->topics, topic);
        json_t *attrs = json_object_get(cur, "attributes");
        if (json_is_object(attrs))
            json_object_set(cfg, "attributes", attrs);
        json_decref(cur);
        return 0;
    }
    /* enableMixedMessageType is false in Java by default */
    if (strstr(modification, "+message.type=MIXED")) {
        snprintf(remark, cap, "MIXED message type is not supported.");
        return INVALID_PARAMETER;
    }
    json_t *cur = is_new ? NULL : bcm_topic_table_config_json(&c->topics, topic);
    bool failed = false;
    json_t *attrs = bcm_topic_attributes_alter(json_object_get(cur, "attributes"), modification,
                                               is_new, remark, cap, &failed);
    json_decref(cur);
    if (failed)
        return RMQ_RESPONSE_SYSTEM_ERROR;
    if (attrs)
        json_object_set_new(cfg, "attributes", attrs);
    return 0;
}

int bcm_process_get_topic_config(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const char *topic = c->api->cmd_ext_get(cmd, "topic");
    if (!topic) {
        c->api->request_fail(req, "the custom field <topic> is null");
        return RMQ_EINVAL;
    }
    pthread_mutex_lock(&c->lock);
    json_t *cfg = bcm_topic_table_config_json(&c->topics, topic);
    pthread_mutex_unlock(&c->lock);
    if (!cfg) {
        char remark[400];
        snprintf(remark, sizeof remark, "No topic in this broker. topic: %s", topic);
        return bcm_reply(c, req, cmd, TOPIC_NOT_EXIST, remark);
    }
    /* TopicConfigAndQueueMapping: the TopicConfig fields, mappingDetail null */
    json_object_set_new(cfg, "mappingDetail", json_null());
    char *text = json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(cfg);
    return bcm_reply_body(c, req, cmd, text);
}
