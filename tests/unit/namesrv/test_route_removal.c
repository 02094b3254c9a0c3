/* test_route_removal.c — UNREGISTER_BROKER, channel destruction, expiry and
 * admin edits (protocol.md §4.4.5-§4.4.11, §4.7, §4.13). */
#include "namesrv_test_util.h"

static void test_unregister_last_address_removes_broker_cluster_and_topics(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1,T2", 100, NULL);
    reg(rt, "C1", "broker-b", "B:1", 0, 8, 1, "T2", 100, NULL);
    route_table_unregister(rt, "C1", "broker-a", "A:1", 0);
    assert_null(route_table_broker(rt, "broker-a"));
    assert_false(cluster_has(rt, "C1", "broker-a"));
    assert_null(route_table_topic(rt, "T1"));
    assert_null(find_qd(rt, "T2", "broker-a"));
    assert_non_null(find_qd(rt, "T2", "broker-b"));
    assert_null(route_table_live(rt, "A:1"));
}

static void test_unregister_removes_by_id_not_by_address(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1", 100, NULL);
    reg(rt, "C1", "broker-a", "A:2", 1, 8, 1, "T1", 100, NULL);
    /* the address names the slave, the id the master: Java removes id 0 */
    route_table_unregister(rt, "C1", "broker-a", "A:2", 0);
    const broker_data *bd = route_table_broker(rt, "broker-a");
    assert_non_null(bd);
    assert_null(broker_data_addr(bd, 0));
    assert_string_equal(broker_data_addr(bd, 1), "A:2");
    assert_null(route_table_live(rt, "A:2"));
    assert_non_null(route_table_topic(rt, "T1"));
}

static void test_unregister_cleans_only_the_named_cluster(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1", 100, NULL);
    reg(rt, "C2", "broker-a", "A:1", 0, 7, 1, "T1", 100, NULL);
    route_table_unregister(rt, "C2", "broker-a", "A:1", 0);
    assert_null(route_table_broker(rt, "broker-a"));
    assert_false(cluster_has(rt, "C2", "broker-a"));
    assert_true(cluster_has(rt, "C1", "broker-a")); /* Java keeps the dangling name */
}

static void test_channel_close_removes_every_broker_of_that_channel(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1", 100, NULL);
    reg(rt, "C1", "broker-b", "B:1", 0, 7, 1, "T1", 100, NULL);
    reg(rt, "C1", "broker-c", "C:1", 0, 9, 1, "T1", 100, NULL);
    assert_int_equal(route_table_channel_destroyed(rt, 7, "127.0.0.1:5555"), 2);
    assert_null(route_table_broker(rt, "broker-a"));
    assert_null(route_table_broker(rt, "broker-b"));
    assert_non_null(route_table_broker(rt, "broker-c"));
    assert_false(cluster_has(rt, "C1", "broker-a"));
    assert_non_null(find_qd(rt, "T1", "broker-c"));
    assert_null(find_qd(rt, "T1", "broker-a"));
}

static void test_channel_close_of_slave_keeps_master(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1", 100, NULL);
    reg(rt, "C1", "broker-a", "A:2", 1, 8, 1, "T1", 100, NULL);
    assert_int_equal(route_table_channel_destroyed(rt, 8, "x:1"), 1);
    const broker_data *bd = route_table_broker(rt, "broker-a");
    assert_string_equal(broker_data_addr(bd, 0), "A:1");
    assert_null(broker_data_addr(bd, 1));
    assert_non_null(find_qd(rt, "T1", "broker-a"));
}

static void test_stale_channel_close_keeps_fresher_registration(void **state)
{
    route_table *rt = *state;
    /* the broker reconnected: it now lives on channel 8; channel 7 closes late,
     * and its peer address even equals the broker address */
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1", 100, NULL);
    reg(rt, "C1", "broker-a", "A:1", 0, 8, 1, "T1", 200, NULL);
    assert_int_equal(route_table_channel_destroyed(rt, 7, "A:1"), 0);
    assert_non_null(route_table_live(rt, "A:1"));
    assert_non_null(route_table_broker(rt, "broker-a"));
    assert_non_null(find_qd(rt, "T1", "broker-a"));
}

static void test_channel_close_falls_back_to_peer_address(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1", 100, NULL);
    /* live entry gone but the address is still in the BrokerData */
    route_table_unregister(rt, "C1", "broker-a", "A:1", 9);
    assert_int_equal(route_table_channel_destroyed(rt, 42, "A:1"), 1);
    assert_null(route_table_broker(rt, "broker-a"));
    assert_null(route_table_topic(rt, "T1"));
}

typedef struct closed {
    unsigned long long ids[8];
    int n;
} closed;

static void record_close(void *ud, uint64_t ch)
{
    closed *c = ud;
    c->ids[c->n++] = ch;
}

static void test_expiry_removes_silent_broker_and_closes_its_channel(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1", 1000, NULL);
    reg(rt, "C1", "broker-b", "B:1", 0, 8, 1, "T1", 100000, NULL);
    closed c = {0};
    assert_int_equal(route_table_scan_expired(rt, 1000 + 120000, record_close, &c), 0);
    assert_int_equal(route_table_scan_expired(rt, 1000 + 120001, record_close, &c), 1);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.ids[0], 7);
    assert_null(route_table_broker(rt, "broker-a"));
    assert_non_null(route_table_broker(rt, "broker-b"));
}

/* Brokers removed by one pass lose their QueueData in one walk of the
 * topics: shared and own topics, a survivor's share kept. */
static void test_expiry_of_many_brokers_at_once_drops_their_queue_data(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "Own-a,Shared", 1000, NULL);
    reg(rt, "C1", "broker-b", "B:1", 0, 8, 1, "Own-b,Shared,Kept", 1000, NULL);
    reg(rt, "C1", "broker-c", "C:1", 0, 9, 1, "Own-c,Shared", 1000, NULL);
    reg(rt, "C1", "broker-d", "D:1", 0, 10, 1, "Kept", 100000, NULL);
    size_t n;
    bool all;
    char **dirty = route_table_take_dirty(rt, &n, &all);
    for (size_t i = 0; i < n; i++)
        free(dirty[i]);
    free(dirty);
    closed c = {0};
    assert_int_equal(route_table_scan_expired(rt, 1000 + 120001, record_close, &c), 3);
    assert_null(route_table_topic(rt, "Own-a"));
    assert_null(route_table_topic(rt, "Own-b"));
    assert_null(route_table_topic(rt, "Own-c"));
    assert_null(route_table_topic(rt, "Shared"));
    assert_non_null(find_qd(rt, "Kept", "broker-d"));
    assert_null(find_qd(rt, "Kept", "broker-b"));
    dirty = route_table_take_dirty(rt, &n, &all);
    assert_int_equal(n, 5); /* Own-a, Own-b, Own-c, Shared, Kept */
    for (size_t i = 0; i < n; i++)
        free(dirty[i]);
    free(dirty);
}

/* "T<from>,...,T<to-1>" for reg(). */
static char *topic_list(int from, int to)
{
    size_t cap = (size_t)(to - from) * 8 + 1, n = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    s[0] = '\0';
    for (int i = from; i < to; i++)
        n += (size_t)snprintf(s + n, cap - n, "%sT%d", i > from ? "," : "", i);
    return s;
}

static void drain_dirty(route_table *rt)
{
    size_t n;
    bool all;
    char **d = route_table_take_dirty(rt, &n, &all);
    for (size_t i = 0; i < n; i++)
        free(d[i]);
    free(d);
}

static bool dirty_has(char **d, size_t n, const char *topic)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i], topic) == 0)
            return true;
    return false;
}

/* How the three ways a broker goes must leave the table: a owns T0-T39, b
 * T20-T59 (T20-T39 shared), c T100-T104. Removing a leaves b's and c's
 * QueueData untouched, drops T0-T19 and only a's share of T20-T39. */
static void register_abc(route_table *rt)
{
    char *a = topic_list(0, 40), *b = topic_list(20, 60), *c = topic_list(100, 105);
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, a, 1000, NULL);
    reg(rt, "C1", "broker-b", "B:1", 0, 8, 1, b, 1000, NULL);
    reg(rt, "C1", "broker-c", "C:1", 0, 9, 1, c, 100000, NULL);
    free(a);
    free(b);
    free(c);
}

static void assert_only_a_gone(route_table *rt)
{
    char t[16];
    for (int i = 0; i < 105; i++) {
        snprintf(t, sizeof(t), "T%d", i);
        assert_null(find_qd(rt, t, "broker-a"));
        if (i < 20 || (i >= 60 && i < 100)) {
            assert_null(route_table_topic(rt, t));
            continue;
        }
        const char *owner = i < 100 ? "broker-b" : "broker-c";
        const queue_data *q = find_qd(rt, t, owner);
        assert_non_null(q);
        assert_int_equal(q->perm, 6);
        assert_int_equal(q->read_queue_nums, 4);
        assert_int_equal(route_table_topic(rt, t)->nqd, 1);
    }
    /* the survivors' own sets are whole: counted by their index */
    assert_int_equal(route_table_set_write_perm(rt, "broker-a", false), 0);
    assert_int_equal(route_table_set_write_perm(rt, "broker-b", false), 40);
    assert_int_equal(route_table_set_write_perm(rt, "broker-c", false), 5);
    assert_non_null(route_table_broker(rt, "broker-b"));
    assert_non_null(route_table_broker(rt, "broker-c"));
}

/* The removed topics (T0-T19) and the shared ones (T20-T39) are re-encoded;
 * nothing of b's or c's own. */
static void assert_dirty_exactly_a(route_table *rt)
{
    size_t n;
    bool all;
    char **d = route_table_take_dirty(rt, &n, &all);
    assert_false(all);
    assert_int_equal(n, 40);
    char t[16];
    for (int i = 0; i < 40; i++) {
        snprintf(t, sizeof(t), "T%d", i);
        assert_true(dirty_has(d, n, t));
    }
    for (size_t i = 0; i < n; i++)
        free(d[i]);
    free(d);
}

static void test_unregister_removes_exactly_the_brokers_own_queue_data(void **state)
{
    route_table *rt = *state;
    register_abc(rt);
    drain_dirty(rt);
    route_table_unregister(rt, "C1", "broker-a", "A:1", 0);
    assert_null(route_table_broker(rt, "broker-a"));
    assert_dirty_exactly_a(rt);
    assert_only_a_gone(rt);
}

static void test_channel_close_removes_exactly_the_brokers_own_queue_data(void **state)
{
    route_table *rt = *state;
    register_abc(rt);
    drain_dirty(rt);
    assert_int_equal(route_table_channel_destroyed(rt, 7, "A:1"), 1);
    assert_dirty_exactly_a(rt);
    assert_only_a_gone(rt);
}

static void test_expiry_removes_exactly_the_brokers_own_queue_data(void **state)
{
    route_table *rt = *state;
    register_abc(rt);
    assert_true(route_table_heartbeat(rt, "B:1", 100000)); /* b heard from later */
    drain_dirty(rt);
    assert_int_equal(route_table_scan_expired(rt, 1000 + 120001, NULL, NULL), 1);
    assert_dirty_exactly_a(rt);
    assert_only_a_gone(rt);
}

/* Topic deletions in between move entries inside the brokers' indexes; a
 * later removal still finds exactly the broker's remaining topics. */
static void test_removal_after_topic_deletions_and_re_registration(void **state)
{
    route_table *rt = *state;
    register_abc(rt);
    route_table_delete_topic(rt, "T0", NULL);   /* a's own */
    route_table_delete_topic(rt, "T25", "C1");  /* shared: both shares */
    route_table_delete_topic(rt, "T101", NULL); /* c's own */
    queue_data qa = {
        .broker_name = "broker-a", .perm = 6, .read_queue_nums = 4, .write_queue_nums = 4};
    assert_true(route_table_register_topic(rt, "T45", &qa, 1)); /* a joins b's topic */
    assert_true(route_table_register_topic(rt, "T0", &qa, 1));  /* and gets T0 back */
    assert_int_equal(route_table_set_write_perm(rt, "broker-a", false), 40);
    assert_int_equal(route_table_set_write_perm(rt, "broker-b", false), 39);
    route_table_unregister(rt, "C1", "broker-a", "A:1", 0);
    assert_null(route_table_topic(rt, "T0"));
    assert_null(route_table_topic(rt, "T25"));
    assert_null(find_qd(rt, "T45", "broker-a"));
    assert_non_null(find_qd(rt, "T45", "broker-b"));
    assert_null(route_table_topic(rt, "T101"));
    assert_int_equal(route_table_set_write_perm(rt, "broker-a", false), 0);
    assert_int_equal(route_table_set_write_perm(rt, "broker-b", false), 39);
    assert_int_equal(route_table_set_write_perm(rt, "broker-c", false), 4);
    route_table_unregister(rt, "C1", "broker-b", "B:1", 0);
    route_table_unregister(rt, "C1", "broker-c", "C:1", 0);
    assert_int_equal(rt->topics.count, 0);
    assert_int_equal(rt->broker_topics.count, 0);
}

/* A broker losing one of its addresses: its own topics' routes change,
 * nobody else's. */
static void test_address_loss_marks_only_the_brokers_topics(void **state)
{
    route_table *rt = *state;
    register_abc(rt);
    reg(rt, "C1", "broker-c", "C:2", 1, 10, 1, NULL, 100000, NULL);
    drain_dirty(rt);
    assert_int_equal(route_table_channel_destroyed(rt, 10, "C:2"), 1);
    size_t n;
    bool all;
    char **d = route_table_take_dirty(rt, &n, &all);
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++) {
        assert_true(strncmp(d[i], "T10", 3) == 0 && strlen(d[i]) == 4); /* T100-T104 */
        free(d[i]);
    }
    free(d);
    assert_non_null(find_qd(rt, "T100", "broker-c"));
}

static void test_expiry_honours_the_brokers_own_timeout(void **state)
{
    route_table *rt = *state;
    register_body rb;
    char *json = make_body_json(1, 1, "T1");
    parse_body(&rb, json);
    register_request rr = {.cluster = "C1",
                           .broker_name = "b",
                           .broker_addr = "a:1",
                           .channel = 3,
                           .heartbeat_timeout_ms = 10000,
                           .body = &rb};
    register_result res;
    assert_int_equal(route_table_register(rt, &rr, 0, &res), 0);
    register_body_free(&rb);
    free(json);
    assert_int_equal(route_table_scan_expired(rt, 10000, NULL, NULL), 0);
    assert_int_equal(route_table_scan_expired(rt, 10001, NULL, NULL), 1);
}

static void test_query_data_version_refreshes_only_when_unchanged(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "b", "a:1", 0, 3, 4, "T1", 100, NULL);
    data_version same = {4, 1000, 0, false}, other = {5, 1000, 0, false}, stored;
    bool changed, has;
    route_table_query_data_version(rt, "a:1", &other, 500, &changed, &stored, &has);
    assert_true(changed);
    assert_true(has);
    assert_int_equal(stored.counter, 4);
    assert_int_equal(route_table_live(rt, "a:1")->last_update_ms, 100);
    route_table_query_data_version(rt, "a:1", &same, 600, &changed, &stored, &has);
    assert_false(changed);
    assert_int_equal(route_table_live(rt, "a:1")->last_update_ms, 600);
    route_table_query_data_version(rt, "zz:1", &same, 700, &changed, &stored, &has);
    assert_true(changed);
    assert_false(has);
}

static void test_wipe_and_add_write_perm_count_queue_datas(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1:7,T2:4,T3:2", 100, NULL);
    assert_int_equal(route_table_set_write_perm(rt, "broker-a", true), 3);
    assert_int_equal(find_qd(rt, "T1", "broker-a")->perm, 5);
    assert_int_equal(find_qd(rt, "T3", "broker-a")->perm, 0);
    assert_int_equal(route_table_set_write_perm(rt, "broker-a", false), 3);
    assert_int_equal(find_qd(rt, "T1", "broker-a")->perm, 6);
    assert_int_equal(find_qd(rt, "T2", "broker-a")->perm, 6);
    assert_int_equal(route_table_set_write_perm(rt, NULL, true), 0);
    assert_int_equal(route_table_set_write_perm(rt, "nobody", true), 0);
}

static void test_delete_topic_whole_or_per_cluster(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1,T2", 100, NULL);
    reg(rt, "C2", "broker-b", "B:1", 0, 8, 1, "T1,T2", 100, NULL);
    route_table_delete_topic(rt, "T1", "C1");
    assert_null(find_qd(rt, "T1", "broker-a"));
    assert_non_null(find_qd(rt, "T1", "broker-b"));
    route_table_delete_topic(rt, "T1", "nope");
    assert_non_null(find_qd(rt, "T1", "broker-b"));
    route_table_delete_topic(rt, "T1", "C2");
    assert_null(route_table_topic(rt, "T1"));
    route_table_delete_topic(rt, "T2", "");
    assert_null(route_table_topic(rt, "T2"));
}

static void test_register_topic_requires_known_brokers(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1", 100, NULL);
    queue_data q[2] = {
        {.broker_name = "broker-a", .perm = 6, .read_queue_nums = 2, .write_queue_nums = 2},
        {.broker_name = "ghost", .perm = 6, .read_queue_nums = 2, .write_queue_nums = 2}};
    assert_false(route_table_register_topic(rt, "NEW", q, 2));
    assert_null(route_table_topic(rt, "NEW"));
    assert_true(route_table_register_topic(rt, "NEW", q, 1));
    assert_int_equal(find_qd(rt, "NEW", "broker-a")->read_queue_nums, 2);
}

static void test_dirty_list_names_changed_topics_only(void **state)
{
    route_table *rt = *state;
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1,T2", 100, NULL);
    size_t n;
    bool all;
    char **d = route_table_take_dirty(rt, &n, &all);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++)
        free(d[i]);
    free(d);
    /* same version, same topics: nothing to re-encode */
    reg(rt, "C1", "broker-a", "A:1", 0, 7, 1, "T1,T2", 200, NULL);
    d = route_table_take_dirty(rt, &n, &all);
    assert_int_equal(n, 0);
    free(d);
    /* a slave joins: the BrokerData changed, so both routes change */
    reg(rt, "C1", "broker-a", "A:2", 1, 8, 1, "T1,T2", 200, NULL);
    d = route_table_take_dirty(rt, &n, &all);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++)
        free(d[i]);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_unregister_last_address_removes_broker_cluster_and_topics, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_unregister_removes_by_id_not_by_address, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_unregister_cleans_only_the_named_cluster, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_channel_close_removes_every_broker_of_that_channel,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_channel_close_of_slave_keeps_master, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_stale_channel_close_keeps_fresher_registration,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_channel_close_falls_back_to_peer_address, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_expiry_removes_silent_broker_and_closes_its_channel,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_expiry_of_many_brokers_at_once_drops_their_queue_data,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_unregister_removes_exactly_the_brokers_own_queue_data,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(
            test_channel_close_removes_exactly_the_brokers_own_queue_data, rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_expiry_removes_exactly_the_brokers_own_queue_data,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_removal_after_topic_deletions_and_re_registration,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_address_loss_marks_only_the_brokers_topics, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_expiry_honours_the_brokers_own_timeout, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_query_data_version_refreshes_only_when_unchanged,
                                        rt_setup, rt_teardown),
        cmocka_unit_test_setup_teardown(test_wipe_and_add_write_perm_count_queue_datas, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_delete_topic_whole_or_per_cluster, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_register_topic_requires_known_brokers, rt_setup,
                                        rt_teardown),
        cmocka_unit_test_setup_teardown(test_dirty_list_names_changed_topics_only, rt_setup,
                                        rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
