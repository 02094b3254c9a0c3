/* test_store_cluster_ali_ons.c — two daemons as two brokers of one cluster:
 * A runs namesrv + broker-client-mgr (broker-a) + filter + store, B runs
 * broker-client-mgr (broker-b, registering with A's NameServer) + filter +
 * store; the topic is created on both by the `topics` setting. ali-ons
 * (ali_ons_two_brokers.js) sends N messages and two consumers of one group
 * take each exactly once; here: the route lists both brokers, both stored
 * some of the N (GET_MAX_OFFSET), both list both consumers while they run
 * (GET_CONSUMER_LIST_BY_GROUP), and the group's committed offsets reach every
 * queue's end on both (QUERY_CONSUMER_OFFSET, GET_CONSUME_STATS). Both
 * daemons and the node process always stop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bcm_test_daemon.h"
#include "rmq_test_node.h"

#define TOPIC "ClusterTopic"
#define GROUP "cg_cluster"
#define QUEUES 4
#define COUNT 80

typedef struct fixture {
    rmq_test_daemon a, b;
    int ns_port;
    int port_a, port_b;
    rmq_node_proc node;
} fixture;

static const char *const vip_args[] = {"-o", "servers.broker.vip_listen=127.0.0.1:0", NULL};

static int add_store_roles(rmq_test_daemon *d)
{
    if (rmq_td_add_plugin(d, "filter", "filter", "broker", NULL) != 0 ||
        rmq_td_add_plugin(d, "store", "store", "broker", "mappedFileSizeCommitLog = 1048576;") != 0)
        return -1;
    return 0;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    f->ns_port = rmq_tc_free_port();
    char bcm[512];
    const char *servers_a[] = {"namesrv", "broker", NULL};
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-a\"; brokerClusterName = "
             "\"TwoCluster\"; brokerIP1 = \"127.0.0.1\"; topics = \"" TOPIC ":4\";",
             f->ns_port);
    if (f->ns_port <= 0 || rmq_td_init(&f->a, servers_a, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(&f->a, f->ns_port, "info", bcm) != 0 ||
        add_store_roles(&f->a) != 0 || rmq_td_start(&f->a, vip_args) != 0)
        return -1;
    const char *servers_b[] = {"broker", NULL};
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-b\"; brokerClusterName = "
             "\"TwoCluster\"; brokerIP1 = \"127.0.0.1\"; topics = \"" TOPIC ":4\";",
             f->ns_port);
    if (rmq_td_init(&f->b, servers_b, NULL) != 0 ||
        rmq_td_add_plugin(&f->b, "broker-client-mgr", "broker-client-mgr", "broker", bcm) != 0 ||
        add_store_roles(&f->b) != 0 || rmq_td_start(&f->b, vip_args) != 0)
        return -1;
    f->port_a = rmq_td_port(&f->a, "broker");
    f->port_b = rmq_td_port(&f->b, "broker");
    return f->port_a > 0 && f->port_b > 0 ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    rmq_node_reap(&f->node, 0);
    int sb = rmq_td_stop_reporting(&f->b);
    int sa = rmq_td_stop_reporting(&f->a);
    rmq_td_cleanup(&f->b);
    rmq_td_cleanup(&f->a);
    free(f);
    return sa == 0 && sb == 0 ? 0 : -1;
}

/* GET_CONSUMER_LIST_BY_GROUP (38) on `port` names both consumers. */
static bool both_consumers_listed(int port)
{
    const char *kv[] = {"consumerGroup", GROUP, NULL};
    rmq_cmd *r = bcm_call(port, 38, kv, NULL);
    bool ok = r && r->code == 0 && bcm_body_contains(r, "127.0.0.1@c1") &&
              bcm_body_contains(r, "127.0.0.1@c2");
    rmq_cmd_free(r);
    return ok;
}

/* The RESULT line of the script (its other lines go to stderr for the log).
 * At READY (the group's queues split, nothing sent yet) both brokers must
 * list both consumers of the group: *listed counts the brokers that did. */
static bool read_result(fixture *f, char *result, size_t len, int timeout_ms, int *listed)
{
    uint64_t deadline = rmq_test_now_ms() + (uint64_t)timeout_ms;
    uint64_t now;
    while ((now = rmq_test_now_ms()) < deadline) {
        if (!rmq_node_line(&f->node, "", result, len, (int)(deadline - now)))
            return false;
        fprintf(stderr, "node: %s\n", result);
        if (strcmp(result, "READY") == 0)
            *listed = both_consumers_listed(f->port_a) + both_consumers_listed(f->port_b);
        if (strncmp(result, "RESULT ", 7) == 0)
            return true;
    }
    return false;
}

/* GET_ROUTEINFO_BY_TOPIC (105) on the NameServer names both brokers. */
static bool route_has_both(int ns_port)
{
    const char *kv[] = {"topic", TOPIC, NULL};
    rmq_cmd *r = bcm_call(ns_port, 105, kv, NULL);
    bool ok =
        r && r->code == 0 && bcm_body_contains(r, "broker-a") && bcm_body_contains(r, "broker-b");
    rmq_cmd_free(r);
    return ok;
}

static long long ext_ll(const rmq_cmd *r, const char *key)
{
    const char *v = r ? rmq_cmd_ext_get(r, key) : NULL;
    return v ? atoll(v) : -1;
}

/* GET_MAX_OFFSET (30) of every queue of `port`, summed into *sum; per queue
 * into max[]. */
static void max_offsets(int port, long long max[QUEUES], long long *sum)
{
    *sum = 0;
    for (int q = 0; q < QUEUES; q++) {
        char qs[8];
        snprintf(qs, sizeof qs, "%d", q);
        const char *kv[] = {"topic", TOPIC, "queueId", qs, NULL};
        rmq_cmd *r = bcm_call(port, 30, kv, NULL);
        assert_non_null(r);
        assert_int_equal(r->code, 0);
        max[q] = ext_ll(r, "offset");
        *sum += max[q];
        rmq_cmd_free(r);
    }
}

/* True when the group's committed offset (QUERY_CONSUMER_OFFSET 14) of every
 * queue of `port` equals its max offset. */
static bool committed_to_the_end(int port, const long long max[QUEUES])
{
    for (int q = 0; q < QUEUES; q++) {
        char qs[8];
        snprintf(qs, sizeof qs, "%d", q);
        const char *kv[] = {"consumerGroup", GROUP, "topic", TOPIC, "queueId", qs, NULL};
        rmq_cmd *r = bcm_call(port, 14, kv, NULL);
        long long off = r && r->code == 0 ? ext_ll(r, "offset") : -2;
        rmq_cmd_free(r);
        if (off != max[q])
            return false;
    }
    return true;
}

/* GET_CONSUME_STATS (208) of the group on `port`: the broker's queues with
 * offsets, none of the other broker's, none without a consumer offset. */
static void expect_consume_stats(int port, const char *broker, const char *other)
{
    const char *kv[] = {"consumerGroup", GROUP, "topic", TOPIC, NULL};
    rmq_cmd *r = bcm_call(port, 208, kv, NULL);
    assert_non_null(r);
    if (r->code != 0 || !r->body)
        fprintf(stderr, "208 on %s answered %d %s\n", broker, r->code, r->remark ? r->remark : "");
    assert_int_equal(r->code, 0);
    fprintf(stderr, "208 on %s: %.*s\n", broker, (int)r->body_len, (const char *)r->body);
    char needle[64];
    snprintf(needle, sizeof needle, "\"brokerName\":\"%s\"", broker);
    assert_true(bcm_body_contains(r, needle));
    snprintf(needle, sizeof needle, "\"brokerName\":\"%s\"", other);
    assert_false(bcm_body_contains(r, needle));
    assert_false(bcm_body_contains(r, "\"consumerOffset\":-1"));
    rmq_cmd_free(r);
}

static void two_brokers_share_the_topic_and_the_group(void **state)
{
    fixture *f = *state;
    uint64_t deadline = rmq_test_now_ms() + 30000;
    while (!route_has_both(f->ns_port) && rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(100);
    assert_true(route_has_both(f->ns_port));

    char port[16], count[16];
    snprintf(port, sizeof port, "%d", f->ns_port);
    snprintf(count, sizeof count, "%d", COUNT);
    const char *argv[] = {ST_SCRIPT, port, TOPIC, count, NULL};
    assert_int_equal(rmq_node_start(&f->node, ST_NODE, ST_NODE_MODULES, argv), 0);
    char result[1024] = "";
    int listed = -1;
    bool got = read_result(f, result, sizeof result, 170000, &listed);
    int status = rmq_node_reap(&f->node, 30000);
    assert_true(got);
    if (strcmp(result, "RESULT ok") != 0)
        fail_msg("ali-ons: %s", result);
    assert_int_equal(status, 0);
    assert_int_equal(listed, 2);

    /* both brokers stored some, together exactly N */
    long long max_a[QUEUES], max_b[QUEUES], sum_a, sum_b;
    max_offsets(f->port_a, max_a, &sum_a);
    max_offsets(f->port_b, max_b, &sum_b);
    fprintf(stderr, "broker-a stored %lld, broker-b %lld\n", sum_a, sum_b);
    assert_true(sum_a > 0);
    assert_true(sum_b > 0);
    assert_int_equal(sum_a + sum_b, COUNT);
    /* the group consumed on both: its offsets reach every queue's end */
    deadline = rmq_test_now_ms() + 15000;
    while (!(committed_to_the_end(f->port_a, max_a) && committed_to_the_end(f->port_b, max_b)) &&
           rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(100);
    assert_true(committed_to_the_end(f->port_a, max_a));
    assert_true(committed_to_the_end(f->port_b, max_b));
    /* consumerProgress (GET_CONSUME_STATS 208) of each broker lists its own queues */
    expect_consume_stats(f->port_a, "broker-a", "broker-b");
    expect_consume_stats(f->port_b, "broker-b", "broker-a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(two_brokers_share_the_topic_and_the_group, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
