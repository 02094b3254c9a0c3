/* test_namesrv_all_in_one_stop.c — the default all-in-one daemon (namesrv,
 * broker-client-mgr, filter and store in one process, the broker registered
 * with its own NameServer) stops cleanly without waiting on itself: the
 * broker's UNREGISTER_BROKER to the NameServer of the stopping process is
 * not sent (the host fails it at once), while the broker had registered. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rmq_test_support.h"

#define GET_BROKER_CLUSTER_INFO 106

static bool cluster_lists(int ns_port, const char *broker_name)
{
    int fd = rmq_tc_connect(ns_port);
    if (fd < 0)
        return false;
    rmq_cmd *req = rmq_tc_request(GET_BROKER_CLUSTER_INFO, 1, NULL);
    rmq_cmd *resp = req ? rmq_tc_call(fd, req, 5000) : NULL;
    bool found = resp && resp->code == 0 && resp->body &&
                 memmem(resp->body, resp->body_len, broker_name, strlen(broker_name)) != NULL;
    rmq_cmd_free(req);
    if (resp)
        rmq_cmd_free(resp);
    close(fd);
    return found;
}

/* listen_host: the NameServer's listener (the broker calls 127.0.0.1) */
static void all_in_one_stops(const char *listen_host)
{
    rmq_test_daemon d;
    int ns_port = rmq_tc_free_port();
    assert_true(ns_port > 0);
    const char *servers[] = {"namesrv", "broker", NULL};
    assert_int_equal(rmq_td_init(&d, servers, NULL), 0);
    /* the broker's settings name the NameServer: its port is fixed first */
    char host_conf[2048];
    snprintf(host_conf, sizeof host_conf,
             "state_dir = \"%s\";\nadmin_socket = \"%s\";\nlog_level = \"info\";\n"
             "io_threads = 2;\nservers = {\n  namesrv = { listen = \"%s:%d\"; };\n"
             "  broker = { listen = \"127.0.0.1:0\"; };\n};\n",
             d.state_dir, d.admin_socket, listen_host, ns_port);
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "brokerClusterName = \"DefaultCluster\"; brokerName = \"broker-aio\"; "
             "brokerId = 0; namesrvAddr = \"127.0.0.1:%d\";",
             ns_port);
    /* the default conf.d's plugins, loaded in its (alphabetical) order */
    assert_int_equal(rmq_td_write_conf(&d, "host.conf", host_conf), 0);
    assert_int_equal(rmq_td_add_plugin(&d, "broker-client-mgr", "broker-client-mgr", "broker", bcm),
                     0);
    assert_int_equal(rmq_td_add_plugin(&d, "filter", "filter", "broker", NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&d, "namesrv", "namesrv", "namesrv", NULL), 0);
    assert_int_equal(
        rmq_td_add_plugin(&d, "store", "store", "broker", "mappedFileSizeCommitLog = 1048576;"), 0);
    assert_int_equal(rmq_td_start(&d, NULL), 0);

    uint64_t deadline = rmq_test_now_ms() + 20000;
    bool registered = false;
    while (!(registered = cluster_lists(ns_port, "broker-aio")) && rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(50);
    assert_true(registered);

    assert_int_equal(rmq_td_stop_reporting(&d), 0);
    char sent_line[160], shutdown_line[160];
    snprintf(sent_line, sizeof sent_line, "request code 104 to 127.0.0.1:%d not sent", ns_port);
    snprintf(shutdown_line, sizeof shutdown_line,
             "not unregistered from name server 127.0.0.1:%d: shutting down", ns_port);
    assert_true(rmq_td_log_contains(&d, sent_line));
    assert_true(rmq_td_log_contains(&d, shutdown_line));
    /* an expected outcome of stopping, not a warning */
    assert_false(rmq_td_log_contains(&d, "unregister broker from name server"));
    assert_false(rmq_td_log_contains(&d, "timed out"));
    assert_false(rmq_td_log_contains(&d, "requests still in flight"));
    rmq_td_cleanup(&d);
}

static void test_all_in_one_stops_without_waiting_on_itself(void **state)
{
    (void)state;
    all_in_one_stops("127.0.0.1");
}

/* a wildcard listener serves 127.0.0.1 too */
static void test_all_in_one_on_the_wildcard_address(void **state)
{
    (void)state;
    all_in_one_stops("0.0.0.0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_in_one_stops_without_waiting_on_itself),
        cmocka_unit_test(test_all_in_one_on_the_wildcard_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
