/* consumer_send_back.c — CONSUMER_SEND_MSG_BACK (36, protocol-messages.md
 * §10.7.1: the consumed message copied to %RETRY%<group> through its delay
 * level, or to %DLQ%<group> after maxReconsumeTimes) and the send path's
 * %RETRY% rule (§10.5.6, the client fallback and orderly consumers).
 * Runs on the send executor: topic and group creation may write files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "header_numbers.h"
#include "message_id.h"
#include "store_features.h"

#define V3_4_9 121 /* maxReconsumeTimes in the header applies from this version */

/* Java picks a random retry queue; turns spread the same way. */
static uint32_t next_turn(store_plugin *sp)
{
    return atomic_fetch_add(&features_of(sp)->retry_turn, 1);
}

static int reply(store_plugin *sp, rmq_request *req, const rmq_cmd *cmd, int32_t code,
                 const char *remark)
{
    sp->api->log(sp->ctx, RMQ_LOG_DEBUG, "CONSUMER_SEND_MSG_BACK offset %s group %s: %d %s",
                 sp->api->cmd_ext_get(cmd, "offset"), sp->api->cmd_ext_get(cmd, "group"), code,
                 remark ? remark : "");
    return store_reply_code(sp, req, cmd, code, remark);
}

/* The DLQ topic of `group` (1 queue, RW-): 0 or a SYSTEM_ERROR remark. */
static int dlq_topic(store_plugin *sp, const char *group, char *topic, size_t tcap, char *remark,
                     size_t cap)
{
    snprintf(topic, tcap, "%%DLQ%%%s", group);
    rmq_topic_config tc;
    if (meta_topic_create_in_send_back(sp, topic, 1, RMQ_PERM_READ | RMQ_PERM_WRITE, 0, &tc) != 0) {
        snprintf(remark, cap, "topic[%s] not exist", topic);
        return RC_SYSTEM_ERROR;
    }
    return 0;
}

static int process_send_back(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    char remark[600];
    const char *group = a->cmd_ext_get(cmd, "group");
    int64_t offset = 0, delay_level = 0;
    int32_t max_rt = 0;
    /* the reflection decode leaves a missing or unparsable number null (it
     * only logs): the NullPointerException comes where Java unboxes it */
    int32_t delay32 = 0;
    bool has_offset = java_parse_long(a->cmd_ext_get(cmd, "offset"), &offset) == 0;
    bool has_delay = java_parse_int(a->cmd_ext_get(cmd, "delayLevel"), &delay32) == 0;
    delay_level = delay32;
    if (!group) /* the group table's ConcurrentHashMap throws on null */
        return reply(sp, req, cmd, RC_SYSTEM_ERROR, "java.lang.NullPointerException");
    const char *um = a->cmd_ext_get(cmd, "unitMode");
    bool unit_mode = um && strcasecmp(um, "true") == 0;
    /* 1 */
    rmq_subscription_group_config g;
    if (meta_group_get(sp, group, true, &g) != 0) {
        snprintf(remark, sizeof remark, "subscription group not exist, %s " FAQ_SUFFIX, group);
        return reply(sp, req, cmd, RC_SUBSCRIPTION_GROUP_NOT_EXIST, remark);
    }
    rmq_broker_config bc;
    if (meta_broker_config(sp, &bc) != 0) {
        memset(&bc, 0, sizeof bc);
        bc.broker_permission = RMQ_PERM_READ | RMQ_PERM_WRITE;
    }
    /* 2 */
    if (!(bc.broker_permission & RMQ_PERM_WRITE)) {
        snprintf(remark, sizeof remark, "the broker[%s] sending message is forbidden",
                 bc.broker_ip1);
        return reply(sp, req, cmd, RC_NO_PERMISSION, remark);
    }
    /* 3: no retry queue, the message is dropped */
    if (g.retry_queue_nums <= 0)
        return reply(sp, req, cmd, RC_SUCCESS, NULL);
    /* 4, 5 */
    char topic[300];
    snprintf(topic, sizeof topic, "%%RETRY%%%s", group);
    int32_t queue_id = (int32_t)(next_turn(sp) % (uint32_t)g.retry_queue_nums);
    rmq_topic_config tc;
    if (meta_topic_create_in_send_back(sp, topic, g.retry_queue_nums,
                                       RMQ_PERM_READ | RMQ_PERM_WRITE, unit_mode ? 2 : 0,
                                       &tc) != 0) {
        snprintf(remark, sizeof remark, "topic[%s] not exist", topic);
        return reply(sp, req, cmd, RC_SYSTEM_ERROR, remark);
    }
    if (!(tc.perm & RMQ_PERM_WRITE)) {
        snprintf(remark, sizeof remark, "the topic[%s] sending message is forbidden", topic);
        return reply(sp, req, cmd, RC_NO_PERMISSION, remark);
    }
    /* 6 */
    if (!has_offset)
        return reply(sp, req, cmd, RC_SYSTEM_ERROR, "java.lang.NullPointerException");
    uint8_t *buf = NULL;
    stored_record r;
    if (features_read_record(sp, offset, &buf, &r) != 0) {
        snprintf(remark, sizeof remark, "look message by offset failed, %lld", (long long)offset);
        return reply(sp, req, cmd, RC_SYSTEM_ERROR, remark);
    }
    /* 7: the copy (delayLevel is unboxed first) */
    if (!has_delay) {
        free(buf);
        return reply(sp, req, cmd, RC_SYSTEM_ERROR, "java.lang.NullPointerException");
    }
    props_view *v = malloc(sizeof *v);
    if (!v) {
        free(buf);
        return RMQ_ENOMEM;
    }
    props_parse(r.props, r.props_len, v);
    char orig_topic[256], orig_id[64];
    snprintf(orig_topic, sizeof orig_topic, "%.*s", (int)r.topic_len, r.topic);
    size_t oil = 0;
    const char *oi = props_get(v, "ORIGIN_MESSAGE_ID", &oil);
    if (oi && oil < sizeof orig_id) {
        snprintf(orig_id, sizeof orig_id, "%.*s", (int)oil, oi);
    } else {
        store_msg tmp;
        store_msg_from_record(&r, &tmp);
        offset_msg_id(&tmp.store_host, r.phys_offset, orig_id);
    }
    int32_t max_times = g.retry_max_times;
    if (a->cmd_version(cmd) >= V3_4_9 &&
        java_parse_int(a->cmd_ext_get(cmd, "maxReconsumeTimes"), &max_rt) == 0)
        max_times = max_rt;
    bool dlq = r.reconsume_times >= max_times || delay_level < 0;
    int32_t level = 0;
    if (dlq) {
        int code = dlq_topic(sp, group, topic, sizeof topic, remark, sizeof remark);
        if (code) {
            free(v);
            free(buf);
            return reply(sp, req, cmd, code, remark);
        }
        queue_id = 0;
    } else {
        level = delay_level == 0 ? 3 + r.reconsume_times : (int32_t)delay_level;
    }
    char delay[16];
    snprintf(delay, sizeof delay, "%d", level);
    const char *kv[10];
    size_t k = 0;
    if (!props_get(v, "RETRY_TOPIC", NULL)) {
        kv[k++] = "RETRY_TOPIC";
        kv[k++] = orig_topic;
    }
    kv[k++] = "WAIT";
    kv[k++] = "false";
    kv[k++] = "ORIGIN_MESSAGE_ID";
    kv[k++] = orig_id;
    kv[k++] = "DELAY";
    kv[k++] = delay;
    kv[k] = NULL;
    send_message *m = calloc(1, sizeof *m);
    int rc = m ? props_rewrite(v, kv, NULL, bc.cluster_name[0] ? bc.cluster_name : NULL,
                               &m->props_override, &m->props_override_len)
               : RMQ_ENOMEM;
    free(v);
    if (rc == 0) {
        snprintf(m->topic, sizeof m->topic, "%s", topic);
        m->queue_id = queue_id;
        m->has_tags_code = true;
        m->tags_code = props_tags_code(m->props_override, m->props_override_len);
        if (level > 0)
            rc = schedule_route(sp, m, level, bc.cluster_name[0] ? bc.cluster_name : NULL);
    }
    int result;
    if (rc != 0) {
        result = reply(sp, req, cmd, RC_SYSTEM_ERROR, "putMessageResult is null");
    } else {
        store_msg sm;
        store_msg_from_record(&r, &sm);
        sm.topic = m->topic;
        sm.queue_id = m->queue_id;
        sm.reconsume_times = r.reconsume_times + 1;
        sm.props = m->props_override;
        sm.props_len = m->props_override_len;
        sm.tags_code = m->tags_code;
        store_put_result pr;
        if (store_send_put(sp, &sm, &pr) != 0)
            pr.status = STORE_PUT_UNKNOWN_ERROR;
        static const char *const names[] = {"PUT_OK",
                                            "SERVICE_NOT_AVAILABLE",
                                            "MESSAGE_ILLEGAL",
                                            "PROPERTIES_SIZE_EXCEEDED",
                                            "CREATE_MAPEDFILE_FAILED",
                                            "UNKNOWN_ERROR"};
        if (pr.status == STORE_PUT_OK)
            result = reply(sp, req, cmd, RC_SUCCESS, NULL);
        else
            result = reply(sp, req, cmd, RC_SYSTEM_ERROR,
                           (size_t)pr.status < sizeof names / sizeof names[0] ? names[pr.status]
                                                                              : "UNKNOWN_ERROR");
    }
    if (m)
        free(m->props_override);
    free(m);
    free(buf);
    return result;
}

/* handleRetryAndDLQ (§10.5.6): the group must exist; past maxReconsumeTimes
 * the message goes to %DLQ%<group>, queue 0 (a client DELAY still applies). */
int features_retry_send(store_plugin *sp, const send_header *h, send_message *m, char *remark,
                        size_t cap)
{
    const char *group = m->topic + 7;
    rmq_subscription_group_config g;
    if (meta_group_get(sp, group, true, &g) != 0) {
        snprintf(remark, cap, "subscription group not exist, %s " FAQ_SUFFIX, group);
        return RC_SUBSCRIPTION_GROUP_NOT_EXIST;
    }
    int32_t max_times = g.retry_max_times;
    if (h->version >= V3_4_9 && h->has_max_reconsume_times)
        max_times = h->max_reconsume_times;
    if (h->reconsume_times < max_times)
        return 0;
    char topic[300];
    char grp[256];
    snprintf(grp, sizeof grp, "%s", group);
    int code = dlq_topic(sp, grp, topic, sizeof topic, remark, cap);
    if (code)
        return code;
    snprintf(m->topic, sizeof m->topic, "%s", topic);
    m->queue_id = 0;
    return 0;
}

int consumer_send_back_register(store_plugin *sp)
{
    return sp->api->register_processor(sp->ctx, 36, process_send_back, sp, "send");
}
