/* recall_processor.c — 5.x timer-message recall (Java 5.3's
 * RecallMessageProcessor, RECALL_MESSAGE 370): the handle a SEND of a timer
 * message answered names the topic, this broker, the delivery time and the
 * message's uniq key; a marker with TIMER_DEL_UNIQKEY "topic+uniqKey" goes to
 * the timer wheel for the same time, and the wheel drops the message with
 * that key when the bucket is delivered (timer_service.c). Checks and
 * remarks as Java's. The answer's msgId is the recalled uniq key. Also
 * recall_handle_attach: the handle on SEND's answer (attachRecallHandle). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha.h"
#include "header_numbers.h"
#include "message_id.h"
#include "recall_handle.h"
#include "store_features.h"

#define RECALL_MESSAGE 370
#define RC_ILLEGAL_OPERATION 604

void recall_handle_attach(store_plugin *sp, rmq_cmd *resp, const char *props, size_t len,
                          const char *broker_name)
{
    props_view *v = malloc(sizeof *v);
    if (!v)
        return;
    props_parse(props, len, v);
    size_t tl = 0, rl = 0, ul = 0;
    const char *out = props_get(v, "TIMER_OUT_MS", &tl);
    const char *real = props_get(v, "REAL_TOPIC", &rl);
    const char *uk = props_get(v, "UNIQ_KEY", &ul);
    int64_t out_ms = 0;
    char num[32], topic[256], uniq[128], ts[32], handle[1024];
    if (out && real && uk && tl < sizeof num && rl < sizeof topic && ul < sizeof uniq &&
        strncmp(real, "%RETRY%", rl < 7 ? rl : 7) != 0) {
        snprintf(num, sizeof num, "%.*s", (int)tl, out);
        snprintf(topic, sizeof topic, "%.*s", (int)rl, real);
        snprintf(uniq, sizeof uniq, "%.*s", (int)ul, uk);
        /* one past TIMER_OUT_MS: rounded down again, it lands in the same
         * bucket (Java: "consider of floor") */
        if (java_parse_long(num, &out_ms) == 0) {
            snprintf(ts, sizeof ts, "%" PRId64, out_ms + 1);
            if (recall_handle_build(topic, broker_name, ts, uniq, handle, sizeof handle))
                sp->api->cmd_ext_set(resp, "recallHandle", handle);
        }
    }
    free(v);
}

static int process_recall(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    const char *topic = a->cmd_ext_get(cmd, "topic");
    const char *handle_text = a->cmd_ext_get(cmd, "recallHandle");
    const char *pg = a->cmd_ext_get(cmd, "producerGroup");
    char remark[600];
    if (!topic || !handle_text) {
        a->request_fail(req, "the custom field <topic> or <recallHandle> is null");
        return RMQ_EINVAL;
    }
    if (ha_current_role(sp) == HA_SLAVE)
        return store_reply_code(sp, req, cmd, RC_SLAVE_NOT_AVAILABLE,
                                "recall failed, broker service not available");
    rmq_broker_config bc;
    store_addr store_host;
    if (meta_broker_config_cached(sp, &bc, &store_host) != 0)
        return store_reply_code(sp, req, cmd, RC_SERVICE_NOT_AVAILABLE,
                                "recall failed, broker service not available");
    if (!(bc.broker_permission & RMQ_PERM_WRITE))
        return store_reply_code(sp, req, cmd, RC_SERVICE_NOT_AVAILABLE,
                                "recall failed, broker service not available");
    rmq_topic_config tc;
    if (meta_topic_get(sp, topic, &tc) != 0) {
        snprintf(remark, sizeof remark, "recall failed, the topic[%s] not exist", topic);
        return store_reply_code(sp, req, cmd, RC_TOPIC_NOT_EXIST, remark);
    }
    recall_handle h;
    if (!recall_handle_parse(handle_text, &h))
        return store_reply_code(sp, req, cmd, RC_ILLEGAL_OPERATION, "recall handle is invalid");
    if (strcmp(h.topic, topic) != 0)
        return store_reply_code(sp, req, cmd, RC_ILLEGAL_OPERATION,
                                "recall failed, topic not match");
    if (strcmp(h.broker_name, bc.broker_name) != 0)
        return store_reply_code(sp, req, cmd, RC_ILLEGAL_OPERATION,
                                "recall failed, broker service not available");
    int64_t ts = -1;
    if (java_parse_long(h.timestamp, &ts) != 0)
        ts = -1;
    int64_t left = ts - (int64_t)a->now_wall_ms();
    if (left <= 0 || left >= sp->api->setting_int(sp->ctx, "timerMaxDelaySec") * 1000)
        return store_reply_code(sp, req, cmd, RC_ILLEGAL_OPERATION,
                                "recall failed, timestamp invalid");
    /* the marker: Java's buildMessage */
    char del[400], born[32], props[1200];
    snprintf(del, sizeof del, "%s+%s", h.topic, h.uniq_key);
    snprintf(born, sizeof born, "%" PRIu64, a->now_wall_ms());
    int n = snprintf(props, sizeof props,
                     "TAGS\001_RECALL_TAG_\002TIMER_DEL_UNIQKEY\001%s\002UNIQ_KEY\001%s\002"
                     "TIMER_DELIVER_MS\001%s\002BORN_TIMESTAMP\001%s\002TRACE_CONTEXT\001\002"
                     "PGROUP\001%s",
                     del, h.uniq_key, h.timestamp, born, pg ? pg : "");
    send_message *m = calloc(1, sizeof *m);
    if (!m || n < 0 || (size_t)n >= sizeof props) {
        free(m);
        return store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "recall failed, execute error");
    }
    snprintf(m->topic, sizeof m->topic, "%s", h.topic);
    props_parse(props, (size_t)n, &m->props);
    int32_t code =
        timer_route(sp, m, bc.cluster_name[0] ? bc.cluster_name : NULL, remark, sizeof remark);
    int rc;
    if (code != 0 || !m->props_override) {
        rc = store_reply_code(sp, req, cmd, code > 0 ? code : RC_SYSTEM_ERROR,
                              code > 0 ? remark : "recall failed, execute error");
    } else {
        store_msg sm;
        memset(&sm, 0, sizeof sm);
        sm.topic = m->topic;
        sm.queue_id = m->queue_id;
        sm.born_ts = (int64_t)a->now_wall_ms();
        const char *peer = a->request_peer(req);
        if (!peer || addr_parse(peer, &sm.born_host) != 0)
            addr_from_ip_port("127.0.0.1", 0, &sm.born_host);
        sm.store_host = store_host;
        sm.body = "0";
        sm.body_len = 1;
        sm.props = m->props_override;
        sm.props_len = m->props_override_len;
        sm.tags_code = m->tags_code;
        store_put_result pr;
        if (store_send_put(sp, &sm, &pr) != 0 || pr.status != STORE_PUT_OK) {
            rc = store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "recall failed, execute error");
        } else {
            rmq_cmd *r = send_response_new(sp, cmd, RC_SUCCESS, NULL);
            if (r) {
                a->cmd_ext_set(r, "msgId", h.uniq_key);
                rc = a->reply(req, r);
            } else {
                rc = RMQ_ENOMEM;
            }
        }
    }
    free(m->props_override);
    free(m);
    return rc;
}

int recall_processor_register(store_plugin *sp)
{
    return sp->api->register_processor(sp->ctx, RECALL_MESSAGE, process_recall, sp, "send");
}
