/* test_state_snapshot.c — hot-reload export/import keeps routes, liveness,
 * filter servers and KV (issue item 7). */
#include <urcu.h>

#include "namesrv_core.h"
#include "namesrv_test_util.h"

static void test_export_import_round_trip_keeps_routes_liveness_and_kv(void **state)
{
    (void)state;
    namesrv_core a, b;
    namesrv_config ca, cb;
    namesrv_config_defaults(&ca);
    namesrv_config_defaults(&cb);
    assert_int_equal(namesrv_core_init(&a, &ca), 0);
    assert_int_equal(namesrv_core_init(&b, &cb), 0);
    reg(&a.routes, "C", "broker-a", "A:1", 0, 11, 3, "T1,T2:4", 1000, NULL);
    reg(&a.routes, "C", "broker-a", "A:2", 1, 12, 3, "T1", 1500, NULL);
    kv_store_put(&a.kv, "NS", "k", "v");
    namesrv_core_publish(&a);

    size_t len;
    char *blob = namesrv_core_export(&a, 2000, &len);
    assert_non_null(blob);
    char err[256] = "";
    /* the importer's clock differs: liveness keeps its age */
    assert_int_equal(namesrv_core_import(&b, blob, len, 50000, err, sizeof(err)), 0);
    assert_int_equal(namesrv_core_publish(&b), 0);
    free(blob);

    const broker_data *bd = route_table_broker(&b.routes, "broker-a");
    assert_non_null(bd);
    assert_string_equal(bd->cluster, "C");
    assert_string_equal(broker_data_addr(bd, 1), "A:2");
    assert_true(cluster_has(&b.routes, "C", "broker-a"));
    assert_int_equal(find_qd(&b.routes, "T2", "broker-a")->perm, 4);
    const live_info *li = route_table_live(&b.routes, "A:1");
    assert_non_null(li);
    assert_int_equal(li->channel, 11);
    assert_int_equal(li->dv.counter, 3);
    assert_int_equal(li->last_update_ms, 50000 - 1000);
    assert_string_equal(kv_store_get(&b.kv, "NS", "k"), "v");

    const char *b1, *b2;
    size_t l1, l2;
    route_entry *e1 = route_cache_get(&a.cache, "T1", true, &b1, &l1);
    route_entry *e2 = route_cache_get(&b.cache, "T1", true, &b2, &l2);
    assert_non_null(e1);
    assert_non_null(e2);
    assert_int_equal(l1, l2);
    assert_memory_equal(b1, b2, l1);
    route_entry_put(e1);
    route_entry_put(e2);
    namesrv_core_destroy(&a);
    namesrv_core_destroy(&b);
}

static void test_import_refuses_garbage(void **state)
{
    (void)state;
    namesrv_core c;
    namesrv_config cfg;
    namesrv_config_defaults(&cfg);
    assert_int_equal(namesrv_core_init(&c, &cfg), 0);
    char err[256] = "";
    assert_int_equal(namesrv_core_import(&c, "not json", 8, 0, err, sizeof(err)), -1);
    assert_true(err[0] != '\0');
    namesrv_core_destroy(&c);
}

int main(void)
{
    rcu_register_thread();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_import_round_trip_keeps_routes_liveness_and_kv),
        cmocka_unit_test(test_import_refuses_garbage),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rcu_unregister_thread();
    return rc;
}
