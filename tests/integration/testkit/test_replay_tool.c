/* test_replay_tool.c — rmqhost-replay as a plugin author runs it: --help,
 * recorded NameServer frames against namesrv.so in-process and against a
 * real daemon (both match Java), a plugin that answers differently (exit 1
 * and the difference named), usage errors (exit 2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "rmq_test_support.h"

/* Steps whose answers do not depend on a oneway request's effect (a
 * oneway answer-less registration may still be queued when the next
 * request is answered). */
#define NS_STEPS                                                                                   \
    "103-register-broker.req.bin 100-put-kv-config.req.bin 101-get-kv-config.req.bin "             \
    "101-get-kv-config.not-found.req.bin 2:100-put-kv-config.rocketmq.req.bin "                    \
    "2:101-get-kv-config.rocketmq.req.bin 102-delete-kv-config.req.bin"

/* Run the tool with `args`; its exit status, output in out. */
static int run(char *out, size_t outlen, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "'%s' --vectors '%s' %s 2>&1", RMQ_TEST_REPLAY, RMQ_TEST_VECTORS_DIR,
             args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_help_prints_usage_and_exits_0(void **state)
{
    (void)state;
    char out[8192];
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "'%s' --help", RMQ_TEST_REPLAY);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = 0;
    int st = pclose(p);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_non_null(strstr(out, "usage: rmqhost-replay"));
    assert_non_null(strstr(out, "--plugin PATH.so"));
}

static void test_namesrv_in_the_kit_matches_java(void **state)
{
    (void)state;
    char out[16384], args[1024];
    snprintf(args, sizeof(args), "--plugin '%s/namesrv.so' %s", RMQ_TEST_PLUGIN_DIR, NS_STEPS);
    int rc = run(out, sizeof(out), args);
    if (rc != 0)
        fail_msg("exit %d:\n%s", rc, out);
    assert_non_null(strstr(out, "7 steps: 7 same, 0 differ"));
}

static void test_namesrv_in_a_daemon_matches_java(void **state)
{
    (void)state;
    rmq_test_daemon d;
    const char *servers[] = {"namesrv", NULL};
    assert_int_equal(rmq_td_init(&d, servers, NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&d, "namesrv", "namesrv", "namesrv", NULL), 0);
    assert_int_equal(rmq_td_start(&d, NULL), 0);
    char out[16384], args[1024];
    snprintf(args, sizeof(args), "--addr 127.0.0.1:%d %s", rmq_td_port(&d, "namesrv"), NS_STEPS);
    int rc = run(out, sizeof(out), args);
    assert_int_equal(rmq_td_stop_reporting(&d), 0);
    rmq_td_cleanup(&d);
    if (rc != 0)
        fail_msg("exit %d:\n%s", rc, out);
    assert_non_null(strstr(out, "7 steps: 7 same, 0 differ"));
}

static void test_differences_are_reported_with_exit_1(void **state)
{
    (void)state;
    char out[16384], args[1024];
    /* the NameServer does not serve a consumer heartbeat */
    snprintf(args, sizeof(args), "-q --plugin '%s/namesrv.so' 34-heart-beat.consumer.req.bin",
             RMQ_TEST_PLUGIN_DIR);
    assert_int_equal(run(out, sizeof(out), args), 1);
    assert_non_null(strstr(out, "DIFF  34-heart-beat.consumer.req.bin: code 3, want 0"));
}

static void test_usage_errors_exit_2(void **state)
{
    (void)state;
    char out[4096];
    assert_int_equal(run(out, sizeof(out), "105-get-routeinfo.req.bin"), 2); /* no target */
    assert_non_null(strstr(out, "give one target"));
    assert_int_equal(run(out, sizeof(out), "--addr 127.0.0.1:1 --bogus x"), 2);
    assert_int_equal(run(out, sizeof(out), "--plugin /nonexistent.so 105-get-routeinfo.req.bin"),
                     2);
    assert_non_null(strstr(out, "cannot find /nonexistent.so"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_prints_usage_and_exits_0),
        cmocka_unit_test(test_namesrv_in_the_kit_matches_java),
        cmocka_unit_test(test_namesrv_in_a_daemon_matches_java),
        cmocka_unit_test(test_differences_are_reported_with_exit_1),
        cmocka_unit_test(test_usage_errors_exit_2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
