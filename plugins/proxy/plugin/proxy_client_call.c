/* proxy_client_call.c — the broker role's relays to a 5.x client (event
 * broker.proxy_client_call, published by the broker for a client this
 * plugin registered), answered as Java's proxy answers them in its
 * GrpcClientChannel and ClientActivity:
 *   GET_CONSUMER_RUNNING_INFO (307), jstackEnable → PrintThreadStackTraceCommand
 *     on the client's Telemetry stream; its ThreadStackTrace becomes a
 *     ConsumerRunningInfo whose jstack is the trace (status OK → SUCCESS;
 *     VERIFY_FIFO_MESSAGE_UNSUPPORTED → NO_PERMISSION "forbidden to verify
 *     message"; otherwise SYSTEM_ERROR "verify message failed").
 *   CONSUME_MESSAGE_DIRECTLY (309) → VerifyMessageCommand with the stored
 *     message; the VerifyMessageResult's status becomes a
 *     ConsumeMessageDirectlyResult (OK → CR_SUCCESS,
 *     FAILED_TO_CONSUME_MESSAGE → CR_LATER, MESSAGE_CORRUPTED →
 *     CR_RETURN_NULL, anything else no consumeResult), remark "from gRPC
 *     client", code SUCCESS.
 * Differences (docs/compat.md): Java's running info carries only the jstack
 * and, without jstackEnable, Java's proxy never answers (the admin times
 * out); here the running info also carries what the proxy knows from the
 * client's Settings (its subscriptions and the properties mqadmin reads:
 * consume type, client version, start time), and without jstackEnable it
 * is answered at once without asking the client. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/services/proxy_client_call_event.h>

#include "proxy_internal.h"

#define GET_CONSUMER_RUNNING_INFO 307
#define CONSUME_MESSAGE_DIRECTLY 309
#define RESPONSE_SUCCESS 0
#define RESPONSE_SYSTEM_ERROR 1
#define RESPONSE_NO_PERMISSION 16

/* MQVersion.getVersionDesc for the 4.x/5.x ordinals (V4_0_0_SNAPSHOT 212). */
static void version_desc(int32_t v, char *out, size_t cap)
{
    if (v < 212 || v >= 612) {
        snprintf(out, cap, "V4_9_8");
        return;
    }
    int k = (v - 212) / 2, major = 4 + k / 100, minor = k % 100 / 10, patch = k % 10;
    snprintf(out, cap, "V%d_%d_%d%s", major, minor, patch, (v - 212) % 2 ? "" : "_SNAPSHOT");
}

static rmq_cmd *answer(proxy *px, const rmq_cmd *req, int32_t code, const char *remark,
                       const char *body)
{
    rmq_cmd *r = px->api->cmd_new_response(req, code, remark);
    if (r && body)
        px->api->cmd_set_body(r, body, strlen(body), NULL, NULL);
    return r;
}

/* ConsumerRunningInfo (fastjson: keys in name order, null jstack left out). */
static char *running_info_json(proxy *px, const proxy_client_view *v, const char *jstack)
{
    char since[32], ver[32];
    snprintf(since, sizeof since, "%lld", (long long)v->since_ms);
    version_desc(v->version, ver, sizeof ver);
    bool simple = v->type == APACHE__ROCKETMQ__V2__CLIENT_TYPE__SIMPLE_CONSUMER;
    json_t *props = json_pack("{ssssss}", "PROP_CONSUME_TYPE",
                              simple ? "CONSUME_ACTIVELY" : "CONSUME_PASSIVELY",
                              "PROP_CLIENT_VERSION", ver, "PROP_CONSUMER_START_TIMESTAMP", since);
    json_t *info = json_pack("{s{}sos{}sO}", "mqTable", "properties", props, "statusTable",
                             "subscriptionSet", v->subs ? v->subs : json_array());
    if (info && jstack)
        json_object_set_new(info, "jstack", json_string(jstack));
    (void)px;
    char *out = info ? json_dumps(info, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(info);
    return out;
}

static void running_info(proxy *px, const rmq_proxy_client_call_event *ev,
                         const proxy_client_view *v)
{
    const rmq_host_api *api = px->api;
    rmq_proxy_client_call_result *res = ev->result;
    const char *js = api->cmd_ext_get(ev->request, "jstackEnable");
    char *trace = NULL;
    int code = PX_OK;
    if (js && strcmp(js, "true") == 0) {
        char nonce[40];
        proxy_telemetry_nonce(px, nonce, sizeof nonce);
        Apache__Rocketmq__V2__PrintThreadStackTraceCommand pc =
            APACHE__ROCKETMQ__V2__PRINT_THREAD_STACK_TRACE_COMMAND__INIT;
        pc.nonce = nonce;
        Apache__Rocketmq__V2__TelemetryCommand cmd = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__INIT;
        cmd.command_case =
            APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_PRINT_THREAD_STACK_TRACE_COMMAND;
        cmd.print_thread_stack_trace_command = &pc;
        int rc = proxy_telemetry_ask(px, ev->client_id, &cmd, nonce, ev->timeout_ms, &code, &trace);
        if (rc < 0) {
            free(trace);
            res->err = rc == RMQ_ENOENT ? RMQ_ENOTCONN : rc;
            return;
        }
    }
    if (code == PX_OK) {
        char *body = running_info_json(px, v, trace);
        res->response = body ? answer(px, ev->request, RESPONSE_SUCCESS, NULL, body) : NULL;
        free(body);
    } else if (code == APACHE__ROCKETMQ__V2__CODE__VERIFY_FIFO_MESSAGE_UNSUPPORTED) {
        res->response =
            answer(px, ev->request, RESPONSE_NO_PERMISSION, "forbidden to verify message", NULL);
    } else {
        res->response =
            answer(px, ev->request, RESPONSE_SYSTEM_ERROR, "verify message failed", NULL);
    }
    res->err = res->response ? 0 : RMQ_ENOMEM;
    free(trace);
}

static void consume_directly(proxy *px, const rmq_proxy_client_call_event *ev)
{
    const rmq_host_api *api = px->api;
    rmq_proxy_client_call_result *res = ev->result;
    size_t len = 0;
    const void *rec = api->cmd_body(ev->request, &len);
    proxy_built *pb = rec ? proxy_message_build(rec, len) : NULL;
    if (!pb) {
        res->response = answer(px, ev->request, RESPONSE_SYSTEM_ERROR,
                               "the stored message could not be decoded", NULL);
        res->err = res->response ? 0 : RMQ_ENOMEM;
        return;
    }
    char nonce[40];
    proxy_telemetry_nonce(px, nonce, sizeof nonce);
    Apache__Rocketmq__V2__VerifyMessageCommand vc =
        APACHE__ROCKETMQ__V2__VERIFY_MESSAGE_COMMAND__INIT;
    vc.nonce = nonce;
    vc.message = proxy_message_of(pb);
    Apache__Rocketmq__V2__TelemetryCommand cmd = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__INIT;
    cmd.command_case = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_VERIFY_MESSAGE_COMMAND;
    cmd.verify_message_command = &vc;
    int code = PX_OK;
    char *text = NULL;
    int rc = proxy_telemetry_ask(px, ev->client_id, &cmd, nonce, ev->timeout_ms, &code, &text);
    proxy_message_free(pb);
    free(text);
    if (rc < 0) {
        res->err = rc == RMQ_ENOENT ? RMQ_ENOTCONN : rc;
        return;
    }
    const char *result = code == PX_OK ? "CR_SUCCESS"
                         : code == APACHE__ROCKETMQ__V2__CODE__FAILED_TO_CONSUME_MESSAGE
                             ? "CR_LATER"
                         : code == PX_MESSAGE_CORRUPTED ? "CR_RETURN_NULL"
                                                        : NULL;
    json_t *r = json_pack("{sbsssI}", "autoCommit", 1, "remark", "from gRPC client",
                          "spentTimeMills", (json_int_t)0);
    if (r)
        json_object_set_new(r, "order", json_false());
    if (r && result)
        json_object_set_new(r, "consumeResult", json_string(result));
    char *body = r ? json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(r);
    res->response = body ? answer(px, ev->request, RESPONSE_SUCCESS, NULL, body) : NULL;
    res->err = res->response ? 0 : RMQ_ENOMEM;
    free(body);
}

static void on_client_call(const char *event, const void *data, size_t len, void *ud)
{
    (void)event;
    proxy *px = ud;
    const rmq_proxy_client_call_event *ev = data;
    if (len < sizeof *ev || ev->size < sizeof *ev || !ev->result || ev->result->handled ||
        !ev->request)
        return;
    proxy_client_view v = {0};
    if (!proxy_clients_view(px, ev->client_id, ev->channel, &v))
        return; /* another endpoint's client */
    ev->result->handled = true;
    switch (px->api->cmd_code(ev->request)) {
    case GET_CONSUMER_RUNNING_INFO: running_info(px, ev, &v); break;
    case CONSUME_MESSAGE_DIRECTLY: consume_directly(px, ev); break;
    default: ev->result->err = RMQ_ENOTCONN; break;
    }
    json_decref(v.subs);
}

int proxy_client_call_init(proxy *px)
{
    return px->api->subscribe_event(px->ctx, RMQ_PROXY_CLIENT_CALL_EVENT, on_client_call, px);
}
