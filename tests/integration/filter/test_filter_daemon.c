/* test_filter_daemon.c — the filter plugin in a real daemon with
 * broker-client-mgr (server "broker") and namesrv (server "namesrv"):
 * a filter server registered over the wire reaches the NameServer's routes
 * end to end and leaves them on close; the admin command over the admin
 * socket; a hot reload through rmqhostctl. Every test starts its own daemon
 * and stops it in teardown. Handlers, expiry, the broker registration's
 * filterServerList and consumerFilter.json run in the test kit on a virtual
 * clock (tests/unit/filter/test_filter_handlers_kit.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bcm_test_daemon.h"
#include "rmq_test_support.h"

#define WAIT_MS 30000 /* broker-client-mgr registers at most every 10 s */

typedef struct fixture {
    rmq_test_daemon d;
    int ns_port, broker_port;
    int opaque;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    return f ? 0 : -1;
}

/* The daemon must stop cleanly (under ASan this includes no leaks). */
static int teardown(void **state)
{
    fixture *f = *state;
    int status = f->d.pid > 0 ? rmq_td_stop_reporting(&f->d) : 0;
    rmq_td_cleanup(&f->d);
    free(f);
    return status == 0 ? 0 : -1;
}

/* namesrv on a port fixed before start (the broker needs it), broker on an
 * ephemeral one, filter bound to the broker server. */
static void start_daemon(fixture *f, const char *filter_settings)
{
    int ns = rmq_tc_free_port();
    assert_true(ns > 0);
    const char *servers[] = {"namesrv", "broker", NULL};
    assert_int_equal(rmq_td_init(&f->d, servers, NULL), 0);
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "brokerName = \"broker-flt\"; brokerClusterName = \"FltCluster\"; brokerId = 0;\n"
             "namesrvAddr = \"127.0.0.1:%d\"; registerNameServerPeriod = 10000;\n"
             "topics = \"FltTopic:4\";\n",
             ns);
    assert_int_equal(bcm_configure_namesrv_and_broker(&f->d, ns, "debug", bcm), 0);
    assert_int_equal(rmq_td_add_plugin(&f->d, "filter", "filter", "broker", filter_settings), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    f->ns_port = rmq_td_port(&f->d, "namesrv");
    f->broker_port = rmq_td_port(&f->d, "broker");
    assert_int_equal(f->ns_port, ns);
    assert_true(f->broker_port > 0);
}

/* Send and wait for the response with our opaque; server-initiated requests
 * (NOTIFY_CONSUMER_IDS_CHANGED precedes a heartbeat's answer) are skipped. */
static rmq_cmd *call_fd(fixture *f, int fd, int code, const char *const *kv, const char *body)
{
    rmq_cmd *req = rmq_tc_request(code, ++f->opaque, kv);
    if (body)
        rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    rmq_cmd *resp = rmq_tc_call_response(fd, req, 5000);
    rmq_cmd_free(req);
    return resp;
}

static rmq_cmd *call(fixture *f, int port, int code, const char *const *kv, const char *body)
{
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        return NULL;
    rmq_cmd *r = call_fd(f, fd, code, kv, body);
    close(fd);
    return r;
}

/* The route's "filterServerTable":{...} object text, "" when absent. */
static void route_filter_table(fixture *f, const char *topic, char *out, size_t len)
{
    const char *kv[] = {"topic", topic, NULL};
    rmq_cmd *r = call(f, f->ns_port, 105, kv, NULL);
    out[0] = '\0';
    if (r && r->code == 0 && r->body) {
        char *body = strndup((const char *)r->body, r->body_len);
        char *p = body ? strstr(body, "\"filterServerTable\":{") : NULL;
        if (p) {
            char *end = strchr(p, '}');
            snprintf(out, len, "%.*s", end ? (int)(end - p + 1) : 0, p);
        }
        free(body);
    }
    rmq_cmd_free(r);
}

static bool route_lists_filter_server(fixture *f, const char *topic, const char *addr, bool want)
{
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    char table[1024];
    while (rmq_test_now_ms() < deadline) {
        route_filter_table(f, topic, table, sizeof table);
        bool has = strstr(table, addr) != NULL;
        if (table[0] && has == want)
            return true;
        rmq_test_pause_ms(100);
    }
    fprintf(stderr, "route of %s: %s (wanted %s %s)\n", topic, table, want ? "with" : "without",
            addr);
    return false;
}

static int register_filter_server(fixture *f, const char *addr, char *broker_name, size_t len,
                                  char *broker_id, size_t idlen)
{
    int fd = rmq_tc_connect(f->broker_port);
    assert_true(fd >= 0);
    const char *kv[] = {"filterServerAddr", addr, NULL};
    rmq_cmd *r = call_fd(f, fd, 301, kv, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    const char *bn = rmq_cmd_ext_get(r, "brokerName"), *bi = rmq_cmd_ext_get(r, "brokerId");
    snprintf(broker_name, len, "%s", bn ? bn : "");
    snprintf(broker_id, idlen, "%s", bi ? bi : "");
    rmq_cmd_free(r);
    return fd;
}

static void test_filter_server_reaches_route_and_leaves_when_its_channel_closes(void **state)
{
    fixture *f = *state;
    start_daemon(f, NULL);
    char name[128], id[32];
    int fd = register_filter_server(f, "127.0.0.1:45001", name, sizeof name, id, sizeof id);
    assert_string_equal(name, "broker-flt");
    assert_string_equal(id, "0");
    assert_true(route_lists_filter_server(f, "FltTopic", "\"127.0.0.1:45001\"", true));
    close(fd);
    assert_true(route_lists_filter_server(f, "FltTopic", "\"127.0.0.1:45001\"", false));
    assert_true(rmq_td_log_contains(&f->d, "Filter Server"));
}

static const char *check_body(char *buf, size_t len, const char *type, const char *expr)
{
    snprintf(buf, len,
             "{\"clientId\":\"127.0.0.1@1\",\"group\":\"CG\",\"subscriptionData\":{"
             "\"classFilterMode\":false,"
             "\"codeSet\":[],\"expressionType\":\"%s\",\"subString\":\"%s\",\"subVersion\":"
             "1700000000000,"
             "\"tagsSet\":[],\"topic\":\"FltTopic\"}}",
             type, expr);
    return buf;
}

static int ctl(fixture *f, char *out, size_t len, const char *const *args)
{
    out[0] = '\0';
    return rmq_td_ctl(&f->d, out, len, args);
}

static void test_expr_admin_command_evaluates_in_the_running_daemon(void **state)
{
    fixture *f = *state;
    start_daemon(f, NULL);
    char out[4096];
    assert_int_equal(ctl(f, out, sizeof out, (const char *const[]){"expr", "a > 5", "a=10", NULL}),
                     0);
    assert_true(strncmp(out, "match", 5) == 0);
    assert_int_equal(ctl(f, out, sizeof out, (const char *const[]){"expr", "a > 5", "a=5.5", NULL}),
                     0);
    assert_true(strncmp(out, "no match: evaluation error", 26) == 0);
    assert_int_equal(ctl(f, out, sizeof out, (const char *const[]){"expr", "a = 'x'", "a=", NULL}),
                     0);
    assert_true(strncmp(out, "no match: false", 15) == 0);
    assert_int_equal(ctl(f, out, sizeof out, (const char *const[]){"expr", "--", "--x", NULL}), 1);
    assert_true(strncmp(out, "error: ", 7) == 0);
    assert_int_equal(ctl(f, out, sizeof out,
                         (const char *const[]){"expr", "--type", "TAG", "A || B", "TAGS=B", NULL}),
                     0);
    assert_true(strncmp(out, "match", 5) == 0);
    assert_int_equal(
        ctl(f, out, sizeof out, (const char *const[]){"--json", "expr", "a > 5", "a=x", NULL}), 0);
    assert_non_null(strstr(out, "\"result\": \"eval-error\""));
}

static void test_hot_reload_keeps_consumer_filter_data_and_filter_servers(void **state)
{
    fixture *f = *state;
    start_daemon(f, "filterServerMaxIdleTimeMillis = 600000;");
    int fd = rmq_tc_connect(f->broker_port);
    assert_true(fd >= 0);
    char hb[2048];
    snprintf(hb, sizeof hb,
             "{\"clientID\":\"c9\",\"consumerDataSet\":[{\"consumeFromWhere\":\"CONSUME_FROM_LAST_"
             "OFFSET\","
             "\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":\"ReloadGroup\",\"messageModel\":"
             "\"CLUSTERING\","
             "\"subscriptionDataSet\":[{\"classFilterMode\":false,\"codeSet\":[],"
             "\"expressionType\":\"SQL92\","
             "\"subString\":\"b = "
             "'kept'\",\"subVersion\":1700000000009,\"tagsSet\":[],\"topic\":\"FltTopic\"}],"
             "\"unitMode\":false}],\"producerDataSet\":[]}");
    rmq_cmd *r = call_fd(f, fd, 34, NULL, hb);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    char name[128], id[32];
    int fs = register_filter_server(f, "127.0.0.1:45009", name, sizeof name, id, sizeof id);
    char out[8192];
    assert_int_equal(ctl(f, out, sizeof out, (const char *const[]){"consumer-filter", NULL}), 0);
    assert_non_null(strstr(out, "\"expression\": \"b = 'kept'\""));
    assert_non_null(strstr(out, "\"dead\": false"));

    assert_int_equal(ctl(f, out, sizeof out, (const char *const[]){"reload", "filter", NULL}), 0);

    /* handed over, not reloaded from disk (which would mark it dead) */
    assert_int_equal(ctl(f, out, sizeof out, (const char *const[]){"consumer-filter", NULL}), 0);
    assert_non_null(strstr(out, "\"expression\": \"b = 'kept'\""));
    assert_non_null(strstr(out, "\"dead\": false"));
    assert_non_null(strstr(out, "\"clientVersion\": 1700000000009"));
    /* the registry survived with its channel: the route lists it, and
     * closing the connection still removes it */
    assert_true(route_lists_filter_server(f, "FltTopic", "\"127.0.0.1:45009\"", true));
    close(fs);
    assert_true(route_lists_filter_server(f, "FltTopic", "\"127.0.0.1:45009\"", false));
    /* the new generation serves 301 and CHECK_CLIENT_CONFIG */
    char body[1024];
    r = call(f, f->broker_port, 46, NULL, check_body(body, sizeof body, "SQL92", "a >"));
    assert_int_equal(r->code, 23);
    rmq_cmd_free(r);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_filter_server_reaches_route_and_leaves_when_its_channel_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_admin_command_evaluates_in_the_running_daemon,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_hot_reload_keeps_consumer_filter_data_and_filter_servers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
