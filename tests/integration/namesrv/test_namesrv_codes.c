/* test_namesrv_codes.c — every NameServer request code against a real
 * daemon with raw frames: both route dialects, ROCKETMQ binary headers,
 * registration rules visible on the wire, admin codes, configuration codes
 * and the error answers of protocol.md §3.3 / §4.4. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namesrv_frames.h"

static int setup(void **state)
{
    return ns_setup(state, "orderMessageEnable = false;");
}

static void expect_code(rmq_cmd *r, int code)
{
    if (r->code != code)
        fail_msg("expected code %d, got %d (remark %s)", code, r->code,
                 r->remark ? r->remark : "null");
}

static void test_route_dialects_follow_version_and_accept_standard(void **state)
{
    ns_fixture *f = *state;
    rmq_cmd *r = ns_register(f->fd, "DefaultCluster", "broker-a", "127.0.0.1:10911", 0, 1,
                             "TopicTest:6:4:4:0");
    expect_code(r, 0);
    rmq_cmd_free(r);
    r = ns_register(f->fd, "DefaultCluster", "broker-a", "127.0.0.1:10921", 1, 1, "TopicTest");
    rmq_cmd_free(r);

    const char *native =
        "{\"brokerDatas\":[{\"brokerAddrs\":{0:\"127.0.0.1:10911\",1:\"127.0.0.1:10921\"},"
        "\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\"}],\"filterServerTable\":{},"
        "\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":6,\"readQueueNums\":4,"
        "\"topicSysFlag\":0,\"writeQueueNums\":4}]}";
    const char *standard =
        "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"127.0.0.1:10911\",\"1\":\"127.0.0.1:10921\"},"
        "\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\"}],\"filterServerTable\":{},"
        "\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":6,\"readQueueNums\":4,"
        "\"topicSysFlag\":0,\"writeQueueNums\":4}]}";
    struct {
        int version;
        bool accept;
        const char *expect;
    } cases[] = {{409, false, standard}, {401, false, standard}, {400, false, native},
                 {0, false, native},     {121, false, native},   {0, true, standard}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        r = ns_route(f->fd, "TopicTest", cases[i].version, cases[i].accept);
        expect_code(r, 0);
        char *body = ns_body_text(r);
        assert_non_null(body);
        assert_string_equal(body, cases[i].expect);
        free(body);
        rmq_cmd_free(r);
    }
}

static void test_route_answers_in_rocketmq_binary_serialization(void **state)
{
    ns_fixture *f = *state;
    rmq_cmd_free(ns_register(f->fd, "C", "b", "127.0.0.1:1", 0, 1, "T"));
    const char *kv[] = {"topic", "T", NULL};
    rmq_cmd *req = ns_request(105, kv, NULL, 0, -1);
    req->serialize_type = RMQ_SERIALIZE_ROCKETMQ;
    rmq_cmd *r = ns_call(f->fd, req);
    expect_code(r, 0);
    assert_int_equal(r->serialize_type, RMQ_SERIALIZE_ROCKETMQ);
    assert_int_equal(r->flag & RMQ_FLAG_RESPONSE, RMQ_FLAG_RESPONSE);
    assert_non_null(r->body);
    rmq_cmd_free(r);
    const char *kv2[] = {"topic", "Nope", NULL};
    req = ns_request(105, kv2, NULL, 0, -1);
    req->serialize_type = RMQ_SERIALIZE_ROCKETMQ;
    r = ns_call(f->fd, req);
    expect_code(r, 17);
    assert_int_equal(r->serialize_type, RMQ_SERIALIZE_ROCKETMQ);
    rmq_cmd_free(r);
}

static void test_unknown_topic_and_missing_topic_remarks(void **state)
{
    ns_fixture *f = *state;
    rmq_cmd *r = ns_route(f->fd, "NoSuchTopic", 409, false);
    expect_code(r, 17);
    assert_string_equal(r->remark,
                        "No topic route info in name server for the topic: NoSuchTopic"
                        "\nSee http://rocketmq.apache.org/docs/faq/ for further details.");
    assert_null(r->body);
    rmq_cmd_free(r);
    r = ns_call(f->fd, ns_request(105, NULL, NULL, 0, -1));
    expect_code(r, 17);
    assert_non_null(strstr(r->remark, "topic: null\n"));
    rmq_cmd_free(r);
}

static void test_slave_registration_learns_master(void **state)
{
    ns_fixture *f = *state;
    rmq_cmd *r = ns_register(f->fd, "C", "b", "127.0.0.1:1", 0, 1, "T");
    assert_null(rmq_cmd_ext_get(r, "masterAddr"));
    rmq_cmd_free(r);
    r = ns_register(f->fd, "C", "b", "127.0.0.1:2", 1, 1, "T");
    expect_code(r, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "masterAddr"), "127.0.0.1:1");
    assert_string_equal(rmq_cmd_ext_get(r, "haServerAddr"), "127.0.0.1:10912");
    rmq_cmd_free(r);
}

static void test_register_broker_crc_and_undecodable_body(void **state)
{
    ns_fixture *f = *state;
    const char *body = "{\"filterServerList\":[]}";
    const char *kv[] = {
        "brokerName", "b",        "brokerAddr", "a:1",       "clusterName", "C", "haServerAddr",
        "a:2",        "brokerId", "0",          "bodyCrc32", "12345",       NULL};
    rmq_cmd *r = ns_call(f->fd, ns_request(103, kv, body, strlen(body), -1));
    expect_code(r, 1);
    assert_string_equal(r->remark, "crc32 not match");
    rmq_cmd_free(r);
    r = ns_call(f->fd, ns_request(103, kv, NULL, 0, -1));
    expect_code(r, 1);
    assert_string_equal(r->remark, "crc32 not match");
    rmq_cmd_free(r);
    const char *kv2[] = {"brokerName",   "b",   "brokerAddr", "a:1", "clusterName", "C",
                         "haServerAddr", "a:2", "brokerId",   "0",   NULL};
    r = ns_call(f->fd, ns_request(103, kv2, "junk", 4, -1));
    expect_code(r, 1);
    assert_non_null(strstr(r->remark, "Failed to decode RegisterBrokerBody"));
    rmq_cmd_free(r);
    const char *kv3[] = {
        "brokerName", "b",        "brokerAddr", "a:1",        "clusterName", "C", "haServerAddr",
        "a:2",        "brokerId", "0",          "compressed", "true",        NULL};
    r = ns_call(f->fd, ns_request(103, kv3, body, strlen(body), -1));
    expect_code(r, 1);
    assert_non_null(strstr(r->remark, "Failed to decode RegisterBrokerBody"));
    rmq_cmd_free(r);
}

static void test_compressed_registration_loses_sys_flag(void **state)
{
    ns_fixture *f = *state;
    const char *lines[] = {"Zipped 3 2 6 SINGLE_TAG"};
    size_t zl;
    uint8_t *z = rmq_tb_compressed_register_body(1, 2, lines, 1, &zl);
    assert_non_null(z);
    char crc[16];
    rmq_tb_body_crc32_text(z, zl, crc);
    const char *kv[] = {"brokerName", "bz",           "brokerAddr", "z:1",      "clusterName",
                        "C",          "haServerAddr", "z:2",        "brokerId", "0",
                        "compressed", "true",         "bodyCrc32",  crc,        NULL};
    rmq_cmd *r = ns_call(f->fd, ns_request(103, kv, z, zl, -1));
    expect_code(r, 0);
    rmq_cmd_free(r);
    free(z);
    r = ns_route(f->fd, "Zipped", 409, false);
    expect_code(r, 0);
    char *body = ns_body_text(r);
    assert_non_null(strstr(body, "\"readQueueNums\":3,\"topicSysFlag\":0,\"writeQueueNums\":2"));
    free(body);
    rmq_cmd_free(r);
}

/* REGISTER_BROKER of bz:1 in the compressed form with these topic lines. */
static void zreg(ns_fixture *f, long long counter, const char *const *lines, size_t n)
{
    size_t zl;
    uint8_t *z = rmq_tb_compressed_register_body(counter, 2, lines, n, &zl);
    assert_non_null(z);
    char crc[16];
    rmq_tb_body_crc32_text(z, zl, crc);
    const char *kv[] = {"brokerName", "bz",           "brokerAddr", "z:1",      "clusterName",
                        "C",          "haServerAddr", "z:2",        "brokerId", "0",
                        "compressed", "true",         "bodyCrc32",  crc,        NULL};
    rmq_cmd *r = ns_call(f->fd, ns_request(103, kv, z, zl, -1));
    expect_code(r, 0);
    rmq_cmd_free(r);
    free(z);
}

static bool route_has(ns_fixture *f, const char *topic, const char *needle)
{
    rmq_cmd *r = ns_route(f->fd, topic, 409, false);
    char *body = r && r->code == 0 ? ns_body_text(r) : NULL;
    bool found = body && strstr(body, needle) != NULL;
    free(body);
    rmq_cmd_free(r);
    return found;
}

/* Compressed re-registrations of unchanged topics skip the decode: every
 * change of a topic, and an admin deletion, must still show. */
static void test_compressed_re_registrations_follow_changes(void **state)
{
    ns_fixture *f = *state;
    const char *same[] = {"Za 8 8 6 SINGLE_TAG", "Zb 4 4 6 SINGLE_TAG"};
    const char *wiped[] = {"Za 8 8 2 SINGLE_TAG", "Zb 4 4 6 SINGLE_TAG"};
    zreg(f, 1, same, 2);
    zreg(f, 2, same, 2);
    assert_true(route_has(f, "Za", "\"perm\":6"));
    zreg(f, 3, wiped, 2);
    assert_true(route_has(f, "Za", "\"perm\":2"));
    zreg(f, 4, same, 2);
    assert_true(route_has(f, "Za", "\"perm\":6"));
    zreg(f, 5, same, 2);
    const char *kvd[] = {"topic", "Za", NULL};
    rmq_cmd *r = ns_call(f->fd, ns_request(216, kvd, NULL, 0, -1));
    expect_code(r, 0);
    rmq_cmd_free(r);
    assert_false(route_has(f, "Za", "bz"));
    zreg(f, 6, same, 2); /* a changed DataVersion re-applies every topic */
    assert_true(route_has(f, "Za", "\"perm\":6"));
    assert_true(route_has(f, "Zb", "\"readQueueNums\":4"));
}

static void test_cluster_info_and_topic_lists(void **state)
{
    ns_fixture *f = *state;
    rmq_cmd_free(ns_register(f->fd, "C1", "b1", "a:1", 0, 1, "U:6:1:1:1,S:6:1:1:2,P"));
    rmq_cmd_free(ns_register(f->fd, "C2", "b2", "a:2", 0, 1, "Q"));
    struct {
        int code;
        const char *k, *v;
        const char *expect;
    } cases[] = {
        {106, NULL, NULL,
         "{\"brokerAddrTable\":{\"b1\":{\"brokerAddrs\":{0:\"a:1\"},\"brokerName\":\"b1\","
         "\"cluster\":"
         "\"C1\"},\"b2\":{\"brokerAddrs\":{0:\"a:2\"},\"brokerName\":\"b2\",\"cluster\":\"C2\"}},"
         "\"clusterAddrTable\":{\"C1\":[\"b1\"],\"C2\":[\"b2\"]}}"},
        {206, NULL, NULL, "{\"topicList\":[\"P\",\"Q\",\"S\",\"U\"]}"},
        {224, "cluster", "C2", "{\"topicList\":[\"Q\"]}"},
        {224, "cluster", "nope", "{\"topicList\":[]}"},
        {304, NULL, NULL, "{\"brokerAddr\":\"a:1\",\"topicList\":[\"C1\",\"C2\",\"b1\",\"b2\"]}"},
        {311, NULL, NULL, "{\"topicList\":[\"U\"]}"},
        {312, NULL, NULL, "{\"topicList\":[\"S\"]}"},
        {313, NULL, NULL, "{\"topicList\":[\"S\"]}"},
        {901, "brokerName", "b1",
         "{\"brokerMemberGroup\":{\"brokerAddrs\":{0:\"a:1\"},\"brokerName\":\"b1\"}}"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *kv[] = {cases[i].k, cases[i].v, NULL};
        rmq_cmd *r = ns_call(f->fd, ns_request(cases[i].code, cases[i].k ? kv : NULL, NULL, 0, -1));
        expect_code(r, 0);
        char *body = ns_body_text(r);
        assert_non_null(body);
        assert_true(ns_same_json(body, strlen(body), cases[i].expect, strlen(cases[i].expect)));
        free(body);
        rmq_cmd_free(r);
    }
}

/* The differential finding of issue #12: two clusters list one broker name,
 * UNREGISTER_BROKER through one of them, and 304 still lists the name
 * (Java reads the cluster table, which the other cluster still holds). */
static void test_system_topic_list_after_unregister_through_one_cluster(void **state)
{
    ns_fixture *f = *state;
    rmq_cmd_free(ns_register(f->fd, "C1", "b1", "a:1", 0, 1, "T"));
    rmq_cmd_free(ns_register(f->fd, "C2", "b1", "a:1", 0, 2, "T"));
    const char *kv[] = {"brokerName", "b1",       "brokerAddr", "a:1", "clusterName",
                        "C2",         "brokerId", "0",          NULL};
    rmq_cmd *r = ns_call(f->fd, ns_request(104, kv, NULL, 0, -1));
    expect_code(r, 0);
    rmq_cmd_free(r);
    struct {
        int code;
        const char *expect;
    } cases[] = {
        {304, "{\"topicList\":[\"C1\",\"b1\"]}"},
        {106, "{\"brokerAddrTable\":{},\"clusterAddrTable\":{\"C1\":[\"b1\"]}}"},
        {206, "{\"topicList\":[]}"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        r = ns_call(f->fd, ns_request(cases[i].code, NULL, NULL, 0, -1));
        expect_code(r, 0);
        char *body = ns_body_text(r);
        assert_non_null(body);
        if (!ns_same_json(body, strlen(body), cases[i].expect, strlen(cases[i].expect)))
            fail_msg("code %d answered %s, expected %s", cases[i].code, body, cases[i].expect);
        free(body);
        rmq_cmd_free(r);
    }
}

/* Issue #12: large registration frames (read into a buffer of their own) and
 * the re-registration shortcut over the wire — the same topics with another
 * DataVersion are accepted as before, and a topic an admin deleted in
 * between comes back with the next registration, as in 4.9.8. */
static void test_large_re_registration_after_delete_restores_the_topic(void **state)
{
    ns_fixture *f = *state;
    size_t cap = 3000 * 24;
    char *topics = malloc(cap);
    assert_non_null(topics);
    size_t n = 0;
    for (int i = 0; i < 3000; i++)
        n += (size_t)snprintf(topics + n, cap - n, "%sBig%d:6:8:8:0", i ? "," : "", i);
    for (long long counter = 1; counter <= 3; counter++) {
        rmq_cmd *r = ns_register(f->fd, "C", "big", "a:9", 0, counter, topics);
        expect_code(r, 0);
        rmq_cmd_free(r);
        if (counter == 2) {
            const char *kvd[] = {"topic", "Big0", NULL};
            r = ns_call(f->fd, ns_request(216, kvd, NULL, 0, -1));
            expect_code(r, 0);
            rmq_cmd_free(r);
            r = ns_route(f->fd, "Big0", 409, false);
            expect_code(r, 17);
            rmq_cmd_free(r);
        }
    }
    const char *check[] = {"Big0", "Big1", "Big2999"};
    for (size_t i = 0; i < 3; i++) {
        rmq_cmd *r = ns_route(f->fd, check[i], 409, false);
        expect_code(r, 0);
        char *body = ns_body_text(r);
        assert_non_null(strstr(body, "\"readQueueNums\":8"));
        free(body);
        rmq_cmd_free(r);
    }
    /* a changed body (one topic more) is parsed and applied */
    n += (size_t)snprintf(topics + n, cap - n, ",BigNew:6:8:8:0");
    rmq_cmd *r = ns_register(f->fd, "C", "big", "a:9", 0, 4, topics);
    expect_code(r, 0);
    rmq_cmd_free(r);
    r = ns_route(f->fd, "BigNew", 409, false);
    expect_code(r, 0);
    rmq_cmd_free(r);
    free(topics);
}

static void test_write_perm_delete_and_register_topic(void **state)
{
    ns_fixture *f = *state;
    rmq_cmd_free(ns_register(f->fd, "C", "b", "a:1", 0, 1, "T1:6,T2:6"));
    const char *kvb[] = {"brokerName", "b", NULL};
    rmq_cmd *r = ns_call(f->fd, ns_request(205, kvb, NULL, 0, -1));
    expect_code(r, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "wipeTopicCount"), "2");
    rmq_cmd_free(r);
    r = ns_route(f->fd, "T1", 409, false);
    char *body = ns_body_text(r);
    assert_non_null(strstr(body, "\"perm\":4"));
    free(body);
    rmq_cmd_free(r);
    r = ns_call(f->fd, ns_request(327, kvb, NULL, 0, -1));
    assert_string_equal(rmq_cmd_ext_get(r, "addTopicCount"), "2");
    rmq_cmd_free(r);
    r = ns_call(f->fd, ns_request(205, NULL, NULL, 0, -1));
    expect_code(r, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "wipeTopicCount"), "0");
    rmq_cmd_free(r);

    const char *kvd[] = {"topic", "T1", NULL};
    r = ns_call(f->fd, ns_request(216, kvd, NULL, 0, -1));
    expect_code(r, 0);
    rmq_cmd_free(r);
    r = ns_route(f->fd, "T1", 409, false);
    expect_code(r, 17);
    rmq_cmd_free(r);

    const char *qd = "{\"queueDatas\":[{\"brokerName\":\"b\",\"perm\":6,\"readQueueNums\":2,"
                     "\"writeQueueNums\":2,\"topicSysFlag\":0}]}";
    const char *kvt[] = {"topic", "NEW", NULL};
    r = ns_call(f->fd, ns_request(217, kvt, qd, strlen(qd), -1));
    expect_code(r, 0);
    rmq_cmd_free(r);
    r = ns_route(f->fd, "NEW", 409, false);
    expect_code(r, 0);
    rmq_cmd_free(r);
}

static void test_query_data_version_heartbeat_and_unregister(void **state)
{
    ns_fixture *f = *state;
    rmq_cmd_free(ns_register(f->fd, "C", "b", "a:1", 0, 7, "T"));
    const char *kv[] = {"brokerName", "b",        "brokerAddr", "a:1", "clusterName",
                        "C",          "brokerId", "0",          NULL};
    const char *same = "{\"counter\":7,\"timestamp\":1700000000000}";
    rmq_cmd *r = ns_call(f->fd, ns_request(322, kv, same, strlen(same), -1));
    expect_code(r, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "changed"), "false");
    char *body = ns_body_text(r);
    assert_true(ns_same_json(body, strlen(body), same, strlen(same)));
    free(body);
    rmq_cmd_free(r);
    const char *other = "{\"counter\":8,\"timestamp\":1700000000000}";
    r = ns_call(f->fd, ns_request(322, kv, other, strlen(other), -1));
    assert_string_equal(rmq_cmd_ext_get(r, "changed"), "true");
    rmq_cmd_free(r);
    r = ns_call(f->fd, ns_request(322, kv, NULL, 0, -1));
    expect_code(r, 1);
    rmq_cmd_free(r);
    r = ns_call(f->fd, ns_request(904, kv, NULL, 0, -1));
    expect_code(r, 0);
    rmq_cmd_free(r);
    r = ns_call(f->fd, ns_request(104, kv, NULL, 0, -1));
    expect_code(r, 0);
    rmq_cmd_free(r);
    r = ns_route(f->fd, "T", 409, false);
    expect_code(r, 17);
    rmq_cmd_free(r);
}

static void test_kv_codes(void **state)
{
    ns_fixture *f = *state;
    const char *put[] = {"namespace", "NS", "key", "k", "value", "v", NULL};
    rmq_cmd *r = ns_call(f->fd, ns_request(100, put, NULL, 0, -1));
    expect_code(r, 0);
    rmq_cmd_free(r);
    const char *nokey[] = {"namespace", "NS", NULL};
    r = ns_call(f->fd, ns_request(100, nokey, NULL, 0, -1));
    expect_code(r, 1);
    assert_string_equal(r->remark, "namespace or key is null");
    rmq_cmd_free(r);
    const char *get[] = {"namespace", "NS", "key", "k", NULL};
    r = ns_call(f->fd, ns_request(101, get, NULL, 0, -1));
    expect_code(r, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "value"), "v");
    rmq_cmd_free(r);
    r = ns_call(f->fd, ns_request(219, nokey, NULL, 0, -1));
    expect_code(r, 0);
    char *body = ns_body_text(r);
    assert_string_equal(body, "{\"table\":{\"k\":\"v\"}}");
    free(body);
    rmq_cmd_free(r);
    r = ns_call(f->fd, ns_request(102, get, NULL, 0, -1));
    expect_code(r, 0);
    rmq_cmd_free(r);
    r = ns_call(f->fd, ns_request(101, get, NULL, 0, -1));
    expect_code(r, 22);
    assert_string_equal(r->remark, "No config item, Namespace: NS Key: k");
    rmq_cmd_free(r);
    const char *none[] = {"namespace", "NONE", NULL};
    r = ns_call(f->fd, ns_request(219, none, NULL, 0, -1));
    expect_code(r, 22);
    assert_string_equal(r->remark, "No config item, Namespace: NONE");
    rmq_cmd_free(r);
}

static void test_order_topic_conf_and_namesrv_config(void **state)
{
    ns_fixture *f = *state;
    rmq_cmd_free(ns_register(f->fd, "C", "b", "a:1", 0, 1, "OT"));
    const char *put[] = {"namespace", "ORDER_TOPIC_CONFIG", "key", "OT", "value", "b:4", NULL};
    rmq_cmd_free(ns_call(f->fd, ns_request(100, put, NULL, 0, -1)));

    rmq_cmd *r = ns_call(f->fd, ns_request(319, NULL, NULL, 0, -1));
    expect_code(r, 0);
    char *body = ns_body_text(r);
    char port_line[64];
    snprintf(port_line, sizeof(port_line), "listenPort=%d\n", f->port);
    assert_non_null(strstr(body, port_line));
    assert_non_null(strstr(body, "orderMessageEnable=false\n"));
    assert_non_null(strstr(body, "kvConfigPath="));
    free(body);
    rmq_cmd_free(r);

    r = ns_route(f->fd, "OT", 409, false);
    body = ns_body_text(r);
    assert_null(strstr(body, "orderTopicConf"));
    free(body);
    rmq_cmd_free(r);

    const char *on = "orderMessageEnable=true\n";
    r = ns_call(f->fd, ns_request(318, NULL, on, strlen(on), -1));
    expect_code(r, 0);
    rmq_cmd_free(r);
    r = ns_route(f->fd, "OT", 409, false);
    body = ns_body_text(r);
    assert_non_null(strstr(body, "\"orderTopicConf\":\"b:4\""));
    free(body);
    rmq_cmd_free(r);

    /* the broker gets the namespace back in its registration answer */
    r = ns_register(f->fd, "C", "b", "a:1", 0, 1, "OT");
    body = ns_body_text(r);
    assert_string_equal(body, "{\"table\":{\"OT\":\"b:4\"}}");
    free(body);
    rmq_cmd_free(r);

    const char *black = "kvConfigPath=/tmp/evil\n";
    r = ns_call(f->fd, ns_request(318, NULL, black, strlen(black), -1));
    expect_code(r, 16);
    assert_string_equal(r->remark, "Can not update config in black list.");
    rmq_cmd_free(r);
    const char *refused = "serverWorkerThreads=64\n";
    r = ns_call(f->fd, ns_request(318, NULL, refused, strlen(refused), -1));
    expect_code(r, 16);
    assert_non_null(strstr(r->remark, "serverWorkerThreads"));
    rmq_cmd_free(r);
    const char *unknown = "someUnknownKey=1\n";
    r = ns_call(f->fd, ns_request(318, NULL, unknown, strlen(unknown), -1));
    expect_code(r, 0);
    rmq_cmd_free(r);

    r = ns_call(f->fd, ns_request(319, NULL, NULL, 0, -1));
    body = ns_body_text(r);
    assert_non_null(strstr(body, "orderMessageEnable=true\n"));
    free(body);
    rmq_cmd_free(r);
}

static void test_oneway_registration_is_applied_without_answer(void **state)
{
    ns_fixture *f = *state;
    /* oneway registration: processed, never answered */
    char *body = ns_body_json(1, "OW");
    const char *kv[] = {"brokerName",   "b",   "brokerAddr", "a:1", "clusterName", "C",
                        "haServerAddr", "a:2", "brokerId",   "0",   NULL};
    rmq_cmd *req = ns_request(103, kv, body, strlen(body), -1);
    req->flag |= RMQ_FLAG_ONEWAY;
    assert_int_equal(rmq_tc_send(f->fd, req), 0);
    rmq_cmd_free(req);
    free(body);
    assert_true(ns_wait_route_code(f->fd, "OW", 0, NS_WAIT_MS));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_route_dialects_follow_version_and_accept_standard,
                                        setup, ns_teardown),
        cmocka_unit_test_setup_teardown(test_route_answers_in_rocketmq_binary_serialization, setup,
                                        ns_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_topic_and_missing_topic_remarks, setup,
                                        ns_teardown),
        cmocka_unit_test_setup_teardown(test_slave_registration_learns_master, setup, ns_teardown),
        cmocka_unit_test_setup_teardown(test_register_broker_crc_and_undecodable_body, setup,
                                        ns_teardown),
        cmocka_unit_test_setup_teardown(test_compressed_registration_loses_sys_flag, setup,
                                        ns_teardown),
        cmocka_unit_test_setup_teardown(test_compressed_re_registrations_follow_changes, setup,
                                        ns_teardown),
        cmocka_unit_test_setup_teardown(test_cluster_info_and_topic_lists, setup, ns_teardown),
        cmocka_unit_test_setup_teardown(test_system_topic_list_after_unregister_through_one_cluster,
                                        setup, ns_teardown),
        cmocka_unit_test_setup_teardown(test_large_re_registration_after_delete_restores_the_topic,
                                        setup, ns_teardown),
        cmocka_unit_test_setup_teardown(test_write_perm_delete_and_register_topic, setup,
                                        ns_teardown),
        cmocka_unit_test_setup_teardown(test_query_data_version_heartbeat_and_unregister, setup,
                                        ns_teardown),
        cmocka_unit_test_setup_teardown(test_kv_codes, setup, ns_teardown),
        cmocka_unit_test_setup_teardown(test_order_topic_conf_and_namesrv_config, setup,
                                        ns_teardown),
        cmocka_unit_test_setup_teardown(test_oneway_registration_is_applied_without_answer, setup,
                                        ns_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
