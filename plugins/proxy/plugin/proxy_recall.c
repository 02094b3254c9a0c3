/* proxy_recall.c — RecallMessage (Java 5.3's RecallMessageActivity and
 * ProducerProcessor.recallMessage): the topic must accept DELAY messages
 * (its message.type), the recall handle SendMessage returned for a timer
 * message goes to the broker role as RECALL_MESSAGE (370) through
 * invoke_local, and the recalled message id comes back. A handle that does
 * not decode and every refusal of the broker answer INTERNAL_SERVER_ERROR
 * with the broker's remark, as Java's ResponseBuilder maps them. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_backend.h"
#include "proxy_internal.h"

#define RECALL_MESSAGE 370

/* The broker a recall handle names (Java's RecallMessageHandle.HandleV1:
 * base64url of "v1 topic brokerName timestamp uniqKey"), for cluster mode;
 * "" when it does not decode (the broker then refuses the handle). */
static void recall_broker(const char *handle, char *out, size_t cap)
{
    out[0] = '\0';
    size_t n = strlen(handle);
    if (n == 0 || n > 1024)
        return;
    char b64[1032];
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        b64[m++] = handle[i] == '-' ? '+' : handle[i] == '_' ? '/' : handle[i];
    while (m % 4)
        b64[m++] = '=';
    unsigned char raw[800];
    int len = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)m);
    if (len <= 0)
        return;
    raw[len] = '\0';
    char v[8], topic[256], broker[256];
    if (sscanf((const char *)raw, "%7s %255s %255s", v, topic, broker) == 3 && strcmp(v, "v1") == 0)
        snprintf(out, cap, "%s", broker);
}

/* Java's DefaultTopicMessageTypeValidator with DELAY as the actual type:
 * NULL when the topic takes it, else the topic's type name. */
static const char *refuses_delay(proxy *px, const char *topic)
{
    size_t n = 0;
    const Apache__Rocketmq__V2__MessageType *t = proxy_topic_accept_types(px, topic, &n);
    if (n > 1)
        return NULL; /* MIXED */
    switch (t[0]) {
    case APACHE__ROCKETMQ__V2__MESSAGE_TYPE__DELAY: return NULL;
    case APACHE__ROCKETMQ__V2__MESSAGE_TYPE__NORMAL: return "NORMAL";
    case APACHE__ROCKETMQ__V2__MESSAGE_TYPE__FIFO: return "FIFO";
    case APACHE__ROCKETMQ__V2__MESSAGE_TYPE__TRANSACTION: return "TRANSACTION";
    default: return "UNSPECIFIED";
    }
}

int proxy_recall_message(rmq_grpc_call *call, const void *msg, size_t len, void *ud)
{
    proxy *px = ud;
    const rmq_host_api *api = px->api;
    Apache__Rocketmq__V2__RecallMessageRequest *req =
        apache__rocketmq__v2__recall_message_request__unpack(NULL, len, msg);
    if (!req)
        return api->grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT,
                                "RecallMessageRequest: undecodable protobuf");
    Apache__Rocketmq__V2__RecallMessageResponse resp =
        APACHE__ROCKETMQ__V2__RECALL_MESSAGE_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st;
    char remark[512] = "", id[160] = "";
    const char *topic = req->topic && req->topic->name ? req->topic->name : "";
    const char *handle = req->recall_handle ? req->recall_handle : "";
    rmq_cmd *r = NULL;
    const char *type;
    if (!topic[0]) {
        proxy_status(&st, PX_ILLEGAL_TOPIC, "topic name cannot be empty");
    } else if ((type = refuses_delay(px, topic)) != NULL) {
        snprintf(remark, sizeof remark,
                 "TopicMessageType validate failed, the expected type is %s, but actual type is "
                 "DELAY",
                 type);
        proxy_status(&st, APACHE__ROCKETMQ__V2__CODE__MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, remark);
    } else if (!handle[0]) {
        proxy_status(&st, PX_INTERNAL_SERVER_ERROR, "recall handle is invalid");
    } else {
        rmq_cmd *rq = api->cmd_new_request(RECALL_MESSAGE);
        int rc = rq ? 0 : RMQ_ENOMEM;
        if (rc == 0 && (api->cmd_ext_set(rq, "topic", topic) < 0 ||
                        api->cmd_ext_set(rq, "recallHandle", handle) < 0))
            rc = RMQ_ENOMEM;
        if (rc != 0 && rq)
            api->cmd_free(rq);
        if (rc == 0) {
            char broker[256];
            recall_broker(handle, broker, sizeof broker); /* cluster mode's destination */
            rc = proxy_broker_call(px, topic, broker, rq, &r);
        }
        if (rc < 0) {
            proxy_status(&st, rc == RMQ_ETIMEDOUT ? PX_PROXY_TIMEOUT : PX_INTERNAL_SERVER_ERROR,
                         rmq_strerror(rc));
        } else if (api->cmd_code(r) != 0) {
            const char *rm = api->cmd_remark(r);
            snprintf(remark, sizeof remark, "%s", rm ? rm : "recall failed");
            proxy_status(&st, proxy_code_of_remoting(api->cmd_code(r)), remark);
        } else {
            const char *mid = api->cmd_ext_get(r, "msgId");
            snprintf(id, sizeof id, "%s", mid ? mid : "");
            resp.message_id = id;
            proxy_status(&st, PX_OK, NULL);
        }
    }
    if (r)
        api->cmd_free(r);
    resp.status = &st;
    return proxy_reply_free(px, call, &resp.base, &req->base);
}
