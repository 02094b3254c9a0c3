/* test_store_pop.c — POP consumption (RocketMQ 5.x, remoting codes 200050
 * POP_MESSAGE, 200051 ACK_MESSAGE, 200053 CHANGE_MESSAGE_INVISIBLETIME)
 * against an all-in-one daemon over raw frames: popped messages are
 * invisible until their invisible time passes, then come back with the
 * reconsume times counted; an ack removes a message for good; a change of
 * invisible time brings one back at once; after the group's retryMaxTimes
 * the message lands in %DLQ%<group>; an expired message of a non-order
 * pop comes back as a copy in the POP retry topic %RETRY%<group>_<topic>
 * (or %RETRY%<group>+<topic> with enableRetryTopicV2), listed, acknowledged
 * there by ACK and by BatchAck's retry flag; order pop hands out a queue's next
 * message only after the last one was acknowledged; acknowledged state
 * survives kill -9 and a hot reload of the store while unacknowledged
 * messages come back; PEEK_MESSAGE (200052) takes nothing, NOTIFICATION
 * (200054) tells whether a POP would find something, POLLING_INFO (200055)
 * counts held POPs. Waits poll a condition with a deadline. */
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_pop_fixture.h"

static int setup_with(void **state, const char *store_extra)
{
    return pop_fixture_setup(state, "PT:1;PD:1;PF:1;PK:1;PA:2", store_extra, true);
}

static int setup(void **state)
{
    return setup_with(state, "");
}

static int setup_v2(void **state)
{
    return setup_with(state,
                      " enableRetryTopicV2 = true; popResponseReturnActualRetryTopic = true;");
}

static int teardown(void **state)
{
    return st_teardown(state);
}

/* The subscription of the next POP requests ("TAG" "*" unless a test sets it). */
static const char *sub_type = "TAG", *sub_exp = "*";

static rmq_cmd *pop_request(const char *group, const char *topic, int qid, int max,
                            long long invisible_ms, bool order, long long poll_ms)
{
    pop_args a = {.group = group,
                  .topic = topic,
                  .qid = qid,
                  .max = max,
                  .invisible_ms = invisible_ms,
                  .poll_ms = poll_ms,
                  .order = order,
                  .exp_type = sub_type,
                  .exp = sub_exp};
    return pop_request_of(&a);
}

static rmq_cmd *pop(fixture *f, const char *group, const char *topic, int qid, int max,
                    long long invisible_ms, bool order)
{
    return call(f, pop_request(group, topic, qid, max, invisible_ms, order, 0));
}

/* The extraInfo a 5.x client builds from a POP answer for a message. */
static void extra_info(const rmq_cmd *r, int qid, long long offset, char *out, size_t cap)
{
    snprintf(out, cap, "%s %s %s %s 0 broker-p %d %lld", "0", rmq_cmd_ext_get(r, "popTime"),
             rmq_cmd_ext_get(r, "invisibleTime"), rmq_cmd_ext_get(r, "reviveQid"), qid, offset);
}

static int ack_or_change(fixture *f, int code, const char *group, const char *topic,
                         const char *extra, long long offset, long long invisible, rmq_cmd **resp)
{
    char off[32], inv[32];
    snprintf(off, sizeof off, "%lld", offset);
    snprintf(inv, sizeof inv, "%lld", invisible);
    const char *kv[] = {
        "consumerGroup", group,    "topic", topic,           "queueId", "0", "extraInfo",
        extra,           "offset", off,     "invisibleTime", inv,       NULL};
    rmq_cmd *req = rmq_tc_request(code, pop_opaque(), kv);
    assert_non_null(req);
    rmq_cmd *r = rmq_tc_call(f->fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    int c = r->code;
    if (resp)
        *resp = r;
    else
        rmq_cmd_free(r);
    return c;
}

static int ack(fixture *f, const char *group, const char *topic, long long offset)
{
    return ack_or_change(f, 200051, group, topic, "0 0 0 0 0 broker-p 0 0", offset, 0, NULL);
}

static bool topic_is(const stored_record *r, const char *topic)
{
    return r->topic_len == strlen(topic) && memcmp(r->topic, topic, r->topic_len) == 0;
}

/* A message a POP answered from the retry topic: as Java's
 * PopMessageProcessor (popResponseReturnActualRetryTopic false) recodes
 * it, under the topic asked for, with its receipt in POP_CK naming the
 * retry flag and the offset in the retry topic. */
static bool is_retry(const stored_record *r, const char *topic, const char *flag)
{
    char *ck = st_prop(r, "POP_CK");
    char f[8] = "";
    long long off = -1;
    bool ok = ck && sscanf(ck, "%*s %*s %*s %*s %7s %*s %*s %lld", f, &off) == 2 &&
              strcmp(f, flag) == 0 && off == r->queue_offset && topic_is(r, topic);
    free(ck);
    return ok;
}

/* QUERY_CONSUMER_OFFSET (14) of queue 0: the group's committed offset (-1: none). */
static long long committed_offset(fixture *f, const char *group, const char *topic);

/* GET_ALL_TOPIC_CONFIG (21) names the topic. */
static bool topic_listed(fixture *f, const char *topic)
{
    rmq_cmd *r = bcm_call(f->port, 21, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    char quoted[300];
    snprintf(quoted, sizeof quoted, "\"%s\"", topic);
    bool found = r->body && memmem(r->body, r->body_len, quoted, strlen(quoted)) != NULL;
    rmq_cmd_free(r);
    return found;
}

/* Pop until a message comes (deadline); the answer. */
static rmq_cmd *pop_until_found(fixture *f, const char *group, const char *topic, int max,
                                long long invisible, bool order)
{
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    for (;;) {
        rmq_cmd *r = pop(f, group, topic, 0, max, invisible, order);
        if (r->code == 0)
            return r;
        assert_int_equal(r->code, 210); /* POLLING_TIMEOUT, with or without pollTime (Java) */
        rmq_cmd_free(r);
        assert_true(rmq_test_now_ms() < deadline);
        rmq_test_pause_ms(50);
    }
}

static void pop_invisible_ack_change(void **state)
{
    fixture *f = *state;
    send_ok(f, "PT", "m0");
    send_ok(f, "PT", "m1");
    send_ok(f, "PT", "m2");
    rmq_cmd *r = pop(f, "PG", "PT", -1, 32, 60000, false);
    assert_int_equal(r->code, 0);
    stored_record recs[8];
    assert_int_equal(st_records(r, recs, 8), 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(recs[i].queue_offset, i);
        assert_int_equal(recs[i].reconsume_times, 0);
    }
    assert_string_equal(rmq_cmd_ext_get(r, "reviveQid"), "0");
    assert_string_equal(rmq_cmd_ext_get(r, "invisibleTime"), "60000");
    assert_string_equal(rmq_cmd_ext_get(r, "startOffsetInfo"), "0 0 0");
    assert_string_equal(rmq_cmd_ext_get(r, "msgOffsetInfo"), "0 0 0,1,2");
    assert_string_equal(rmq_cmd_ext_get(r, "restNum"), "0");
    char extra[256];
    extra_info(r, 0, 1, extra, sizeof extra);
    rmq_cmd_free(r);
    /* invisible: nothing to pop */
    r = pop(f, "PG", "PT", -1, 32, 60000, false);
    assert_int_equal(r->code, 210);
    assert_string_equal(r->remark, "NO_MESSAGE_IN_QUEUE"); /* Java 5.3.3 */
    rmq_cmd_free(r);
    /* ack 0 for good; bring 1 back at once */
    assert_int_equal(ack(f, "PG", "PT", 0), 0);
    rmq_cmd *cr = NULL;
    assert_int_equal(ack_or_change(f, 200053, "PG", "PT", extra, 1, 0, &cr), 0);
    assert_non_null(rmq_cmd_ext_get(cr, "popTime"));
    assert_string_equal(rmq_cmd_ext_get(cr, "invisibleTime"), "0");
    assert_string_equal(rmq_cmd_ext_get(cr, "reviveQid"), "0");
    rmq_cmd_free(cr);
    /* the revive copied it into the POP retry topic: offset 0 there,
     * reconsume times 1, the original topic in RETRY_TOPIC, retry flag "1" */
    r = pop_until_found(f, "PG", "PT", 32, 60000, false);
    assert_int_equal(st_records(r, recs, 8), 1);
    assert_true(is_retry(&recs[0], "PT", "1"));
    assert_int_equal(recs[0].queue_offset, 0);
    assert_int_equal(recs[0].reconsume_times, 1);
    assert_memory_equal(recs[0].body, "m1", 2);
    assert_string_equal(rmq_cmd_ext_get(r, "startOffsetInfo"), "1 0 0");
    assert_string_equal(rmq_cmd_ext_get(r, "msgOffsetInfo"), "1 0 0");
    char *rt = st_prop(&recs[0], "RETRY_TOPIC");
    assert_null(rt); /* Java 5.3.3's revive adds none */
    char *fp = st_prop(&recs[0], "1ST_POP_TIME");
    assert_non_null(fp);
    free(fp);
    rmq_cmd_free(r);
    assert_true(topic_listed(f, "%RETRY%PG_PT"));
    /* the original is no longer in flight: its ACK changes nothing */
    assert_int_equal(ack(f, "PG", "PT", 1), 0);
    assert_int_equal(ack(f, "PG", "%RETRY%PG_PT", 0), 0);
    assert_int_equal(committed_offset(f, "PG", "%RETRY%PG_PT"), 1);
    assert_int_equal(ack(f, "PG", "PT", 2), 0);
    r = pop(f, "PG", "PT", -1, 32, 1, false);
    assert_int_equal(r->code, 210);
    rmq_cmd_free(r);
    /* the consumer offset shows everything acknowledged */
    const char *kv[] = {"consumerGroup", "PG", "topic", "PT", "queueId", "0", NULL};
    r = bcm_call(f->port, 14, kv, NULL);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "offset"), "3");
    rmq_cmd_free(r);
    /* an offset outside the queue: NO_MESSAGE */
    assert_int_equal(ack(f, "PG", "PT", 99), 208);
}

/* pollTime: an empty POP waits; a message stored meanwhile answers it,
 * otherwise POLLING_TIMEOUT (210) when the time is up. */
static void long_polling_pop(void **state)
{
    fixture *f = *state;
    rmq_cmd *req = pop_request("LG", "PT", -1, 32, 60000, false, 300);
    rmq_cmd *r = rmq_tc_call(f->fd, req, 10000);
    rmq_cmd_free(req);
    assert_non_null(r);
    assert_int_equal(r->code, 210);
    rmq_cmd_free(r);
    /* held on one connection while another sends */
    int pfd = rmq_tc_connect(f->port);
    assert_true(pfd >= 0);
    req = pop_request("LG", "PT", -1, 32, 60000, false, 20000);
    assert_int_equal(rmq_tc_send(pfd, req), 0);
    rmq_cmd_free(req);
    rmq_test_pause_ms(200);
    send_ok(f, "PT", "late");
    r = rmq_tc_recv(pfd, 25000);
    close(pfd);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    stored_record rec;
    assert_int_equal(st_records(r, &rec, 1), 1);
    assert_memory_equal(rec.body, "late", 4);
    rmq_cmd_free(r);
}

/* An SQL92 subscription filters by the properties; one that does not
 * compile answers SUBSCRIPTION_PARSE_FAILED (23). */
static void sql92_pop(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 6; i++) {
        char props[32], body[16];
        snprintf(props, sizeof props, "a\001%d\002", i);
        snprintf(body, sizeof body, "s%d", i);
        rmq_cmd *r = st_send(f->fd, pop_opaque(), "PT", 0, props, body, NULL);
        assert_non_null(r);
        assert_int_equal(r->code, 0);
        rmq_cmd_free(r);
    }
    sub_type = "SQL92";
    sub_exp = "a >";
    rmq_cmd *r = pop(f, "SG", "PT", 0, 32, 60000, false);
    assert_int_equal(r->code, 23);
    rmq_cmd_free(r);
    sub_exp = "a > 3";
    r = pop(f, "SG", "PT", 0, 32, 60000, false);
    sub_type = "TAG";
    sub_exp = "*";
    assert_int_equal(r->code, 0);
    stored_record recs[8];
    assert_int_equal(st_records(r, recs, 8), 2);
    assert_memory_equal(recs[0].body, "s4", 2);
    assert_memory_equal(recs[1].body, "s5", 2);
    assert_string_equal(rmq_cmd_ext_get(r, "msgOffsetInfo"), "0 0 4,5");
    rmq_cmd_free(r);
}

/* BATCH_ACK_MESSAGE (200151): a BatchAck's bitSet (BitSet.toByteArray,
 * as numbers or base64) acknowledges startOffset + each set bit. */
static void batch_ack_by_bitset(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 5; i++)
        send_ok(f, "PT", "b");
    rmq_cmd *r = pop(f, "BG", "PT", 0, 32, 60000, false);
    assert_int_equal(r->code, 0);
    stored_record recs[8];
    assert_int_equal(st_records(r, recs, 8), 5);
    rmq_cmd_free(r);
    /* offsets 0 and 2 (bits 0b101 = 5), then 4 (base64 of byte 0x01 from 4) */
    r = body_call(f, 200151,
                  "{\"brokerName\":\"broker-p\",\"acks\":[{\"c\":\"BG\",\"t\":\"PT\",\"r\":\"0\","
                  "\"so\":0,\"q\":0,\"rq\":0,\"pt\":0,\"it\":60000,\"b\":[5]},"
                  "{\"consumerGroup\":\"BG\",\"topic\":\"PT\",\"retry\":\"0\",\"startOffset\":4,"
                  "\"queueId\":0,\"bitSet\":\"AQ==\"}]}");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    /* bring back what is left in flight: only 1 and 3 */
    for (int o = 0; o < 5; o++) {
        char extra[64];
        snprintf(extra, sizeof extra, "0 0 60000 0 0 broker-p 0 %d", o);
        rmq_cmd *cr = NULL;
        assert_int_equal(ack_or_change(f, 200053, "BG", "PT", extra, o, 0, &cr), 0);
        rmq_cmd_free(cr);
    }
    /* they come back from the retry topic, offsets 0 and 1 there */
    int got = 0;
    while (got < 2) {
        r = pop_until_found(f, "BG", "PT", 32, 60000, false);
        size_t n = st_records(r, recs, 8);
        for (size_t i = 0; i < n; i++, got++) {
            assert_true(is_retry(&recs[i], "PT", "1"));
            assert_int_equal(recs[i].queue_offset, got);
        }
        rmq_cmd_free(r);
    }
    assert_int_equal(got, 2);
    /* BatchAck with retry "1" names the original topic: both acknowledged */
    r = body_call(f, 200151,
                  "{\"brokerName\":\"broker-p\",\"acks\":[{\"c\":\"BG\",\"t\":\"PT\",\"r\":\"1\","
                  "\"so\":0,\"q\":0,\"rq\":0,\"pt\":0,\"it\":60000,\"b\":[3]}]}");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(committed_offset(f, "BG", "%RETRY%BG_PT"), 2);
    assert_int_equal(committed_offset(f, "BG", "PT"), 5);
}

/* enableRetryTopicV2: the copy goes to %RETRY%<group>+<topic>, flag "2",
 * BatchAck's retry "2" acknowledges it there; popResponseReturnActualRetryTopic
 * answers it as stored (its own topic, no POP_CK). */
static void retry_topic_v2(void **state)
{
    fixture *f = *state;
    send_ok(f, "PT", "v");
    rmq_cmd *r = pop(f, "VG", "PT", 0, 32, 1, false);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = pop_until_found(f, "VG", "PT", 32, 60000, false);
    stored_record rec;
    assert_int_equal(st_records(r, &rec, 1), 1);
    assert_true(topic_is(&rec, "%RETRY%VG+PT"));
    char *ck = st_prop(&rec, "POP_CK");
    assert_null(ck);
    assert_int_equal(rec.reconsume_times, 1);
    assert_string_equal(rmq_cmd_ext_get(r, "startOffsetInfo"), "2 0 0");
    rmq_cmd_free(r);
    assert_true(topic_listed(f, "%RETRY%VG+PT"));
    assert_false(topic_listed(f, "%RETRY%VG_PT"));
    r = body_call(f, 200151,
                  "{\"acks\":[{\"c\":\"VG\",\"t\":\"PT\",\"r\":\"2\",\"so\":0,\"q\":0,"
                  "\"b\":[1]}]}");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(committed_offset(f, "VG", "%RETRY%VG+PT"), 1);
}

static void redelivered_until_dlq(void **state)
{
    fixture *f = *state;
    const char *group =
        "{\"groupName\":\"DG\",\"consumeEnable\":true,\"consumeFromMinEnable\":true,"
        "\"consumeBroadcastEnable\":true,\"retryQueueNums\":1,\"retryMaxTimes\":2,"
        "\"brokerId\":0,\"whichBrokerWhenConsumeSlowly\":1,"
        "\"notifyConsumerIdsChangedEnable\":true}";
    rmq_cmd *r = bcm_call(f->port, 200, NULL, group);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    send_ok(f, "PD", "dead");
    /* delivered 3 times (reconsume 0, 1, 2; then from the retry topic's
     * copies), never acknowledged */
    for (int i = 0; i < 3; i++) {
        r = pop_until_found(f, "DG", "PD", 32, 200, false);
        stored_record rec;
        assert_int_equal(st_records(r, &rec, 1), 1);
        assert_true(i ? is_retry(&rec, "PD", "1") : topic_is(&rec, "PD"));
        assert_int_equal(rec.queue_offset, i ? i - 1 : 0);
        assert_int_equal(rec.reconsume_times, i);
        rmq_cmd_free(r);
    }
    /* the next expiry moves it to %DLQ%DG */
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    for (;;) {
        r = pop(f, "DG", "PD", 0, 32, 200, false);
        assert_int_equal(r->code, 210);
        rmq_cmd_free(r);
        if (st_max_offset(f->port, "%DLQ%DG", 0) == 1)
            break;
        assert_true(rmq_test_now_ms() < deadline);
        rmq_test_pause_ms(50);
    }
    st_pull_args pa = {.group = "X", .topic = "%DLQ%DG", .queue = 0, .offset = 0, .max = 8};
    r = st_pull(f->fd, pop_opaque(), &pa);
    assert_int_equal(r->code, 0);
    stored_record rec;
    assert_int_equal(st_records(r, &rec, 1), 1);
    assert_memory_equal(rec.body, "dead", 4);
    assert_int_equal(rec.reconsume_times, 2);
    char *rt = st_prop(&rec, "RETRY_TOPIC");
    assert_non_null(rt);
    assert_string_equal(rt, "PD");
    free(rt);
    rmq_cmd_free(r);
    /* and it does not come back */
    rmq_test_pause_ms(300);
    r = pop(f, "DG", "PD", 0, 32, 200, false);
    assert_int_equal(r->code, 210);
    rmq_cmd_free(r);
}

/* QUERY_CONSUMER_OFFSET (14): the group's committed offset (-1: none). */
static long long committed_offset(fixture *f, const char *group, const char *topic)
{
    const char *kv[] = {"consumerGroup", group, "topic", topic, "queueId", "0", NULL};
    rmq_cmd *req = rmq_tc_request(14, pop_opaque(), kv);
    assert_non_null(req);
    rmq_cmd *r = rmq_tc_call(f->fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    long long off = r->code == 0 ? st_ext_ll(r, "offset") : -1;
    rmq_cmd_free(r);
    return off;
}

/* The background revive: a group that popped once and never pops again
 * still gets its expired messages past retryMaxTimes (0 here: one delivery)
 * into %DLQ%<group>, from the journal replayed after a kill -9, with no
 * POP; its committed offset moves past them. Without the revive nothing
 * reaches the DLQ and the deadline below fails. */
static void revive_moves_expired_to_dlq_without_pop(void **state)
{
    fixture *f = *state;
    const char *group =
        "{\"groupName\":\"RG\",\"consumeEnable\":true,\"consumeFromMinEnable\":true,"
        "\"consumeBroadcastEnable\":true,\"retryQueueNums\":1,\"retryMaxTimes\":0,"
        "\"brokerId\":0,\"whichBrokerWhenConsumeSlowly\":1,"
        "\"notifyConsumerIdsChangedEnable\":true}";
    rmq_cmd *r = bcm_call(f->port, 200, NULL, group);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    const char *bodies[] = {"rv0", "rv1", "rv2"};
    for (int i = 0; i < 3; i++)
        send_ok(f, "PD", bodies[i]);
    r = pop_until_found(f, "RG", "PD", 32, 1000, false);
    stored_record recs[3];
    assert_int_equal(st_records(r, recs, 3), 3);
    rmq_cmd_free(r);
    /* kill -9 while they are invisible: only the journal knows them */
    close(f->fd);
    f->fd = -1;
    assert_int_equal(kill(f->d.pid, SIGKILL), 0);
    assert_int_equal(rmq_td_stop(&f->d), 128 + SIGKILL);
    assert_int_equal(pop_fixture_start(f), 0);
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (st_max_offset(f->port, "%DLQ%RG", 0) < 3 || committed_offset(f, "RG", "PD") != 3) {
        assert_true(rmq_test_now_ms() < deadline);
        rmq_test_pause_ms(100);
    }
    assert_int_equal(st_max_offset(f->port, "%DLQ%RG", 0), 3);
    st_pull_args pa = {.group = "X", .topic = "%DLQ%RG", .queue = 0, .offset = 0, .max = 8};
    r = st_pull(f->fd, pop_opaque(), &pa);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_records(r, recs, 3), 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(recs[i].body_len, 3);
        assert_memory_equal(recs[i].body, bodies[i], 3);
        assert_int_equal(recs[i].reconsume_times, 0);
        char *rt = st_prop(&recs[i], "RETRY_TOPIC");
        assert_non_null(rt);
        assert_string_equal(rt, "PD");
        free(rt);
    }
    rmq_cmd_free(r);
    /* moved, not redelivered: the group's next POP finds nothing */
    r = pop(f, "RG", "PD", 0, 32, 1000, false);
    assert_int_equal(r->code, 210);
    rmq_cmd_free(r);
}

static void order_pop_one_batch_in_flight(void **state)
{
    fixture *f = *state;
    send_ok(f, "PF", "f0");
    send_ok(f, "PF", "f1");
    send_ok(f, "PF", "f2");
    rmq_cmd *r = pop(f, "FG", "PF", 0, 1, 60000, true);
    assert_int_equal(r->code, 0);
    stored_record rec;
    assert_int_equal(st_records(r, &rec, 1), 1);
    assert_int_equal(rec.queue_offset, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "reviveQid"), "999");
    assert_string_equal(rmq_cmd_ext_get(r, "orderCountInfo"), "0 qo0%0 0");
    rmq_cmd_free(r);
    /* the queue is locked while offset 0 is in flight */
    r = pop(f, "FG", "PF", 0, 1, 60000, true);
    assert_int_equal(r->code, 210);
    rmq_cmd_free(r);
    assert_int_equal(ack(f, "FG", "PF", 0), 0);
    r = pop(f, "FG", "PF", 0, 1, 60000, true);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_records(r, &rec, 1), 1);
    assert_int_equal(rec.queue_offset, 1);
    char extra[256];
    extra_info(r, 0, 1, extra, sizeof extra);
    rmq_cmd_free(r);
    /* back at once: the same message again, its count 1, not offset 2 */
    assert_int_equal(ack_or_change(f, 200053, "FG", "PF", extra, 1, 0, &r), 0);
    assert_string_equal(rmq_cmd_ext_get(r, "reviveQid"), "999");
    rmq_cmd_free(r);
    r = pop_until_found(f, "FG", "PF", 1, 60000, true);
    assert_int_equal(st_records(r, &rec, 1), 1);
    assert_int_equal(rec.queue_offset, 1);
    assert_int_equal(rec.reconsume_times, 1);
    assert_string_equal(rmq_cmd_ext_get(r, "orderCountInfo"), "0 qo0%1 1");
    rmq_cmd_free(r);
    assert_int_equal(ack(f, "FG", "PF", 1), 0);
    r = pop(f, "FG", "PF", 0, 1, 60000, true);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_records(r, &rec, 1), 1);
    assert_int_equal(rec.queue_offset, 2);
    rmq_cmd_free(r);
}

/* Pop (after the invisible time) until `want` messages came back (from
 * the retry topic: body "k<original offset>"); fails on an acknowledged
 * one. where[o]: the copy's offset in the retry topic. */
static void expect_back(fixture *f, const char *topic, const bool *acked, int n, int want,
                        long long *where)
{
    bool seen[16] = {false};
    int got = 0;
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (got < want) {
        assert_true(rmq_test_now_ms() < deadline);
        rmq_cmd *r = pop(f, "KG", topic, 0, 32, 60000, false);
        if (r->code == 0) {
            stored_record recs[16];
            size_t k = st_records(r, recs, 16);
            for (size_t i = 0; i < k; i++) {
                assert_true(is_retry(&recs[i], "PK", "1"));
                assert_int_equal(recs[i].body_len, 2);
                int o = recs[i].body[1] - '0';
                assert_true(o >= 0 && o < n);
                assert_false(acked[o]);
                assert_false(seen[o]);
                assert_true(recs[i].reconsume_times >= 1);
                where[o] = recs[i].queue_offset;
                seen[o] = true;
                got++;
            }
        } else {
            assert_int_equal(r->code, 210);
            rmq_test_pause_ms(50);
        }
        rmq_cmd_free(r);
    }
}

static void acked_state_survives_kill_9_and_reload(void **state)
{
    fixture *f = *state;
    enum { N = 6 };
    for (int i = 0; i < N; i++) {
        char body[8];
        snprintf(body, sizeof body, "k%d", i);
        send_ok(f, "PK", body);
    }
    long long where[N];
    rmq_cmd *r = pop(f, "KG", "PK", 0, 32, 1000, false);
    assert_int_equal(r->code, 0);
    stored_record recs[N];
    assert_int_equal(st_records(r, recs, N), N);
    rmq_cmd_free(r);
    bool acked[N] = {true, false, true, false, true, false};
    for (int i = 0; i < N; i++)
        if (acked[i])
            assert_int_equal(ack(f, "KG", "PK", i), 0);
    close(f->fd);
    f->fd = -1;
    assert_int_equal(kill(f->d.pid, SIGKILL), 0);
    assert_int_equal(rmq_td_stop(&f->d), 128 + SIGKILL);
    assert_int_equal(pop_fixture_start(f), 0);
    /* 1, 3 and 5 come back (once each); 0, 2 and 4 never */
    expect_back(f, "PK", acked, N, 3, where);
    acked[1] = true;
    assert_int_equal(ack(f, "KG", "%RETRY%KG_PK", where[1]), 0);
    /* a hot reload of the store: 3 and 5 stay in flight (60 s), 1 stays acknowledged */
    int status = -1;
    rmq_td_ctl_output(&f->d, &status, "reload", "store", NULL);
    assert_int_equal(status, 0);
    rmq_cmd *cr = NULL;
    for (int o = 3; o <= 5; o += 2) {
        char extra[64];
        snprintf(extra, sizeof extra, "0 0 60000 0 1 broker-p 0 %lld", where[o]);
        assert_int_equal(ack_or_change(f, 200053, "KG", "%RETRY%KG_PK", extra, where[o], 0, &cr),
                         0);
        rmq_cmd_free(cr);
    }
    expect_back(f, "PK", acked, N, 2, where);
    assert_int_equal(ack(f, "KG", "%RETRY%KG_PK", where[3]), 0);
    assert_int_equal(ack(f, "KG", "%RETRY%KG_PK", where[5]), 0);
    r = pop(f, "KG", "PK", 0, 32, 1, false);
    assert_int_equal(r->code, 210);
    rmq_cmd_free(r);
}

/* QUERY_ASSIGNMENT (400) answers the mode SET_MESSAGE_REQUEST_MODE (401)
 * set: POP over all queues (queueId -1), or PULL split by the strategy. */
static void assignment_follows_request_mode(void **state)
{
    fixture *f = *state;
    char hb[2048];
    bcm_consumer_heartbeat(hb, sizeof hb, "10.0.0.1@a", "AG", "PA", true);
    rmq_cmd *r = body_call(f, 34, hb);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    const char *q = "{\"clientId\":\"10.0.0.1@a\",\"consumerGroup\":\"AG\","
                    "\"messageModel\":\"CLUSTERING\",\"strategyName\":\"AVG\",\"topic\":\"PA\"}";
    /* no mode set: PULL, both queues to the only client */
    r = body_call(f, 400, q);
    assert_int_equal(r->code, 0);
    assert_true(bcm_body_contains(r, "\"queueId\":0"));
    assert_true(bcm_body_contains(r, "\"queueId\":1"));
    assert_true(bcm_body_contains(r, "\"mode\":\"PULL\""));
    rmq_cmd_free(r);
    r = body_call(f, 401, "{\"topic\":\"%RETRY%AG\",\"consumerGroup\":\"AG\",\"mode\":\"POP\"}");
    assert_int_equal(r->code, 16);
    rmq_cmd_free(r);
    r = body_call(
        f, 401,
        "{\"topic\":\"PA\",\"consumerGroup\":\"AG\",\"mode\":\"POP\",\"popShareQueueNum\":0}");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = body_call(f, 400, q);
    assert_int_equal(r->code, 0);
    assert_true(bcm_body_contains(r, "\"queueId\":-1"));
    assert_false(bcm_body_contains(r, "\"queueId\":0"));
    assert_true(bcm_body_contains(r, "\"mode\":\"POP\""));
    assert_true(bcm_body_contains(r, "\"brokerName\":\"broker-p\""));
    rmq_cmd_free(r);
}

/* PEEK_MESSAGE (200052): what the next POP would hand out, taking nothing. */
static rmq_cmd *peek(fixture *f, const char *group, const char *topic, const char *qid,
                     const char *max)
{
    /* max NULL: the field left out */
    const char *kv[] = {
        "consumerGroup",           group, "topic", topic, "queueId", qid, "bornTime", "0",
        max ? "maxMsgNums" : NULL, max,   NULL};
    rmq_cmd *req = rmq_tc_request(200052, pop_opaque(), kv);
    assert_non_null(req);
    rmq_cmd *r = rmq_tc_call(f->fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    return r;
}

static void peek_takes_nothing(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = peek(f, "EG", "PT", "0", "32");
    assert_int_equal(r->code, 19);
    assert_string_equal(r->remark, "NO_MESSAGE_IN_QUEUE");
    rmq_cmd_free(r);
    send_ok(f, "PT", "e0");
    send_ok(f, "PT", "e1");
    send_ok(f, "PT", "e2");
    for (int i = 0; i < 2; i++) { /* twice: the first peek took nothing */
        r = peek(f, "EG", "PT", "-1", "32");
        assert_int_equal(r->code, 0);
        assert_string_equal(r->remark, "FOUND");
        stored_record recs[4];
        assert_int_equal(st_records(r, recs, 4), 3);
        assert_memory_equal(recs[2].body, "e2", 2);
        assert_string_equal(rmq_cmd_ext_get(r, "restNum"), "3");
        rmq_cmd_free(r);
    }
    /* a POP takes offset 0: the peek starts after it */
    r = pop(f, "EG", "PT", 0, 1, 60000, false);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = peek(f, "EG", "PT", "0", "1");
    assert_int_equal(r->code, 0);
    stored_record rec;
    assert_int_equal(st_records(r, &rec, 1), 1);
    assert_int_equal(rec.queue_offset, 1);
    assert_string_equal(rmq_cmd_ext_get(r, "restNum"), "2");
    rmq_cmd_free(r);
    /* PeekMessageProcessor's answers for a bad queue id / a missing field */
    r = peek(f, "EG", "PT", "5", "32");
    assert_int_equal(r->code, 29); /* INVALID_PARAMETER */
    rmq_cmd_free(r);
    r = peek(f, "EG", "PT", "0", NULL);
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->remark, "maxMsgNums"));
    rmq_cmd_free(r);
    r = peek(f, "EG", "NOPE", "0", "32");
    assert_int_equal(r->code, 17);
    rmq_cmd_free(r);
}

static rmq_cmd *notification_request(const char *group, const char *topic, const char *qid,
                                     long long poll_ms, bool order)
{
    char poll[32];
    snprintf(poll, sizeof poll, "%lld", poll_ms);
    const char *kv[] = {"consumerGroup",
                        group,
                        "topic",
                        topic,
                        "queueId",
                        qid,
                        "pollTime",
                        poll,
                        "bornTime",
                        "0",
                        "order",
                        order ? "true" : "false",
                        NULL};
    return rmq_tc_request(200054, pop_opaque(), kv);
}

static const char *has_msg(fixture *f, const char *group, const char *topic, bool order)
{
    rmq_cmd *req = notification_request(group, topic, "-1", 0, order);
    rmq_cmd *r = rmq_tc_call(f->fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    const char *v = rmq_cmd_ext_get(r, "hasMsg");
    assert_non_null(v);
    static char out[8];
    snprintf(out, sizeof out, "%s", v);
    rmq_cmd_free(r);
    return out;
}

/* NOTIFICATION (200054): hasMsg for the group's next POP, an order queue
 * blocked while its batch is in flight, a wait answered by an arrival or
 * by the end of pollTime (SUCCESS, hasMsg false). */
static void notification_tells_whether_a_pop_would_find(void **state)
{
    fixture *f = *state;
    assert_string_equal(has_msg(f, "NG", "PF", false), "false");
    send_ok(f, "PF", "n0");
    send_ok(f, "PF", "n1");
    assert_string_equal(has_msg(f, "NG", "PF", true), "true");
    rmq_cmd *r = pop(f, "NG", "PF", 0, 1, 60000, true);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    /* n1 is there, but the order queue waits for n0's ack */
    assert_string_equal(has_msg(f, "NG", "PF", true), "false");
    assert_string_equal(has_msg(f, "NG", "PF", false), "true");
    assert_int_equal(ack(f, "NG", "PF", 0), 0);
    assert_string_equal(has_msg(f, "NG", "PF", true), "true");
    r = pop(f, "NG", "PF", 0, 1, 300, false);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    /* n1 in flight: nothing until its invisible time passes, then true */
    assert_string_equal(has_msg(f, "NG", "PF", false), "false");
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (strcmp(has_msg(f, "NG", "PF", false), "true") != 0) {
        assert_true(rmq_test_now_ms() < deadline);
        rmq_test_pause_ms(50);
    }
    r = pop(f, "NG", "PF", 0, 1, 60000, false);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    /* a wait that ends: SUCCESS with hasMsg false */
    rmq_cmd *req = notification_request("NG", "PF", "0", 300, false);
    r = rmq_tc_call(f->fd, req, 10000);
    rmq_cmd_free(req);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "hasMsg"), "false");
    rmq_cmd_free(r);
    /* a wait answered by an arrival */
    int nfd = rmq_tc_connect(f->port);
    assert_true(nfd >= 0);
    req = notification_request("NG", "PF", "-1", 20000, false);
    assert_int_equal(rmq_tc_send(nfd, req), 0);
    rmq_cmd_free(req);
    rmq_test_pause_ms(200);
    send_ok(f, "PF", "n2");
    r = rmq_tc_recv(nfd, 25000);
    close(nfd);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "hasMsg"), "true");
    rmq_cmd_free(r);
}

/* An expired message in the retry topic: NOTIFICATION says a (non-order)
 * POP would find it, PEEK shows it without taking it, the POP takes it. */
static void retry_topic_peek_and_notification(void **state)
{
    fixture *f = *state;
    send_ok(f, "PT", "y0");
    rmq_cmd *r = pop(f, "YG", "PT", 0, 32, 1, false);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (strcmp(has_msg(f, "YG", "PT", false), "true") != 0) {
        assert_true(rmq_test_now_ms() < deadline);
        rmq_test_pause_ms(50);
    }
    assert_int_equal(st_max_offset(f->port, "%RETRY%YG_PT", 0), 1);
    assert_string_equal(has_msg(f, "YG", "PT", true), "false"); /* order POP: no retry topic */
    for (int i = 0; i < 2; i++) {
        r = peek(f, "YG", "PT", "-1", "32");
        assert_int_equal(r->code, 0);
        stored_record rec;
        assert_int_equal(st_records(r, &rec, 1), 1);
        assert_true(topic_is(&rec, "%RETRY%YG_PT"));
        assert_memory_equal(rec.body, "y0", 2);
        assert_string_equal(rmq_cmd_ext_get(r, "restNum"), "1");
        rmq_cmd_free(r);
    }
    r = pop(f, "YG", "PT", 0, 32, 60000, false);
    assert_int_equal(r->code, 0);
    stored_record rec;
    assert_int_equal(st_records(r, &rec, 1), 1);
    assert_true(is_retry(&rec, "PT", "1"));
    assert_int_equal(rec.reconsume_times, 1);
    rmq_cmd_free(r);
    assert_string_equal(has_msg(f, "YG", "PT", false), "false");
}

static long long polling_num(fixture *f, const char *qid)
{
    return polling_num_of(f, "IG", "PT", qid);
}

/* POLLING_INFO (200055): the POPs held for (topic, group, queueId). */
static void polling_info_counts_held_pops(void **state)
{
    fixture *f = *state;
    assert_int_equal(polling_num(f, "-1"), 0);
    int pfd = rmq_tc_connect(f->port);
    assert_true(pfd >= 0);
    rmq_cmd *req = pop_request("IG", "PT", -1, 32, 60000, false, 20000);
    assert_int_equal(rmq_tc_send(pfd, req), 0);
    rmq_cmd_free(req);
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (polling_num(f, "-1") != 1) {
        assert_true(rmq_test_now_ms() < deadline);
        rmq_test_pause_ms(20);
    }
    assert_int_equal(polling_num(f, "0"), 0); /* another key: queue 0 */
    send_ok(f, "PT", "wake");
    rmq_cmd *r = rmq_tc_recv(pfd, 25000);
    close(pfd);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(polling_num(f, "-1"), 0);
    const char *kv[] = {"consumerGroup", "IG", "topic", "PT", "queueId", "9", NULL};
    req = rmq_tc_request(200055, pop_opaque(), kv);
    r = rmq_tc_call(f->fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    assert_int_equal(r->code, 1); /* SYSTEM_ERROR: queueId beyond readQueueNums */
    rmq_cmd_free(r);
}

/* Hundreds in flight, two thirds acknowledged (newest first): once made
 * visible again exactly the others come back, once each (the revive walk
 * over marked acknowledged slots and their compaction). */
static void many_in_flight_come_back_exactly(void **state)
{
    fixture *f = *state;
    enum { N = 300 };
    for (int i = 0; i < N; i++) {
        char body[16];
        snprintf(body, sizeof body, "x%d", i);
        send_ok(f, "PT", body);
    }
    static bool acked[N], seen[N];
    int popped = 0;
    while (popped < N) {
        rmq_cmd *r = pop(f, "MG", "PT", 0, 32, 60000, false);
        assert_int_equal(r->code, 0);
        stored_record recs[32];
        size_t k = st_records(r, recs, 32);
        for (size_t i = 0; i < k; i++)
            assert_int_equal(recs[i].queue_offset, popped + (int)i);
        popped += (int)k;
        rmq_cmd_free(r);
    }
    for (int o = N - 1; o >= 0; o--)
        if (o % 3 != 1) {
            acked[o] = true;
            assert_int_equal(ack(f, "MG", "PT", o), 0);
        }
    for (int o = 1; o < N; o += 3) {
        char extra[64];
        snprintf(extra, sizeof extra, "0 0 60000 0 0 broker-p 0 %d", o);
        assert_int_equal(ack_or_change(f, 200053, "MG", "PT", extra, o, 0, NULL), 0);
    }
    int want = N / 3, got = 0;
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (got < want) {
        assert_true(rmq_test_now_ms() < deadline);
        rmq_cmd *r = pop(f, "MG", "PT", 0, 32, 60000, false);
        if (r->code == 0) {
            stored_record recs[32];
            size_t k = st_records(r, recs, 32);
            for (size_t i = 0; i < k; i++) {
                /* the copy in the retry topic: the original offset from the body */
                assert_true(is_retry(&recs[i], "PT", "1"));
                char body[16];
                snprintf(body, sizeof body, "%.*s", (int)recs[i].body_len, recs[i].body);
                int o = atoi(body + 1);
                assert_true(o >= 0 && o < N);
                assert_false(acked[o]);
                assert_false(seen[o]);
                assert_int_equal(recs[i].reconsume_times, 1);
                seen[o] = true;
                got++;
            }
        } else {
            assert_int_equal(r->code, 210);
            rmq_test_pause_ms(50);
        }
        rmq_cmd_free(r);
    }
    rmq_cmd *r = pop(f, "MG", "PT", 0, 32, 60000, false);
    assert_int_equal(r->code, 210);
    rmq_cmd_free(r);
}

/* A journal of a version without POP retry topics has I lines without the
 * flags field: it cannot tell an order POP's message from a normal one's.
 * Such a message is redelivered in its queue as that version did (a POP
 * of either kind), never copied to the retry topic an order POP does not
 * read. */
static void legacy_inflight_kept_in_queue(void **state)
{
    fixture *f = *state;
    send_ok(f, "PF", "l0");
    send_ok(f, "PF", "l1");
    rmq_cmd *r = pop(f, "LG", "PF", 0, 32, 60000, false);
    assert_int_equal(r->code, 0);
    stored_record recs[4];
    assert_int_equal(st_records(r, recs, 4), 2);
    rmq_cmd_free(r);
    close(f->fd);
    f->fd = -1;
    assert_int_equal(kill(f->d.pid, SIGKILL), 0);
    assert_int_equal(rmq_td_stop(&f->d), 128 + SIGKILL);
    /* rewrite LG's in-flight lines as the older version wrote them, already
     * expired: "I group topic queueId offset popTime invisible deliveries" */
    char path[400], tmp[420];
    snprintf(path, sizeof path, "%s/store/pop/pop.journal", f->d.state_dir);
    snprintf(tmp, sizeof tmp, "%s.new", path);
    FILE *in = fopen(path, "r"), *out = fopen(tmp, "w");
    assert_non_null(in);
    assert_non_null(out);
    char line[1024];
    int legacy = 0;
    while (fgets(line, sizeof line, in)) {
        long long off;
        if (sscanf(line, "I LG PF 0 %lld", &off) == 1) {
            fprintf(out, "I LG PF 0 %lld 0 1000 1\n", off);
            legacy++;
        } else {
            fputs(line, out);
        }
    }
    fclose(in);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(legacy, 2);
    assert_int_equal(rename(tmp, path), 0);
    assert_int_equal(pop_fixture_start(f), 0);
    rmq_test_pause_ms(2500); /* two revive passes */
    assert_false(topic_listed(f, "%RETRY%LG_PF"));
    r = pop_until_found(f, "LG", "PF", 32, 60000, false);
    assert_int_equal(st_records(r, recs, 4), 2);
    for (int i = 0; i < 2; i++) {
        assert_true(topic_is(&recs[i], "PF"));
        assert_false(is_retry(&recs[i], "PF", "1"));
        assert_int_equal(recs[i].queue_offset, i);
        assert_int_equal(recs[i].reconsume_times, 1);
    }
    rmq_cmd_free(r);
    assert_int_equal(ack(f, "LG", "PF", 0), 0);
    assert_int_equal(ack(f, "LG", "PF", 1), 0);
    r = pop(f, "LG", "PF", 0, 32, 60000, false);
    assert_int_equal(r->code, 210);
    rmq_cmd_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(pop_invisible_ack_change, setup, teardown),
        cmocka_unit_test_setup_teardown(batch_ack_by_bitset, setup, teardown),
        cmocka_unit_test_setup_teardown(retry_topic_v2, setup_v2, teardown),
        cmocka_unit_test_setup_teardown(long_polling_pop, setup, teardown),
        cmocka_unit_test_setup_teardown(sql92_pop, setup, teardown),
        cmocka_unit_test_setup_teardown(redelivered_until_dlq, setup, teardown),
        cmocka_unit_test_setup_teardown(revive_moves_expired_to_dlq_without_pop, setup, teardown),
        cmocka_unit_test_setup_teardown(order_pop_one_batch_in_flight, setup, teardown),
        cmocka_unit_test_setup_teardown(acked_state_survives_kill_9_and_reload, setup, teardown),
        cmocka_unit_test_setup_teardown(assignment_follows_request_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(peek_takes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(notification_tells_whether_a_pop_would_find, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(polling_info_counts_held_pops, setup, teardown),
        cmocka_unit_test_setup_teardown(retry_topic_peek_and_notification, setup, teardown),
        cmocka_unit_test_setup_teardown(many_in_flight_come_back_exactly, setup, teardown),
        cmocka_unit_test_setup_teardown(legacy_inflight_kept_in_queue, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
