/* pull_offset_moved.c — the OFFSET_MOVED_EVENT message a PULL answered
 * PULL_OFFSET_MOVED (21) leaves behind (protocol-messages.md §10.8.7, Java's
 * PullMessageProcessor.generateOffsetMovedEvent): queue 0 of topic
 * OFFSET_MOVED_EVENT, tag and key = the group, an OffsetMovedEvent JSON body. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pull_request.h"
#include "send_put.h"

#define OFFSET_MOVED_TOPIC "OFFSET_MOVED_EVENT"

/* OffsetMovedEvent.encode(): fastjson writes the fields in name order. */
static char *event_body(const char *broker_name, const pull_req *p, int64_t offset_new)
{
    json_t *mq = json_pack("{s:s, s:i, s:s}", "brokerName", broker_name, "queueId",
                           (json_int_t)p->queue_id, "topic", p->topic);
    json_t *ev = json_pack("{s:s, s:o, s:I, s:I}", "consumerGroup", p->group, "messageQueue", mq,
                           "offsetNew", (json_int_t)offset_new, "offsetRequest",
                           (json_int_t)p->queue_offset);
    if (!ev)
        return NULL;
    char *text = json_dumps(ev, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(ev);
    return text;
}

void pull_offset_moved_event(store_plugin *sp, const pull_req *p, int64_t offset_new)
{
    if (!p->group || !p->topic)
        return;
    rmq_broker_config bc;
    store_addr host;
    if (meta_broker_config_cached(sp, &bc, &host) != 0)
        memset(&bc, 0, sizeof bc); /* host is still the bound address */
    char *body = event_body(bc.broker_name, p, offset_new);
    size_t glen = strlen(p->group);
    /* setTags, setDelayTimeLevel(0), setKeys in a HashMap: KEYS, DELAY, TAGS */
    size_t cap = 2 * glen + 32;
    char *props = malloc(cap);
    if (!body || !props) {
        free(body);
        free(props);
        sp->api->log(sp->ctx, RMQ_LOG_WARN, "generateOffsetMovedEvent: out of memory");
        return;
    }
    int plen =
        snprintf(props, cap, "KEYS\001%s\002DELAY\0010\002TAGS\001%s\002", p->group, p->group);
    store_msg m = {0};
    m.topic = OFFSET_MOVED_TOPIC;
    m.queue_id = 0;
    m.born_ts = (int64_t)sp->api->now_wall_ms();
    m.born_host = host;
    m.store_host = host;
    m.body = body;
    m.body_len = strlen(body);
    m.props = props;
    m.props_len = (size_t)plen;
    m.tags_code = (int64_t)java_string_hash(p->group, glen);
    store_put_result pr = {0};
    if (store_send_put(sp, &m, &pr) != 0 || pr.status != STORE_PUT_OK)
        sp->api->log(sp->ctx, RMQ_LOG_WARN,
                     "generateOffsetMovedEvent of %s %s:%d failed (put status %d)", p->group,
                     p->topic, p->queue_id, (int)pr.status);
    free(body);
    free(props);
}
