/* test_route_registration.c — REGISTER_BROKER rules of protocol.md §4.5
 * (4.9.8 algorithm plus 5.3.3's per-topic rule). */
#include "namesrv_test_util.h"

static void test_first_master_registration_creates_cluster_broker_and_queues(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 1, "T1:6:4:4:0,T2:7:8:8:1", 100, NULL);
    assert_true(cluster_has(rt, "C1", "broker-a"));
    const broker_data *bd = route_table_broker(rt, "broker-a");
    assert_non_null(bd);
    assert_string_equal(bd->cluster, "C1");
    assert_string_equal(broker_data_addr(bd, 0), "10.0.0.1:10911");
    const queue_data *q = find_qd(rt, "T2", "broker-a");
    assert_non_null(q);
    assert_int_equal(q->perm, 7);
    assert_int_equal(q->read_queue_nums, 8);
    assert_int_equal(q->topic_sys_flag, 1);
    const live_info *li = route_table_live(rt, "10.0.0.1:10911");
    assert_non_null(li);
    assert_int_equal(li->channel, 7);
    assert_int_equal(li->last_update_ms, 100);
    assert_string_equal(li->ha_addr, "127.0.0.1:10912");
}

static void test_unchanged_data_version_does_not_rewrite_queue_data(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 1, "T1:6:4:4:0", 100, NULL);
    assert_int_equal(route_table_set_write_perm(rt, "broker-a", true), 1);
    assert_int_equal(find_qd(rt, "T1", "broker-a")->perm, 4);
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 1, "T1:6:4:4:0", 200, NULL);
    assert_int_equal(find_qd(rt, "T1", "broker-a")->perm, 4);
    assert_int_equal(route_table_live(rt, "10.0.0.1:10911")->last_update_ms, 200);
}

static void test_changed_data_version_rewrites_queue_data(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 1, "T1:6:4:4:0", 100, NULL);
    route_table_set_write_perm(rt, "broker-a", true);
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 2, "T1:6:16:16:0", 200, NULL);
    const queue_data *q = find_qd(rt, "T1", "broker-a");
    assert_int_equal(q->perm, 6);
    assert_int_equal(q->read_queue_nums, 16);
}

static void test_new_topic_written_even_with_unchanged_data_version(void **state)
{
    route_table *rt = *state;
    /* split registration: two bodies, same DataVersion, different topics */
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 5, "T1", 100, NULL);
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 5, "T2", 110, NULL);
    assert_non_null(find_qd(rt, "T1", "broker-a"));
    assert_non_null(find_qd(rt, "T2", "broker-a"));
}

static void test_topics_missing_from_body_are_kept(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 1, "T1,T2", 100, NULL);
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 2, "T1", 200, NULL);
    assert_non_null(find_qd(rt, "T2", "broker-a"));
}

static void test_slave_does_not_write_queue_data(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "10.0.0.2:10911", 1, 8, 1, "T1", 100, NULL);
    assert_null(route_table_topic(rt, "T1"));
    assert_string_equal(broker_data_addr(route_table_broker(rt, "broker-a"), 1), "10.0.0.2:10911");
    assert_non_null(route_table_live(rt, "10.0.0.2:10911"));
}

static void test_slave_learns_master_and_ha_addr_when_master_alive(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 1, "T1", 100, NULL);
    register_result res;
    reg(rt, "C1", "broker-a", "10.0.0.2:10911", 1, 8, 1, "T1", 110, &res);
    assert_string_equal(res.master_addr, "10.0.0.1:10911");
    assert_string_equal(res.ha_addr, "127.0.0.1:10912");
    register_result_free(&res);
}

static void test_slave_gets_no_master_without_live_master(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 1, "T1", 100, NULL);
    /* master's live entry gone (e.g. expired) while the address stays */
    route_table_unregister(rt, "C1", "broker-a", "10.0.0.1:10911", 5 /* other id */);
    assert_null(route_table_live(rt, "10.0.0.1:10911"));
    register_result res;
    reg(rt, "C1", "broker-a", "10.0.0.2:10911", 1, 8, 1, "T1", 110, &res);
    assert_null(res.master_addr);
    assert_null(res.ha_addr);
    register_result_free(&res);
}

static void test_address_moves_between_ids(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 1, "T1", 100, NULL);
    reg(rt, "C1", "broker-a", "10.0.0.2:10911", 1, 8, 1, "T1", 100, NULL);
    /* the slave is promoted: same address now under id 0 */
    reg(rt, "C1", "broker-a", "10.0.0.2:10911", 0, 8, 1, "T1", 200, NULL);
    const broker_data *bd = route_table_broker(rt, "broker-a");
    assert_int_equal(bd->naddr, 1);
    assert_string_equal(broker_data_addr(bd, 0), "10.0.0.2:10911");
    assert_null(broker_data_addr(bd, 1));
}

static void test_broker_keeps_its_first_cluster_and_joins_the_new_one(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 1, "T1", 100, NULL);
    reg(rt, "C2", "broker-a", "10.0.0.1:10911", 0, 7, 1, "T1", 100, NULL);
    assert_string_equal(route_table_broker(rt, "broker-a")->cluster, "C1");
    assert_true(cluster_has(rt, "C1", "broker-a"));
    assert_true(cluster_has(rt, "C2", "broker-a"));
}

static void test_filter_server_list_stored_and_cleared(void **state)
{
    route_table *rt = *state;
    const char *with = "{\"filterServerList\":[\"10.0.0.9:3000\"],\"topicConfigSerializeWrapper\":"
                       "{\"dataVersion\":{\"counter\":1,\"timestamp\":1},\"topicConfigTable\":{}}}";
    register_body rb;
    parse_body(&rb, with);
    register_request rr = {.cluster = "C1", .broker_name = "b", .broker_addr = "a:1", .body = &rb};
    register_result res;
    assert_int_equal(route_table_register(rt, &rr, 1, &res), 0);
    const filter_entry *fe = route_table_filter(rt, "a:1");
    assert_non_null(fe);
    assert_int_equal(fe->n, 1);
    assert_string_equal(fe->servers[0], "10.0.0.9:3000");
    register_body_free(&rb);
    reg(rt, "C1", "b", "a:1", 0, 0, 2, NULL, 2, NULL);
    assert_null(route_table_filter(rt, "a:1"));
}

static void test_no_body_registers_with_zero_data_version(void **state)
{
    route_table *rt = *state;
    register_request rr = {.cluster = "C1", .broker_name = "b", .broker_addr = "a:1"};
    register_result res;
    assert_int_equal(route_table_register(rt, &rr, 5, &res), 0);
    const live_info *li = route_table_live(rt, "a:1");
    assert_non_null(li);
    assert_int_equal(li->dv.counter, 0);
    assert_int_equal(li->dv.timestamp, 0);
    assert_int_equal(rmq_str_map_count(&rt->topics), 0);
}

static void test_deleted_topic_returns_when_new_broker_topic_rule_applies(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 1, "T1", 100, NULL);
    route_table_delete_topic(rt, "T1", NULL);
    assert_null(route_table_topic(rt, "T1"));
    /* 5.3.3 per-topic rule: no QueueData for this broker -> written again */
    reg(rt, "C1", "broker-a", "10.0.0.1:10911", 0, 7, 1, "T1", 200, NULL);
    assert_non_null(find_qd(rt, "T1", "broker-a"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_first_master_registration_creates_cluster_broker_and_queues, rt_setup,
            rt_teardown),
        cmocka_unit_test_setup_teardown(test_unchanged_data_version_does_not_rewrite_queue_data,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_changed_data_version_rewrites_queue_data, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_new_topic_written_even_with_unchanged_data_version,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_topics_missing_from_body_are_kept, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_slave_does_not_write_queue_data, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_slave_learns_master_and_ha_addr_when_master_alive,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_slave_gets_no_master_without_live_master, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_address_moves_between_ids, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_broker_keeps_its_first_cluster_and_joins_the_new_one,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_filter_server_list_stored_and_cleared, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_no_body_registers_with_zero_data_version, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(
            test_deleted_topic_returns_when_new_broker_topic_rule_applies, rt_setup, rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
