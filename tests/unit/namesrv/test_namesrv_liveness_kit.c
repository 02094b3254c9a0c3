/* test_namesrv_liveness_kit.c — broker liveness of namesrv.so in
 * librmqhost-testkit: a closed broker connection removes its brokers at
 * once, a silent broker expires at the first scan past
 * brokerChannelExpiredTime and its channel is closed (as Java does), a
 * registering broker never expires, and a stale connection's close never
 * removes a fresher registration (protocol.md §4.7). The scan runs on the
 * kit's virtual clock: expiry is checked to the scan, without waiting for
 * it. (Was tests/integration/namesrv/test_namesrv_liveness.c, a daemon per
 * case and seconds of real waiting.) Also: after removals past
 * heapTrimAfterRemovalMb the next scan returns free heap to the OS. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmqhost/testkit.h>

#include "rmq_test_bodies.h"

#define WAIT_MS 5000

/* a kit with the namesrv plugin and these settings (NULL-terminated pairs) */
static int start_kit(void **state, const char **settings)
{
    rmq_testkit *kit = rmq_tk_new();
    if (!kit || rmq_tk_add_plugin(kit, "namesrv", RMQ_TEST_PLUGIN_DIR "/namesrv.so", settings) != 0)
        return -1;
    char err[512];
    if (rmq_tk_start(kit, err, sizeof(err)) != 0) {
        fprintf(stderr, "kit: %s\n", err);
        rmq_tk_free(kit);
        return -1;
    }
    *state = kit;
    return 0;
}

static int setup(void **state)
{
    return start_kit(state, (const char *[]){"scanNotActiveBrokerInterval", "100",
                                             "brokerChannelExpiredTime", "1000", NULL});
}

static int teardown(void **state)
{
    rmq_tk_free(*state);
    return 0;
}

/* REGISTER_BROKER of broker `name` (cluster C, id 0) with one topic on ch. */
static int32_t register_broker(rmq_testkit *kit, int ch, const char *name, const char *addr,
                               const char *topic)
{
    char *body = rmq_tb_register_body_json(1, 1700000000000LL, topic);
    assert_non_null(body);
    char crc[16];
    rmq_tb_body_crc32_text(body, strlen(body), crc);
    rmq_cmd *req =
        rmq_tk_request(103, RMQ_TK_JSON, false,
                       (const char *[]){"brokerName", name, "brokerAddr", addr, "clusterName", "C",
                                        "haServerAddr", "127.0.0.1:10912", "brokerId", "0",
                                        "bodyCrc32", crc, "compressed", "false", NULL});
    assert_int_equal(rmq_tk_set_body(req, body, strlen(body)), 0);
    free(body);
    rmq_cmd *r = rmq_tk_call(kit, ch, req, WAIT_MS);
    assert_non_null(r);
    int32_t code = rmq_tk_code(r);
    rmq_tk_cmd_free(r);
    return code;
}

static int32_t route_code(rmq_testkit *kit, int ch, const char *topic)
{
    rmq_cmd *r = rmq_tk_call(
        kit, ch, rmq_tk_request(105, RMQ_TK_JSON, false, (const char *[]){"topic", topic, NULL}),
        WAIT_MS);
    assert_non_null(r);
    int32_t code = rmq_tk_code(r);
    rmq_tk_cmd_free(r);
    return code;
}

/* CLOSE reaches the plugin on the event thread: poll the route. */
static bool route_becomes(rmq_testkit *kit, int ch, const char *topic, int32_t code)
{
    for (int i = 0; i < WAIT_MS; i++) {
        if (route_code(kit, ch, topic) == code)
            return true;
        usleep(1000);
    }
    return false;
}

static void test_closing_the_broker_connection_removes_it_at_once(void **state)
{
    rmq_testkit *kit = *state;
    int client = rmq_tk_open_channel(kit);
    int gone = rmq_tk_open_channel(kit);
    int stays = rmq_tk_open_channel(kit);
    assert_int_equal(register_broker(kit, gone, "gone", "127.0.0.1:7001", "CloseTopic"), 0);
    assert_int_equal(register_broker(kit, stays, "stays", "127.0.0.1:7002", "StayTopic"), 0);
    assert_int_equal(rmq_tk_close_channel(kit, gone), 0);
    /* no virtual time passes: the CLOSE event alone does it */
    assert_true(route_becomes(kit, client, "CloseTopic", 17));
    rmq_cmd *r = rmq_tk_call(kit, client, rmq_tk_request(106, RMQ_TK_JSON, false, NULL), WAIT_MS);
    size_t len;
    const char *body = rmq_tk_body(r, &len);
    assert_non_null(body);
    char *text = strndup(body, len);
    assert_null(strstr(text, "\"gone\""));
    assert_non_null(strstr(text, "\"stays\""));
    free(text);
    rmq_tk_cmd_free(r);
}

static void test_silent_broker_expires_at_the_first_scan_past_the_limit(void **state)
{
    rmq_testkit *kit = *state;
    int client = rmq_tk_open_channel(kit);
    int broker = rmq_tk_open_channel(kit);
    assert_int_equal(register_broker(kit, broker, "silent", "127.0.0.1:7003", "SilentTopic"), 0);
    assert_int_equal(route_code(kit, client, "SilentTopic"), 0);
    /* 1000 ms of silence is not yet expired... */
    assert_int_equal(rmq_tk_advance(kit, 1000), 0);
    assert_int_equal(route_code(kit, client, "SilentTopic"), 0);
    assert_false(rmq_tk_channel_closed_by_host(kit, broker, 0));
    /* ...the next scan (every 100 ms) drops it and closes its channel */
    assert_int_equal(rmq_tk_advance(kit, 100), 0);
    assert_int_equal(route_code(kit, client, "SilentTopic"), 17);
    assert_true(rmq_tk_channel_closed_by_host(kit, broker, WAIT_MS));
}

static void test_registering_broker_does_not_expire(void **state)
{
    rmq_testkit *kit = *state;
    int client = rmq_tk_open_channel(kit);
    int broker = rmq_tk_open_channel(kit);
    /* 30 virtual seconds, re-registered every 900 ms */
    for (int i = 0; i < 34; i++) {
        assert_int_equal(register_broker(kit, broker, "alive", "127.0.0.1:7004", "AliveTopic"), 0);
        assert_int_equal(rmq_tk_advance(kit, 900), 0);
        assert_int_equal(route_code(kit, client, "AliveTopic"), 0);
    }
    assert_false(rmq_tk_channel_closed_by_host(kit, broker, 0));
}

static void test_stale_connection_close_keeps_fresher_registration(void **state)
{
    rmq_testkit *kit = *state;
    int client = rmq_tk_open_channel(kit);
    int old_conn = rmq_tk_open_channel(kit);
    int new_conn = rmq_tk_open_channel(kit);
    assert_int_equal(register_broker(kit, old_conn, "moved", "127.0.0.1:7005", "MovedTopic"), 0);
    assert_int_equal(register_broker(kit, new_conn, "moved", "127.0.0.1:7005", "MovedTopic"), 0);
    assert_int_equal(rmq_tk_close_channel(kit, old_conn), 0);
    /* events are delivered in order: a marker broker closed after the old
     * connection is gone only once the old CLOSE has been handled */
    int marker = rmq_tk_open_channel(kit);
    assert_int_equal(register_broker(kit, marker, "marker", "127.0.0.1:7006", "MarkerTopic"), 0);
    assert_int_equal(rmq_tk_close_channel(kit, marker), 0);
    assert_true(route_becomes(kit, client, "MarkerTopic", 17));
    assert_int_equal(route_code(kit, client, "MovedTopic"), 0);
    assert_int_equal(rmq_tk_close_channel(kit, new_conn), 0);
    assert_true(route_becomes(kit, client, "MovedTopic", 17));
}

/* A kit whose heap return comes after 1 MiB of removals: 1310 QueueData. */
static int setup_trim(void **state)
{
    return start_kit(state, (const char *[]){"scanNotActiveBrokerInterval", "100",
                                             "brokerChannelExpiredTime", "1000",
                                             "heapTrimAfterRemovalMb", "1", NULL});
}

/* "<prefix>0,...,<prefix><n-1>" */
static char *topic_names(const char *prefix, int n)
{
    size_t cap = (size_t)n * (strlen(prefix) + 8) + 1, len = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    s[0] = '\0';
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s%s%d", i ? "," : "", prefix, i);
    return s;
}

static int32_t register_many(rmq_testkit *kit, int ch, const char *name, const char *addr,
                             const char *prefix, int n)
{
    char *topics = topic_names(prefix, n);
    int32_t code = register_broker(kit, ch, name, addr, topics);
    free(topics);
    return code;
}

#define TRIM_LOG "returned free heap to the OS after "

static void test_expiry_of_many_topics_returns_heap_at_that_scan(void **state)
{
    rmq_testkit *kit = *state;
    int client = rmq_tk_open_channel(kit);
    int broker = rmq_tk_open_channel(kit);
    assert_int_equal(register_many(kit, broker, "big", "127.0.0.1:7010", "Big", 1400), 0);
    assert_int_equal(route_code(kit, client, "Big1399"), 0);
    assert_int_equal(rmq_tk_advance(kit, 1000), 0);
    assert_false(rmq_tk_log_contains(kit, TRIM_LOG));
    assert_int_equal(rmq_tk_advance(kit, 100), 0); /* the expiring scan */
    assert_int_equal(route_code(kit, client, "Big0"), 17);
    assert_true(rmq_tk_log_contains(kit, TRIM_LOG "1400 (topic, broker) removals"));
}

/* Removals below the threshold wait; closed channels count too, and the
 * return happens at the next scan, not on the event thread. */
static void test_removals_add_up_to_the_threshold(void **state)
{
    rmq_testkit *kit = *state;
    int client = rmq_tk_open_channel(kit);
    int first = rmq_tk_open_channel(kit);
    int second = rmq_tk_open_channel(kit);
    assert_int_equal(register_many(kit, first, "first", "127.0.0.1:7011", "First", 1000), 0);
    assert_int_equal(register_many(kit, second, "second", "127.0.0.1:7012", "Second", 400), 0);
    assert_int_equal(rmq_tk_close_channel(kit, first), 0);
    assert_true(route_becomes(kit, client, "First0", 17));
    assert_int_equal(rmq_tk_advance(kit, 200), 0);
    assert_false(rmq_tk_log_contains(kit, TRIM_LOG));
    assert_int_equal(rmq_tk_close_channel(kit, second), 0);
    assert_true(route_becomes(kit, client, "Second0", 17));
    assert_false(rmq_tk_log_contains(kit, TRIM_LOG));
    assert_int_equal(rmq_tk_advance(kit, 100), 0);
    assert_true(rmq_tk_log_contains(kit, TRIM_LOG "1400 (topic, broker) removals"));
}

/* The default threshold (64 MiB) is far from 1400 QueueData. */
static void test_default_threshold_keeps_the_heap_after_small_removals(void **state)
{
    rmq_testkit *kit = *state;
    int client = rmq_tk_open_channel(kit);
    int broker = rmq_tk_open_channel(kit);
    assert_int_equal(register_many(kit, broker, "big", "127.0.0.1:7013", "Big", 1400), 0);
    assert_int_equal(rmq_tk_advance(kit, 1100), 0);
    assert_int_equal(route_code(kit, client, "Big0"), 17);
    assert_int_equal(rmq_tk_advance(kit, 200), 0);
    assert_false(rmq_tk_log_contains(kit, TRIM_LOG));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_closing_the_broker_connection_removes_it_at_once,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_silent_broker_expires_at_the_first_scan_past_the_limit,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_registering_broker_does_not_expire, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_connection_close_keeps_fresher_registration,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry_of_many_topics_returns_heap_at_that_scan,
                                        setup_trim, teardown),
        cmocka_unit_test_setup_teardown(test_removals_add_up_to_the_threshold, setup_trim,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_default_threshold_keeps_the_heap_after_small_removals,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
