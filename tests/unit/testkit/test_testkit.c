/* test_testkit.c — librmqhost-testkit through its public header only, with
 * a plugin linked into the test: settings validated as the daemon does, the
 * daemon's dispatch rules, virtual time, deferred answers, captured outgoing
 * calls, thread rules, doubles, channel events, logs and a reload that
 * carries state over. */
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

#include "kit_fixture_plugin.h"

#define WAIT_MS 5000

static rmq_testkit *start_kit(const char *const *settings)
{
    rmq_testkit *kit = rmq_tk_new();
    assert_non_null(kit);
    assert_int_equal(
        rmq_tk_add_plugin_descriptor(kit, "fixture", &kit_fixture_descriptor, settings), 0);
    char err[512];
    if (rmq_tk_start(kit, err, sizeof(err)) != 0)
        fail_msg("start: %s", err);
    return kit;
}

static rmq_cmd *call(rmq_testkit *kit, int ch, int code, const char *const *ext)
{
    return rmq_tk_call(kit, ch, rmq_tk_request(code, RMQ_TK_JSON, false, ext), WAIT_MS);
}

static long long ext_num(const rmq_cmd *c, const char *key)
{
    const char *v = rmq_tk_ext(c, key);
    if (!v)
        fail_msg("no ext %s in answer code %d (%s)", key, rmq_tk_code(c),
                 rmq_tk_remark(c) ? rmq_tk_remark(c) : "");
    return atoll(v);
}

static void assert_refused(const char *const *settings, const char *needle)
{
    rmq_testkit *kit = rmq_tk_new();
    assert_non_null(kit);
    assert_int_equal(
        rmq_tk_add_plugin_descriptor(kit, "fixture", &kit_fixture_descriptor, settings), 0);
    char err[512] = "";
    assert_int_not_equal(rmq_tk_start(kit, err, sizeof(err)), 0);
    if (!strstr(err, needle))
        fail_msg("error '%s' lacks '%s'", err, needle);
    rmq_tk_free(kit);
}

static void test_settings_are_validated_as_the_daemon_does(void **state)
{
    (void)state;
    assert_refused((const char *[]){"start", "abc", NULL},
                   "setting 'start': 'abc' is not an integer");
    assert_refused((const char *[]){"start", "500", NULL}, "500 is outside [0, 100]");
    assert_refused((const char *[]){"nope", "1", NULL}, "has no setting 'nope'");
    rmq_testkit *kit = start_kit((const char *[]){"start", "41", NULL});
    int ch = rmq_tk_open_channel(kit);
    rmq_cmd *a = call(kit, ch, KF_CODE_COUNT, NULL);
    assert_int_equal(ext_num(a, "count"), 42);
    rmq_tk_cmd_free(a);
    assert_true(rmq_tk_log_contains(kit, "plugin fixture 1.0 loaded"));
    rmq_tk_free(kit);
}

static void test_dispatch_rules_match_the_daemon(void **state)
{
    (void)state;
    rmq_testkit *kit = start_kit(NULL);
    int ch = rmq_tk_open_channel(kit);
    assert_true(ch > 0);
    assert_true(rmq_tk_channel_id(kit, ch) != 0);

    rmq_cmd *a = call(kit, ch, 999, NULL);
    assert_int_equal(rmq_tk_code(a), RMQ_RESPONSE_REQUEST_CODE_NOT_SUPPORTED);
    assert_string_equal(rmq_tk_remark(a), " request type 999 not supported");
    rmq_tk_cmd_free(a);

    /* oneway: processed, never answered */
    assert_null(
        rmq_tk_call(kit, ch, rmq_tk_request(KF_CODE_COUNT, RMQ_TK_JSON, true, NULL), WAIT_MS));
    a = rmq_tk_call(kit, ch, rmq_tk_request(KF_CODE_COUNT, RMQ_TK_ROCKETMQ, false, NULL), WAIT_MS);
    assert_int_equal(ext_num(a, "count"), 2);
    rmq_tk_cmd_free(a);

    a = call(kit, ch, KF_CODE_COUNT, (const char *[]){"reject", "1", NULL});
    assert_int_equal(rmq_tk_code(a), RMQ_RESPONSE_SYSTEM_BUSY);
    assert_string_equal(rmq_tk_remark(a),
                        "[REJECTREQUEST]system busy, start flow control for a while");
    rmq_tk_cmd_free(a);

    a = call(kit, ch, KF_CODE_HOOKED, NULL);
    assert_int_equal(rmq_tk_code(a), 16);
    assert_string_equal(rmq_tk_remark(a), "hook said no");
    rmq_tk_cmd_free(a);

    a = call(kit, ch, KF_CODE_FAIL, NULL);
    assert_int_equal(rmq_tk_code(a), RMQ_RESPONSE_SYSTEM_ERROR);
    assert_string_equal(rmq_tk_remark(a), "fixture refuses");
    rmq_tk_cmd_free(a);
    rmq_tk_free(kit);
}

/* Creating the gate file lets the fixture's gated EXEC requests finish:
 * both must then be answered SUCCESS. */
static void open_gate_and_expect_success(rmq_testkit *kit, int ch, const char *gate, int32_t first,
                                         int32_t second)
{
    FILE *fp = fopen(gate, "w");
    assert_non_null(fp);
    fclose(fp);
    rmq_cmd *a = rmq_tk_wait_answer(kit, ch, first, WAIT_MS);
    rmq_cmd *b = rmq_tk_wait_answer(kit, ch, second, WAIT_MS);
    assert_int_equal(rmq_tk_code(a), 0);
    assert_int_equal(rmq_tk_code(b), 0);
    rmq_tk_cmd_free(a);
    rmq_tk_cmd_free(b);
}

static void test_a_full_executor_answers_system_busy(void **state)
{
    (void)state;
    rmq_testkit *kit = start_kit(NULL);
    int ch = rmq_tk_open_channel(kit);
    char gate[512];
    snprintf(gate, sizeof(gate), "%s/gate", rmq_tk_state_dir(kit));
    const char *ext[] = {"gate", gate, NULL};
    int32_t first, second;
    assert_int_equal(rmq_tk_send(kit, ch, rmq_tk_request(KF_CODE_EXEC, 0, false, ext), &first), 0);
    /* the first runs (waiting for the gate) before the second is queued */
    char running[600];
    snprintf(running, sizeof(running), "%s.running", gate);
    for (int i = 0; i < 5000 && access(running, F_OK) != 0; i++)
        usleep(1000);
    assert_int_equal(access(running, F_OK), 0);
    assert_int_equal(rmq_tk_send(kit, ch, rmq_tk_request(KF_CODE_EXEC, 0, false, ext), &second), 0);
    rmq_cmd *busy = call(kit, ch, KF_CODE_EXEC, ext);
    assert_int_equal(rmq_tk_code(busy), RMQ_RESPONSE_SYSTEM_BUSY);
    assert_string_equal(rmq_tk_remark(busy),
                        "[OVERLOAD]system busy, start flow control for a while");
    rmq_tk_cmd_free(busy);
    open_gate_and_expect_success(kit, ch, gate, first, second);
    rmq_tk_free(kit);
}

static void assert_queue(rmq_testkit *kit, int ch, long long length, long long wait)
{
    rmq_cmd *q = call(kit, ch, KF_CODE_QUEUE_INFO, (const char *[]){"name", "work", NULL});
    assert_int_equal(ext_num(q, "rc"), 0);
    assert_int_equal(ext_num(q, "length"), length);
    assert_int_equal(ext_num(q, "capacity"), 1);
    assert_int_equal(ext_num(q, "wait"), wait);
    rmq_tk_cmd_free(q);
}

/* ABI 1.6 executor_queue_info, on the kit's virtual clock: the queued
 * request's wait grows exactly by the time advanced while the executor's
 * only thread is held by the first request. */
static void test_executor_queue_info_shows_length_and_head_wait(void **state)
{
    (void)state;
    rmq_testkit *kit = start_kit(NULL);
    assert_true(rmq_tk_api(kit)->abi_minor >= 6);
    int ch = rmq_tk_open_channel(kit);
    rmq_cmd *q = call(kit, ch, KF_CODE_QUEUE_INFO, (const char *[]){"name", "nosuch", NULL});
    assert_int_equal(ext_num(q, "rc"), RMQ_ENOENT);
    rmq_tk_cmd_free(q);
    assert_queue(kit, ch, 0, 0);
    char gate[512], running[600];
    snprintf(gate, sizeof(gate), "%s/gate", rmq_tk_state_dir(kit));
    snprintf(running, sizeof(running), "%s.running", gate);
    const char *ext[] = {"gate", gate, NULL};
    int32_t first, second;
    assert_int_equal(rmq_tk_send(kit, ch, rmq_tk_request(KF_CODE_EXEC, 0, false, ext), &first), 0);
    for (int i = 0; i < 5000 && access(running, F_OK) != 0; i++)
        usleep(1000);
    assert_int_equal(access(running, F_OK), 0);
    assert_queue(kit, ch, 0, 0); /* the running one is not queued */
    assert_int_equal(rmq_tk_send(kit, ch, rmq_tk_request(KF_CODE_EXEC, 0, false, ext), &second), 0);
    /* the second is queued once the IO thread has dispatched it */
    long long length = 0;
    for (int i = 0; i < 5000 && length == 0; i++) {
        q = call(kit, ch, KF_CODE_QUEUE_INFO, (const char *[]){"name", "work", NULL});
        length = ext_num(q, "length");
        rmq_tk_cmd_free(q);
        if (!length)
            usleep(1000);
    }
    assert_queue(kit, ch, 1, 0);
    assert_int_equal(rmq_tk_advance(kit, 40), 0); /* before the "work" timer's 250 ms */
    assert_queue(kit, ch, 1, 40);
    assert_int_equal(rmq_tk_advance(kit, 25), 0);
    assert_queue(kit, ch, 1, 65);
    open_gate_and_expect_success(kit, ch, gate, first, second);
    assert_queue(kit, ch, 0, 0);
    rmq_tk_free(kit);
}

static void test_virtual_time_fires_timers_exactly(void **state)
{
    (void)state;
    rmq_testkit *kit = start_kit((const char *[]){"tick_ms", "100", NULL});
    int ch = rmq_tk_open_channel(kit);
    uint64_t t0 = rmq_tk_now_ms(kit);
    rmq_cmd *a = call(kit, ch, KF_CODE_TICKS, NULL);
    assert_int_equal(ext_num(a, "ticks"), 0); /* nothing fires on its own */
    rmq_tk_cmd_free(a);
    assert_int_equal(rmq_tk_advance(kit, 99), 0);
    a = call(kit, ch, KF_CODE_TICKS, NULL);
    assert_int_equal(ext_num(a, "ticks"), 0);
    rmq_tk_cmd_free(a);
    assert_int_equal(rmq_tk_advance(kit, 251), 0); /* t0 + 350 */
    assert_int_equal(rmq_tk_now_ms(kit), t0 + 350);
    a = call(kit, ch, KF_CODE_TICKS, NULL);
    assert_int_equal(ext_num(a, "ticks"), 3);
    char want[128];
    snprintf(want, sizeof(want), "%llu,%llu,%llu", (unsigned long long)(t0 + 100),
             (unsigned long long)(t0 + 200), (unsigned long long)(t0 + 300));
    size_t len;
    const char *body = rmq_tk_body(a, &len);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(body, want, len);
    rmq_tk_cmd_free(a);
    /* the executor-bound timer (every 250 ms) ran at t0 + 250, on its
     * executor, and advance waited for it */
    a = call(kit, ch, KF_CODE_EXEC_TICKS, NULL);
    assert_int_equal(ext_num(a, "ticks"), 1);
    assert_int_equal(ext_num(a, "at"), (long long)(t0 + 250));
    rmq_tk_cmd_free(a);
    assert_int_equal(rmq_tk_advance(kit, 150), 0); /* t0 + 500 */
    a = call(kit, ch, KF_CODE_EXEC_TICKS, NULL);
    assert_int_equal(ext_num(a, "ticks"), 2);
    assert_int_equal(ext_num(a, "at"), (long long)(t0 + 500));
    rmq_tk_cmd_free(a);
    rmq_tk_free(kit);
}

static void test_a_deferred_request_is_answered_at_the_next_tick(void **state)
{
    (void)state;
    rmq_testkit *kit = start_kit((const char *[]){"tick_ms", "1000", NULL});
    int ch = rmq_tk_open_channel(kit);
    uint64_t t0 = rmq_tk_now_ms(kit);
    int32_t opaque;
    assert_int_equal(rmq_tk_send(kit, ch, rmq_tk_request(KF_CODE_DEFER, 0, false, NULL), &opaque),
                     0);
    assert_null(rmq_tk_wait_answer(kit, ch, opaque, 100));
    assert_int_equal(rmq_tk_advance(kit, 1000), 0);
    rmq_cmd *a = rmq_tk_wait_answer(kit, ch, opaque, WAIT_MS);
    assert_non_null(a);
    assert_int_equal(rmq_tk_code(a), 0);
    assert_int_equal(ext_num(a, "at"), (long long)(t0 + 1000));
    rmq_tk_cmd_free(a);
    rmq_tk_free(kit);
}

static void test_outgoing_calls_are_answered_failed_or_timed_out_by_the_test(void **state)
{
    (void)state;
    rmq_testkit *kit = start_kit(NULL);
    int ch = rmq_tk_open_channel(kit);
    int32_t opaque;
    assert_int_equal(rmq_tk_send(kit, ch, rmq_tk_request(KF_CODE_REMOTE, 0, false, NULL), &opaque),
                     0);
    rmq_tk_outgoing *out = rmq_tk_next_outgoing(kit, WAIT_MS);
    assert_non_null(out);
    assert_int_equal(rmq_tk_outgoing_kind(out), RMQ_TK_OUT_ASYNC);
    assert_string_equal(rmq_tk_outgoing_addr(out), "10.0.0.1:9876");
    assert_int_equal(rmq_tk_outgoing_timeout_ms(out), 3000);
    assert_int_equal(rmq_tk_code(rmq_tk_outgoing_request(out)), 77);
    assert_string_equal(rmq_tk_ext(rmq_tk_outgoing_request(out), "from"), "fixture");
    assert_int_equal(rmq_tk_outgoing_answer(kit, out, rmq_tk_response(0, "pong")), 0);
    rmq_cmd *a = rmq_tk_wait_answer(kit, ch, opaque, WAIT_MS);
    assert_non_null(a);
    assert_string_equal(rmq_tk_ext(a, "remote"), "pong");
    rmq_tk_cmd_free(a);

    /* failed by the test */
    assert_int_equal(rmq_tk_send(kit, ch, rmq_tk_request(KF_CODE_REMOTE, 0, false, NULL), &opaque),
                     0);
    out = rmq_tk_next_outgoing(kit, WAIT_MS);
    assert_non_null(out);
    assert_int_equal(rmq_tk_outgoing_fail(kit, out, RMQ_ECONNREFUSED), 0);
    a = rmq_tk_wait_answer(kit, ch, opaque, WAIT_MS);
    assert_int_equal(ext_num(a, "err"), RMQ_ECONNREFUSED);
    rmq_tk_cmd_free(a);

    /* timed out by virtual time: not a millisecond early */
    assert_int_equal(rmq_tk_send(kit, ch, rmq_tk_request(KF_CODE_REMOTE, 0, false, NULL), &opaque),
                     0);
    assert_non_null(rmq_tk_next_outgoing(kit, WAIT_MS));
    assert_int_equal(rmq_tk_advance(kit, 2999), 0);
    assert_null(rmq_tk_wait_answer(kit, ch, opaque, 50));
    assert_int_equal(rmq_tk_advance(kit, 1), 0);
    a = rmq_tk_wait_answer(kit, ch, opaque, WAIT_MS);
    assert_int_equal(ext_num(a, "err"), RMQ_ETIMEDOUT);
    rmq_tk_cmd_free(a);
    assert_int_equal(rmq_tk_outgoing_count(kit), 3);
    rmq_tk_free(kit);
}

static void test_blocking_calls_follow_the_thread_rules(void **state)
{
    (void)state;
    rmq_testkit *kit = start_kit(NULL);
    int ch = rmq_tk_open_channel(kit);
    rmq_cmd *a = call(kit, ch, KF_CODE_SYNC_IO, NULL);
    assert_int_equal(ext_num(a, "rc"), RMQ_EWOULDBLOCK);
    rmq_tk_cmd_free(a);
    assert_int_equal(rmq_tk_outgoing_count(kit), 0); /* refused before anything is sent */

    int32_t opaque;
    assert_int_equal(
        rmq_tk_send(kit, ch, rmq_tk_request(KF_CODE_SYNC_EXEC, 0, false, NULL), &opaque), 0);
    rmq_tk_outgoing *out = rmq_tk_next_outgoing(kit, WAIT_MS);
    assert_non_null(out);
    assert_int_equal(rmq_tk_outgoing_kind(out), RMQ_TK_OUT_SYNC);
    assert_string_equal(rmq_tk_outgoing_addr(out), "10.0.0.2:9876");
    assert_int_equal(rmq_tk_outgoing_answer(kit, out, rmq_tk_response(0, "pang")), 0);
    a = rmq_tk_wait_answer(kit, ch, opaque, WAIT_MS);
    assert_int_equal(ext_num(a, "rc"), 0);
    assert_string_equal(rmq_tk_ext(a, "remote"), "pang");
    rmq_tk_cmd_free(a);
    rmq_tk_free(kit);
}

static void test_a_reload_carries_state_over(void **state)
{
    (void)state;
    rmq_testkit *kit = start_kit(NULL);
    int ch = rmq_tk_open_channel(kit);
    for (int i = 1; i <= 3; i++) {
        rmq_cmd *a = call(kit, ch, KF_CODE_COUNT, NULL);
        assert_int_equal(ext_num(a, "count"), i);
        rmq_tk_cmd_free(a);
    }
    /* a request deferred by generation 1 is answered by its quiesce */
    int32_t held;
    assert_int_equal(rmq_tk_send(kit, ch, rmq_tk_request(KF_CODE_DEFER, 0, false, NULL), &held), 0);
    assert_null(rmq_tk_wait_answer(kit, ch, held, 100));
    char msg[512];
    if (rmq_tk_reload(kit, "fixture", msg, sizeof(msg)) != 0)
        fail_msg("reload: %s", msg);
    rmq_cmd *a = rmq_tk_wait_answer(kit, ch, held, WAIT_MS);
    assert_non_null(a);
    assert_string_equal(rmq_tk_remark(a), "bye");
    rmq_tk_cmd_free(a);
    a = call(kit, ch, KF_CODE_COUNT, NULL);
    assert_int_equal(ext_num(a, "count"), 4);
    rmq_tk_cmd_free(a);
    /* the new generation's timers run on the same virtual clock */
    assert_int_equal(rmq_tk_advance(kit, 100), 0);
    a = call(kit, ch, KF_CODE_TICKS, NULL);
    assert_int_equal(ext_num(a, "ticks"), 1);
    rmq_tk_cmd_free(a);
    rmq_tk_free(kit);
}

static int math_add(void *ud, int a, int b)
{
    (*(int *)ud)++;
    return a + b;
}

static char published[64];

static void on_event(const char *event, const void *data, size_t len, void *ud)
{
    (void)ud;
    snprintf(published, sizeof(published), "%s:%.*s", event, (int)len, (const char *)data);
}

static void test_doubles_events_and_channel_events(void **state)
{
    (void)state;
    static const kf_math math = {math_add};
    int calls = 0;
    rmq_testkit *kit = rmq_tk_new();
    assert_int_equal(rmq_tk_add_service(kit, "kf.math", 1, &math, &calls), 0);
    assert_int_equal(rmq_tk_subscribe_event(kit, "kf.event", on_event, NULL), 0);
    assert_int_equal(rmq_tk_add_plugin_descriptor(kit, "fixture", &kit_fixture_descriptor, NULL),
                     0);
    char err[256];
    assert_int_equal(rmq_tk_start(kit, err, sizeof(err)), 0);
    int ch = rmq_tk_open_channel(kit);
    rmq_cmd *a = call(kit, ch, KF_CODE_SERVICE, NULL);
    assert_int_equal(ext_num(a, "sum"), 5);
    assert_int_equal(calls, 1);
    rmq_tk_cmd_free(a);

    rmq_cmd *req = rmq_tk_request(KF_CODE_PUBLISH, 0, false, NULL);
    assert_int_equal(rmq_tk_set_body(req, "hello", 5), 0);
    a = rmq_tk_call(kit, ch, req, WAIT_MS);
    assert_int_equal(rmq_tk_code(a), 0);
    rmq_tk_cmd_free(a);
    assert_string_equal(published, "kf.event:hello");

    assert_int_equal(rmq_tk_raise_event(kit, ch, RMQ_CHANNEL_IDLE), 0);
    long long idles = 0;
    for (int i = 0; i < 500 && idles == 0; i++) {
        a = call(kit, ch, KF_CODE_IDLES, NULL);
        idles = ext_num(a, "idles");
        rmq_tk_cmd_free(a);
        if (!idles)
            usleep(1000);
    }
    assert_int_equal(idles, 1);
    assert_int_equal(rmq_tk_close_channel(kit, ch), 0);
    rmq_tk_free(kit);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]); /* e.g. "*reload*" */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_settings_are_validated_as_the_daemon_does),
        cmocka_unit_test(test_dispatch_rules_match_the_daemon),
        cmocka_unit_test(test_a_full_executor_answers_system_busy),
        cmocka_unit_test(test_executor_queue_info_shows_length_and_head_wait),
        cmocka_unit_test(test_virtual_time_fires_timers_exactly),
        cmocka_unit_test(test_a_deferred_request_is_answered_at_the_next_tick),
        cmocka_unit_test(test_outgoing_calls_are_answered_failed_or_timed_out_by_the_test),
        cmocka_unit_test(test_blocking_calls_follow_the_thread_rules),
        cmocka_unit_test(test_a_reload_carries_state_over),
        cmocka_unit_test(test_doubles_events_and_channel_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
