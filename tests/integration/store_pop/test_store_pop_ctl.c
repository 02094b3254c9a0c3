/* test_store_pop_ctl.c — the limits and controls of RocketMQ 5.x POP
 * around the messages themselves, against an all-in-one daemon over raw
 * frames as a 5.3.3 client or proxy sends them: POLLING_FULL (209) when
 * more POPs would wait than popPollingSize per polling key or
 * maxPopPollingSize in all (NOTIFICATIONs counted apart, answered
 * SUCCESS/hasMsg false/pollingFull true); an order POP repeating the
 * attemptId of its queue's batch gets that batch again at once with the
 * same counts; QUERY_ASSIGNMENT (400) in POP mode with popShareQueueNum
 * (the queues of the next N clients, all queues once N >= clients - 1,
 * one queue each with more clients than queues). Waits poll a condition
 * with a deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_pop_fixture.h"

/* small limits: two POPs may wait per key, three in all */
static int setup(void **state)
{
    return pop_fixture_setup(state, "PT:1;PF:1;PA:2;PQ:4",
                             " popPollingSize = 1; maxPopPollingSize = 3;", false);
}

static int teardown(void **state)
{
    return st_teardown(state);
}

/* POP_MESSAGE as a 5.3.3 client sends it (attemptId optional). */
static rmq_cmd *pop_request(const char *group, const char *topic, int qid, int max, bool order,
                            long long poll_ms, const char *attempt)
{
    pop_args a = {.group = group,
                  .topic = topic,
                  .qid = qid,
                  .max = max,
                  .invisible_ms = 60000,
                  .poll_ms = poll_ms,
                  .order = order,
                  .exp_type = "TAG",
                  .exp = "*",
                  .attempt = attempt};
    return pop_request_of(&a);
}

static long long polling_num(fixture *f, const char *group, const char *qid)
{
    return polling_num_of(f, group, "PT", qid);
}

/* A POP that waits (pollTime 20 s) on its own connection, counted once
 * POLLING_INFO sees it. */
static int hold_pop(fixture *f, const char *group, int qid, long long want_held)
{
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    rmq_cmd *req = pop_request(group, "PT", qid, 1, false, 20000, NULL);
    assert_int_equal(rmq_tc_send(fd, req), 0);
    rmq_cmd_free(req);
    char q[16];
    snprintf(q, sizeof q, "%d", qid);
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (polling_num(f, group, q) != want_held) {
        assert_true(rmq_test_now_ms() < deadline);
        rmq_test_pause_ms(20);
    }
    return fd;
}

/* popPollingSize 1: a key takes POPs while at most 1 waits (Java's
 * size > popPollingSize), so the third is refused; maxPopPollingSize 3:
 * the fourth waiting POP in all is refused whatever its key; the answer
 * comes at once. NOTIFICATIONs have counts of their own. Answered waits
 * free their places. */
static void polling_full_per_key_and_in_all(void **state)
{
    fixture *f = *state;
    int held[3];
    held[0] = hold_pop(f, "LG", -1, 1);
    held[1] = hold_pop(f, "LG", -1, 2);
    rmq_cmd *r = call(f, pop_request("LG", "PT", -1, 32, false, 20000, NULL));
    assert_int_equal(r->code, 209); /* POLLING_FULL, not held */
    assert_string_equal(r->remark, "NO_MESSAGE_IN_QUEUE");
    assert_non_null(rmq_cmd_ext_get(r, "popTime"));
    assert_string_equal(rmq_cmd_ext_get(r, "invisibleTime"), "60000");
    assert_string_equal(rmq_cmd_ext_get(r, "startOffsetInfo"), "");
    rmq_cmd_free(r);
    /* another key (queue 0) still has room: three wait in all */
    held[2] = hold_pop(f, "LG", 0, 1);
    r = call(f, pop_request("OG", "PT", -1, 32, false, 20000, NULL));
    assert_int_equal(r->code, 209); /* the fourth in all */
    rmq_cmd_free(r);
    /* a NOTIFICATION is not counted with the POPs: it waits */
    int nfd = rmq_tc_connect(f->port);
    assert_true(nfd >= 0);
    const char *nkv[] = {
        "consumerGroup", "NG",       "topic",         "PT", "queueId", "-1", "pollTime",
        "20000",         "bornTime", "1700000000000", NULL};
    rmq_cmd *nreq = rmq_tc_request(200054, pop_opaque(), nkv);
    assert_int_equal(rmq_tc_send(nfd, nreq), 0);
    rmq_cmd_free(nreq);
    assert_null(rmq_tc_recv(nfd, 300)); /* held, not refused */
    /* three messages wake them all (one each): their places are free again */
    send_ok(f, "PT", "w0");
    send_ok(f, "PT", "w1");
    send_ok(f, "PT", "w2");
    for (int i = 0; i < 3; i++) {
        r = rmq_tc_recv(held[i], 25000);
        assert_non_null(r);
        assert_int_equal(r->code, 0);
        rmq_cmd_free(r);
        close(held[i]);
    }
    r = rmq_tc_recv(nfd, 25000);
    assert_non_null(r);
    assert_string_equal(rmq_cmd_ext_get(r, "hasMsg"), "true");
    assert_string_equal(rmq_cmd_ext_get(r, "pollingFull"), "false");
    rmq_cmd_free(r);
    close(nfd);
    int again = hold_pop(f, "LG", -1, 1);
    close(again);
}

/* NOTIFICATIONs over their own limits: the fourth waiting in all is
 * answered at once with hasMsg false and pollingFull true. */
static void notification_polling_full(void **state)
{
    fixture *f = *state;
    const char *groups[] = {"N1", "N2", "N3", "N4"};
    int fds[3];
    for (int i = 0; i < 4; i++) {
        const char *kv[] = {
            "consumerGroup", groups[i],  "topic",         "PT", "queueId", "-1", "pollTime",
            "20000",         "bornTime", "1700000000000", NULL};
        rmq_cmd *req = rmq_tc_request(200054, pop_opaque(), kv);
        if (i < 3) {
            fds[i] = rmq_tc_connect(f->port);
            assert_true(fds[i] >= 0);
            assert_int_equal(rmq_tc_send(fds[i], req), 0);
            rmq_cmd_free(req);
            assert_null(rmq_tc_recv(fds[i], 300)); /* held */
            continue;
        }
        rmq_cmd *r = call(f, req);
        assert_int_equal(r->code, 0);
        assert_string_equal(rmq_cmd_ext_get(r, "hasMsg"), "false");
        assert_string_equal(rmq_cmd_ext_get(r, "pollingFull"), "true");
        rmq_cmd_free(r);
    }
    for (int i = 0; i < 3; i++)
        close(fds[i]);
}

static void update_config(fixture *f, const char *props)
{
    rmq_cmd *r = body_call(f, 25, props);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
}

/* A POP (or NOTIFICATION) of group g on PT that waits pollTime 1500 ms on
 * its own connection, once POLLING_INFO (or a moment) shows it held. */
static int hold_short(fixture *f, const char *g, bool notification)
{
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    const char *nkv[] = {
        "consumerGroup", g,          "topic",         "PT", "queueId", "-1", "pollTime",
        "1500",          "bornTime", "1700000000000", NULL};
    rmq_cmd *req = notification ? rmq_tc_request(200054, pop_opaque(), nkv)
                                : pop_request(g, "PT", -1, 1, false, 1500, NULL);
    assert_int_equal(rmq_tc_send(fd, req), 0);
    rmq_cmd_free(req);
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (!notification && polling_num(f, g, "-1") != 1) {
        assert_true(rmq_test_now_ms() < deadline);
        rmq_test_pause_ms(20);
    }
    return fd;
}

/* Java reads popPollingSize / maxPopPollingSize at each polling() call and
 * calls it again when a held request's wait ends, checking the total
 * before the timeout: a POP held when maxPopPollingSize drops to 0
 * (UPDATE_BROKER_CONFIG, applied at once) is answered POLLING_FULL at the
 * end of its pollTime, not POLLING_TIMEOUT, a NOTIFICATION pollingFull
 * true; with room again the end of a wait is POLLING_TIMEOUT as before. */
static void polling_full_checked_again_when_the_wait_ends(void **state)
{
    fixture *f = *state;
    int pfd = hold_short(f, "EG", false);
    int nfd = hold_short(f, "EN", true);
    assert_null(rmq_tc_recv(nfd, 200)); /* held */
    update_config(f, "maxPopPollingSize=0\n");
    /* a new POP is refused at once under the new limit */
    rmq_cmd *r = call(f, pop_request("OG", "PT", -1, 1, false, 20000, NULL));
    assert_int_equal(r->code, 209);
    rmq_cmd_free(r);
    r = rmq_tc_recv(pfd, 25000);
    assert_non_null(r);
    assert_int_equal(r->code, 209); /* POLLING_FULL at the end of the wait */
    assert_string_equal(r->remark, "NO_MESSAGE_IN_QUEUE");
    assert_string_equal(rmq_cmd_ext_get(r, "startOffsetInfo"), "");
    rmq_cmd_free(r);
    close(pfd);
    r = rmq_tc_recv(nfd, 25000);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "hasMsg"), "false");
    assert_string_equal(rmq_cmd_ext_get(r, "pollingFull"), "true");
    rmq_cmd_free(r);
    close(nfd);
    update_config(f, "maxPopPollingSize=3\n");
    pfd = hold_short(f, "EG", false);
    nfd = hold_short(f, "EN", true);
    r = rmq_tc_recv(pfd, 25000);
    assert_non_null(r);
    assert_int_equal(r->code, 210); /* POLLING_TIMEOUT: there was room */
    rmq_cmd_free(r);
    close(pfd);
    r = rmq_tc_recv(nfd, 25000);
    assert_non_null(r);
    assert_string_equal(rmq_cmd_ext_get(r, "hasMsg"), "false");
    assert_string_equal(rmq_cmd_ext_get(r, "pollingFull"), "false");
    rmq_cmd_free(r);
    close(nfd);
}

/* An order NOTIFICATION (no wait) of group AG on PF: its hasMsg. */
static bool order_has_msg(fixture *f, const char *attempt)
{
    const char *kv[] = {"consumerGroup",
                        "AG",
                        "topic",
                        "PF",
                        "queueId",
                        "-1",
                        "pollTime",
                        "0",
                        "bornTime",
                        "1700000000000",
                        "order",
                        "true",
                        "attemptId",
                        attempt,
                        NULL};
    rmq_cmd *r = call(f, rmq_tc_request(200054, pop_opaque(), kv));
    assert_int_equal(r->code, 0);
    bool has = strcmp(rmq_cmd_ext_get(r, "hasMsg"), "true") == 0;
    rmq_cmd_free(r);
    return has;
}

/* Offsets of the records of a POP answer, as "o1,o2,...". */
static void offsets_of(const rmq_cmd *r, char *out, size_t cap)
{
    stored_record recs[32];
    size_t k = st_records(r, recs, 32);
    out[0] = '\0';
    for (size_t i = 0; i < k; i++)
        snprintf(out + strlen(out), cap - strlen(out), i ? ",%lld" : "%lld",
                 (long long)recs[i].queue_offset);
}

static int ack(fixture *f, const char *group, long long offset)
{
    char off[32];
    snprintf(off, sizeof off, "%lld", offset);
    const char *kv[] = {"consumerGroup", group, "topic",     "PF",
                        "queueId",       "0",   "extraInfo", "0 0 60000 999 0 broker-p 0 0",
                        "offset",        off,   NULL};
    rmq_cmd *r = call(f, rmq_tc_request(200051, pop_opaque(), kv));
    int c = r->code;
    rmq_cmd_free(r);
    return c;
}

/* An order POP that repeats its queue's batch attemptId gets that batch
 * again at once (counts unchanged: a lost answer, not a redelivery);
 * another attemptId, or none, waits for it as before. */
static void order_pop_attempt_id_repeats_batch(void **state)
{
    fixture *f = *state;
    send_ok(f, "PF", "a");
    send_ok(f, "PF", "b");
    send_ok(f, "PF", "c");
    char offs[128];
    rmq_cmd *r = call(f, pop_request("AG", "PF", -1, 2, true, 0, "attempt-1"));
    assert_int_equal(r->code, 0);
    offsets_of(r, offs, sizeof offs);
    assert_string_equal(offs, "0,1");
    assert_string_equal(rmq_cmd_ext_get(r, "orderCountInfo"), "0 qo0%0 0;0 qo0%1 0");
    rmq_cmd_free(r);
    r = call(f, pop_request("AG", "PF", -1, 2, true, 0, "attempt-2"));
    assert_int_equal(r->code, 210); /* locked: another attempt */
    rmq_cmd_free(r);
    r = call(f, pop_request("AG", "PF", -1, 2, true, 0, NULL));
    assert_int_equal(r->code, 210);
    rmq_cmd_free(r);
    /* NOTIFICATION says the same (Java's checkBlock with the attemptId) */
    assert_false(order_has_msg(f, "attempt-2"));
    assert_true(order_has_msg(f, "attempt-1"));
    r = call(f, pop_request("AG", "PF", -1, 2, true, 0, "attempt-1"));
    assert_int_equal(r->code, 0); /* the same batch again */
    offsets_of(r, offs, sizeof offs);
    assert_string_equal(offs, "0,1");
    assert_string_equal(rmq_cmd_ext_get(r, "orderCountInfo"), "0 qo0%0 0;0 qo0%1 0");
    stored_record rec;
    assert_int_equal(st_records(r, &rec, 1), 1);
    assert_int_equal(rec.reconsume_times, 0);
    rmq_cmd_free(r);
    /* still one batch in flight: the repeat made it invisible again */
    r = call(f, pop_request("AG", "PF", -1, 2, true, 0, "attempt-3"));
    assert_int_equal(r->code, 210);
    rmq_cmd_free(r);
    /* a repeat with room for more also takes the next message (Java reads
     * from the committed offset): the batch is now 0..2 */
    r = call(f, pop_request("AG", "PF", -1, 3, true, 0, "attempt-1"));
    assert_int_equal(r->code, 0);
    offsets_of(r, offs, sizeof offs);
    assert_string_equal(offs, "0,1,2");
    assert_string_equal(rmq_cmd_ext_get(r, "orderCountInfo"), "0 qo0%0 0;0 qo0%1 0;0 qo0%2 0");
    rmq_cmd_free(r);
    assert_int_equal(ack(f, "AG", 0), 0);
    assert_int_equal(ack(f, "AG", 1), 0);
    assert_int_equal(ack(f, "AG", 2), 0);
    /* acknowledged: the same attemptId now takes the next message */
    send_ok(f, "PF", "d");
    r = call(f, pop_request("AG", "PF", -1, 2, true, 0, "attempt-1"));
    assert_int_equal(r->code, 0);
    offsets_of(r, offs, sizeof offs);
    assert_string_equal(offs, "3");
    rmq_cmd_free(r);
}

/* The attemptId is kept with the order state (Java: consumerOrderInfo.json):
 * after a hot reload of the store and after kill -9, the POP repeating the
 * batch's attemptId gets the same batch at once with the same counts, while
 * another attemptId still waits for the batch's invisible time (60 s). */
static void order_attempt_id_survives_reload_and_kill_9(void **state)
{
    fixture *f = *state;
    send_ok(f, "PF", "a");
    send_ok(f, "PF", "b");
    send_ok(f, "PF", "c");
    char offs[128];
    rmq_cmd *r = call(f, pop_request("AG", "PF", -1, 2, true, 0, "attempt-A"));
    assert_int_equal(r->code, 0);
    offsets_of(r, offs, sizeof offs);
    assert_string_equal(offs, "0,1");
    rmq_cmd_free(r);
    for (int round = 0; round < 2; round++) {
        if (round == 0) { /* a hot reload of the store plugin */
            int status = -1;
            rmq_td_ctl_output(&f->d, &status, "reload", "store", NULL);
            assert_int_equal(status, 0);
        } else { /* kill -9 and a restart */
            close(f->fd);
            f->fd = -1;
            assert_int_equal(kill(f->d.pid, SIGKILL), 0);
            assert_int_equal(rmq_td_stop(&f->d), 128 + SIGKILL);
            assert_int_equal(pop_fixture_start(f), 0);
        }
        r = call(f, pop_request("AG", "PF", -1, 2, true, 0, "attempt-B"));
        assert_int_equal(r->code, 210); /* still locked for another attempt */
        rmq_cmd_free(r);
        r = call(f, pop_request("AG", "PF", -1, 2, true, 0, "attempt-A"));
        assert_int_equal(r->code, 0); /* the same batch, at once */
        offsets_of(r, offs, sizeof offs);
        assert_string_equal(offs, "0,1");
        assert_string_equal(rmq_cmd_ext_get(r, "orderCountInfo"), "0 qo0%0 0;0 qo0%1 0");
        rmq_cmd_free(r);
        assert_false(order_has_msg(f, "attempt-B"));
        assert_true(order_has_msg(f, "attempt-A"));
    }
}

/* A consumer's heartbeat on its own connection (the broker keeps a
 * client per channel), which stays open: its fd. */
static int heartbeat(fixture *f, int fd, const char *client, const char *group, const char *topic)
{
    if (fd < 0)
        fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    char hb[2048];
    bcm_consumer_heartbeat(hb, sizeof hb, client, group, topic, false);
    rmq_cmd *req = rmq_tc_request(34, pop_opaque(), NULL);
    assert_non_null(req);
    rmq_cmd_set_body(req, hb, strlen(hb), NULL, NULL);
    rmq_cmd *r = rmq_tc_call_response(fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    return fd;
}

/* The queue ids QUERY_ASSIGNMENT gives client c of group g on topic t,
 * sorted, as "q1,q2" ("-1": all queues). */
static void assigned(fixture *f, const char *c, const char *g, const char *t, char *out, size_t cap)
{
    char q[512];
    snprintf(q, sizeof q,
             "{\"clientId\":\"%s\",\"consumerGroup\":\"%s\",\"messageModel\":\"CLUSTERING\","
             "\"strategyName\":\"AVG\",\"topic\":\"%s\"}",
             c, g, t);
    rmq_cmd *r = body_call(f, 400, q);
    assert_int_equal(r->code, 0);
    bool has[8] = {false}, all = false;
    for (int i = -1; i < 8; i++) {
        char key[32];
        snprintf(key, sizeof key, "\"queueId\":%d,", i);
        bool in = bcm_body_contains(r, key);
        snprintf(key, sizeof key, "\"queueId\":%d}", i);
        in |= bcm_body_contains(r, key);
        if (i < 0)
            all = in;
        else
            has[i] = in;
    }
    rmq_cmd_free(r);
    out[0] = '\0';
    if (all)
        snprintf(out, cap, "-1");
    for (int i = 0; i < 8; i++)
        if (has[i])
            snprintf(out + strlen(out), cap - strlen(out), out[0] ? ",%d" : "%d", i);
}

static void set_pop_mode(fixture *f, const char *group, const char *topic, int share)
{
    char b[256];
    snprintf(b, sizeof b,
             "{\"topic\":\"%s\",\"consumerGroup\":\"%s\",\"mode\":\"POP\",\"popShareQueueNum\":%d}",
             topic, group, share);
    rmq_cmd *r = body_call(f, 401, b);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
}

/* Java's allocate4Pop: with popShareQueueNum N a POP client gets its own
 * queues (AVG) and those of the N clients after it; N >= clients - 1
 * means every queue (-1); more clients than queues, one queue each. */
static void assignment_pop_share_queue_num(void **state)
{
    fixture *f = *state;
    const char *cid[] = {"10.0.0.1@a", "10.0.0.1@b", "10.0.0.1@c"};
    int fds[3];
    for (int i = 0; i < 3; i++)
        fds[i] = heartbeat(f, -1, cid[i], "SG", "PQ");
    char got[64];
    /* PQ: 4 queues over 3 clients, AVG: a {0,1}, b {2}, c {3} */
    set_pop_mode(f, "SG", "PQ", 1);
    assigned(f, cid[0], "SG", "PQ", got, sizeof got);
    assert_string_equal(got, "0,1,2");
    assigned(f, cid[1], "SG", "PQ", got, sizeof got);
    assert_string_equal(got, "2,3");
    assigned(f, cid[2], "SG", "PQ", got, sizeof got);
    assert_string_equal(got, "0,1,3"); /* wraps to the first client */
    set_pop_mode(f, "SG", "PQ", 2);    /* 2 >= 3 - 1: all queues */
    assigned(f, cid[1], "SG", "PQ", got, sizeof got);
    assert_string_equal(got, "-1");
    /* PA: 2 queues, 3 clients: one queue each, by index (a heartbeat
     * names all of a client's groups: now TG only) */
    for (int i = 0; i < 3; i++)
        heartbeat(f, fds[i], cid[i], "TG", "PA");
    set_pop_mode(f, "TG", "PA", 1);
    assigned(f, cid[0], "TG", "PA", got, sizeof got);
    assert_string_equal(got, "0");
    assigned(f, cid[1], "TG", "PA", got, sizeof got);
    assert_string_equal(got, "1");
    assigned(f, cid[2], "TG", "PA", got, sizeof got);
    assert_string_equal(got, "0");
    for (int i = 0; i < 3; i++)
        close(fds[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(polling_full_per_key_and_in_all, setup, teardown),
        cmocka_unit_test_setup_teardown(notification_polling_full, setup, teardown),
        cmocka_unit_test_setup_teardown(polling_full_checked_again_when_the_wait_ends, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(order_pop_attempt_id_repeats_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(order_attempt_id_survives_reload_and_kill_9, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(assignment_pop_share_queue_num, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
