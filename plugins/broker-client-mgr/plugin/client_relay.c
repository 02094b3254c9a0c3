/* client_relay.c — owns the relay of GET_CONSUMER_RUNNING_INFO (307) and
 * CONSUME_MESSAGE_DIRECTLY (309) from an admin to the consumer's own
 * connection (protocol.md §5.10). Blocks an admin executor thread for up to
 * 10 s per call; never runs on IO. */
#include "broker_context.h"

#include <stdio.h>
#include <string.h>

#define RELAY_TIMEOUT_MS 10000
#define V3_1_8_SNAPSHOT 62

static rmq_cmd *copy_request(bcm_ctx *c, const rmq_cmd *cmd)
{
    const rmq_host_api *a = c->api;
    rmq_cmd *out = a->cmd_new_request(a->cmd_code(cmd));
    if (!out)
        return NULL;
    for (size_t i = 0; i < a->cmd_ext_count(cmd); i++) {
        const char *k, *v;
        if (a->cmd_ext_at(cmd, i, &k, &v) == 0 && v)
            a->cmd_ext_set(out, k, v);
    }
    size_t len = 0;
    const void *body = a->cmd_body(cmd, &len);
    if (body && len)
        a->cmd_set_body(out, body, len, NULL, NULL);
    return out;
}

static int process_relay(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const rmq_host_api *a = c->api;
    const char *group = a->cmd_ext_get(cmd, "consumerGroup");
    const char *client_id = a->cmd_ext_get(cmd, "clientId");
    rmq_channel_id ch = 0;
    int32_t version = 0;
    pthread_mutex_lock(&c->lock);
    const bcm_client *cl = group ? bcm_consumer_find_client(&c->consumers, group, client_id) : NULL;
    if (cl) {
        ch = cl->channel;
        version = cl->version;
    }
    pthread_mutex_unlock(&c->lock);
    char remark[700];
    if (!ch) {
        snprintf(remark, sizeof remark, "The Consumer <%s> <%s> not online", group ? group : "null",
                 client_id ? client_id : "null");
        return bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR, remark);
    }
    if (version < V3_1_8_SNAPSHOT) {
        snprintf(remark, sizeof remark,
                 "The Consumer <%s> Version <%d> too low to finish, please upgrade it to "
                 "V3_1_8_SNAPSHOT",
                 client_id, version);
        return bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR, remark);
    }
    rmq_cmd *out = copy_request(c, cmd);
    if (!out)
        return RMQ_ENOMEM;
    rmq_cmd *answer = NULL;
    int rc = a->invoke_sync(c->pctx, ch, out, RELAY_TIMEOUT_MS, &answer);
    if (rc == RMQ_ETIMEDOUT) {
        snprintf(remark, sizeof remark, "consumer <%s> <%s> Timeout: %s", group, client_id,
                 rmq_strerror(rc));
        return bcm_reply(c, req, cmd, BCM_CONSUME_MSG_TIMEOUT, remark);
    }
    if (rc != 0 || !answer) {
        snprintf(remark, sizeof remark, "invoke consumer <%s> <%s> Exception: %s", group, client_id,
                 rmq_strerror(rc));
        return bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR, remark);
    }
    /* The client's answer goes back unchanged except for the opaque. */
    rmq_cmd *resp = a->cmd_new_response(cmd, a->cmd_code(answer), a->cmd_remark(answer));
    if (resp) {
        for (size_t i = 0; i < a->cmd_ext_count(answer); i++) {
            const char *k, *v;
            if (a->cmd_ext_at(answer, i, &k, &v) == 0 && v)
                a->cmd_ext_set(resp, k, v);
        }
        size_t len = 0;
        const void *body = a->cmd_body(answer, &len);
        if (body && len)
            a->cmd_set_body(resp, body, len, NULL, NULL);
    }
    a->cmd_free(answer);
    if (!resp)
        return RMQ_ENOMEM;
    if (bcm_is_oneway(c, cmd)) {
        a->cmd_free(resp);
        return RMQ_OK;
    }
    return a->reply(req, resp);
}

int bcm_register_relay_processors(bcm_ctx *c)
{
    int rc = c->api->register_processor(c->pctx, BCM_GET_CONSUMER_RUNNING_INFO, process_relay, c,
                                        "admin");
    if (rc == 0)
        rc = c->api->register_processor(c->pctx, BCM_CONSUME_MESSAGE_DIRECTLY, process_relay, c,
                                        "admin");
    return rc;
}
