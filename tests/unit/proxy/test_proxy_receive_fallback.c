/* test_proxy_receive_fallback.c — the proxy's ReceiveMessage handler
 * (proxy_receive_message, the plugin's own sources) against a host whose
 * table lacks grpc_send_batch: an ABI 1.12 host (abi_minor 12; whatever
 * sits in the slot must not be called) and a 1.13 table with the member
 * NULL. The client must still get every answer message, one grpc_send
 * each: the status, all popped messages in order, the delivery timestamp,
 * then the OK finish. The same request against a batch-capable table gives
 * the same messages in one grpc_send_batch. The host API is the testkit's
 * (real rmq_cmd requests and answers) with the gRPC members and
 * invoke_local (the broker's POP answer) replaced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/testkit.h>

#include "proxy_internal.h"
#include "proxy_test_host.h"

#define NMSG 32 /* the store answers a POP with maxMsgNums records */
#define POP_MESSAGE 200050

/* What the client received. The fake call handle points at it. */
typedef struct client {
    const rmq_host_api *kit_api; /* the testkit's, for the rmq_cmd calls */
    uint8_t *msgs[NMSG + 8];
    size_t lens[NMSG + 8];
    size_t n;
    size_t sends, batches, bad_batch_calls, finishes;
    int finish_status;
    bool sent_after_finish;
    size_t pops;
} client;

static void keep(client *c, const void *data, size_t len)
{
    assert_true(c->n < sizeof c->msgs / sizeof c->msgs[0]);
    c->msgs[c->n] = malloc(len ? len : 1);
    assert_non_null(c->msgs[c->n]);
    memcpy(c->msgs[c->n], data, len);
    c->lens[c->n++] = len;
}

static int rec_send(rmq_grpc_call *call, const void *msg, size_t len)
{
    client *c = (client *)call;
    c->sends++;
    if (c->finishes)
        c->sent_after_finish = true;
    keep(c, msg, len);
    return 0;
}

static int rec_finish(rmq_grpc_call *call, int status, const char *message)
{
    (void)message;
    client *c = (client *)call;
    c->finishes++;
    c->finish_status = status;
    return 0;
}

static int rec_batch(rmq_grpc_call *call, const rmq_grpc_msg *m, size_t n, int finish_status,
                     const char *finish_message)
{
    client *c = (client *)call;
    c->batches++;
    for (size_t i = 0; i < n; i++)
        keep(c, m[i].data, m[i].len);
    if (finish_status != RMQ_GRPC_NO_FINISH)
        rec_finish(call, finish_status, finish_message);
    return 0;
}

/* In a 1.12 host's table this slot is not grpc_send_batch: never called. */
static int not_a_batch(rmq_grpc_call *call, const rmq_grpc_msg *m, size_t n, int finish_status,
                       const char *finish_message)
{
    (void)m, (void)n, (void)finish_status, (void)finish_message;
    ((client *)call)->bad_batch_calls++;
    return RMQ_EINVAL;
}

static const char *no_metadata(const rmq_grpc_call *call, const char *name)
{
    (void)call, (void)name;
    return NULL;
}

static uint64_t no_deadline(const rmq_grpc_call *call)
{
    (void)call;
    return 0;
}

static void be32(uint8_t *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static void be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* One stored record as a POP answer's body holds it (IPv4 hosts). */
static size_t put_record(uint8_t *p, int i)
{
    char body[32], props[64];
    int bl = snprintf(body, sizeof body, "body-%02d", i);
    int pl = snprintf(props, sizeof props, "UNIQ_KEY\001ID%02d\002TAGS\001t\002", i);
    const char *topic = "TopicR";
    size_t tl = strlen(topic);
    size_t total = 88 + (size_t)bl + 1 + tl + 2 + (size_t)pl;
    memset(p, 0, total);
    be32(p, (uint32_t)total);
    be32(p + 4, 0xAABBCCDDu);                 /* magic */
    be32(p + 12, (uint32_t)(i % 4));          /* queueId */
    be64(p + 20, (uint64_t)(i / 4));          /* queueOffset */
    be64(p + 28, (uint64_t)(1000 + i * 200)); /* physOffset */
    be64(p + 40, 1700000000000ull);           /* bornTimestamp */
    p[48] = 127, p[51] = 1;                   /* bornHost 127.0.0.1:... */
    be64(p + 56, 1700000000001ull);           /* storeTimestamp */
    p[64] = 127, p[67] = 1;
    be32(p + 84, (uint32_t)bl);
    memcpy(p + 88, body, (size_t)bl);
    size_t at = 88 + (size_t)bl;
    p[at++] = (uint8_t)tl;
    memcpy(p + at, topic, tl);
    at += tl;
    p[at++] = (uint8_t)(pl >> 8);
    p[at++] = (uint8_t)pl;
    memcpy(p + at, props, (size_t)pl);
    return total;
}

/* The host table given to the plugin, and the client its fakes record for
 * (px->ctx points at it: invoke_local gets no call handle). */
typedef struct fake_host {
    rmq_host_api api; /* first: the plugin's px->api points here */
    client *c;
} fake_host;

static fake_host *current_host(const rmq_plugin_ctx *ctx)
{
    return (fake_host *)(uintptr_t)ctx; /* the test passes its fake_host as ctx */
}

/* The broker's POP answer: maxMsgNums records. */
static int fake_pop(rmq_plugin_ctx *ctx, const char *server, rmq_cmd *req, uint32_t timeout_ms,
                    rmq_cmd **resp)
{
    (void)timeout_ms;
    fake_host *h = current_host(ctx);
    const rmq_host_api *k = h->c->kit_api;
    assert_string_equal(server, "broker");
    assert_int_equal(k->cmd_code(req), POP_MESSAGE);
    assert_string_equal(k->cmd_ext_get(req, "topic"), "TopicR");
    int n = atoi(k->cmd_ext_get(req, "maxMsgNums"));
    assert_int_equal(n, NMSG);
    k->cmd_free(req);
    h->c->pops++;
    uint8_t *body = malloc((size_t)n * 256);
    assert_non_null(body);
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += put_record(body + len, i);
    rmq_cmd *r = rmq_tk_response(0, NULL);
    assert_non_null(r);
    assert_int_equal(rmq_tk_set_ext(r, "popTime", "1700000000500"), 0);
    assert_int_equal(rmq_tk_set_ext(r, "reviveQid", "0"), 0);
    assert_int_equal(rmq_tk_set_ext(r, "startOffsetInfo", "0 0 0;0 1 0;0 2 0;0 3 0"), 0);
    assert_int_equal(rmq_tk_set_body(r, body, len), 0);
    free(body);
    *resp = r;
    return 0;
}

typedef enum host_kind { HOST_1_12, HOST_1_13_NO_BATCH, HOST_WITH_BATCH } host_kind;

/* One ReceiveMessage through the handler; the client's record in *c. */
static void receive_once(host_kind kind, client *c)
{
    rmq_testkit *kit = rmq_tk_new();
    assert_non_null(kit);
    char err[256];
    if (rmq_tk_start(kit, err, sizeof err) != 0)
        fail_msg("testkit start: %s", err);
    memset(c, 0, sizeof *c);
    c->kit_api = rmq_tk_api(kit);
    fake_host h = {.api = *c->kit_api, .c = c};
    h.api.log = quiet_log;
    h.api.add_channel_listener = no_listener;
    h.api.grpc_send = rec_send;
    h.api.grpc_finish = rec_finish;
    h.api.grpc_metadata = no_metadata;
    h.api.grpc_call_deadline_ms = no_deadline;
    h.api.invoke_local = fake_pop;
    switch (kind) {
    case HOST_1_12:
        h.api.abi_minor = 12;
        h.api.grpc_send_batch = not_a_batch;
        break;
    case HOST_1_13_NO_BATCH:
        h.api.abi_minor = 13;
        h.api.grpc_send_batch = NULL;
        break;
    case HOST_WITH_BATCH:
        h.api.abi_minor = 13;
        h.api.grpc_send_batch = rec_batch;
        break;
    }
    proxy px = {0};
    px.api = &h.api;
    px.ctx = (rmq_plugin_ctx *)(void *)&h;
    px.broker_server = "broker";
    px.local_timeout_ms = 3000;
    px.min_poll_ms = 0;
    px.max_poll_ms = 0; /* no long poll: answered at once */
    assert_int_equal(proxy_clients_init(&px), 0);

    Apache__Rocketmq__V2__Resource group = APACHE__ROCKETMQ__V2__RESOURCE__INIT;
    Apache__Rocketmq__V2__Resource topic = APACHE__ROCKETMQ__V2__RESOURCE__INIT;
    Apache__Rocketmq__V2__MessageQueue mq = APACHE__ROCKETMQ__V2__MESSAGE_QUEUE__INIT;
    Apache__Rocketmq__V2__ReceiveMessageRequest req =
        APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_REQUEST__INIT;
    group.name = "GroupR";
    topic.name = "TopicR";
    mq.topic = &topic;
    req.group = &group;
    req.message_queue = &mq;
    req.batch_size = NMSG;
    size_t len = apache__rocketmq__v2__receive_message_request__get_packed_size(&req);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    apache__rocketmq__v2__receive_message_request__pack(&req, buf);
    assert_int_equal(proxy_receive_message((rmq_grpc_call *)(void *)c, buf, len, &px), 0);
    free(buf);
    proxy_clients_fini(&px);
    rmq_tk_free(kit);
    c->kit_api = NULL;
}

/* What a 5.x client reads from the stream: status OK, the NMSG messages in
 * the store's order, the delivery timestamp, then the OK finish. */
static void assert_client_got_everything(const client *c)
{
    assert_int_equal(c->pops, 1);
    assert_int_equal(c->n, NMSG + 2);
    for (size_t i = 0; i < c->n; i++) {
        Apache__Rocketmq__V2__ReceiveMessageResponse *r =
            apache__rocketmq__v2__receive_message_response__unpack(NULL, c->lens[i], c->msgs[i]);
        if (!r)
            fail_msg("answer message %zu does not decode", i);
        if (i == 0) {
            assert_int_equal(r->content_case,
                             APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_STATUS);
            assert_int_equal(r->status->code, APACHE__ROCKETMQ__V2__CODE__OK);
        } else if (i <= NMSG) {
            assert_int_equal(r->content_case,
                             APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_MESSAGE);
            char want[32], id[16];
            snprintf(want, sizeof want, "body-%02zu", i - 1);
            snprintf(id, sizeof id, "ID%02zu", i - 1);
            assert_int_equal(r->message->body.len, strlen(want));
            assert_memory_equal(r->message->body.data, want, strlen(want));
            assert_string_equal(r->message->topic->name, "TopicR");
            assert_string_equal(r->message->system_properties->message_id, id);
            assert_int_equal(r->message->system_properties->queue_id, (int)((i - 1) % 4));
        } else {
            assert_int_equal(
                r->content_case,
                APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_DELIVERY_TIMESTAMP);
        }
        apache__rocketmq__v2__receive_message_response__free_unpacked(r, NULL);
    }
    assert_int_equal(c->finishes, 1);
    assert_int_equal(c->finish_status, RMQ_GRPC_OK);
    assert_false(c->sent_after_finish);
}

static void client_free(client *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->msgs[i]);
    c->n = 0;
}

static void abi_1_12_host_sends_each_message(void **state)
{
    (void)state;
    client c;
    receive_once(HOST_1_12, &c);
    assert_int_equal(c.bad_batch_calls, 0); /* minor 12: the slot is not looked at */
    assert_int_equal(c.batches, 0);
    assert_int_equal(c.sends, NMSG + 2); /* one grpc_send per answer message */
    assert_client_got_everything(&c);
    client_free(&c);
}

static void table_without_batch_member_sends_each_message(void **state)
{
    (void)state;
    client c;
    receive_once(HOST_1_13_NO_BATCH, &c);
    assert_int_equal(c.batches, 0);
    assert_int_equal(c.sends, NMSG + 2);
    assert_client_got_everything(&c);
    client_free(&c);
}

/* The batch path, for comparison: the same messages in one hand-off. */
static void batch_host_sends_the_same_in_one_call(void **state)
{
    (void)state;
    client c;
    receive_once(HOST_WITH_BATCH, &c);
    assert_int_equal(c.sends, 0);
    assert_int_equal(c.batches, 1);
    assert_client_got_everything(&c);
    client_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(abi_1_12_host_sends_each_message),
        cmocka_unit_test(table_without_batch_member_sends_each_message),
        cmocka_unit_test(batch_host_sends_the_same_in_one_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
