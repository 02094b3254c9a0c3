/* test_bcm_client_relay.c — GET_CONSUMER_RUNNING_INFO (307) and
 * CONSUME_MESSAGE_DIRECTLY (309) relayed by broker-client-mgr to a raw-
 * protocol consumer in a real daemon (protocol.md §5.10, §3.3): the answer
 * comes back to the admin, a silent client times out with 207, unknown and
 * too-old clients are refused with Java's remarks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bcm_test_daemon.h"

#define GROUP "RelayGroup"
#define RELAY_TIMEOUT_MS 500 /* callClientTimeoutMillis of the daemon */

typedef bcm_pair fixture;

static int setup(void **state)
{
    char settings[256];
    snprintf(
        settings, sizeof settings,
        "brokerName = \"broker-relay\"; topics = \"RelayTopic:2\"; callClientTimeoutMillis = %d;",
        RELAY_TIMEOUT_MS);
    return bcm_pair_setup(state, settings);
}

/* A consumer connection whose HEART_BEAT carried `version` (the version the
 * broker keeps for the client); the heartbeat's answer is consumed. */
static int consumer_connect(int port, const char *client_id, int version)
{
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    char body[2048];
    bcm_consumer_heartbeat(body, sizeof body, client_id, GROUP, "RelayTopic", false);
    rmq_cmd *req = rmq_tc_request(34, 77, NULL);
    req->version = version;
    rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    assert_int_equal(rmq_tc_send(fd, req), 0);
    rmq_cmd_free(req);
    uint64_t deadline = rmq_test_now_ms() + 5000;
    while (rmq_test_now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 500);
        bool answered = c && (c->flag & 1) && c->opaque == 77;
        if (answered)
            assert_int_equal(c->code, 0);
        rmq_cmd_free(c);
        if (answered)
            return fd;
    }
    fail_msg("no HEART_BEAT answer");
    return -1;
}

/* The next request the broker pushes to the client other than NOTIFY (40),
 * or NULL after timeout_ms. */
static rmq_cmd *client_next_request(int fd, int timeout_ms)
{
    uint64_t deadline = rmq_test_now_ms() + (uint64_t)timeout_ms;
    while (rmq_test_now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 100);
        if (c && !(c->flag & 1) && c->code != 40)
            return c;
        rmq_cmd_free(c);
    }
    return NULL;
}

static int admin_send(int port, int code, int opaque, const char *client_id, const char *extra_key,
                      const char *extra_val, const char *body)
{
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    const char *kv[] = {"consumerGroup", GROUP, "clientId", client_id, extra_key, extra_val, NULL};
    rmq_cmd *req = rmq_tc_request(code, opaque, kv);
    if (body)
        rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    assert_int_equal(rmq_tc_send(fd, req), 0);
    rmq_cmd_free(req);
    return fd;
}

static void assert_body(const rmq_cmd *c, const char *want)
{
    assert_non_null(c->body);
    assert_int_equal(c->body_len, strlen(want));
    assert_memory_equal(c->body, want, c->body_len);
}

/* The client answers the request the broker pushed (freed here) with code
 * 0, `remark` and `body`. */
static void client_answers(int client, rmq_cmd *pushed, const char *remark, const char *body)
{
    rmq_cmd *answer = rmq_cmd_new_response(pushed, 0, remark);
    rmq_cmd_set_body(answer, body, strlen(body), NULL, NULL);
    assert_int_equal(rmq_tc_send(client, answer), 0);
    rmq_cmd_free(answer);
    rmq_cmd_free(pushed);
}

/* The admin connection gets the client's answer relayed: code 0 as a
 * response to `opaque`, with `remark` (NULL: none) and `body`. */
static void admin_gets_relayed(int admin, int opaque, const char *remark, const char *body)
{
    rmq_cmd *got = rmq_tc_recv(admin, 5000);
    assert_non_null(got);
    assert_int_equal(got->code, 0);
    assert_int_equal(got->flag, 1);
    assert_int_equal(got->opaque, opaque);
    if (remark)
        assert_string_equal(got->remark, remark);
    assert_body(got, body);
    rmq_cmd_free(got);
}

static void test_running_info_is_relayed_to_client_and_its_answer_returned(void **state)
{
    fixture *f = *state;
    /* 62 = V3_1_8_SNAPSHOT, the oldest version the broker relays to */
    int client = consumer_connect(f->port, "relay-c1", 62);
    int admin = admin_send(f->port, 307, 4242, "relay-c1", "jstackEnable", "false", NULL);

    rmq_cmd *pushed = client_next_request(client, 5000);
    assert_non_null(pushed);
    assert_int_equal(pushed->code, 307);
    assert_int_equal(pushed->flag, 0);
    assert_string_equal(rmq_cmd_ext_get(pushed, "consumerGroup"), GROUP);
    assert_string_equal(rmq_cmd_ext_get(pushed, "clientId"), "relay-c1");
    assert_string_equal(rmq_cmd_ext_get(pushed, "jstackEnable"), "false");
    const char *info = "{\"properties\":{\"consumeType\":\"CONSUME_PASSIVELY\"},"
                       "\"subscriptionSet\":[],\"mqTable\":{},\"statusTable\":{}}";
    client_answers(client, pushed, NULL, info);
    admin_gets_relayed(admin, 4242, NULL, info);
    close(admin);
    close(client);
}

static void test_consume_message_directly_is_relayed_with_broker_name(void **state)
{
    fixture *f = *state;
    int client = consumer_connect(f->port, "relay-c2", 409);
    int admin = admin_send(f->port, 309, 99, "relay-c2", "msgId",
                           "7F00000100002A9F0000000000000000", "message-bytes");

    rmq_cmd *pushed = client_next_request(client, 5000);
    assert_non_null(pushed);
    assert_int_equal(pushed->code, 309);
    assert_string_equal(rmq_cmd_ext_get(pushed, "msgId"), "7F00000100002A9F0000000000000000");
    assert_string_equal(rmq_cmd_ext_get(pushed, "brokerName"), "broker-relay");
    assert_body(pushed, "message-bytes");
    const char *result = "{\"autoCommit\":true,\"consumeResult\":\"CR_SUCCESS\",\"order\":false,"
                         "\"remark\":\"\",\"spentTimeMills\":3}";
    client_answers(client, pushed, "consumed", result);
    admin_gets_relayed(admin, 99, "consumed", result);
    close(admin);
    close(client);
}

static void test_silent_client_gives_consume_msg_timeout_with_java_remark(void **state)
{
    fixture *f = *state;
    int client = consumer_connect(f->port, "relay-mute", 409);
    struct sockaddr_in me;
    socklen_t len = sizeof me;
    assert_int_equal(getsockname(client, (struct sockaddr *)&me, &len), 0);

    int admin = admin_send(f->port, 307, 5, "relay-mute", "jstackEnable", "true", NULL);
    rmq_cmd *pushed = client_next_request(client, 5000);
    assert_non_null(pushed); /* it arrives, and is never answered */
    rmq_cmd_free(pushed);
    rmq_cmd *got = rmq_tc_recv(admin, 10000);
    assert_non_null(got);
    assert_int_equal(got->code, 207);
    char want[512];
    snprintf(want, sizeof want,
             "consumer <" GROUP "> <relay-mute> Timeout: org.apache.rocketmq.remoting.exception."
             "RemotingTimeoutException: wait response on the channel <127.0.0.1:%d> timeout, "
             "%d(ms)",
             ntohs(me.sin_port), RELAY_TIMEOUT_MS);
    assert_string_equal(got->remark, want);
    rmq_cmd_free(got);
    close(admin);
    close(client);
}

static void test_unknown_client_id_is_not_online(void **state)
{
    fixture *f = *state;
    int client = consumer_connect(f->port, "relay-present", 409);
    const char *kv[] = {"consumerGroup", GROUP, "clientId", "relay-absent", NULL};
    rmq_cmd *r = bcm_call(f->port, 307, kv, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 1);
    assert_string_equal(r->remark, "The Consumer <" GROUP "> <relay-absent> not online");
    rmq_cmd_free(r);
    const char *other_group[] = {"consumerGroup", "NoSuchGroup", "clientId", "relay-present", NULL};
    r = bcm_call(f->port, 309, other_group, NULL);
    assert_int_equal(r->code, 1);
    assert_string_equal(r->remark, "The Consumer <NoSuchGroup> <relay-present> not online");
    rmq_cmd_free(r);
    close(client);
}

static void assert_too_old(int port, const char *client_id, int version, const char *name)
{
    int client = consumer_connect(port, client_id, version);
    const char *kv[] = {"consumerGroup", GROUP, "clientId", client_id, NULL};
    rmq_cmd *r = bcm_call(port, 307, kv, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 1);
    char want[256];
    snprintf(want, sizeof want,
             "The Consumer <%s> Version <%s> too low to finish, please upgrade it to "
             "V3_1_8_SNAPSHOT",
             client_id, name);
    assert_string_equal(r->remark, want);
    rmq_cmd_free(r);
    rmq_cmd *pushed = client_next_request(client, 200);
    assert_null(pushed); /* refused before anything reached the client */
    close(client);
}

static void test_client_below_v3_1_8_snapshot_is_refused_with_version_name(void **state)
{
    fixture *f = *state;
    assert_too_old(f->port, "old-61", 61, "V3_1_7");
    assert_too_old(f->port, "old-37", 37, "V3_0_11");
    assert_too_old(f->port, "old-46", 46, "V3_1_0_SNAPSHOT");
    assert_too_old(f->port, "old-9", 9, "V3_0_0_BETA7_SNAPSHOT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_running_info_is_relayed_to_client_and_its_answer_returned, setup,
            bcm_pair_teardown),
        cmocka_unit_test_setup_teardown(test_consume_message_directly_is_relayed_with_broker_name,
                                        setup, bcm_pair_teardown),
        cmocka_unit_test_setup_teardown(
            test_silent_client_gives_consume_msg_timeout_with_java_remark, setup,
            bcm_pair_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_client_id_is_not_online, setup,
                                        bcm_pair_teardown),
        cmocka_unit_test_setup_teardown(
            test_client_below_v3_1_8_snapshot_is_refused_with_version_name, setup,
            bcm_pair_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
