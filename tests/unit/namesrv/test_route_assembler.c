/* test_route_assembler.c — the route bodies the cache serves (assembled from
 * per-broker fragments, both dialects in one entry) are byte-identical to
 * encode_topic_route's, whatever the table holds. */
#include <urcu.h>

#include "namesrv_test_util.h"
#include "route_assembler.h"
#include "route_encoder.h"

/* Assembles every topic in one pass (fragments shared, hints exercised) and
 * compares each dialect with the reference encoder. */
static void assert_assembled_matches_encoder(const route_table *rt, const char *const *topics,
                                             size_t n, const char *oc)
{
    route_assembler a;
    route_assembler_init(&a, rt);
    for (size_t i = 0; i < n; i++) {
        const topic_entry *te = route_table_topic(rt, topics[i]);
        char *native = route_text(rt, topics[i], oc, false);
        char *std = route_text(rt, topics[i], oc, true);
        bool absent = false;
        route_entry *e = te ? route_assembler_build(&a, te, oc, &absent) : NULL;
        if (!native) {
            assert_null(e);
            assert_true(absent || !te);
            continue;
        }
        assert_non_null(e);
        assert_string_equal(e->topic, topics[i]);
        assert_int_equal(e->hash, rmq_str_hash(topics[i]));
        assert_int_equal(e->native_len, strlen(native));
        assert_int_equal(e->std_len, strlen(std));
        assert_string_equal(e->native_body, native);
        assert_string_equal(e->std_body, std);
        route_entry_put(e);
        free(native);
        free(std);
    }
    route_assembler_free(&a);
}

static void test_assembled_routes_match_encoder_for_shared_brokers(void **state)
{
    (void)state;
    route_table rt;
    route_table_init(&rt, 120000);
    reg(&rt, "C", "broker-a", "10.0.0.1:10911", 0, 1, 1, "T1:6:8:8:0,T2:4:1:2:3,T3:6:16:16:0", 1,
        NULL);
    reg(&rt, "C", "broker-a", "10.0.0.9:10911", 1, 2, 1, "T1:6:8:8:0", 1, NULL);
    reg(&rt, "C", "broker-b", "10.0.0.2:10911", 0, 3, 1, "T2:2:4:4:-1,T3:6:1:1:0", 1, NULL);
    reg(&rt, "D", "broker-c", "10.0.0.3:10911", 0, 4, 1, "T3:6:100000:2147483647:0", 1, NULL);
    const char *topics[] = {"T1", "T2", "T3", "T3", "T1", "missing"};
    assert_assembled_matches_encoder(&rt, topics, 6, NULL);
    assert_assembled_matches_encoder(&rt, topics, 6, "broker-a:4;broker-b:4");
    route_table_destroy(&rt);
}

static void test_assembled_routes_escape_per_dialect(void **state)
{
    (void)state;
    route_table rt;
    route_table_init(&rt, 120000);
    reg(&rt, "C/\xc3\xbc", "b/\xe4\xb8\xad", "a/\"1", 0, 1, 1, "T", 1, NULL);
    reg(&rt, "C", "b\\2", "a:2", 0, 2, 1, "T", 1, NULL);
    const char *topics[] = {"T"};
    assert_assembled_matches_encoder(&rt, topics, 1, NULL);
    assert_assembled_matches_encoder(&rt, topics, 1, "x/\xc3\xbc");
    route_table_destroy(&rt);
}

static void test_assembled_routes_skip_brokers_without_broker_data(void **state)
{
    (void)state;
    route_table rt;
    route_table_init(&rt, 120000);
    reg(&rt, "C", "a", "a:1", 0, 1, 1, "T", 1, NULL);
    reg(&rt, "C", "b", "b:1", 0, 2, 1, "T", 1, NULL);
    queue_data q = {.broker_name = "b", .perm = 6, .read_queue_nums = 1, .write_queue_nums = 1};
    assert_true(route_table_register_topic(&rt, "Tb", &q, 1));
    /* "b" loses its BrokerData; its QueueData on T stay listed, Tb has no route */
    route_table_unregister(&rt, "C", "b", "b:1", 0);
    queue_data qa = {.broker_name = "a", .perm = 6, .read_queue_nums = 1, .write_queue_nums = 1};
    assert_true(route_table_register_topic(&rt, "Tb", &qa, 1));
    /* a QueueData whose broker name never had BrokerData (restored state) */
    queue_data ghost = {
        .broker_name = "ghost", .perm = 6, .read_queue_nums = 2, .write_queue_nums = 2};
    assert_int_equal(route_table_restore_queue(&rt, "T", &ghost), 0);
    assert_int_equal(route_table_restore_queue(&rt, "Ghost", &ghost), 0);
    const char *topics[] = {"T", "Tb", "Ghost", "T"};
    assert_assembled_matches_encoder(&rt, topics, 4, NULL);
    route_table_destroy(&rt);
}

static void test_assembled_routes_carry_filter_servers(void **state)
{
    (void)state;
    route_table rt;
    route_table_init(&rt, 120000);
    reg(&rt, "C", "a", "a:1", 0, 1, 1, "T", 1, NULL);
    reg(&rt, "C", "b", "b:1", 0, 2, 1, "T,U", 1, NULL);
    const char *fs[] = {"f:1", "f/2"};
    assert_int_equal(route_table_restore_filter(&rt, "b:1", fs, 2), 0);
    assert_int_equal(route_table_restore_filter(&rt, "a:1", fs, 1), 0);
    const char *topics[] = {"T", "U"};
    assert_assembled_matches_encoder(&rt, topics, 2, NULL);
    assert_assembled_matches_encoder(&rt, topics, 2, "o");
    route_table_destroy(&rt);
}

static void test_assembled_routes_with_more_brokers_than_hints(void **state)
{
    (void)state;
    route_table rt;
    route_table_init(&rt, 120000);
    char name[32], addr[32];
    for (int i = 0; i < 12; i++) {
        snprintf(name, sizeof(name), "broker-%02d", i);
        snprintf(addr, sizeof(addr), "10.0.0.%d:10911", i);
        /* the second topic's brokers are offset so hints miss */
        reg(&rt, "C", name, addr, 0, (unsigned long long)i + 1, 1, i % 2 ? "Wide,Odd" : "Wide", 1,
            NULL);
    }
    const char *topics[] = {"Odd", "Wide", "Odd", "Wide"};
    assert_assembled_matches_encoder(&rt, topics, 4, NULL);
    route_table_destroy(&rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_assembled_routes_match_encoder_for_shared_brokers),
        cmocka_unit_test(test_assembled_routes_escape_per_dialect),
        cmocka_unit_test(test_assembled_routes_skip_brokers_without_broker_data),
        cmocka_unit_test(test_assembled_routes_carry_filter_servers),
        cmocka_unit_test(test_assembled_routes_with_more_brokers_than_hints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
