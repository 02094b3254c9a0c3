/* test_proxy_nodejs.c — RocketMQ 5.x's Node.js client (rocketmq-client-nodejs,
 * gRPC) starts (QueryRoute, Telemetry settings, Heartbeat), produces N
 * messages through the proxy plugin of an all-in-one daemon and shuts down
 * (NotifyClientTermination); ali-ons (4.x, remoting) consumes them from the
 * same daemon: each exactly once with body, tag, keys, user properties and
 * the 5.x message id as UNIQ_KEY (proxy_produce_consume.js). A missing topic
 * is answered TOPIC_NOT_FOUND (40402); a timer message (raw SendMessage with
 * delivery_timestamp 2 s ahead) is consumed once, after its time, with
 * TIMER_DELIVER_MS / TIMER_OUT_MS. Over plaintext and over TLS (a
 * certificate made here with the openssl CLI; the client trusts it through
 * GRPC_DEFAULT_SSL_ROOTS_FILE_PATH). A SimpleConsumer's receive waits (long
 * polling) for a message produced 2 s after it started (proxy_long_poll.js).
 * Transactions: commit, rollback, check-back through Telemetry, and the
 * server's thread-stack / verify-message commands (proxy_transaction.js).
 * One daemon and one node process per case, both
 * always stopped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bcm_test_daemon.h"
#include "rmq_test_node.h"

#define TOPIC "GrpcInteropTopic"
#define LONG_POLL_TOPIC "GrpcLongPollTopic"
#define TXN_TOPIC "GrpcTxnTopic"
#define COUNT "30"

typedef struct fixture {
    rmq_test_daemon d;
    int ns_port;
    rmq_node_proc node;
    char cert_dir[64];
    char cert[128], key[128];
} fixture;

static int make_cert(fixture *f)
{
    snprintf(f->cert_dir, sizeof f->cert_dir, "/tmp/rmqproxycert.XXXXXX");
    return rmq_test_self_signed_cert(f->cert_dir, "rmqhost-proxy-test", f->cert, sizeof f->cert,
                                     f->key, sizeof f->key);
}

static int start(void **state, bool tls)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    char tls_group[512] = "";
    if (tls) {
        if (make_cert(f) != 0)
            return -1;
        snprintf(tls_group, sizeof tls_group,
                 "tls = { mode = \"enforcing\"; cert_file = \"%s\"; key_file = \"%s\"; };", f->cert,
                 f->key);
    }
    f->ns_port = rmq_tc_free_port();
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-g\"; brokerIP1 = "
             "\"127.0.0.1\"; topics = \"" TOPIC ":4;" LONG_POLL_TOPIC ":4;" TXN_TOPIC ":4\";",
             f->ns_port);
    if (f->ns_port <= 0 || rmq_td_init(&f->d, NULL, NULL) != 0)
        return -1;
    /* the NameServer's port is fixed: the broker's settings name it */
    char host_conf[2048];
    snprintf(host_conf, sizeof host_conf,
             "state_dir = \"%s\";\nadmin_socket = \"%s\";\nlog_level = \"info\";\n"
             "io_threads = 2;\nservers = {\n  namesrv = { listen = \"127.0.0.1:%d\"; };\n"
             "  broker = { listen = \"127.0.0.1:0\"; };\n"
             "  proxy = { listen = \"127.0.0.1:0\"; protocol = \"grpc\"; %s };\n};\n",
             f->d.state_dir, f->d.admin_socket, f->ns_port, tls_group);
    if (rmq_td_write_conf(&f->d, "host.conf", host_conf) != 0 ||
        rmq_td_add_plugin(&f->d, "namesrv", "namesrv", "namesrv", NULL) != 0 ||
        rmq_td_add_plugin(&f->d, "broker-client-mgr", "broker-client-mgr", "broker", bcm) != 0 ||
        rmq_td_add_plugin(&f->d, "store", "store", "broker",
                          "mappedFileSizeCommitLog = 1048576; transactionCheckInterval = 1000; "
                          "transactionTimeOut = 1000;") != 0 ||
        /* topics are NORMAL to 5.x clients: transaction messages need the
         * client-side type check off (Java's enableTopicMessageTypeCheck) */
        rmq_td_add_plugin(&f->d, "proxy", "proxy", "proxy",
                          "enableTopicMessageTypeCheck = false;") != 0 ||
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

static void produce_over_grpc_consume_over_remoting(fixture *f, bool tls)
{
    if (access(PX_GRPC_CLIENT, R_OK) != 0)
        fail_msg("rocketmq-client-nodejs is not installed (" PX_GRPC_CLIENT "): the fixture "
                 "test interop_install_rocketmq_client_nodejs installs it from npm");
    if (access(PX_ALI_ONS, R_OK) != 0)
        fail_msg("ali-ons is not installed (" PX_ALI_ONS "): the fixture test "
                 "interop_install_ali_ons installs it from npm");
    char endpoint[64], port[16];
    snprintf(endpoint, sizeof endpoint, "127.0.0.1:%d", rmq_td_port(&f->d, "proxy"));
    snprintf(port, sizeof port, "%d", f->ns_port);
    /* the client writes its log under $HOME; it trusts the roots grpc-js
     * reads from GRPC_DEFAULT_SSL_ROOTS_FILE_PATH (createSsl() without
     * arguments ignores NODE_EXTRA_CA_CERTS) */
    setenv("HOME", f->d.dir, 1);
    if (tls)
        setenv("GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", f->cert, 1);
    else
        unsetenv("GRPC_DEFAULT_SSL_ROOTS_FILE_PATH");
    const char *argv[] = {PX_SCRIPT, endpoint, port, TOPIC, COUNT, tls ? "tls" : "plain", NULL};
    assert_int_equal(rmq_node_start(&f->node, PX_NODE, PX_NODE_PATH, argv), 0);
    char result[2048] = "";
    bool got = rmq_node_line(&f->node, "RESULT ", result, sizeof result, 150000);
    int status = rmq_node_reap(&f->node, 30000);
    assert_true(got);
    if (strcmp(result, "RESULT ok") != 0)
        fail_msg("proxy_produce_consume.js: %s", result);
    assert_int_equal(status, 0);
}

/* SimpleConsumer on the store's POP: receive, ack, change invisible
 * duration and see the message again (proxy_simple_consumer.js). */
static void simple_consumer_over_pop(void **state)
{
    fixture *f = *state;
    if (access(PX_GRPC_CLIENT, R_OK) != 0)
        fail_msg("rocketmq-client-nodejs is not installed (" PX_GRPC_CLIENT "): the fixture "
                 "test interop_install_rocketmq_client_nodejs installs it from npm");
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "127.0.0.1:%d", rmq_td_port(&f->d, "proxy"));
    setenv("HOME", f->d.dir, 1);
    unsetenv("GRPC_DEFAULT_SSL_ROOTS_FILE_PATH");
    const char *argv[] = {PX_SIMPLE_SCRIPT, endpoint, TOPIC, "8", NULL};
    assert_int_equal(rmq_node_start(&f->node, PX_NODE, PX_NODE_PATH, argv), 0);
    char result[2048] = "";
    bool got = rmq_node_line(&f->node, "RESULT ", result, sizeof result, 150000);
    int status = rmq_node_reap(&f->node, 30000);
    assert_true(got);
    if (strcmp(result, "RESULT ok") != 0)
        fail_msg("proxy_simple_consumer.js: %s", result);
    assert_int_equal(status, 0);
}

/* Start a script of this directory with the proxy's endpoint and a topic. */
static void start_script(fixture *f, const char *script, const char *topic)
{
    if (access(PX_GRPC_CLIENT, R_OK) != 0)
        fail_msg("rocketmq-client-nodejs is not installed (" PX_GRPC_CLIENT "): the fixture "
                 "test interop_install_rocketmq_client_nodejs installs it from npm");
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "127.0.0.1:%d", rmq_td_port(&f->d, "proxy"));
    setenv("HOME", f->d.dir, 1);
    unsetenv("GRPC_DEFAULT_SSL_ROOTS_FILE_PATH");
    const char *argv[] = {script, endpoint, topic, NULL};
    assert_int_equal(rmq_node_start(&f->node, PX_NODE, PX_NODE_PATH, argv), 0);
}

/* ReceiveMessage long polling (proxy_long_poll.js), and a poll held while
 * the proxy plugin is reloaded. */
static void receive_long_poll(void **state)
{
    fixture *f = *state;
    start_script(f, PX_LONG_POLL_SCRIPT, LONG_POLL_TOPIC);
    char line[2048] = "";
    if (!rmq_node_line(&f->node, "POLLING", line, sizeof line, 90000))
        fail_msg("proxy_long_poll.js did not reach its reload step");
    int code = -1;
    const char *out = rmq_td_ctl_output(&f->d, &code, "reload", "proxy", NULL);
    if (code != 0 || !out || !strstr(out, "proxy reloaded"))
        fail_msg("reload proxy: %s", out ? out : "(no output)");
    rmq_node_send(&f->node, "go");
    bool got = rmq_node_line(&f->node, "RESULT ", line, sizeof line, 60000);
    int status = rmq_node_reap(&f->node, 30000);
    assert_true(got);
    if (strcmp(line, "RESULT ok") != 0)
        fail_msg("proxy_long_poll.js: %s", line);
    assert_int_equal(status, 0);
}

/* Transactions (proxy_transaction.js): commit, rollback and check-back
 * through the producer's Telemetry stream; meanwhile the server pushes a
 * thread-stack and a verify-message command to that producer, whose
 * answers (the Node.js client's "mock stack", NOT_IMPLEMENTED for verify)
 * come back on the stream. */
static void transactions(void **state)
{
    fixture *f = *state;
    start_script(f, PX_TXN_SCRIPT, TXN_TOPIC);
    char line[2048] = "";
    if (!rmq_node_line(&f->node, "CLIENT ", line, sizeof line, 60000))
        fail_msg("proxy_transaction.js never named its client");
    const char *client = line + strlen("CLIENT ");
    int code = -1;
    const char *out =
        rmq_td_ctl_output(&f->d, &code, "proxy-client-command", "stack", client, NULL);
    if (code != 0 || !out || strcmp(out, "mock stack\n") != 0)
        fail_msg("stack of %s: %d %s", client, code, out ? out : "(no output)");
    out = rmq_td_ctl_output(&f->d, &code, "proxy-client-command", "verify", client, "0", NULL);
    if (code != 0 || !out || strncmp(out, "NOT_IMPLEMENTED", 15) != 0)
        fail_msg("verify by %s: %d %s", client, code, out ? out : "(no output)");
    out = rmq_td_ctl_output(&f->d, &code, "proxy-client-command", "stack", "no-such-client", NULL);
    if (code != 1 || !out || !strstr(out, "no telemetry stream of that client"))
        fail_msg("stack of an unknown client: %d %s", code, out ? out : "(no output)");
    rmq_node_send(&f->node, "go");
    bool got = rmq_node_line(&f->node, "RESULT ", line, sizeof line, 150000);
    int status = rmq_node_reap(&f->node, 30000);
    assert_true(got);
    if (strcmp(line, "RESULT ok") != 0)
        fail_msg("proxy_transaction.js: %s", line);
    assert_int_equal(status, 0);
    assert_true(rmq_td_log_contains(&f->d, "transaction check of"));
}

static void plaintext(void **state)
{
    produce_over_grpc_consume_over_remoting(*state, false);
}

static void over_tls(void **state)
{
    produce_over_grpc_consume_over_remoting(*state, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(plaintext, setup_plain, teardown),
        cmocka_unit_test_setup_teardown(over_tls, setup_tls, teardown),
        cmocka_unit_test_setup_teardown(simple_consumer_over_pop, setup_plain, teardown),
        cmocka_unit_test_setup_teardown(receive_long_poll, setup_plain, teardown),
        cmocka_unit_test_setup_teardown(transactions, setup_plain, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
