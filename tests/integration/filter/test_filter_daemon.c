/* test_filter_daemon.c — the filter plugin in a real daemon with
 * broker-client-mgr (server "broker") and namesrv (server "namesrv"):
 * filter servers registered over the wire reach the NameServer's routes and
 * leave them on close; SQL92 heartbeats become consumerFilter.json; the admin
 * command and a hot reload. Every test starts its own daemon and stops it in
 * teardown. Handlers and the expiry timer alone are tested in the test kit
 * (tests/unit/filter/test_filter_handlers_kit.c): no daemon needed there. */
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

/* Re-register on `fd` every 300 ms (as a filter server would, faster than
 * the idle limit) until the route shows `needle`. */
static bool route_lists_while_refreshing(fixture *f, int fd, const char *addr, const char *needle)
{
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    char table[1024] = "";
    while (rmq_test_now_ms() < deadline) {
        const char *kv[] = {"filterServerAddr", addr, NULL};
        rmq_cmd *r = call_fd(f, fd, 301, kv, NULL);
        bool ok = r && r->code == 0;
        rmq_cmd_free(r);
        if (!ok)
            return false;
        route_filter_table(f, "FltTopic", table, sizeof table);
        if (strstr(table, needle))
            return true;
        rmq_test_pause_ms(300);
    }
    fprintf(stderr, "route of FltTopic: %s (wanted %s)\n", table, needle);
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

static void test_reregistration_on_same_channel_keeps_one_entry(void **state)
{
    fixture *f = *state;
    start_daemon(f, "filterServerMaxIdleTimeMillis = 1500; filterServerScanIntervalMillis = 200;");
    char name[128], id[32];
    int fd = register_filter_server(f, "127.0.0.1:45003", name, sizeof name, id, sizeof id);
    /* refreshed faster than the idle limit: one entry, connection kept open */
    assert_true(route_lists_while_refreshing(f, fd, "127.0.0.1:45003", "[\"127.0.0.1:45003\"]"));
    assert_false(rmq_tc_wait_closed(fd, 100));
    close(fd);
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

static bool file_contains(const char *path, const char *needle)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return false;
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return strstr(buf, needle) != NULL;
}

static void test_sql92_heartbeat_becomes_consumer_filter_data_on_disk(void **state)
{
    fixture *f = *state;
    start_daemon(f, "consumerFilterPersistIntervalMillis = 200;");
    char hb[2048];
    snprintf(hb, sizeof hb,
             "{\"clientID\":\"c1\",\"consumerDataSet\":[{\"consumeFromWhere\":\"CONSUME_FROM_LAST_"
             "OFFSET\","
             "\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":\"FltGroup\",\"messageModel\":"
             "\"CLUSTERING\","
             "\"subscriptionDataSet\":[{\"classFilterMode\":false,\"codeSet\":[],"
             "\"expressionType\":\"SQL92\","
             "\"subString\":\"a > "
             "5\",\"subVersion\":1700000000001,\"tagsSet\":[],\"topic\":\"FltTopic\"}],"
             "\"unitMode\":false}],\"producerDataSet\":[]}");
    int fd = rmq_tc_connect(f->broker_port);
    assert_true(fd >= 0);
    rmq_cmd *req = rmq_tc_request(34, 77, NULL);
    rmq_cmd_set_body(req, hb, strlen(hb), NULL, NULL);
    assert_int_equal(rmq_tc_send(fd, req), 0);
    rmq_cmd_free(req);
    char path[512];
    snprintf(path, sizeof path, "%s/filter/consumerFilter.json", f->d.state_dir);
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    bool found = false;
    while (!found && rmq_test_now_ms() < deadline) {
        found = file_contains(path, "\"expression\": \"a > 5\"") &&
                file_contains(path, "\"clientVersion\": 1700000000001") &&
                file_contains(path, "\"dead\": false");
        if (!found)
            rmq_test_pause_ms(100);
    }
    assert_true(found);
    /* Java's bloom data for "FltGroup#FltTopic" with k = 3, m = 112 */
    assert_true(file_contains(path, "\"bitNum\": 112"));
    /* the consumer leaves: its entry is marked dead on disk */
    close(fd);
    deadline = rmq_test_now_ms() + WAIT_MS;
    found = false;
    while (!found && rmq_test_now_ms() < deadline) {
        found = file_contains(path, "\"dead\": true");
        if (!found)
            rmq_test_pause_ms(100);
    }
    assert_true(found);
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
        cmocka_unit_test_setup_teardown(test_reregistration_on_same_channel_keeps_one_entry, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sql92_heartbeat_becomes_consumer_filter_data_on_disk,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_expr_admin_command_evaluates_in_the_running_daemon,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_hot_reload_keeps_consumer_filter_data_and_filter_servers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
