/* echo_test.c — unit tests of the echo plugin with librmqhost-testkit: no
 * daemon, no conf.d, no port. The kit loads echo.so in-process with the
 * daemon's own host code, so requests are dispatched exactly as rmqhostd
 * dispatches them; timers run on a virtual clock the test moves.
 *
 *   cc -o echo_test echo_test.c $(pkg-config --cflags --libs rmqhost-testkit)
 *   ./echo_test ./echo.so
 *
 * Exit status 0 when every check passes. Plain C on purpose: use cmocka or
 * any framework you like, the kit does not care. */
#include <rmqhost/testkit.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static const char *so_path = "./echo.so";

/* A kit with echo loaded under `settings`; NULL (and the reason printed)
 * when it does not start. */
static rmq_testkit *start_echo(const char *const *settings, char *err, size_t errlen)
{
    rmq_testkit *kit = rmq_tk_new();
    if (!kit || rmq_tk_add_plugin(kit, "echo", so_path, settings) != 0 ||
        rmq_tk_start(kit, err, errlen) != 0) {
        rmq_tk_free(kit);
        return NULL;
    }
    return kit;
}

static void test_inline_echo(void)
{
    char err[512];
    rmq_testkit *kit = start_echo((const char *[]){"greeting", "hi", NULL}, err, sizeof(err));
    CHECK(kit != NULL);
    if (!kit)
        return;
    int ch = rmq_tk_open_channel(kit);
    rmq_cmd *req = rmq_tk_request(9001, RMQ_TK_JSON, false, (const char *[]){"msg", "ping", NULL});
    rmq_tk_set_body(req, "abc", 3);
    rmq_cmd *a = rmq_tk_call(kit, ch, req, 5000);
    CHECK(a && rmq_tk_code(a) == RMQ_RESPONSE_SUCCESS);
    CHECK(a && rmq_tk_ext(a, "echo") && strcmp(rmq_tk_ext(a, "echo"), "ping") == 0);
    CHECK(a && rmq_tk_ext(a, "greeting") && strcmp(rmq_tk_ext(a, "greeting"), "hi") == 0);
    size_t len = 0;
    const void *body = a ? rmq_tk_body(a, &len) : NULL;
    CHECK(body && len == 3 && memcmp(body, "abc", 3) == 0);
    rmq_tk_cmd_free(a);

    /* the same in the binary (ROCKETMQ) header serialization */
    a = rmq_tk_call(kit, ch, rmq_tk_request(9001, RMQ_TK_ROCKETMQ, false, NULL), 5000);
    CHECK(a && rmq_tk_code(a) == RMQ_RESPONSE_SUCCESS);
    rmq_tk_cmd_free(a);

    /* a oneway request is processed but never answered */
    CHECK(rmq_tk_call(kit, ch, rmq_tk_request(9001, RMQ_TK_JSON, true, NULL), 5000) == NULL);

    /* a code nobody registered gets the daemon's answer */
    a = rmq_tk_call(kit, ch, rmq_tk_request(4242, RMQ_TK_JSON, false, NULL), 5000);
    CHECK(a && rmq_tk_code(a) == RMQ_RESPONSE_REQUEST_CODE_NOT_SUPPORTED);
    rmq_tk_cmd_free(a);
    rmq_tk_free(kit);
}

static void test_delayed_echo_runs_on_the_executor(void)
{
    char err[512];
    rmq_testkit *kit = start_echo((const char *[]){"delay_ms", "1", NULL}, err, sizeof(err));
    CHECK(kit != NULL);
    if (!kit)
        return;
    int ch = rmq_tk_open_channel(kit);
    rmq_cmd *a = rmq_tk_call(
        kit, ch, rmq_tk_request(9002, RMQ_TK_JSON, false, (const char *[]){"msg", "later", NULL}),
        5000);
    CHECK(a && rmq_tk_code(a) == RMQ_RESPONSE_SUCCESS);
    CHECK(a && rmq_tk_ext(a, "echo") && strcmp(rmq_tk_ext(a, "echo"), "later") == 0);
    rmq_tk_cmd_free(a);
    rmq_tk_free(kit);
}

static void test_bad_settings_are_refused_as_the_daemon_refuses_them(void)
{
    char err[512] = "";
    rmq_testkit *kit = start_echo((const char *[]){"delay_ms", "99999", NULL}, err, sizeof(err));
    CHECK(kit == NULL);
    CHECK(strstr(err, "setting 'delay_ms': 99999 is outside [0, 10000]") != NULL);
    kit = start_echo((const char *[]){"colour", "blue", NULL}, err, sizeof(err));
    CHECK(kit == NULL);
    CHECK(strstr(err, "has no setting 'colour'") != NULL);
}

static void test_stats_timer_on_virtual_time_and_counters_survive_a_reload(void)
{
    char err[512];
    rmq_testkit *kit =
        start_echo((const char *[]){"stats_interval_ms", "1000", NULL}, err, sizeof(err));
    CHECK(kit != NULL);
    if (!kit)
        return;
    int ch = rmq_tk_open_channel(kit);
    for (int i = 0; i < 3; i++)
        rmq_tk_cmd_free(rmq_tk_call(kit, ch, rmq_tk_request(9001, RMQ_TK_JSON, false, NULL), 5000));
    /* nothing ticks until the test moves the clock, then exactly once */
    CHECK(!rmq_tk_log_contains(kit, "echoed 3"));
    rmq_tk_advance(kit, 999);
    CHECK(!rmq_tk_log_contains(kit, "echoed 3"));
    rmq_tk_advance(kit, 1);
    CHECK(rmq_tk_log_contains(kit, "echoed 3 (delayed 0), open 1"));

    /* hot reload: the new generation imports the old one's counters */
    char msg[512];
    CHECK(rmq_tk_reload(kit, "echo", msg, sizeof(msg)) == 0);
    rmq_tk_cmd_free(rmq_tk_call(kit, ch, rmq_tk_request(9001, RMQ_TK_JSON, false, NULL), 5000));
    rmq_tk_advance(kit, 1000);
    CHECK(rmq_tk_log_contains(kit, "echoed 4 (delayed 0)"));
    rmq_tk_free(kit);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        so_path = argv[1];
    test_inline_echo();
    test_delayed_echo_runs_on_the_executor();
    test_bad_settings_are_refused_as_the_daemon_refuses_them();
    test_stats_timer_on_virtual_time_and_counters_survive_a_reload();
    if (failures) {
        fprintf(stderr, "echo_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("echo_test: all checks passed\n");
    return 0;
}
