/* ProducerManager and RebalanceLockManager rules (protocol.md §5.2, §5.4,
 * §5.11, §5.13). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "lock_table.h"
#include "producer_table.h"

static bcm_client client(uint64_t ch, const char *id, uint64_t now)
{
    bcm_client c = {.channel = ch, .client_id = (char *)id, .version = 409, .last_update_ms = now};
    return c;
}

static void test_producer_close_keeps_emptied_group_as_4_9_8(void **state)
{
    (void)state;
    bcm_producer_table t;
    bcm_producer_table_init(&t);
    bcm_client a = client(1, "p1", 10), b = client(1, "p1", 20);
    assert_int_equal(bcm_producer_register(&t, "PG", &a), 0);
    assert_int_equal(bcm_producer_register(&t, "PG", &b), 0); /* refresh, not a second entry */
    assert_int_equal(bcm_producer_group_get(&t, "PG")->n, 1);
    assert_int_equal(bcm_producer_group_get(&t, "PG")->clients[0].last_update_ms, 20);
    assert_int_equal(bcm_producer_find_channel(&t, "p1"), 1);
    assert_int_equal(bcm_producer_channel_closed(&t, 1), 1);
    assert_non_null(bcm_producer_group_get(&t, "PG"));
    assert_int_equal(bcm_producer_group_get(&t, "PG")->n, 0);
    assert_int_equal(bcm_producer_find_channel(&t, "p1"), 0);
    bcm_producer_table_free(&t);
}

static void test_producer_unregister_removes_emptied_group(void **state)
{
    (void)state;
    bcm_producer_table t;
    bcm_producer_table_init(&t);
    bcm_client a = client(1, "p1", 10), b = client(2, "p2", 10);
    bcm_producer_register(&t, "PG", &a);
    bcm_producer_register(&t, "PG", &b);
    bcm_producer_unregister(&t, "PG", 1, "p1");
    assert_int_equal(bcm_producer_group_get(&t, "PG")->n, 1);
    assert_int_equal(bcm_producer_find_channel(&t, "p1"), 0);
    bcm_producer_unregister(&t, "PG", 2, "p2");
    assert_null(bcm_producer_group_get(&t, "PG"));
    bcm_producer_table_free(&t);
}

static void test_producer_expiry_returns_channels_to_close(void **state)
{
    (void)state;
    bcm_producer_table t;
    bcm_producer_table_init(&t);
    bcm_client a = client(1, "p1", 0), b = client(2, "p2", 50000);
    bcm_producer_register(&t, "PG", &a);
    bcm_producer_register(&t, "PG", &b);
    uint64_t *exp = NULL;
    size_t n = 0;
    assert_int_equal(bcm_producer_expire(&t, 120001, 120000, &exp, &n), 1);
    assert_int_equal(n, 1);
    assert_int_equal(exp[0], 1);
    assert_int_equal(bcm_producer_connection_count(&t), 1);
    free(exp);
    bcm_producer_table_free(&t);
}

static json_t *mqs(int from, int to)
{
    json_t *a = json_array();
    for (int q = from; q <= to; q++)
        json_array_append_new(a,
                              json_pack("{sssiss}", "brokerName", "b", "queueId", q, "topic", "T"));
    return a;
}

static void test_lock_held_by_other_client_is_refused_until_it_expires(void **state)
{
    (void)state;
    bcm_lock_table t;
    bcm_lock_table_init(&t);
    json_t *set = mqs(0, 1);
    json_t *ok = bcm_lock_batch(&t, "CG", "c1", set, 1000, 60000);
    assert_int_equal(json_array_size(ok), 2);
    json_decref(ok);
    ok = bcm_lock_batch(&t, "CG", "c2", set, 2000, 60000);
    assert_int_equal(json_array_size(ok), 0);
    json_decref(ok);
    /* the holder refreshes */
    ok = bcm_lock_batch(&t, "CG", "c1", set, 30000, 60000);
    assert_int_equal(json_array_size(ok), 2);
    json_decref(ok);
    ok = bcm_lock_batch(&t, "CG", "c2", set, 90000, 60000);
    assert_int_equal(json_array_size(ok), 0);
    json_decref(ok);
    ok = bcm_lock_batch(&t, "CG", "c2", set, 90001, 60000);
    assert_int_equal(json_array_size(ok), 2);
    assert_string_equal(bcm_lock_holder(&t, "CG", "T", "b", 1, 90001, 60000), "c2");
    json_decref(ok);
    json_decref(set);
    bcm_lock_table_free(&t);
}

static void test_unlock_releases_only_the_holders_queues(void **state)
{
    (void)state;
    bcm_lock_table t;
    bcm_lock_table_init(&t);
    json_t *q0 = mqs(0, 0), *q1 = mqs(1, 1);
    json_decref(bcm_lock_batch(&t, "CG", "c1", q0, 1000, 60000));
    json_decref(bcm_lock_batch(&t, "CG", "c2", q1, 1000, 60000));
    json_t *both = mqs(0, 1);
    bcm_unlock_batch(&t, "CG", "c1", both);
    assert_null(bcm_lock_holder(&t, "CG", "T", "b", 0, 1000, 60000));
    assert_string_equal(bcm_lock_holder(&t, "CG", "T", "b", 1, 1000, 60000), "c2");
    json_decref(q0);
    json_decref(q1);
    json_decref(both);
    bcm_lock_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_producer_close_keeps_emptied_group_as_4_9_8),
        cmocka_unit_test(test_producer_unregister_removes_emptied_group),
        cmocka_unit_test(test_producer_expiry_returns_channels_to_close),
        cmocka_unit_test(test_lock_held_by_other_client_is_refused_until_it_expires),
        cmocka_unit_test(test_unlock_releases_only_the_holders_queues),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
