/* Java file formats: consumerOffset.json with fastjson bare keys,
 * topics.json, subscriptionGroup.json (protocol.md §2.10, §5.15). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fastjson_text.h"
#include "offset_table.h"
#include "subscription_groups.h"
#include "topic_table.h"

/* Exactly what a Java 4.9.8 broker writes (pretty, tabs, bare keys). */
static const char java_offsets[] = "{\n\t\"offsetTable\":{\n\t\t\"TopicTest@CG\":{0:10,1:12\n\t\t},"
                                   "\n\t\t\"%RETRY%CG@CG\":{0:0\n\t\t}\n\t}\n}";

static void test_java_offset_file_loads_as_is(void **state)
{
    (void)state;
    bcm_offset_table t;
    bcm_offset_table_init(&t);
    char err[128];
    assert_int_equal(bcm_offset_table_load(&t, java_offsets, strlen(java_offsets), err, sizeof err),
                     0);
    int64_t off = -1;
    assert_true(bcm_offset_query(&t, "TopicTest", "CG", 1, &off));
    assert_int_equal(off, 12);
    assert_true(bcm_offset_query(&t, "%RETRY%CG", "CG", 0, &off));
    assert_int_equal(off, 0);
    assert_false(bcm_offset_query(&t, "TopicTest", "CG", 2, &off));
    bcm_offset_table_free(&t);
}

static void test_offsets_encode_with_bare_keys_and_round_trip(void **state)
{
    (void)state;
    bcm_offset_table t;
    bcm_offset_table_init(&t);
    bcm_offset_commit(&t, "T", "G", 1, 12);
    bcm_offset_commit(&t, "T", "G", 0, 10);
    char *s = bcm_offset_table_encode(&t, false);
    assert_string_equal(s, "{\"offsetTable\":{\"T@G\":{0:10,1:12}}}");
    char *p = bcm_offset_table_encode(&t, true);
    assert_string_equal(p, "{\n\t\"offsetTable\":{\n\t\t\"T@G\":{0:10,1:12\n\t\t}\n\t}\n}");
    bcm_offset_table back;
    bcm_offset_table_init(&back);
    char err[64];
    assert_int_equal(bcm_offset_table_load(&back, p, strlen(p), err, sizeof err), 0);
    char *s2 = bcm_offset_table_encode(&back, false);
    assert_string_equal(s, s2);
    free(s);
    free(p);
    free(s2);
    bcm_offset_table_free(&back);
    bcm_offset_table_free(&t);
}

static void test_smaller_offset_still_replaces_as_4_9_8(void **state)
{
    (void)state;
    bcm_offset_table t;
    bcm_offset_table_init(&t);
    int64_t off;
    bcm_offset_commit(&t, "AnyTopicEvenUnknown", "G", 3, 100);
    bcm_offset_commit(&t, "AnyTopicEvenUnknown", "G", 3, 7);
    assert_true(bcm_offset_query(&t, "AnyTopicEvenUnknown", "G", 3, &off));
    assert_int_equal(off, 7);
    json_t *groups = json_array();
    bcm_offset_groups_of_topic(&t, "AnyTopicEvenUnknown", groups);
    assert_int_equal(json_array_size(groups), 1);
    json_decref(groups);
    assert_int_equal(bcm_offset_remove_topic(&t, "AnyTopicEvenUnknown"), 1);
    assert_false(bcm_offset_query(&t, "AnyTopicEvenUnknown", "G", 3, &off));
    bcm_offset_table_free(&t);
}

/* Slave offset sync (43): the master's inner map of each TOPIC@GROUP
 * replaces the slave's whole (queue 5 the master lacks goes), keys only the
 * slave has stay, as SlaveSynchronize#syncConsumerOffset's putAll. */
static void test_slave_sync_takes_master_inner_maps_whole(void **state)
{
    (void)state;
    bcm_offset_table t;
    bcm_offset_table_init(&t);
    bcm_offset_commit(&t, "T", "G", 0, 3);
    bcm_offset_commit(&t, "T", "G", 5, 9);
    bcm_offset_commit(&t, "SlaveOnly", "G", 1, 4);
    bcm_offset_commit(&t, "Emptied", "G", 2, 6);
    static const char master[] = "{\"offsetTable\":{\"T@G\":{0:10,1:12},\"Emptied@G\":{}}}";
    char err[128];
    assert_int_equal(bcm_offset_table_take_keys(&t, master, strlen(master), err, sizeof err), 0);
    char *s = bcm_offset_table_encode(&t, false);
    assert_string_equal(s, "{\"offsetTable\":{\"Emptied@G\":{},\"SlaveOnly@G\":{1:4},"
                           "\"T@G\":{0:10,1:12}}}");
    free(s);
    bcm_offset_table_free(&t);
}

static void test_quote_bare_keys_leaves_strings_and_arrays_alone(void **state)
{
    (void)state;
    const char *in = "{0:\"a{1:b}\",\"k\":[1,2],\"m\":{ 12 :3,-1:4}}";
    char *out = fastjson_quote_bare_keys(in, strlen(in));
    assert_string_equal(out, "{\"0\":\"a{1:b}\",\"k\":[1,2],\"m\":{ \"12\" :3,\"-1\":4}}");
    free(out);
}

static void test_system_topics_match_java_4_9_8(void **state)
{
    (void)state;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 1);
    bcm_system_topic_opts o = {.cluster_name = "JavaCluster",
                               .broker_name = "broker-a",
                               .auto_create_topic_enable = true,
                               .default_topic_queue_nums = 8,
                               .cluster_topic_enable = true,
                               .broker_topic_enable = true};
    bcm_topic_table_add_system(&t, &o);
    /* the set a real 4.9.8 broker registered (vector 103-register-broker.req) */
    const char *names[] = {"JavaCluster",     "SCHEDULE_TOPIC_XXXX",
                           "SELF_TEST_TOPIC", "JavaCluster_REPLY_TOPIC",
                           "broker-a",        "TBW102",
                           "BenchmarkTest",   "OFFSET_MOVED_EVENT"};
    json_t *topics = bcm_topic_table_json(&t);
    assert_int_equal(json_object_size(topics), 8);
    for (size_t i = 0; i < 8; i++)
        assert_non_null(json_object_get(topics, names[i]));
    char *tbw = json_dumps(json_object_get(topics, "TBW102"), JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(tbw, "{\"order\":false,\"perm\":7,\"readQueueNums\":8,\"topicFilterType\":"
                             "\"SINGLE_TAG\",\"topicName\":\"TBW102\",\"topicSysFlag\":0,"
                             "\"writeQueueNums\":8}");
    free(tbw);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(topics, "BenchmarkTest"),
                                                        "readQueueNums")),
                     1024);
    json_decref(topics);
    bcm_topic_table_free(&t);
}

static void test_topics_json_loads_and_bumps_version_on_change(void **state)
{
    (void)state;
    const char *file = "{\"dataVersion\":{\"counter\":5,\"timestamp\":1700000000061},"
                       "\"topicConfigTable\":{\"TopicTest\":{\"order\":false,\"perm\":6,"
                       "\"readQueueNums\":4,\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":"
                       "\"TopicTest\",\"topicSysFlag\":0,\"writeQueueNums\":4}}}";
    bcm_topic_table t;
    bcm_topic_table_init(&t, 1);
    char err[64];
    assert_int_equal(bcm_topic_table_load(&t, file, strlen(file), err, sizeof err), 0);
    assert_int_equal(t.dv.counter, 5);
    assert_true(bcm_topic_table_has(&t, "TopicTest"));
    assert_true(bcm_topic_table_create_if_absent(&t, "%RETRY%CG", 1, 6, 0, 2000));
    assert_int_equal(t.dv.counter, 6);
    assert_int_equal(t.dv.timestamp, 2000);
    assert_false(bcm_topic_table_create_if_absent(&t, "%RETRY%CG", 1, 6, 0, 3000));
    assert_int_equal(t.dv.counter, 6);
    assert_true(bcm_topic_table_delete(&t, "TopicTest", 4000));
    assert_int_equal(t.dv.counter, 7);
    bcm_topic_table_free(&t);
}

static void test_subscription_groups_autocreate_rules(void **state)
{
    (void)state;
    bcm_subscription_groups s;
    bcm_subscription_groups_init(&s, 1);
    bool created;
    assert_non_null(json_object_get(s.groups, "TOOLS_CONSUMER"));
    assert_null(bcm_subscription_groups_find(&s, "CG", false, 10, &created));
    assert_false(created);
    /* system groups are created even when auto-create is off */
    assert_non_null(bcm_subscription_groups_find(&s, "CID_RMQ_SYS_X", false, 10, &created));
    assert_true(created);
    assert_non_null(bcm_subscription_groups_find(&s, "CG", true, 11, &created));
    assert_true(created);
    assert_int_equal(s.dv.counter, 2);
    char *out = json_dumps(json_object_get(s.groups, "CG"), JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(out,
                        "{\"brokerId\":0,\"consumeBroadcastEnable\":true,\"consumeEnable\":true,"
                        "\"consumeFromMinEnable\":true,\"groupName\":\"CG\","
                        "\"notifyConsumerIdsChangedEnable\":true,\"retryMaxTimes\":16,"
                        "\"retryQueueNums\":1,\"whichBrokerWhenConsumeSlowly\":1}");
    free(out);
    bcm_subscription_groups_free(&s);
}

static void test_java_subscription_group_file_loads(void **state)
{
    (void)state;
    const char *file =
        "{\n\t\"dataVersion\":{\n\t\t\"counter\":3,\n\t\t\"timestamp\":1700000000000\n\t},"
        "\n\t\"subscriptionGroupTable\":{\n\t\t\"CG\":{\n\t\t\t\"brokerId\":0,"
        "\"consumeBroadcastEnable\":true,\"consumeEnable\":true,\"consumeFromMinEnable\":true,"
        "\"groupName\":\"CG\",\"notifyConsumerIdsChangedEnable\":false,\"retryMaxTimes\":16,"
        "\"retryQueueNums\":2,\"whichBrokerWhenConsumeSlowly\":1,\"unknownKey5x\":{}\n\t\t}\n\t}"
        "\n}";
    bcm_subscription_groups s;
    bcm_subscription_groups_init(&s, 1);
    char err[64];
    assert_int_equal(bcm_subscription_groups_load(&s, file, strlen(file), err, sizeof err), 0);
    json_t *g = json_object_get(s.groups, "CG");
    assert_true(json_is_false(json_object_get(g, "notifyConsumerIdsChangedEnable")));
    assert_int_equal(json_integer_value(json_object_get(g, "retryQueueNums")), 2);
    assert_int_equal(s.dv.counter, 3);
    bcm_subscription_groups_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_java_offset_file_loads_as_is),
        cmocka_unit_test(test_offsets_encode_with_bare_keys_and_round_trip),
        cmocka_unit_test(test_smaller_offset_still_replaces_as_4_9_8),
        cmocka_unit_test(test_slave_sync_takes_master_inner_maps_whole),
        cmocka_unit_test(test_quote_bare_keys_leaves_strings_and_arrays_alone),
        cmocka_unit_test(test_system_topics_match_java_4_9_8),
        cmocka_unit_test(test_topics_json_loads_and_bumps_version_on_change),
        cmocka_unit_test(test_subscription_groups_autocreate_rules),
        cmocka_unit_test(test_java_subscription_group_file_loads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
