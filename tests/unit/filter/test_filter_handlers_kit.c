/* test_filter_handlers_kit.c — the filter plugin's request handlers and its
 * filter-server expiry, in librmqhost-testkit beside broker-client-mgr (its
 * broker identity and CHECK_CLIENT_CONFIG front end): no daemon to start per
 * case, and the idle limit is crossed on the kit's virtual clock instead of
 * waited for. Moved here from tests/integration/filter, which keeps what
 * needs the NameServer's routes, files on disk and the admin socket. */
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

#define WAIT_MS 5000

static const char *const BCM[] = {"registerNameServerPeriod",
                                  "10000",
                                  "brokerName",
                                  "broker-flt",
                                  "brokerClusterName",
                                  "FltCluster",
                                  "brokerId",
                                  "0",
                                  "namesrvAddr",
                                  "127.0.0.1:1",
                                  "topics",
                                  "FltTopic:4",
                                  NULL};

/* The NameServer of the test: every REGISTER_BROKER succeeds (the calls stay
 * on record for the test to read). */
static rmq_cmd *namesrv_double(const rmq_tk_outgoing *c, void *ud)
{
    (void)ud;
    return rmq_tk_code(rmq_tk_outgoing_request(c)) == 103 ? rmq_tk_response(0, NULL) : NULL;
}

static rmq_testkit *start(const char *const *filter_settings)
{
    rmq_testkit *kit = rmq_tk_new();
    assert_non_null(kit);
    rmq_tk_set_responder(kit, namesrv_double, NULL);
    assert_int_equal(rmq_tk_add_plugin(kit, "broker-client-mgr",
                                       RMQ_TEST_PLUGIN_DIR "/broker-client-mgr.so", BCM),
                     0);
    assert_int_equal(
        rmq_tk_add_plugin(kit, "filter", RMQ_TEST_PLUGIN_DIR "/filter.so", filter_settings), 0);
    char err[512];
    if (rmq_tk_start(kit, err, sizeof(err)) != 0)
        fail_msg("kit: %s", err);
    return kit;
}

static rmq_cmd *call(rmq_testkit *kit, int ch, int code, const char *const *ext, const char *body)
{
    rmq_cmd *req = rmq_tk_request(code, RMQ_TK_JSON, false, ext);
    if (body)
        rmq_tk_set_body(req, body, strlen(body));
    rmq_cmd *r = rmq_tk_call(kit, ch, req, WAIT_MS);
    if (!r)
        fail_msg("no answer to code %d", code);
    return r;
}

static const char *check_body(char *buf, size_t len, const char *expr)
{
    snprintf(buf, len,
             "{\"clientId\":\"127.0.0.1@1\",\"group\":\"CG\",\"subscriptionData\":{"
             "\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"SQL92\","
             "\"subString\":\"%s\",\"subVersion\":1700000000000,\"tagsSet\":[],"
             "\"topic\":\"FltTopic\"}}",
             expr);
    return buf;
}

static void test_register_answers_the_broker_identity(void **state)
{
    (void)state;
    rmq_testkit *kit = start(NULL);
    int ch = rmq_tk_open_channel(kit);
    rmq_cmd *r =
        call(kit, ch, 301, (const char *[]){"filterServerAddr", "127.0.0.1:45001", NULL}, NULL);
    assert_int_equal(rmq_tk_code(r), 0);
    assert_string_equal(rmq_tk_ext(r, "brokerName"), "broker-flt");
    assert_string_equal(rmq_tk_ext(r, "brokerId"), "0");
    rmq_tk_cmd_free(r);
    assert_true(rmq_tk_log_contains(kit, "Receive a New Filter Server<127.0.0.1:45001>"));
    rmq_tk_free(kit);
}

static void test_register_without_address_is_a_system_error(void **state)
{
    (void)state;
    rmq_testkit *kit = start(NULL);
    int ch = rmq_tk_open_channel(kit);
    rmq_cmd *r = call(kit, ch, 301, NULL, NULL);
    assert_int_equal(rmq_tk_code(r), 1);
    assert_non_null(rmq_tk_remark(r));
    assert_non_null(strstr(rmq_tk_remark(r), "filterServerAddr"));
    rmq_tk_cmd_free(r);
    rmq_tk_free(kit);
}

static void test_check_client_config_accepts_valid_and_refuses_invalid_sql92(void **state)
{
    (void)state;
    rmq_testkit *kit = start(NULL);
    int ch = rmq_tk_open_channel(kit);
    char body[1024];
    rmq_cmd *r = call(kit, ch, 46, NULL, check_body(body, sizeof body, "a > 5 AND b IN ('x')"));
    assert_int_equal(rmq_tk_code(r), 0);
    rmq_tk_cmd_free(r);
    r = call(kit, ch, 46, NULL, check_body(body, sizeof body, "a > 'x'"));
    assert_int_equal(rmq_tk_code(r), 23);
    assert_string_equal(rmq_tk_remark(r),
                        "java.lang.RuntimeException: Value ''x'' cannot be compared.");
    rmq_tk_cmd_free(r);
    r = call(kit, ch, 46, NULL, check_body(body, sizeof body, "a != 1"));
    assert_int_equal(rmq_tk_code(r), 23);
    assert_non_null(strstr(rmq_tk_remark(r), "TokenMgrError: Lexical error at line 1, column 3."));
    rmq_tk_cmd_free(r);
    /* trailing input is ignored as Java ignores it */
    r = call(kit, ch, 46, NULL, check_body(body, sizeof body, "a = 1 garbage"));
    assert_int_equal(rmq_tk_code(r), 0);
    rmq_tk_cmd_free(r);
    rmq_tk_free(kit);
}

static void test_check_client_config_without_property_filter_is_system_error(void **state)
{
    (void)state;
    rmq_testkit *kit = start((const char *[]){"enablePropertyFilter", "false", NULL});
    int ch = rmq_tk_open_channel(kit);
    char body[1024];
    rmq_cmd *r = call(kit, ch, 46, NULL, check_body(body, sizeof body, "a > 5"));
    assert_int_equal(rmq_tk_code(r), 1);
    assert_string_equal(rmq_tk_remark(r),
                        "The broker does not support consumer to filter message by SQL92");
    rmq_tk_cmd_free(r);
    rmq_tk_free(kit);
}

/* Idle limit 1000 ms, scanned every 200 ms: a filter server that stops
 * re-registering is dropped and disconnected by the first scan after the
 * limit, and re-registering in time keeps it. */
static void test_filter_server_expires_without_reregistration_and_is_disconnected(void **state)
{
    (void)state;
    rmq_testkit *kit = start((const char *[]){"filterServerMaxIdleTimeMillis", "1000",
                                              "filterServerScanIntervalMillis", "200", NULL});
    int ch = rmq_tk_open_channel(kit);
    const char *ext[] = {"filterServerAddr", "127.0.0.1:45002", NULL};
    rmq_cmd *r = call(kit, ch, 301, ext, NULL);
    assert_int_equal(rmq_tk_code(r), 0);
    rmq_tk_cmd_free(r);
    /* refreshed every 800 ms for a while: never idle long enough */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rmq_tk_advance(kit, 800), 0);
        assert_false(rmq_tk_channel_closed_by_host(kit, ch, 0));
        r = call(kit, ch, 301, ext, NULL);
        assert_int_equal(rmq_tk_code(r), 0);
        rmq_tk_cmd_free(r);
    }
    /* no more refreshes: gone at the first scan past the limit */
    assert_int_equal(rmq_tk_advance(kit, 1000), 0);
    assert_false(rmq_tk_channel_closed_by_host(kit, ch, 0));
    assert_int_equal(rmq_tk_advance(kit, 200), 0);
    assert_true(rmq_tk_channel_closed_by_host(kit, ch, WAIT_MS));
    assert_true(rmq_tk_log_contains(kit, "expired"));
    rmq_tk_free(kit);
}

/* The body of the newest REGISTER_BROKER made so far (malloc'd), or NULL. */
static char *last_registration(rmq_testkit *kit)
{
    char *body = NULL;
    rmq_tk_outgoing *c;
    while ((c = rmq_tk_next_outgoing(kit, 0))) {
        const rmq_cmd *req = rmq_tk_outgoing_request(c);
        size_t len;
        const char *b = rmq_tk_code(req) == 103 ? rmq_tk_body(req, &len) : NULL;
        if (b) {
            free(body);
            body = strndup(b, len);
        }
    }
    return body;
}

static int occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* A registered filter server goes into broker-client-mgr's registrations
 * (filterServerList) once, however often it re-registers on its channel,
 * and leaves them when its channel closes. broker-client-mgr registers
 * every 10 s: on the virtual clock that is an advance, not a wait. */
static void test_filter_servers_ride_the_broker_registration(void **state)
{
    (void)state;
    rmq_testkit *kit = start((const char *[]){"filterServerMaxIdleTimeMillis", "1500",
                                              "filterServerScanIntervalMillis", "200", NULL});
    int ch = rmq_tk_open_channel(kit);
    const char *ext[] = {"filterServerAddr", "127.0.0.1:45003", NULL};
    /* 11 s of re-registering every second, faster than the idle limit */
    for (int i = 0; i < 11; i++) {
        rmq_cmd *r = call(kit, ch, 301, ext, NULL);
        assert_int_equal(rmq_tk_code(r), 0);
        rmq_tk_cmd_free(r);
        assert_int_equal(rmq_tk_advance(kit, 1000), 0);
    }
    char *body = last_registration(kit);
    assert_non_null(body);
    if (occurrences(body, "\"127.0.0.1:45003\"") != 1)
        fail_msg("registration body: %s", body);
    free(body);
    assert_false(rmq_tk_channel_closed_by_host(kit, ch, 0));

    /* CLOSE reaches the filter plugin on the event thread: registrations
     * drop the server from the first one made after it */
    assert_int_equal(rmq_tk_close_channel(kit, ch), 0);
    bool gone = false;
    for (int round = 0; round < 100 && !gone; round++) {
        assert_int_equal(rmq_tk_advance(kit, 10000), 0);
        body = last_registration(kit);
        gone = body && !strstr(body, "127.0.0.1:45003");
        free(body);
        if (!gone)
            usleep(10000);
    }
    assert_true(gone);
    rmq_tk_free(kit);
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

/* An SQL92 subscription in a heartbeat becomes consumerFilter.json at the
 * next persist tick (200 ms of virtual time); the consumer's leaving marks
 * it dead on disk. */
static void test_sql92_heartbeat_becomes_consumer_filter_data_on_disk(void **state)
{
    (void)state;
    rmq_testkit *kit = start((const char *[]){"consumerFilterPersistIntervalMillis", "200", NULL});
    int ch = rmq_tk_open_channel(kit);
    const char *hb =
        "{\"clientID\":\"c1\",\"consumerDataSet\":[{\"consumeFromWhere\":"
        "\"CONSUME_FROM_LAST_OFFSET\",\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":"
        "\"FltGroup\",\"messageModel\":\"CLUSTERING\",\"subscriptionDataSet\":[{"
        "\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"SQL92\","
        "\"subString\":\"a > 5\",\"subVersion\":1700000000001,\"tagsSet\":[],"
        "\"topic\":\"FltTopic\"}],\"unitMode\":false}],\"producerDataSet\":[]}";
    rmq_cmd *r = call(kit, ch, 34, NULL, hb);
    assert_int_equal(rmq_tk_code(r), 0);
    rmq_tk_cmd_free(r);
    char path[600];
    snprintf(path, sizeof path, "%s/filter/consumerFilter.json", rmq_tk_state_dir(kit));
    assert_false(file_contains(path, "\"expression\": \"a > 5\""));
    assert_int_equal(rmq_tk_advance(kit, 200), 0);
    assert_true(file_contains(path, "\"expression\": \"a > 5\""));
    assert_true(file_contains(path, "\"clientVersion\": 1700000000001"));
    assert_true(file_contains(path, "\"dead\": false"));
    /* Java's bloom data for "FltGroup#FltTopic" with k = 3, m = 112 */
    assert_true(file_contains(path, "\"bitNum\": 112"));
    /* the consumer leaves (CLOSE on the event thread): dead at a later tick */
    assert_int_equal(rmq_tk_close_channel(kit, ch), 0);
    bool dead = false;
    for (int round = 0; round < 500 && !dead; round++) {
        assert_int_equal(rmq_tk_advance(kit, 200), 0);
        dead = file_contains(path, "\"dead\": true");
        if (!dead)
            usleep(2000);
    }
    assert_true(dead);
    rmq_tk_free(kit);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register_answers_the_broker_identity),
        cmocka_unit_test(test_register_without_address_is_a_system_error),
        cmocka_unit_test(test_check_client_config_accepts_valid_and_refuses_invalid_sql92),
        cmocka_unit_test(test_check_client_config_without_property_filter_is_system_error),
        cmocka_unit_test(test_filter_server_expires_without_reregistration_and_is_disconnected),
        cmocka_unit_test(test_filter_servers_ride_the_broker_registration),
        cmocka_unit_test(test_sql92_heartbeat_becomes_consumer_filter_data_on_disk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
