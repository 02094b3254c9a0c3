/* test_route_encoding_and_cache.c — route bodies in both dialects, the other
 * route-table bodies, and publication through the RCU route cache
 * (protocol.md §2.10, §4.2, §4.4.6-§4.4.15, §4.9). */
#include <urcu.h>

#include "namesrv_core.h"
#include "namesrv_test_util.h"
#include "route_encoder.h"

static void test_route_native_and_standard_dialects_match_java(void **state)
{
    route_table *rt = *state;
    reg(rt, "DefaultCluster", "broker-a", "127.0.0.1:10911", 0, 1, 1, "TopicTest:6:4:4:0", 1, NULL);
    reg(rt, "DefaultCluster", "broker-a", "127.0.0.1:10921", 1, 2, 1, "TopicTest:6:4:4:0", 1, NULL);
    char *native = route_text(rt, "TopicTest", NULL, false);
    assert_string_equal(
        native, "{\"brokerDatas\":[{\"brokerAddrs\":{0:\"127.0.0.1:10911\",1:\"127.0.0.1:10921\"},"
                "\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\"}],"
                "\"filterServerTable\":{},\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":6,"
                "\"readQueueNums\":4,\"topicSysFlag\":0,\"writeQueueNums\":4}]}");
    char *std = route_text(rt, "TopicTest", NULL, true);
    assert_string_equal(
        std,
        "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"127.0.0.1:10911\",\"1\":\"127.0.0.1:10921\"},"
        "\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\"}],"
        "\"filterServerTable\":{},\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":6,"
        "\"readQueueNums\":4,\"topicSysFlag\":0,\"writeQueueNums\":4}]}");
    free(native);
    free(std);
}

static void test_standard_dialect_escapes_non_ascii_and_slash(void **state)
{
    route_table *rt = *state;
    reg(rt, "C/\xc3\xbc", "b", "a:1", 0, 1, 1, "T", 1, NULL);
    char *std = route_text(rt, "T", NULL, true);
    char *native = route_text(rt, "T", NULL, false);
    assert_non_null(strstr(std, "\"cluster\":\"C\\/\\u00FC\""));
    assert_non_null(strstr(native, "\"cluster\":\"C/\xc3\xbc\""));
    free(std);
    free(native);
}

static void test_order_topic_conf_sits_between_filter_table_and_queues(void **state)
{
    route_table *rt = *state;
    reg(rt, "C", "b", "a:1", 0, 1, 1, "T", 1, NULL);
    char *s = route_text(rt, "T", "b:4", false);
    assert_non_null(
        strstr(s, "\"filterServerTable\":{},\"orderTopicConf\":\"b:4\",\"queueDatas\""));
    free(s);
}

static void test_route_absent_without_broker_data_or_topic(void **state)
{
    route_table *rt = *state;
    reg(rt, "C", "b", "a:1", 0, 1, 1, "T", 1, NULL);
    queue_data q = {.broker_name = "b", .perm = 6, .read_queue_nums = 1, .write_queue_nums = 1};
    assert_true(route_table_register_topic(rt, "T2", &q, 1));
    route_table_unregister(rt, "C", "b", "a:1", 0); /* drops BrokerData and queues */
    assert_null(route_text(rt, "T", NULL, false));
    assert_null(route_text(rt, "nope", NULL, false));
}

static void test_cluster_info_is_always_native(void **state)
{
    route_table *rt = *state;
    reg(rt, "JavaCluster", "broker-a", "127.0.0.1:19951", 0, 1, 1, "T", 1, NULL);
    text_buf b;
    tb_init(&b);
    encode_cluster_info(rt, &b);
    char *s = tb_take(&b, NULL);
    assert_string_equal(
        s, "{\"brokerAddrTable\":{\"broker-a\":{\"brokerAddrs\":{0:\"127.0.0.1:19951\"},"
           "\"brokerName\":\"broker-a\",\"cluster\":\"JavaCluster\"}},"
           "\"clusterAddrTable\":{\"JavaCluster\":[\"broker-a\"]}}");
    free(s);
}

static char *list_text(const route_table *rt, int which, const char *arg)
{
    text_buf b;
    tb_init(&b);
    if (which == 0)
        encode_system_topic_list(rt, &b);
    else if (which == 1)
        encode_topics_by_cluster(rt, arg, &b);
    else
        encode_topic_list(rt, (topic_list_kind)(which - 2), &b);
    return tb_take(&b, NULL);
}

static void test_topic_lists(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "C1", "a:1", 0, 1, 1, "U:6:1:1:1,S:6:1:1:2,US:6:1:1:3,P", 1, NULL);
    reg(rt, "C2", "b2", "b:1", 0, 2, 1, "Q", 1, NULL);
    char *s = list_text(rt, 0, NULL);
    assert_string_equal(s, "{\"brokerAddr\":\"a:1\",\"topicList\":[\"C1\",\"C2\",\"b2\"]}");
    free(s);
    s = list_text(rt, 1, "C2");
    assert_string_equal(s, "{\"topicList\":[\"Q\"]}");
    free(s);
    s = list_text(rt, 1, "unknown");
    assert_string_equal(s, "{\"topicList\":[]}");
    free(s);
    s = list_text(rt, 2 + TOPIC_LIST_ALL, NULL);
    assert_string_equal(s, "{\"topicList\":[\"P\",\"Q\",\"S\",\"U\",\"US\"]}");
    free(s);
    s = list_text(rt, 2 + TOPIC_LIST_UNIT, NULL);
    assert_string_equal(s, "{\"topicList\":[\"U\",\"US\"]}");
    free(s);
    s = list_text(rt, 2 + TOPIC_LIST_HAS_UNIT_SUB, NULL);
    assert_string_equal(s, "{\"topicList\":[\"S\",\"US\"]}");
    free(s);
    s = list_text(rt, 2 + TOPIC_LIST_HAS_UNIT_SUB_UNUNIT, NULL);
    assert_string_equal(s, "{\"topicList\":[\"S\"]}");
    free(s);
}

/* Java's getSystemTopicList reads the cluster table: a broker name that one
 * cluster still lists after an UNREGISTER through another cluster removed
 * its BrokerData stays in 304's list (without a brokerAddr). 106 and 224 read
 * the same cluster set. */
static void test_system_topic_list_keeps_a_name_only_a_cluster_lists(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "b1", "a:1", 0, 1, 1, "T", 1, NULL);
    reg(rt, "C2", "b1", "a:1", 0, 2, 1, "T", 1, NULL);
    char *s = list_text(rt, 0, NULL);
    assert_string_equal(s, "{\"brokerAddr\":\"a:1\",\"topicList\":[\"C1\",\"C2\",\"b1\"]}");
    free(s);
    route_table_unregister(rt, "C2", "b1", "a:1", 0);
    assert_null(route_table_broker(rt, "b1"));
    assert_null(route_table_cluster(rt, "C2"));
    s = list_text(rt, 0, NULL);
    assert_string_equal(s, "{\"topicList\":[\"C1\",\"b1\"]}");
    free(s);
    s = list_text(rt, 1, "C1"); /* the name is listed, its topics are gone */
    assert_string_equal(s, "{\"topicList\":[]}");
    free(s);
    text_buf b;
    tb_init(&b);
    encode_cluster_info(rt, &b);
    s = tb_take(&b, NULL);
    assert_string_equal(s, "{\"brokerAddrTable\":{},\"clusterAddrTable\":{\"C1\":[\"b1\"]}}");
    free(s);
    /* another broker with data supplies brokerAddr; names stay a sorted set */
    reg(rt, "C3", "b0", "z:9", 0, 1, 1, "Q", 1, NULL);
    reg(rt, "C1", "b0", "z:9", 0, 2, 1, "Q", 1, NULL);
    s = list_text(rt, 0, NULL);
    assert_string_equal(s, "{\"brokerAddr\":\"z:9\",\"topicList\":[\"C1\",\"C3\",\"b0\",\"b1\"]}");
    free(s);
}

/* ---- the published cache ---- */

static int setup_core(void **state)
{
    namesrv_core *core = malloc(sizeof(*core));
    namesrv_config cfg;
    namesrv_config_defaults(&cfg);
    assert_int_equal(namesrv_core_init(core, &cfg), 0);
    *state = core;
    return 0;
}

static int teardown_core(void **state)
{
    namesrv_core_destroy(*state);
    free(*state);
    return 0;
}

static void test_cache_follows_registration_and_unregistration(void **state)
{
    namesrv_core *core = *state;
    const char *body;
    size_t len;
    reg(&core->routes, "C", "b", "a:1", 0, 1, 1, "T1,T2", 1, NULL);
    assert_int_equal(namesrv_core_publish(core), 0);
    assert_int_equal(route_cache_count(&core->cache), 2);
    route_entry *e = route_cache_get(&core->cache, "T1", true, &body, &len);
    assert_non_null(e);
    assert_non_null(strstr(body, "\"0\":\"a:1\""));
    route_entry_put(e);
    e = route_cache_get(&core->cache, "T1", false, &body, &len);
    assert_non_null(strstr(body, "{0:\"a:1\"}"));
    assert_int_equal(len, strlen(body));
    route_entry_put(e);
    route_table_unregister(&core->routes, "C", "b", "a:1", 0);
    assert_int_equal(namesrv_core_publish(core), 0);
    assert_null(route_cache_get(&core->cache, "T1", false, &body, &len));
    assert_int_equal(route_cache_count(&core->cache), 0);
}

static void test_cache_rebuilds_only_changed_topics(void **state)
{
    namesrv_core *core = *state;
    const char *body;
    size_t len;
    reg(&core->routes, "C", "b1", "a:1", 0, 1, 1, "T1", 1, NULL);
    reg(&core->routes, "C", "b2", "a:2", 0, 2, 1, "T2", 1, NULL);
    namesrv_core_publish(core);
    route_entry *t1 = route_cache_get(&core->cache, "T1", false, &body, &len);
    route_entry *t2 = route_cache_get(&core->cache, "T2", false, &body, &len);
    reg(&core->routes, "C", "b2", "a:2", 0, 2, 2, "T2:4", 2, NULL);
    namesrv_core_publish(core);
    route_entry *t1b = route_cache_get(&core->cache, "T1", false, &body, &len);
    route_entry *t2b = route_cache_get(&core->cache, "T2", false, &body, &len);
    assert_ptr_equal(t1, t1b);
    assert_ptr_not_equal(t2, t2b);
    assert_non_null(strstr(body, "\"perm\":4"));
    route_entry_put(t1);
    route_entry_put(t1b);
    route_entry_put(t2b);
    /* the replaced entry stays readable while referenced */
    assert_non_null(strstr(t2->native_body, "\"perm\":6"));
    route_entry_put(t2);
}

static void test_cache_survives_growth_and_many_topics(void **state)
{
    namesrv_core *core = *state;
    char spec[64 * 1100];
    size_t n = 0;
    for (int i = 0; i < 1000; i++)
        n += (size_t)snprintf(spec + n, sizeof(spec) - n, "%sT%d", i ? "," : "", i);
    reg(&core->routes, "C", "b", "a:1", 0, 1, 1, spec, 1, NULL);
    namesrv_core_publish(core);
    assert_int_equal(route_cache_count(&core->cache), 1000);
    for (int i = 0; i < 1000; i += 97) {
        char t[16];
        snprintf(t, sizeof(t), "T%d", i);
        const char *body;
        size_t len;
        route_entry *e = route_cache_get(&core->cache, t, false, &body, &len);
        assert_non_null(e);
        route_entry_put(e);
    }
    for (int i = 0; i < 1000; i += 2) {
        char t[16];
        snprintf(t, sizeof(t), "T%d", i);
        route_table_delete_topic(&core->routes, t, NULL);
    }
    namesrv_core_publish(core);
    assert_int_equal(route_cache_count(&core->cache), 500);
    const char *body;
    size_t len;
    assert_null(route_cache_get(&core->cache, "T2", false, &body, &len));
    route_entry *e = route_cache_get(&core->cache, "T3", false, &body, &len);
    assert_non_null(e);
    route_entry_put(e);
}

static void test_order_conf_follows_setting_and_kv(void **state)
{
    namesrv_core *core = *state;
    const char *body;
    size_t len;
    reg(&core->routes, "C", "b", "a:1", 0, 1, 1, "T1", 1, NULL);
    kv_store_put(&core->kv, KV_NAMESPACE_ORDER_TOPIC_CONFIG, "T1", "b:8");
    namesrv_core_publish(core);
    route_entry *e = route_cache_get(&core->cache, "T1", false, &body, &len);
    assert_null(strstr(body, "orderTopicConf"));
    route_entry_put(e);
    core->cfg.order_message_enable = true;
    core->routes.all_dirty = true;
    namesrv_core_publish(core);
    e = route_cache_get(&core->cache, "T1", false, &body, &len);
    assert_non_null(strstr(body, "\"orderTopicConf\":\"b:8\""));
    route_entry_put(e);
}

/* Entries are carved from reused blocks: a broker's topics withdrawn and
 * registered again take no new block, and a body a reader still holds stays
 * valid after the cache (and its arena) is gone. */
static void test_entry_blocks_are_reused_and_outlive_the_cache(void **state)
{
    (void)state;
    namesrv_config cfg;
    namesrv_config_defaults(&cfg);
    namesrv_core core;
    assert_int_equal(namesrv_core_init(&core, &cfg), 0);
    char spec[64 * 2100];
    size_t n = 0;
    for (int i = 0; i < 2000; i++)
        n += (size_t)snprintf(spec + n, sizeof(spec) - n, "%sTopicWithALongerName%d", i ? "," : "",
                              i);
    reg(&core.routes, "C", "b", "a:1", 0, 1, 1, spec, 1, NULL);
    namesrv_core_publish(&core);
    size_t blocks = entry_arena_blocks(core.cache.arena);
    assert_true(blocks >= 2);
    route_table_unregister(&core.routes, "C", "b", "a:1", 0);
    namesrv_core_publish(&core);
    assert_int_equal(route_cache_count(&core.cache), 0);
    rcu_barrier(); /* the withdrawn entries' grace periods are over */
    reg(&core.routes, "C", "b", "a:1", 0, 1, 2, spec, 1, NULL);
    namesrv_core_publish(&core);
    assert_int_equal(route_cache_count(&core.cache), 2000);
    assert_true(entry_arena_blocks(core.cache.arena) <= blocks + 1);
    const char *body;
    size_t len;
    route_entry *held = route_cache_get(&core.cache, "TopicWithALongerName7", true, &body, &len);
    assert_non_null(held);
    assert_non_null(held->block);
    namesrv_core_destroy(&core);
    assert_non_null(strstr(body, "\"brokerName\":\"b\""));
    route_entry_put(held); /* the last reference frees the block and the arena */
}

int main(void)
{
    rcu_register_thread();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_route_native_and_standard_dialects_match_java,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_standard_dialect_escapes_non_ascii_and_slash, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_order_topic_conf_sits_between_filter_table_and_queues,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_route_absent_without_broker_data_or_topic, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_cluster_info_is_always_native, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_topic_lists, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_system_topic_list_keeps_a_name_only_a_cluster_lists,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_cache_follows_registration_and_unregistration,
                                        setup_core, teardown_core),
        cmocka_unit_test_setup_teardown(test_cache_rebuilds_only_changed_topics, setup_core,
                                        teardown_core),
        cmocka_unit_test_setup_teardown(test_cache_survives_growth_and_many_topics, setup_core,
                                        teardown_core),
        cmocka_unit_test_setup_teardown(test_order_conf_follows_setting_and_kv, setup_core,
                                        teardown_core),
        cmocka_unit_test(test_entry_blocks_are_reused_and_outlive_the_cache),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rcu_unregister_thread();
    return rc;
}
