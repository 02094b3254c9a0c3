/* test_store_features_ali_ons.c — a real client (ali-ons) against the
 * store's retry and delay features: a message its listener refuses comes
 * back through %RETRY%<group> with reconsumeTimes 1, 2 after its delay
 * levels and then lands in %DLQ%<group>; a message sent with a delay level
 * is delivered with a store time at least that level after its birth.
 * Short levels (messageDelayLevel "1s 2s 1s 1s 1s") and maxReconsumeTimes 2
 * keep it fast. One daemon, one node process; both always stopped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bcm_test_daemon.h"
#include "rmq_test_node.h"

#define TOPIC "FeatTopic"
#define GROUP "feat_group"

typedef struct fixture {
    rmq_test_daemon d;
    int ns_port, port;
    rmq_node_proc node;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    f->ns_port = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-i\"; brokerIP1 = "
             "\"127.0.0.1\"; topics = \"" TOPIC ":2\";",
             f->ns_port);
    if (f->ns_port <= 0 || rmq_td_init(&f->d, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(&f->d, f->ns_port, "info", bcm) != 0 ||
        rmq_td_add_plugin(&f->d, "store", "store", "broker",
                          "mappedFileSizeCommitLog = 1048576; messageDelayLevel = \"1s 2s 1s 1s "
                          "1s\";") != 0 ||
        rmq_td_start(&f->d, NULL) != 0)
        return -1;
    f->port = rmq_td_port(&f->d, "broker");
    return f->port > 0 ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    rmq_node_reap(&f->node, 0);
    assert_int_equal(rmq_td_stop_reporting(&f->d), 0);
    rmq_td_cleanup(&f->d);
    free(f);
    return 0;
}

static void node_start(fixture *f, const char *max_times, const char *delay_level)
{
    char port[16];
    snprintf(port, sizeof port, "%d", f->ns_port);
    const char *argv[] = {SF_SCRIPT, port, TOPIC, GROUP, max_times, delay_level, NULL};
    assert_int_equal(rmq_node_start(&f->node, SF_NODE, SF_NODE_MODULES, argv), 0);
}

static long long max_offset(int port, const char *topic)
{
    const char *kv[] = {"topic", topic, "queueId", "0", NULL};
    rmq_cmd *r = bcm_call(port, 30, kv, NULL);
    const char *v = r && r->code == 0 ? rmq_cmd_ext_get(r, "offset") : NULL;
    long long o = v ? atoll(v) : -1;
    rmq_cmd_free(r);
    return o;
}

static void test_refused_message_retries_then_dead_letters_and_delay_holds(void **state)
{
    fixture *f = *state;
    node_start(f, "2", "2");
    char line[1024];
    assert_true(rmq_node_line(&f->node, "READY", line, sizeof line, 60000));
    bool retry_seen[3] = {false, false, false}, delayed = false;
    long long delayed_span = -1;
    uint64_t deadline = rmq_test_now_ms() + 60000;
    while (!(retry_seen[0] && retry_seen[1] && retry_seen[2] && delayed) &&
           rmq_test_now_ms() < deadline) {
        if (!rmq_node_line(&f->node, "GOT ", line, sizeof line, 1000))
            continue;
        char tag[32], body[64];
        int times = -1;
        long long span = -1;
        if (sscanf(line, "GOT %31s %d %lld %63[^\n]", tag, &times, &span, body) != 4)
            continue;
        if (strcmp(tag, "retry") == 0 && times >= 0 && times <= 2) {
            assert_string_equal(body, "refused body");
            retry_seen[times] = true;
        } else if (strcmp(tag, "delayed") == 0) {
            assert_string_equal(body, "delayed body");
            delayed = true;
            delayed_span = span;
        }
    }
    assert_true(retry_seen[0]);
    assert_true(retry_seen[1]);
    assert_true(retry_seen[2]);
    assert_true(delayed);
    /* level 2 is 2 s here: stored again no earlier than that after its birth */
    assert_true(delayed_span >= 1900);
    /* refused a third time with reconsumeTimes 2 = maxReconsumeTimes: dead letter */
    uint64_t dl = rmq_test_now_ms() + 20000;
    while (max_offset(f->port, "%DLQ%" GROUP) < 1 && rmq_test_now_ms() < dl)
        rmq_test_pause_ms(100);
    assert_int_equal(max_offset(f->port, "%DLQ%" GROUP), 1);
    rmq_node_send(&f->node, "close\n");
    assert_true(rmq_node_line(&f->node, "CLOSED", line, sizeof line, 30000));
    assert_int_equal(rmq_node_reap(&f->node, 30000), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_refused_message_retries_then_dead_letters_and_delay_holds, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
