/* client_relay.c — owns the relay of GET_CONSUMER_RUNNING_INFO (307) and
 * CONSUME_MESSAGE_DIRECTLY (309) from an admin to the consumer's own
 * connection (protocol.md §5.10). Blocks an admin executor thread for up to
 * callClientTimeoutMillis (Java: 10 s) per call; never runs on IO. */
#include "broker_context.h"

#include <rmqhost/services/proxy_client_call_event.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define V3_1_8_SNAPSHOT 62

/* MQVersion.getVersionDesc for the ordinals the relay refuses (< 62): the
 * 3.0.0 pre-releases, then SNAPSHOT/release pairs of 3.0.1..3.0.15 and
 * 3.1.0..3.1.7. Negative values have no name (Java fails there too). */
static void version_name(int32_t v, char *out, size_t len)
{
    static const char *const pre[] = {
        "V3_0_0_SNAPSHOT", "V3_0_0_ALPHA1",         "V3_0_0_BETA1", "V3_0_0_BETA2",
        "V3_0_0_BETA3",    "V3_0_0_BETA4",          "V3_0_0_BETA5", "V3_0_0_BETA6_SNAPSHOT",
        "V3_0_0_BETA6",    "V3_0_0_BETA7_SNAPSHOT", "V3_0_0_BETA7", "V3_0_0_BETA8_SNAPSHOT",
        "V3_0_0_BETA8",    "V3_0_0_BETA9_SNAPSHOT", "V3_0_0_BETA9", "V3_0_0_FINAL",
    };
    if (v >= 0 && v < 16)
        snprintf(out, len, "%s", pre[v]);
    else if (v >= 16 && v < 46)
        snprintf(out, len, "V3_0_%d%s", (v - 16) / 2 + 1, (v % 2) ? "" : "_SNAPSHOT");
    else if (v >= 46 && v < V3_1_8_SNAPSHOT)
        snprintf(out, len, "V3_1_%d%s", (v - 46) / 2, (v % 2) ? "" : "_SNAPSHOT");
    else
        snprintf(out, len, "%d", (int)v);
}

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

/* MessageDecoder.decodeMessageId: the commit-log offset is the last 16 hex
 * digits of an offsetMsgId (32 digits for IPv4 hosts, 40 for IPv6). */
static bool msg_id_offset(const char *id, int64_t *out)
{
    size_t n = id ? strlen(id) : 0;
    if (n != 32 && n != 40)
        return false;
    uint64_t v = 0;
    for (size_t i = n - 16; i < n; i++) {
        char ch = id[i];
        int d = ch >= '0' && ch <= '9'   ? ch - '0'
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                                         : -1;
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = (int64_t)v;
    return true;
}

/* Java's consumeMessageDirectly sends the client the stored record the
 * msgId names (selectOneMessageByOffset). Without a store the admin's body
 * goes through. 0, or a SYSTEM_ERROR remark in `remark`. */
static int put_stored_message(bcm_ctx *c, const rmq_cmd *cmd, rmq_cmd *out, char *remark,
                              size_t len)
{
    bcm_store st;
    if (!bcm_store_acquire(c, &st))
        return 0;
    const char *id = c->api->cmd_ext_get(cmd, "msgId");
    int64_t off = 0;
    void *rec = NULL;
    size_t rlen = 0;
    int rc = RMQ_ENOENT;
    if (msg_id_offset(id, &off) && st.t->message_by_offset)
        rc = st.t->message_by_offset(st.ud, off, &rec, &rlen);
    bcm_store_release(c, &st);
    if (rc != 0 || !rec) {
        /* Java fails with an exception here (no message at that offset) */
        snprintf(remark, len, "java.lang.NullPointerException, no stored message for msgId %s",
                 id ? id : "null");
        free(rec);
        return -1;
    }
    c->api->cmd_set_body(out, rec, rlen, NULL, NULL);
    free(rec);
    return 0;
}

/* A 5.x client a gRPC endpoint registered (no connection has its
 * channel): the endpoint answers for it over the client's own stream
 * (event broker.proxy_client_call). `out` is freed here, as invoke_sync
 * frees it. */
static int relay_to_proxy_client(bcm_ctx *c, rmq_channel_id ch, const char *group,
                                 const char *client_id, rmq_cmd *out, uint32_t timeout,
                                 rmq_cmd **answer)
{
    rmq_proxy_client_call_result res = {0};
    rmq_proxy_client_call_event ev = {.size = sizeof ev,
                                      .channel = ch,
                                      .client_id = client_id,
                                      .group = group,
                                      .request = out,
                                      .timeout_ms = timeout,
                                      .result = &res};
    c->api->publish_event(c->pctx, RMQ_PROXY_CLIENT_CALL_EVENT, &ev, sizeof ev);
    c->api->cmd_free(out);
    if (!res.handled)
        return RMQ_ENOTCONN;
    if (res.err == 0 && !res.response)
        return RMQ_EIO;
    *answer = res.response;
    return res.err;
}

static int process_relay(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const rmq_host_api *a = c->api;
    const char *group = a->cmd_ext_get(cmd, "consumerGroup");
    const char *client_id = a->cmd_ext_get(cmd, "clientId");
    rmq_channel_id ch = 0;
    int32_t version = 0;
    char peer[64] = "";
    pthread_mutex_lock(&c->lock);
    const bcm_client *cl = group ? bcm_consumer_find_client(&c->consumers, group, client_id) : NULL;
    if (cl) {
        ch = cl->channel;
        version = cl->version;
        memcpy(peer, cl->addr, sizeof peer);
    }
    pthread_mutex_unlock(&c->lock);
    char remark[700];
    if (!ch) {
        snprintf(remark, sizeof remark, "The Consumer <%s> <%s> not online", group ? group : "null",
                 client_id ? client_id : "null");
        return bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR, remark);
    }
    if (version < V3_1_8_SNAPSHOT) {
        char name[32];
        version_name(version, name, sizeof name);
        snprintf(remark, sizeof remark,
                 "The Consumer <%s> Version <%s> too low to finish, please upgrade it to "
                 "V3_1_8_SNAPSHOT",
                 client_id, name);
        return bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR, remark);
    }
    rmq_cmd *out = copy_request(c, cmd);
    if (!out)
        return RMQ_ENOMEM;
    /* Java's consumeMessageDirectly names this broker to the client and
     * sends the stored message. */
    if (a->cmd_code(cmd) == BCM_CONSUME_MESSAGE_DIRECTLY) {
        a->cmd_ext_set(out, "brokerName", c->s.broker_name);
        if (put_stored_message(c, cmd, out, remark, sizeof remark) != 0) {
            a->cmd_free(out);
            return bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR, remark);
        }
    }
    rmq_cmd *answer = NULL;
    uint32_t timeout = (uint32_t)c->s.call_client_timeout_ms;
    int rc = (ch & RMQ_PROXY_CHANNEL_BIT)
                 ? relay_to_proxy_client(c, ch, group, client_id, out, timeout, &answer)
                 : a->invoke_sync(c->pctx, ch, out, timeout, &answer);
    if (rc == RMQ_ETIMEDOUT) {
        /* Java's text of the RemotingTimeoutException, without its stack frame */
        snprintf(remark, sizeof remark,
                 "consumer <%s> <%s> Timeout: org.apache.rocketmq.remoting.exception."
                 "RemotingTimeoutException: wait response on the channel <%s> timeout, %u(ms)",
                 group, client_id, peer, timeout);
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
