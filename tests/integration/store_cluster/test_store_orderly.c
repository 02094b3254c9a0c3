/* test_store_orderly.c — ordered consumption as an orderly push consumer
 * does it, over raw frames: a client heartbeats its group and takes the
 * topic's queues with LOCK_BATCH_MQ (41); per-queue numbered messages sent
 * to fixed queues come back from PULL in strictly increasing order per
 * queue; a second client of the group is refused the queues while the first
 * holds them and gets them after UNLOCK_BATCH_MQ (42). Ephemeral ports. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_test_client.h"

#define TOPIC "OrderTopic"
#define GROUP "OrderCG"
#define QUEUES 4
#define PER_QUEUE 60

static void heartbeat(int fd, const char *client_id)
{
    char hb[2048];
    bcm_consumer_heartbeat(hb, sizeof hb, client_id, GROUP, TOPIC, false);
    rmq_cmd *req = rmq_tc_request(34, 900, NULL);
    assert_non_null(req);
    rmq_cmd_set_body(req, hb, strlen(hb), NULL, NULL);
    rmq_cmd *r = rmq_tc_call_response(fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
}

/* LOCK_BATCH_MQ (41) or UNLOCK_BATCH_MQ (42) of queues [first, last] for
 * client_id; the answer (caller frees). */
static rmq_cmd *lock_call(int fd, int code, const char *client_id, int first, int last)
{
    char body[2048];
    int n = snprintf(body, sizeof body,
                     "{\"consumerGroup\":\"%s\",\"clientId\":\"%s\",\"onlyThisBroker\":false,"
                     "\"mqSet\":[",
                     GROUP, client_id);
    for (int q = first; q <= last; q++)
        n += snprintf(body + n, sizeof body - (size_t)n,
                      "%s{\"brokerName\":\"broker-t\",\"queueId\":%d,\"topic\":\"%s\"}",
                      q == first ? "" : ",", q, TOPIC);
    snprintf(body + n, sizeof body - (size_t)n, "]}");
    rmq_cmd *req = rmq_tc_request(code, 901, NULL);
    assert_non_null(req);
    rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    rmq_cmd *r = rmq_tc_call_response(fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    return r;
}

/* Count of "queueId":q entries in a lockOKMQSet answer. */
static int locked_count(const rmq_cmd *r, int *which)
{
    int n = 0;
    for (int q = 0; q < QUEUES; q++) {
        char needle[32];
        snprintf(needle, sizeof needle, "\"queueId\":%d", q);
        which[q] = bcm_body_contains(r, needle);
        n += which[q];
    }
    return n;
}

static void locked_queues_are_consumed_in_order(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(st_configure(&d, NULL), 0);
    const char *args[] = {"-o", "servers.broker.vip_listen=127.0.0.1:0", NULL};
    assert_int_equal(rmq_td_start(&d, args), 0);
    int port = rmq_td_port(&d, "broker");
    assert_true(port > 0);
    int fa = rmq_tc_connect(port), fb = rmq_tc_connect(port), fp = rmq_tc_connect(port);
    assert_true(fa >= 0 && fb >= 0 && fp >= 0);

    /* producer first so the topic exists with its 4 queues */
    int opaque = 1;
    rmq_cmd *r = st_send(fp, opaque++, TOPIC, 0, NULL, "q0-init", NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);

    heartbeat(fa, "127.0.0.1@A");
    heartbeat(fb, "127.0.0.1@B");
    int which[QUEUES];
    r = lock_call(fa, 41, "127.0.0.1@A", 0, QUEUES - 1);
    assert_int_equal(locked_count(r, which), QUEUES);
    assert_true(bcm_body_contains(r, "lockOKMQSet"));
    rmq_cmd_free(r);
    /* A's renewal keeps them; B is refused every one of them */
    r = lock_call(fa, 41, "127.0.0.1@A", 0, QUEUES - 1);
    assert_int_equal(locked_count(r, which), QUEUES);
    rmq_cmd_free(r);
    r = lock_call(fb, 41, "127.0.0.1@B", 0, 0);
    assert_int_equal(locked_count(r, which), 0);
    rmq_cmd_free(r);
    r = lock_call(fb, 41, "127.0.0.1@B", 0, QUEUES - 1);
    assert_int_equal(locked_count(r, which), 0);
    rmq_cmd_free(r);

    /* per-queue sequence numbers, queues interleaved */
    for (int k = 0; k < PER_QUEUE; k++)
        for (int q = 0; q < QUEUES; q++) {
            char body[64];
            snprintf(body, sizeof body, "q%d-seq%d", q, k);
            r = st_send(fp, opaque++, TOPIC, q, "TAGS\001ord", body, NULL);
            assert_non_null(r);
            assert_int_equal(r->code, 0);
            assert_int_equal(st_ext_ll(r, "queueId"), q);
            rmq_cmd_free(r);
        }

    /* A pulls each locked queue in small batches: strictly in order */
    for (int q = 0; q < QUEUES; q++) {
        long long at = 0;
        int next_seq = 0;
        while (next_seq < PER_QUEUE) {
            st_pull_args pa = {.group = GROUP,
                               .topic = TOPIC,
                               .queue = q,
                               .offset = at,
                               .max = 7,
                               .sys_flag = 1 | 4,
                               .commit_offset = at};
            r = st_pull(fa, opaque++, &pa);
            assert_non_null(r);
            assert_int_equal(r->code, 0);
            stored_record rec[8];
            size_t n = st_records(r, rec, 8);
            assert_true(n > 0);
            for (size_t i = 0; i < n; i++) {
                assert_int_equal(rec[i].queue_id, q);
                assert_int_equal(rec[i].queue_offset, at + (long long)i);
                char got[64];
                snprintf(got, sizeof got, "%.*s", (int)rec[i].body_len, (const char *)rec[i].body);
                if (q == 0 && strcmp(got, "q0-init") == 0)
                    continue;
                char want[64];
                snprintf(want, sizeof want, "q%d-seq%d", q, next_seq);
                assert_string_equal(got, want);
                next_seq++;
            }
            at = st_ext_ll(r, "nextBeginOffset");
            rmq_cmd_free(r);
        }
        assert_int_equal(at, PER_QUEUE + (q == 0 ? 1 : 0));
    }

    /* A releases queue 1: B gets exactly that one, the others stay A's */
    r = lock_call(fa, 42, "127.0.0.1@A", 1, 1);
    rmq_cmd_free(r);
    r = lock_call(fb, 41, "127.0.0.1@B", 0, QUEUES - 1);
    assert_int_equal(locked_count(r, which), 1);
    assert_true(which[1]);
    rmq_cmd_free(r);
    r = lock_call(fa, 41, "127.0.0.1@A", 1, 1);
    assert_int_equal(locked_count(r, which), 0);
    rmq_cmd_free(r);

    close(fa);
    close(fb);
    close(fp);
    assert_int_equal(rmq_td_stop_reporting(&d), 0);
    rmq_td_cleanup(&d);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test(locked_queues_are_consumed_in_order),
    };
    struct CMUnitTest sel[sizeof all / sizeof all[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (rmq_test_name_selected(argc > 1 ? argv[1] : NULL, all[i].name))
            sel[n++] = all[i];
    return _cmocka_run_group_tests("store_orderly", sel, n, NULL, NULL);
}
