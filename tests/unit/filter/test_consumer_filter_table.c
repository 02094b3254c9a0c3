/* test_consumer_filter_table.c — ConsumerFilterManager rules (protocol.md
 * §6.6): register/revive/rebuild by subVersion, death of topics left and of
 * removed groups, cleaning, bloom data, consumerFilter.json round trips and
 * the load-at-start rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "consumer_filter_table.h"

static consumer_filter_table *new_table(void)
{
    consumer_filter_table *t = malloc(sizeof *t);
    bloom_params b;
    assert_int_equal(bloom_params_init(&b, 20, 32), 0);
    rmq_fx_options opt = {0};
    consumer_filter_table_init(t, &b, &opt);
    return t;
}

static void drop(consumer_filter_table *t)
{
    consumer_filter_table_dispose(t);
    free(t);
}

static rmq_consumer_subscription sub(const char *topic, const char *type, const char *expr,
                                     int64_t v)
{
    rmq_consumer_subscription s = {
        .topic = topic, .expression_type = type, .sub_string = expr, .sub_version = v};
    return s;
}

static void test_bloom_defaults_and_java_positions(void **state)
{
    (void)state;
    bloom_params b;
    assert_int_equal(bloom_params_init(&b, 20, 32), 0);
    assert_int_equal(b.k, 3);
    assert_int_equal(b.m, 112);
    assert_int_equal((uint64_t)murmur3_x64_128_as_long("CG#TopicTest", 12), 0x729683ED3CC0E7A5ULL);
    int pos[3];
    bloom_positions(&b, "CG#TopicTest", 12, pos);
    assert_int_equal(pos[0], 109);
    assert_int_equal(pos[1], 15);
    assert_int_equal(pos[2], 3);
}

static void test_register_keeps_sql92_and_skips_tag_and_bad_expressions(void **state)
{
    (void)state;
    consumer_filter_table *t = new_table();
    rmq_consumer_subscription s[] = {sub("T1", "SQL92", "a > 5", 10), sub("T2", "TAG", "*", 10),
                                     sub("T3", "SQL92", "a > 'x'", 10), sub("T4", "SQL92", "", 10)};
    consumer_filter_table_register(t, "CG", s, 4, 1000);
    assert_int_equal(consumer_filter_table_count(t), 1);
    consumer_filter_view v;
    assert_true(consumer_filter_table_get(t, "T1", "CG", &v));
    assert_int_equal(v.born_time, 1000);
    assert_int_equal(v.dead_time, 0);
    assert_int_equal(v.client_version, 10);
    assert_false(v.dead);
    assert_true(v.compiled);
    drop(t);
}

static void test_same_version_revives_dead_entry_and_older_version_is_ignored(void **state)
{
    (void)state;
    consumer_filter_table *t = new_table();
    rmq_consumer_subscription s = sub("T", "SQL92", "a > 5", 10);
    consumer_filter_table_register(t, "CG", &s, 1, 1000);
    consumer_filter_table_unregister(t, "CG", 2000);
    consumer_filter_view v;
    consumer_filter_table_get(t, "T", "CG", &v);
    assert_true(v.dead);
    assert_int_equal(v.dead_time, 2000);
    rmq_consumer_subscription older = sub("T", "SQL92", "b > 1", 9);
    consumer_filter_table_register(t, "CG", &older, 1, 3000);
    consumer_filter_table_get(t, "T", "CG", &v);
    assert_true(v.dead);
    assert_string_equal(v.expression, "a > 5");
    consumer_filter_table_register(t, "CG", &s, 1, 3000);
    consumer_filter_table_get(t, "T", "CG", &v);
    assert_false(v.dead);
    assert_int_equal(v.born_time, 1000);
    drop(t);
}

static void
test_newer_version_rebuilds_changed_expression_or_removes_on_compile_failure(void **state)
{
    (void)state;
    consumer_filter_table *t = new_table();
    rmq_consumer_subscription s = sub("T", "SQL92", "a > 5", 10);
    consumer_filter_table_register(t, "CG", &s, 1, 1000);
    rmq_consumer_subscription same = sub("T", "SQL92", "a > 5", 11);
    consumer_filter_table_register(t, "CG", &same, 1, 2000);
    consumer_filter_view v;
    consumer_filter_table_get(t, "T", "CG", &v);
    assert_int_equal(v.client_version, 11);
    assert_int_equal(v.born_time, 1000); /* unchanged expression: not rebuilt */
    rmq_consumer_subscription changed = sub("T", "SQL92", "a > 6", 12);
    consumer_filter_table_register(t, "CG", &changed, 1, 3000);
    consumer_filter_table_get(t, "T", "CG", &v);
    assert_int_equal(v.born_time, 3000);
    assert_string_equal(v.expression, "a > 6");
    rmq_consumer_subscription broken = sub("T", "SQL92", "a >", 13);
    consumer_filter_table_register(t, "CG", &broken, 1, 4000);
    assert_false(consumer_filter_table_get(t, "T", "CG", &v));
    drop(t);
}

static void test_topics_left_out_of_a_heartbeat_die(void **state)
{
    (void)state;
    consumer_filter_table *t = new_table();
    rmq_consumer_subscription two[] = {sub("A", "SQL92", "x = 1", 1),
                                       sub("B", "SQL92", "y = 1", 1)};
    consumer_filter_table_register(t, "CG", two, 2, 1000);
    consumer_filter_table_register(t, "CG", two, 1, 2000);
    consumer_filter_view v;
    consumer_filter_table_get(t, "A", "CG", &v);
    assert_false(v.dead);
    consumer_filter_table_get(t, "B", "CG", &v);
    assert_true(v.dead);
    assert_int_equal(v.dead_time, 2000);
    drop(t);
}

static void test_clean_purges_entries_dead_for_the_span(void **state)
{
    (void)state;
    consumer_filter_table *t = new_table();
    rmq_consumer_subscription s = sub("T", "SQL92", "a > 5", 10);
    consumer_filter_table_register(t, "CG", &s, 1, 1000);
    consumer_filter_table_unregister(t, "CG", 2000);
    assert_int_equal(consumer_filter_table_clean(t, 2999, 1000), 0);
    assert_int_equal(consumer_filter_table_clean(t, 3000, 1000), 1);
    assert_int_equal(consumer_filter_table_count(t), 0);
    drop(t);
}

static void test_json_has_java_shape_and_reloads_at_start_as_dead(void **state)
{
    (void)state;
    consumer_filter_table *t = new_table();
    rmq_consumer_subscription s = sub("TopicTest", "SQL92", "a > 5", 1700000000001LL);
    consumer_filter_table_register(t, "CG", &s, 1, 1700000000000LL);
    char *text = consumer_filter_table_to_json(t, true);
    json_t *root = json_loads(text, 0, NULL);
    json_t *d = json_object_get(
        json_object_get(json_object_get(json_object_get(root, "filterDataByTopic"), "TopicTest"),
                        "groupFilterData"),
        "CG");
    assert_non_null(d);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(d, "bloomFilterData"), "bitNum")), 112);
    json_t *pos = json_object_get(json_object_get(d, "bloomFilterData"), "bitPos");
    assert_int_equal(json_integer_value(json_array_get(pos, 0)), 109);
    assert_int_equal(json_integer_value(json_array_get(pos, 1)), 15);
    assert_int_equal(json_integer_value(json_array_get(pos, 2)), 3);
    assert_true(json_is_false(json_object_get(d, "dead")));
    assert_string_equal(json_string_value(json_object_get(d, "expressionType")), "SQL92");
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(root, "filterDataByTopic"), "TopicTest"), "topic")),
        "TopicTest");
    json_decref(root);

    consumer_filter_table *u = new_table();
    bool discarded = true;
    char err[128];
    int64_t now = 1700000100000LL;
    assert_int_equal(
        consumer_filter_table_load(u, text, strlen(text), true, now, &discarded, err, sizeof err),
        0);
    assert_false(discarded);
    consumer_filter_view v;
    assert_true(consumer_filter_table_get(u, "TopicTest", "CG", &v));
    assert_true(v.dead);
    assert_true(v.compiled);
    assert_int_equal(v.dead_time, now - 30000);
    /* the consumer heartbeats again with the same version: alive */
    consumer_filter_table_register(u, "CG", &s, 1, now);
    consumer_filter_table_get(u, "TopicTest", "CG", &v);
    assert_false(v.dead);
    drop(u);

    /* hot reload keeps times as they are */
    u = new_table();
    assert_int_equal(
        consumer_filter_table_load(u, text, strlen(text), false, now, NULL, err, sizeof err), 0);
    consumer_filter_table_get(u, "TopicTest", "CG", &v);
    assert_false(v.dead);
    assert_int_equal(v.born_time, 1700000000000LL);
    drop(u);
    free(text);
    drop(t);
}

static void test_load_discards_file_with_other_bloom_parameters(void **state)
{
    (void)state;
    const char *text =
        "{\"filterDataByTopic\":{\"T\":{\"groupFilterData\":{\"CG\":{\"bloomFilterData\":"
        "{\"bitNum\":64,\"bitPos\":[1,2,3]},\"bornTime\":1,\"clientVersion\":1,\"consumerGroup\":"
        "\"CG\","
        "\"dead\":false,\"deadTime\":0,\"expression\":\"a > "
        "5\",\"expressionType\":\"SQL92\",\"topic\":\"T\"}},"
        "\"topic\":\"T\"}}}";
    consumer_filter_table *t = new_table();
    bool discarded = false;
    char err[128];
    assert_int_equal(consumer_filter_table_load(t, text, strlen(text), true, 100000, &discarded,
                                                err, sizeof err),
                     0);
    assert_true(discarded);
    assert_int_equal(consumer_filter_table_count(t), 0);
    assert_int_equal(
        consumer_filter_table_load(t, "not json", 8, true, 1, &discarded, err, sizeof err), -1);
    drop(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bloom_defaults_and_java_positions),
        cmocka_unit_test(test_register_keeps_sql92_and_skips_tag_and_bad_expressions),
        cmocka_unit_test(test_same_version_revives_dead_entry_and_older_version_is_ignored),
        cmocka_unit_test(
            test_newer_version_rebuilds_changed_expression_or_removes_on_compile_failure),
        cmocka_unit_test(test_topics_left_out_of_a_heartbeat_die),
        cmocka_unit_test(test_clean_purges_entries_dead_for_the_span),
        cmocka_unit_test(test_json_has_java_shape_and_reloads_at_start_as_dead),
        cmocka_unit_test(test_load_discards_file_with_other_bloom_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
