/* proxy_receive_wait.c — ReceiveMessage long polling. Java's proxy hands the
 * broker a POP with a polling time and the broker holds it until a message
 * arrives; here the store's POP (plugins/store pop_processors.c) holds it
 * the same way and is woken by the store's arrival notification. The gRPC
 * call is held (grpc_hold) and the POP sent with invoke_local_async, so no
 * thread waits: the store's answer, on the store's thread, is turned into
 * the stream's messages and ends the call (ABI 1.11). */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_backend.h"
#include "proxy_internal.h"

/* The clients' default request timeout (rocketmq-clients: 3 s), for a
 * client whose Settings said none. Java's proxy takes half the client's
 * request_timeout from its Settings when the request has no
 * long_polling_timeout; the Settings outlive a hot reload of this plugin
 * (proxy_clients.c's export), so the first receive after one polls as
 * long as before it. */
#define CLIENT_REQUEST_TIMEOUT_MS 3000

int proxy_polling_time(proxy *px, rmq_grpc_call *call,
                       const Apache__Rocketmq__V2__ReceiveMessageRequest *req, int64_t *poll_ms,
                       const char **why)
{
    const rmq_host_api *api = px->api;
    uint64_t deadline = api->grpc_call_deadline_ms(call);
    uint64_t now = api->now_monotonic_ms();
    int64_t remaining = deadline == 0    ? INT64_MAX / 2
                        : deadline > now ? (int64_t)(deadline - now)
                                         : 0;
    int64_t poll, request_timeout = CLIENT_REQUEST_TIMEOUT_MS;
    proxy_client_view v = {0};
    if (proxy_clients_view(px, api->grpc_metadata(call, "x-mq-client-id"), 0, &v)) {
        if (v.request_timeout_ms > 0)
            request_timeout = v.request_timeout_ms;
        json_decref(v.subs);
    }
    if (req->long_polling_timeout)
        poll =
            req->long_polling_timeout->seconds * 1000 + req->long_polling_timeout->nanos / 1000000;
    else
        poll = remaining - request_timeout / 2;
    if (poll < px->min_poll_ms)
        poll = px->min_poll_ms;
    if (poll > px->max_poll_ms)
        poll = px->max_poll_ms;
    if (poll > remaining) {
        if (remaining < px->min_poll_ms) {
            *why = "The deadline time remaining is not enough for polling, please check network "
                   "condition";
            return -1;
        }
        poll = remaining;
    }
    *poll_ms = poll;
    return 0;
}

/* Java's ReceiveMessageActivity: clients before 5.0.3 did not know
 * ILLEGAL_POLLING_TIME and get BAD_REQUEST — its test is a plain string
 * comparison of x-mq-client-version with "5.0.3" (so "5.0.10" counts as
 * older, as there), and no version at all is older too. */
Apache__Rocketmq__V2__Code proxy_polling_refusal_code(proxy *px, rmq_grpc_call *call)
{
    const char *v = px->api->grpc_metadata(call, "x-mq-client-version");
    if (!v || strcmp("5.0.3", v) > 0)
        return PX_BAD_REQUEST;
    return APACHE__ROCKETMQ__V2__CODE__ILLEGAL_POLLING_TIME;
}

typedef struct receive_wait {
    proxy *px;
    rmq_grpc_call *call;
    int64_t invisible;
    char broker[256];
} receive_wait;

/* The store's answer to the held POP, on the thread that gave it. */
static void wait_answered(int err, const rmq_cmd *resp, void *ud)
{
    receive_wait *w = ud;
    const rmq_host_api *api = w->px->api;
    if (err == RMQ_ESHUTDOWN) {
        /* this generation is going (reload, shutdown): the client polls
         * again, reaching the next one */
        Apache__Rocketmq__V2__Status st;
        proxy_status(&st, APACHE__ROCKETMQ__V2__CODE__MESSAGE_NOT_FOUND, "no new message");
        Apache__Rocketmq__V2__ReceiveMessageResponse r =
            APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__INIT;
        r.content_case = APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_STATUS;
        r.status = &st;
        proxy_reply(w->px, w->call, &r.base);
    } else {
        /* the answer and the end in one hand-off; on failure the call is
         * left open and ended here */
        if (proxy_receive_answer(w->px, w->call, err, resp, w->invisible, w->broker, RMQ_GRPC_OK) ==
            0) {
            api->grpc_release(w->call);
            free(w);
            return;
        }
    }
    /* RMQ_ENOTCONN when the client left meanwhile: nothing to tell */
    api->grpc_finish(w->call, RMQ_GRPC_OK, NULL);
    api->grpc_release(w->call);
    free(w);
}

int proxy_receive_wait(proxy *px, rmq_grpc_call *call, rmq_cmd *pop, int64_t invisible,
                       const char *broker)
{
    const rmq_host_api *api = px->api;
    receive_wait *w = calloc(1, sizeof(*w));
    if (!w)
        return RMQ_ENOMEM;
    w->px = px;
    w->call = call;
    w->invisible = invisible;
    snprintf(w->broker, sizeof w->broker, "%s", broker ? broker : "");
    /* no on_done: the store answers within the polling time whether or not
     * the client is still there, and the answer then finds the call gone */
    int rc = api->grpc_hold(call, NULL, NULL);
    if (rc < 0) {
        free(w);
        return rc;
    }
    const char *topic = api->cmd_ext_get(pop, "topic"), *poll = api->cmd_ext_get(pop, "pollTime");
    rc = proxy_broker_call_async(px, topic, w->broker, pop, poll ? strtoll(poll, NULL, 10) : 0,
                                 wait_answered, w);
    if (rc < 0) {
        /* pop is freed by the failed call: the caller cannot fall back */
        if (proxy_receive_answer(px, call, rc, NULL, invisible, w->broker, RMQ_GRPC_OK) != 0)
            api->grpc_finish(call, RMQ_GRPC_OK, NULL);
        api->grpc_release(call);
        free(w);
    }
    return 0;
}
