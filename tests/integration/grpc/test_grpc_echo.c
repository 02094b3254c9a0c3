/* test_grpc_echo.c — the grpc_echo SDK example plugin in a real rmqhostd on a
 * `protocol = "grpc"` server, driven by @grpc/grpc-js (grpc_echo_client.js):
 * unary, server-streaming and bidi calls, a status with a percent-encoded
 * message, UNIMPLEMENTED for an unknown method, invoke_local to the echo
 * plugin on a remoting server, 50 concurrent calls; over plaintext and over
 * TLS (a certificate made here with the openssl CLI, ALPN h2). A remoting
 * client on the gRPC port is refused without harming the server. Held calls
 * (ABI 1.9 grpc_hold, invoke_local_async): answered later from another
 * thread, cancelled while the answer is on its way, ended by the client's
 * RST_STREAM or its disconnection or, for a client that does not cancel at
 * its deadline, by the server's DEADLINE_EXCEEDED (the plugin's on_done
 * counts them all), and
 * answered by quiesce at a hot reload. ABI 1.13 grpc_send_batch (Burst):
 * many messages and a status in one call arrive in order and whole when
 * they are far larger than the client's HTTP/2 flow-control window. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmq_test_node.h"
#include "rmq_test_support.h"

typedef struct fixture {
    rmq_test_daemon d;
    rmq_node_proc node;
    char cert_dir[64];
    char cert[128], key[128];
} fixture;

/* A self-signed certificate in a directory of its own (the client trusts it
 * as its CA); grpc-js checks the address it dialled against subjectAltName. */
static int make_cert(fixture *f)
{
    snprintf(f->cert_dir, sizeof f->cert_dir, "/tmp/rmqgrpccert.XXXXXX");
    return rmq_test_self_signed_cert(f->cert_dir, "rmqhost-grpc-test", f->cert, sizeof f->cert,
                                     f->key, sizeof f->key);
}

static int start(void **state, bool tls)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    char grpc_server[512] = "g@protocol = \"grpc\";";
    if (tls) {
        if (make_cert(f) != 0)
            return -1;
        snprintf(grpc_server, sizeof grpc_server,
                 "g@protocol = \"grpc\"; tls = { mode = \"enforcing\"; cert_file = \"%s\"; "
                 "key_file = \"%s\"; };",
                 f->cert, f->key);
    }
    const char *servers[] = {"remoting", grpc_server, NULL};
    if (rmq_td_init(&f->d, servers, NULL) != 0 ||
        rmq_td_add_plugin(&f->d, "grpc_echo", "grpc_echo", "g",
                          "remoting_server = \"remoting\";") != 0 ||
        rmq_td_add_plugin(&f->d, "echo", "echo", "remoting", NULL) != 0 ||
        rmq_td_start(&f->d, NULL) != 0)
        return -1;
    return 0;
}

static int setup_plain(void **state)
{
    return start(state, false);
}

static int setup_tls(void **state)
{
    return start(state, true);
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    rmq_node_reap(&f->node, 0);
    int st = rmq_td_stop_reporting(&f->d);
    rmq_td_cleanup(&f->d);
    rmq_test_remove_tree(f->cert_dir);
    free(f);
    return st == 0 ? 0 : -1;
}

static void run_client(fixture *f, bool tls)
{
    char target[64];
    int port = rmq_td_port(&f->d, "g");
    assert_true(port > 0);
    snprintf(target, sizeof target, "127.0.0.1:%d", port);
    const char *argv_plain[] = {GE_SCRIPT, target, NULL};
    const char *argv_tls[] = {GE_SCRIPT, target, "tls", f->cert, NULL};
    if (access(GE_NODE_MODULES "/@grpc/grpc-js/package.json", R_OK) != 0)
        fail_msg("@grpc/grpc-js is not installed in " GE_NODE_MODULES
                 " (the fixture test interop_install_rocketmq_client_nodejs installs it)");
    assert_int_equal(
        rmq_node_start(&f->node, GE_NODE, GE_NODE_MODULES, tls ? argv_tls : argv_plain), 0);
    char result[4096] = "";
    bool got = rmq_node_line(&f->node, "RESULT ", result, sizeof result, 120000);
    int status = rmq_node_reap(&f->node, 30000);
    assert_true(got);
    if (strcmp(result, "RESULT ok") != 0)
        fail_msg("grpc_echo_client.js: %s", result);
    assert_int_equal(status, 0);
}

static void echo_plaintext(void **state)
{
    fixture *f = *state;
    run_client(f, false);
    /* a remoting frame on the gRPC port is not HTTP/2: that connection is
     * closed, the server goes on */
    int fd = rmq_tc_connect(rmq_td_port(&f->d, "g"));
    assert_true(fd >= 0);
    rmq_cmd *req = rmq_tc_request(105, 1, NULL);
    assert_non_null(req);
    assert_int_equal(rmq_tc_send(fd, req), 0);
    rmq_cmd_free(req);
    assert_true(rmq_tc_wait_closed(fd, 5000));
    close(fd);
    assert_true(rmq_td_log_contains(&f->d, "not an HTTP/2 (gRPC) client"));
    run_client(f, false);
}

/* rmqhostctl reload grpc_echo while a Chat stream is open: the stream's
 * next message and new calls are served by the new generation. */
static void stream_across_hot_reload(void **state)
{
    fixture *f = *state;
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", rmq_td_port(&f->d, "g"));
    const char *argv[] = {GE_SCRIPT, target, "reload", NULL};
    assert_int_equal(rmq_node_start(&f->node, GE_NODE, GE_NODE_MODULES, argv), 0);
    char line[4096] = "";
    assert_true(rmq_node_line(&f->node, "OPEN", line, sizeof line, 60000));
    int code = -1;
    const char *out = rmq_td_ctl_output(&f->d, &code, "reload", "grpc_echo", NULL);
    if (code != 0 || !out || !strstr(out, "grpc_echo reloaded: generation 1 -> 2"))
        fail_msg("reload grpc_echo: %s", out ? out : "(no output)");
    rmq_node_send(&f->node, "go");
    bool got = rmq_node_line(&f->node, "RESULT ", line, sizeof line, 60000);
    int status = rmq_node_reap(&f->node, 30000);
    assert_true(got);
    if (strcmp(line, "RESULT ok") != 0)
        fail_msg("grpc_echo_client.js reload: %s", line);
    assert_int_equal(status, 0);
}

/* "held N ended_by_client M" from grpc_echo's admin command. */
static bool held_counts(fixture *f, long *held, long *ended)
{
    int code = -1;
    const char *out = rmq_td_ctl_output(&f->d, &code, "grpc-echo-held", NULL);
    return code == 0 && out && sscanf(out, "held %ld ended_by_client %ld", held, ended) == 2;
}

/* Wait (bounded) until the counts are what the test expects; false with the
 * last counts seen otherwise. */
static bool held_counts_become(fixture *f, long want_held, long want_ended, long *held, long *ended)
{
    for (int i = 0; i < 300; i++) {
        if (held_counts(f, held, ended) && *held == want_held && *ended == want_ended)
            return true;
        usleep(100 * 1000);
    }
    return false;
}

static void held_calls(void **state)
{
    fixture *f = *state;
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", rmq_td_port(&f->d, "g"));
    const char *argv[] = {GE_SCRIPT, target, "hold", NULL};
    assert_int_equal(rmq_node_start(&f->node, GE_NODE, GE_NODE_MODULES, argv), 0);
    char line[4096] = "";
    if (!rmq_node_line(&f->node, "RESULT ", line, sizeof line, 120000) ||
        strcmp(line, "RESULT HUNG") != 0)
        fail_msg("grpc_echo_client.js hold: %s", line);
    long held = -1, ended = -1;
    /* 15 cancelled, 6 past their deadline, 15 still held */
    if (!held_counts_become(f, 15, 21, &held, &ended))
        fail_msg("after 15 cancels and 6 deadlines: held %ld ended_by_client %ld (want 15 21)",
                 held, ended);
    rmq_node_send(&f->node, "exit");
    rmq_node_reap(&f->node, 30000);
    if (!held_counts_become(f, 0, 36, &held, &ended))
        fail_msg("after the client left: held %ld ended_by_client %ld (want 0 36)", held, ended);
    /* the server goes on */
    run_client(f, false);
}

static void echo_tls(void **state)
{
    run_client(*state, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(echo_plaintext, setup_plain, teardown),
        cmocka_unit_test_setup_teardown(stream_across_hot_reload, setup_plain, teardown),
        cmocka_unit_test_setup_teardown(echo_tls, setup_tls, teardown),
        cmocka_unit_test_setup_teardown(held_calls, setup_plain, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
