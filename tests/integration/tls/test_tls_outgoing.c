/* test_tls_outgoing.c — the host's outgoing connections over TLS:
 * broker-client-mgr registers to a NameServer whose server enforces TLS
 * (plaintext would be closed), verifying its certificate against the test
 * CA, and presenting its own where the NameServer requires one; without
 * tls_client the registration is refused. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tls_test_client.h"

static bool cluster_has_broker(int port, const char *broker, const char *cert, const char *key)
{
    char why[256];
    tls_tc *t = tls_tc_connect(port, cert, key, why, sizeof(why));
    if (!t)
        return false;
    rmq_cmd *req = rmq_tc_request(106, 7, NULL); /* GET_BROKER_CLUSTER_INFO */
    rmq_cmd *resp = tls_tc_call(t, req, 5000);
    bool found = false;
    if (resp && resp->body) {
        char *s = strndup((const char *)resp->body, resp->body_len);
        found = s && strstr(s, broker) != NULL;
        free(s);
    }
    rmq_cmd_free(resp);
    rmq_cmd_free(req);
    tls_tc_close(t);
    return found;
}

typedef tls_fixture fixture;

static int setup(void **state)
{
    return tls_fixture_setup(state);
}

static int teardown(void **state)
{
    return tls_fixture_teardown(state);
}

static void run_pair(fixture *f, bool client_tls, bool mutual, bool expect_registered)
{
    const char *certs = f->certs;
    rmq_test_daemon *d = &f->d;
    const char *servers[] = {"namesrv", "broker", NULL};
    assert_int_equal(rmq_td_init(d, servers, NULL), 0);
    int ns = rmq_tc_free_port();
    assert_true(ns > 0);
    char host_conf[4096], mutual_server[512], mutual_client[512];
    snprintf(mutual_server, sizeof(mutual_server),
             "trust_cert_file = \"%s/ca.pem\"; need_client_auth = \"require\";", certs);
    snprintf(mutual_client, sizeof(mutual_client),
             "cert_file = \"%s/client.pem\"; key_file = \"%s/client.key\";", certs, certs);
    snprintf(host_conf, sizeof(host_conf),
             "state_dir = \"%s\";\nadmin_socket = \"%s\";\nlog_level = \"debug\";\n"
             "io_threads = 2;\nservers = {\n"
             "  namesrv = { listen = \"127.0.0.1:%d\"; tls = { mode = \"enforcing\"; "
             "cert_file = \"%s/server1.pem\"; key_file = \"%s/server1.key\"; %s }; };\n"
             "  broker = { listen = \"127.0.0.1:0\"; };\n};\n"
             "tls_client = { enable = %s; verify_server = true; trust_cert_file = "
             "\"%s/ca.pem\"; %s };\n",
             d->state_dir, d->admin_socket, ns, certs, certs, mutual ? mutual_server : "",
             client_tls ? "true" : "false", certs, mutual ? mutual_client : "");
    assert_int_equal(rmq_td_write_conf(d, "host.conf", host_conf), 0);
    char settings[256];
    snprintf(settings, sizeof(settings),
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"tls-broker-x\"; "
             "brokerClusterName = \"TlsCluster\";",
             ns);
    assert_int_equal(rmq_td_add_plugin(d, "namesrv", "namesrv", "namesrv", NULL), 0);
    assert_int_equal(
        rmq_td_add_plugin(d, "broker-client-mgr", "broker-client-mgr", "broker", settings), 0);
    assert_int_equal(rmq_td_start(d, NULL), 0);
    char cert[300], key[300];
    snprintf(cert, sizeof(cert), "%s/client.pem", certs);
    snprintf(key, sizeof(key), "%s/client.key", certs);
    bool found = false;
    uint64_t deadline = rmq_test_now_ms() + (expect_registered ? 15000 : 3000);
    while (!found && rmq_test_now_ms() < deadline) {
        found = cluster_has_broker(ns, "tls-broker-x", cert, key);
        if (!found)
            rmq_test_pause_ms(200);
    }
    assert_int_equal(found, expect_registered);
    if (!expect_registered)
        assert_true(rmq_td_log_contains(d, "plaintext request, but the server's tls mode is "
                                           "enforcing"));
    assert_int_equal(rmq_td_stop_reporting(d), 0);
}

static void test_broker_registers_over_tls(void **state)
{
    run_pair(*state, true, false, true);
}

static void test_broker_registers_with_a_client_certificate(void **state)
{
    run_pair(*state, true, true, true);
}

static void test_plaintext_registration_is_refused(void **state)
{
    run_pair(*state, false, false, false);
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN); /* a refused TLS client writes to a closed socket */
    const struct CMUnitTest all[] = {
        cmocka_unit_test_setup_teardown(test_broker_registers_over_tls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_broker_registers_with_a_client_certificate, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_plaintext_registration_is_refused, setup, teardown),
    };
    struct CMUnitTest sel[sizeof(all) / sizeof(all[0])];
    size_t n = 0;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (rmq_test_name_selected(argc > 1 ? argv[1] : NULL, all[i].name))
            sel[n++] = all[i];
    return _cmocka_run_group_tests("tls_outgoing", sel, n, NULL, NULL);
}
