/* test_topic_table_decoded.c — what the topic table answers a get (what
 * broker.meta's topic_get answers on every SEND) is never older than the
 * table: every way the table changes is seen by the next get. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "topic_table.h"

static void assert_queues(bcm_topic_table *t, const char *name, int rq, int wq, int perm)
{
    bcm_topic_fields f;
    assert_true(bcm_topic_table_get(t, name, &f));
    assert_string_equal(f.topic_name, name);
    assert_int_equal(f.read_queue_nums, rq);
    assert_int_equal(f.write_queue_nums, wq);
    assert_int_equal(f.perm, perm);
}

static void test_put_replaces_cached_config(void **state)
{
    (void)state;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 1);
    bcm_topic_fields f;
    assert_false(bcm_topic_table_get(&t, "T", &f));
    bcm_topic_table_put(&t, bcm_topic_config_new("T", 4, 4, 6, 0, false, NULL), 2);
    assert_queues(&t, "T", 4, 4, 6);
    assert_queues(&t, "T", 4, 4, 6); /* served from the cache */
    /* UPDATE_AND_CREATE_TOPIC: new queue numbers, perm and filter type */
    bcm_topic_table_put(&t, bcm_topic_config_new("T", 8, 2, 2, 1, false, "MULTI_TAG"), 3);
    assert_queues(&t, "T", 8, 2, 2);
    assert_true(bcm_topic_table_get(&t, "T", &f));
    assert_int_equal(f.topic_filter_type, 1);
    assert_int_equal(f.topic_sys_flag, 1);
    bcm_topic_table_free(&t);
}

static void test_delete_and_recreate(void **state)
{
    (void)state;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 1);
    bcm_topic_table_put(&t, bcm_topic_config_new("T", 4, 4, 6, 0, false, NULL), 2);
    assert_queues(&t, "T", 4, 4, 6);
    assert_true(bcm_topic_table_delete(&t, "T", 3));
    bcm_topic_fields f;
    assert_false(bcm_topic_table_get(&t, "T", &f));
    assert_true(bcm_topic_table_create_if_absent(&t, "T", 1, 6, 0, 4));
    assert_queues(&t, "T", 1, 1, 6);
    bcm_topic_table_free(&t);
}

static void test_order_conf_and_load_are_seen(void **state)
{
    (void)state;
    bcm_topic_table t;
    bcm_topic_table_init(&t, 1);
    bcm_topic_table_put(&t, bcm_topic_config_new("T", 4, 4, 6, 0, false, NULL), 2);
    bcm_topic_fields f;
    assert_true(bcm_topic_table_get(&t, "T", &f));
    assert_false(f.order);
    json_t *kv = json_pack("{s{ss}}", "table", "T", "broker-a:4");
    assert_true(bcm_topic_table_apply_order_conf(&t, kv, 3));
    json_decref(kv);
    assert_true(bcm_topic_table_get(&t, "T", &f));
    assert_true(f.order);
    /* a reload import / topics.json replaces the config by name */
    const char *text = "{\"topicConfigTable\":{\"T\":{\"topicName\":\"T\",\"readQueueNums\":3,"
                       "\"writeQueueNums\":5,\"perm\":4}},\"dataVersion\":{\"counter\":9,"
                       "\"timestamp\":9}}";
    char err[128];
    assert_int_equal(bcm_topic_table_load(&t, text, strlen(text), err, sizeof err), 0);
    assert_queues(&t, "T", 3, 5, 4);
    bcm_system_topic_opts o = {.cluster_name = "C", .broker_name = "B"};
    bcm_topic_table_add_system(&t, &o);
    assert_queues(&t, "SELF_TEST_TOPIC", 1, 1, 6);
    bcm_topic_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_replaces_cached_config),
        cmocka_unit_test(test_delete_and_recreate),
        cmocka_unit_test(test_order_conf_and_load_are_seen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
