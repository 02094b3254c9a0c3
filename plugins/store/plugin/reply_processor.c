/* reply_processor.c — SEND_REPLY_MESSAGE (324) / _V2 (325) of
 * protocol-messages.md §10.5.8: the reply is pushed to the requesting
 * producer with PUSH_REPLY_MESSAGE_TO_CLIENT (326, synchronous) and, when
 * storeReplyMessageEnable, stored in its reply topic too. Runs on the send
 * executor: the push waits for the requester's answer. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message_id.h"
#include "store_features.h"

#define PUSH_REPLY_MESSAGE_TO_CLIENT 326
#define PUSH_TIMEOUT_MS 10000

static void set_str(store_plugin *sp, rmq_cmd *c, const char *k, const char *v)
{
    if (v)
        sp->api->cmd_ext_set(c, k, v);
}

/* The 326 request: the send header's fields plus bornHost, storeHost and
 * storeTimestamp; body = the reply's body. */
static rmq_cmd *push_request(store_plugin *sp, const send_header *h, const char *props,
                             const char *born, const char *store_host, const void *body,
                             size_t blen)
{
    rmq_cmd *r = sp->api->cmd_new_request(PUSH_REPLY_MESSAGE_TO_CLIENT);
    if (!r)
        return NULL;
    set_str(sp, r, "producerGroup", h->producer_group);
    set_str(sp, r, "topic", h->topic);
    set_str(sp, r, "defaultTopic", h->default_topic);
    /* a number the sender left out stays out (Java's header holds null) */
    if (h->present & SEND_HAS_DEFQ)
        store_ext_i64(sp, r, "defaultTopicQueueNums", h->default_topic_queue_nums);
    store_ext_i64(sp, r, "queueId", h->queue_id);
    if (h->present & SEND_HAS_SYS_FLAG)
        store_ext_i64(sp, r, "sysFlag", h->sys_flag);
    store_ext_i64(sp, r, "bornTimestamp", h->born_ts);
    store_ext_i64(sp, r, "flag", h->flag);
    set_str(sp, r, "properties", props);
    if (h->present & SEND_HAS_RECONSUME)
        store_ext_i64(sp, r, "reconsumeTimes", h->reconsume_times);
    sp->api->cmd_ext_set(r, "unitMode", h->unit_mode ? "true" : "false");
    sp->api->cmd_ext_set(r, "bornHost", born);
    sp->api->cmd_ext_set(r, "storeHost", store_host);
    store_ext_i64(sp, r, "storeTimestamp", (int64_t)sp->api->now_wall_ms());
    if (body && blen)
        sp->api->cmd_set_body(r, body, blen, NULL, NULL);
    return r;
}

static int process_reply(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    char remark[600];
    send_header h;
    if (send_header_decode(sp, cmd, &h, remark, sizeof remark) != 0) {
        a->request_fail(req, remark);
        return RMQ_EINVAL;
    }
    rmq_broker_config bc;
    if (meta_broker_config(sp, &bc) != 0) {
        memset(&bc, 0, sizeof bc);
        snprintf(bc.cluster_name, sizeof bc.cluster_name, "DefaultCluster");
        bc.broker_permission = RMQ_PERM_READ | RMQ_PERM_WRITE;
    }
    bool oneway = store_cmd_is_oneway(sp, cmd);
    /* msgCheck (§10.5.1 steps 2-6), shared with the send path */
    rmq_topic_config tc;
    int32_t code = 0;
    const char *peer = a->request_peer(req);
    code = send_msg_check(sp, &h, &bc, peer ? peer : "", true, &tc, remark, sizeof remark);
    if (code == 0 && h.queue_id < 0 && tc.write_queue_nums <= 0) {
        code = SEND_CHECK_EXCEPTION; /* the random queue's modulo throws */
        snprintf(remark, sizeof remark, "java.lang.ArithmeticException: / by zero");
    }
    /* the message takes flag and bornTimestamp unboxed */
    if (code == 0 && !send_header_need(&h, SEND_HAS_FLAG | SEND_HAS_BORN_TS, remark, sizeof remark))
        code = SEND_CHECK_EXCEPTION;
    if (code) {
        if (oneway)
            return RMQ_OK;
        if (code == SEND_CHECK_EXCEPTION) /* thrown: the dispatcher's answer, no ext fields */
            return a->reply(req, a->cmd_new_response(cmd, RC_SYSTEM_ERROR, remark));
        return a->reply(req, send_response_new(sp, cmd, code, remark));
    }
    int32_t queue_id = h.queue_id;
    if (queue_id < 0) /* Java: random % writeQueueNums */
        queue_id = (int32_t)(atomic_fetch_add(&features_of(sp)->retry_turn, 1) %
                             (uint32_t)tc.write_queue_nums);
    size_t blen = 0;
    const void *body = a->cmd_body(cmd, &blen);
    props_view *v = malloc(sizeof *v);
    if (!v)
        return RMQ_ENOMEM;
    props_parse(h.properties, h.properties ? strlen(h.properties) : 0, v);
    size_t cl = 0;
    const char *cid = props_get(v, "REPLY_TO_CLIENT", &cl);
    char client[256] = "", now[24];
    if (cid)
        snprintf(client, sizeof client, "%.*s", (int)(cl < 255 ? cl : 255), cid);
    snprintf(now, sizeof now, "%" PRIu64, a->now_wall_ms());
    const char *kv[] = {"PUSH_REPLY_TIME", now, NULL};
    char *props = NULL;
    size_t plen = 0;
    /* the push carries the sent properties plus PUSH_REPLY_TIME */
    props_rewrite(v, cid ? kv : NULL, NULL, NULL, &props, &plen);
    /* push */
    bool push_ok = false;
    if (!cid) {
        snprintf(remark, sizeof remark, "reply message properties[REPLY_TO_CLIENT] is null");
    } else {
        uint64_t ch = 0;
        meta_producer_channel_by_client(sp, client, &ch);
        if (!ch) {
            snprintf(remark, sizeof remark, "push reply message fail, channel of <%s> not found.",
                     client);
        } else {
            char store_host[96];
            snprintf(store_host, sizeof store_host, "%s:%d", bc.broker_ip1, bc.listen_port);
            const char *peer = a->request_peer(req);
            rmq_cmd *push =
                push_request(sp, &h, props ? props : "", peer ? peer : "", store_host, body, blen);
            rmq_cmd *answer = NULL;
            int rc =
                push ? a->invoke_sync(sp->ctx, ch, push, PUSH_TIMEOUT_MS, &answer) : RMQ_ENOMEM;
            push_ok = rc == 0 && answer && a->cmd_code(answer) == RC_SUCCESS;
            if (answer)
                a->cmd_free(answer);
            if (!push_ok)
                snprintf(remark, sizeof remark, "push reply message to %sfail.", client);
        }
    }
    rmq_cmd *resp = oneway ? NULL
                           : send_response_new(sp, cmd, push_ok ? RC_SUCCESS : RC_SYSTEM_ERROR,
                                               push_ok ? NULL : remark);
    if (resp && push_ok) {
        a->cmd_ext_set(resp, "msgId", "0");
        store_ext_i64(sp, resp, "queueId", queue_id);
        a->cmd_ext_set(resp, "queueOffset", "0");
    }
    /* stored even when the push failed, with the properties as sent; the
     * answer keeps the push's code but names the stored record */
    if (features_of(sp)->store_reply) {
        store_msg m = {0};
        m.topic = h.topic;
        m.queue_id = queue_id;
        m.flag = h.flag;
        m.sys_flag = 0; /* Java's reply message never takes the header's sysFlag */
        m.born_ts = h.born_ts;
        const char *peer = a->request_peer(req);
        if (!peer || addr_parse(peer, &m.born_host) != 0)
            addr_from_ip_port("127.0.0.1", 0, &m.born_host);
        send_store_host(sp, &bc, &m.store_host);
        m.reconsume_times = h.reconsume_times;
        m.body = body;
        m.body_len = blen;
        m.props = h.properties ? h.properties : "";
        m.props_len = strlen(m.props);
        m.tags_code = props_tags_code(m.props, m.props_len);
        store_put_result pr;
        if (store_send_put(sp, &m, &pr) == 0 && pr.status == STORE_PUT_OK && resp) {
            char id[64];
            offset_msg_id(&m.store_host, pr.phys_offset, id);
            a->cmd_ext_set(resp, "msgId", id);
            store_ext_i64(sp, resp, "queueId", queue_id);
            store_ext_i64(sp, resp, "queueOffset", pr.queue_offset);
        }
    }
    free(props);
    free(v);
    return resp ? a->reply(req, resp) : RMQ_OK;
}

int reply_processor_register(store_plugin *sp)
{
    int rc = sp->api->register_processor(sp->ctx, 324, process_reply, sp, "send");
    if (rc == 0)
        rc = sp->api->register_processor(sp->ctx, 325, process_reply, sp, "send");
    return rc;
}
