/* consumer_manage_processors.c — owns GET_CONSUMER_LIST_BY_GROUP (38),
 * QUERY_CONSUMER_OFFSET (14) and UPDATE_CONSUMER_OFFSET (15) with 4.9.8
 * semantics (protocol.md §5.6–§5.8). Offsets are written to disk by the
 * flush timer, never here. */
#include "broker_context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int process_consumer_list(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const char *group = c->api->cmd_ext_get(cmd, "consumerGroup");
    json_t *ids = json_array();
    pthread_mutex_lock(&c->lock);
    const bcm_consumer_group *g = group ? bcm_consumer_group_get(&c->consumers, group) : NULL;
    for (size_t i = 0; g && i < g->nclients; i++)
        json_array_append_new(ids, json_string(g->clients[i].client_id));
    pthread_mutex_unlock(&c->lock);
    if (json_array_size(ids) == 0) {
        json_decref(ids);
        char remark[600];
        snprintf(remark, sizeof remark, "no consumer for this group, %s", group ? group : "null");
        return bcm_reply_header(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR, remark, NULL);
    }
    json_t *root = json_pack("{so}", "consumerIdList", ids);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text)
        return RMQ_ENOMEM;
    return bcm_reply_header(c, req, cmd, RMQ_RESPONSE_SUCCESS, NULL, text);
}

static int process_query_offset(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const rmq_host_api *a = c->api;
    const char *group = a->cmd_ext_get(cmd, "consumerGroup");
    const char *topic = a->cmd_ext_get(cmd, "topic");
    int64_t qid = 0, offset = 0;
    if (!group || !topic || !bcm_ext_long(c, cmd, "queueId", &qid)) {
        a->request_fail(req, "java.lang.NullPointerException, QueryConsumerOffsetRequestHeader");
        return RMQ_EINVAL;
    }
    pthread_mutex_lock(&c->lock);
    bool found = bcm_offset_query(&c->offsets, topic, group, (int32_t)qid, &offset);
    pthread_mutex_unlock(&c->lock);
    if (!found || offset < 0) {
        /* ConsumerManageProcessor.queryConsumerOffset (protocol-messages.md
         * §10.2.12): a queue whose first message is still at offset 0 and in
         * memory starts at 0; otherwise the client decides (QUERY_NOT_FOUND).
         * Without a store every queue is empty: 0. */
        bcm_store st;
        bcm_store_acquire(c, &st);
        bool start_at_zero = bcm_store_min_offset(&st, topic, (int32_t)qid) <= 0 &&
                             !bcm_store_in_disk(&st, topic, (int32_t)qid, 0);
        bcm_store_release(c, &st);
        if (!start_at_zero)
            return bcm_reply_header(c, req, cmd, BCM_QUERY_NOT_FOUND,
                                    "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot "
                                    "first",
                                    NULL);
        offset = 0;
    }
    if (bcm_is_oneway(c, cmd))
        return RMQ_OK;
    rmq_cmd *resp = a->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (!resp)
        return RMQ_ENOMEM;
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)offset);
    a->cmd_ext_set(resp, "offset", num);
    return a->reply(req, resp);
}

static int process_update_offset(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const rmq_host_api *a = c->api;
    const char *group = a->cmd_ext_get(cmd, "consumerGroup");
    const char *topic = a->cmd_ext_get(cmd, "topic");
    int64_t qid = 0, offset = 0;
    if (!group || !topic || !bcm_ext_long(c, cmd, "queueId", &qid) ||
        !bcm_ext_long(c, cmd, "commitOffset", &offset)) {
        a->request_fail(req, "java.lang.NullPointerException, UpdateConsumerOffsetRequestHeader");
        return RMQ_EINVAL;
    }
    pthread_mutex_lock(&c->lock);
    int rc = bcm_offset_commit(&c->offsets, topic, group, (int32_t)qid, offset);
    c->offsets_changes++;
    pthread_mutex_unlock(&c->lock);
    if (rc != 0)
        return RMQ_ENOMEM;
    return bcm_reply_header(c, req, cmd, RMQ_RESPONSE_SUCCESS, NULL, NULL);
}

int bcm_register_consumer_processors(bcm_ctx *c)
{
    int rc = c->api->register_processor(c->pctx, BCM_GET_CONSUMER_LIST_BY_GROUP,
                                        process_consumer_list, c, "consumer");
    if (rc == 0)
        rc = c->api->register_processor(c->pctx, BCM_QUERY_CONSUMER_OFFSET, process_query_offset, c,
                                        "consumer");
    if (rc == 0)
        rc = c->api->register_processor(c->pctx, BCM_UPDATE_CONSUMER_OFFSET, process_update_offset,
                                        c, "consumer");
    return rc;
}
