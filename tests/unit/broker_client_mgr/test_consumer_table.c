/* Consumer-table rules of Java's ConsumerManager (protocol.md §5.3.1, §5.4,
 * §5.12, §5.13): what changes, who is told, what expiry does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "consumer_table.h"
#include "heartbeat_data.h"

static bcm_subscription make_sub(const char *topic, const char *expr, int64_t ver)
{
    json_t *in =
        json_pack("{sssssI}", "topic", topic, "subString", expr, "subVersion", (json_int_t)ver);
    bcm_subscription s;
    bcm_subscription_from_json(&s, bcm_subscription_normalise(in));
    json_decref(in);
    return s;
}

static bcm_client client(uint64_t ch, const char *id, uint64_t now)
{
    bcm_client c = {.channel = ch,
                    .client_id = (char *)id,
                    .language = 0,
                    .version = 409,
                    .last_update_ms = now};
    return c;
}

static int reg(bcm_consumer_table *t, const char *g, uint64_t ch, const char *id, uint64_t now,
               bcm_subscription *subs, size_t n)
{
    bcm_client c = client(ch, id, now);
    return bcm_consumer_register(t, g, &c, "CONSUME_PASSIVELY", "CLUSTERING",
                                 "CONSUME_FROM_LAST_OFFSET", subs, n);
}

static void test_new_connection_changes_group_and_repeat_does_not(void **state)
{
    (void)state;
    bcm_consumer_table t;
    bcm_consumer_table_init(&t);
    bcm_subscription s = make_sub("T", "*", 1);
    assert_int_equal(reg(&t, "CG", 1, "c1", 100, &s, 1), 1);
    assert_int_equal(reg(&t, "CG", 1, "c1", 200, &s, 1), 0);
    assert_int_equal(reg(&t, "CG", 2, "c2", 300, &s, 1), 1);
    const bcm_consumer_group *g = bcm_consumer_group_get(&t, "CG");
    assert_non_null(g);
    assert_int_equal(g->nclients, 2);
    assert_string_equal(g->clients[0].client_id, "c1");
    assert_string_equal(g->clients[1].client_id, "c2");
    bcm_subscription_release(&s);
    bcm_consumer_table_free(&t);
}

static void test_newer_expression_replaces_silently(void **state)
{
    (void)state;
    bcm_consumer_table t;
    bcm_consumer_table_init(&t);
    bcm_subscription a = make_sub("T", "TagA", 1), b = make_sub("T", "TagB", 2),
                     old = make_sub("T", "TagC", 1);
    assert_int_equal(reg(&t, "CG", 1, "c1", 100, &a, 1), 1);
    assert_int_equal(reg(&t, "CG", 1, "c1", 100, &b, 1), 0);
    const bcm_consumer_group *g = bcm_consumer_group_get(&t, "CG");
    assert_string_equal(bcm_consumer_group_find_sub(g, "T")->sub_string, "TagB");
    /* an older subVersion never replaces */
    assert_int_equal(reg(&t, "CG", 1, "c1", 100, &old, 1), 0);
    assert_string_equal(bcm_consumer_group_find_sub(g, "T")->sub_string, "TagB");
    bcm_subscription_release(&a);
    bcm_subscription_release(&b);
    bcm_subscription_release(&old);
    bcm_consumer_table_free(&t);
}

static void test_topic_added_or_removed_changes_group(void **state)
{
    (void)state;
    bcm_consumer_table t;
    bcm_consumer_table_init(&t);
    bcm_subscription two[2] = {make_sub("T1", "*", 1), make_sub("T2", "*", 1)};
    assert_int_equal(reg(&t, "CG", 1, "c1", 100, two, 1), 1);
    assert_int_equal(reg(&t, "CG", 1, "c1", 100, two, 2), 1); /* T2 added */
    assert_int_equal(reg(&t, "CG", 1, "c1", 100, two, 2), 0);
    /* the last heartbeat of any member defines the group's topic set */
    assert_int_equal(reg(&t, "CG", 2, "c2", 100, &two[1], 1), 1);
    const bcm_consumer_group *g = bcm_consumer_group_get(&t, "CG");
    assert_int_equal(g->nsubs, 1);
    assert_null(bcm_consumer_group_find_sub(g, "T1"));
    bcm_subscription_release(&two[0]);
    bcm_subscription_release(&two[1]);
    bcm_consumer_table_free(&t);
}

static void test_unregister_notifies_remaining_and_removes_empty_group(void **state)
{
    (void)state;
    bcm_consumer_table t;
    bcm_consumer_table_init(&t);
    bcm_subscription s = make_sub("T", "*", 1);
    reg(&t, "CG", 1, "c1", 100, &s, 1);
    reg(&t, "CG", 2, "c2", 100, &s, 1);
    bcm_notices ns = {0};
    assert_int_equal(bcm_consumer_unregister(&t, "CG", 1, &ns), 0);
    assert_int_equal(ns.n, 1);
    assert_false(ns.v[0].removed);
    assert_true(ns.v[0].changed);
    assert_int_equal(ns.v[0].nchannels, 1);
    assert_int_equal(ns.v[0].channels[0], 2);
    bcm_notices_free(&ns);
    assert_int_equal(bcm_consumer_unregister(&t, "CG", 2, &ns), 0);
    assert_true(ns.v[0].removed);
    assert_int_equal(ns.v[0].nchannels, 0);
    assert_null(bcm_consumer_group_get(&t, "CG"));
    bcm_notices_free(&ns);
    /* a connection that was never a member still yields a CHANGE notice */
    assert_int_equal(bcm_consumer_unregister(&t, "OTHER", 9, &ns), 0);
    assert_int_equal(ns.n, 1);
    bcm_notices_free(&ns);
    bcm_subscription_release(&s);
    bcm_consumer_table_free(&t);
}

static void test_channel_close_leaves_every_group(void **state)
{
    (void)state;
    bcm_consumer_table t;
    bcm_consumer_table_init(&t);
    bcm_subscription s = make_sub("T", "*", 1);
    reg(&t, "G1", 1, "c1", 100, &s, 1);
    reg(&t, "G2", 1, "c1", 100, &s, 1);
    reg(&t, "G2", 2, "c2", 100, &s, 1);
    reg(&t, "G3", 3, "c3", 100, &s, 1);
    bcm_notices ns = {0};
    assert_int_equal(bcm_consumer_channel_closed(&t, 1, &ns), 0);
    assert_int_equal(ns.n, 2);
    size_t removed = 0, kept = 0;
    for (size_t i = 0; i < ns.n; i++) {
        if (strcmp(ns.v[i].group, "G1") == 0) {
            assert_true(ns.v[i].removed);
            removed++;
        } else {
            assert_string_equal(ns.v[i].group, "G2");
            assert_int_equal(ns.v[i].nchannels, 1);
            assert_int_equal(ns.v[i].channels[0], 2);
            kept++;
        }
    }
    assert_int_equal(removed, 1);
    assert_int_equal(kept, 1);
    assert_null(bcm_consumer_group_get(&t, "G1"));
    assert_int_equal(bcm_consumer_group_get(&t, "G3")->nclients, 1);
    bcm_notices_free(&ns);
    bcm_subscription_release(&s);
    bcm_consumer_table_free(&t);
}

static void test_expiry_removes_silent_clients_only(void **state)
{
    (void)state;
    bcm_consumer_table t;
    bcm_consumer_table_init(&t);
    bcm_subscription s = make_sub("T", "*", 1);
    reg(&t, "CG", 1, "old", 1000, &s, 1);
    reg(&t, "CG", 2, "fresh", 100000, &s, 1);
    reg(&t, "SOLO", 3, "old2", 1000, &s, 1);
    uint64_t *expired = NULL;
    size_t n = 0;
    assert_int_equal(bcm_consumer_expire(&t, 121001 + 1000, 120000, &expired, &n), 2);
    assert_int_equal(n, 2);
    assert_int_equal(bcm_consumer_group_get(&t, "CG")->nclients, 1);
    assert_string_equal(bcm_consumer_group_get(&t, "CG")->clients[0].client_id, "fresh");
    assert_null(bcm_consumer_group_get(&t, "SOLO"));
    free(expired);
    /* exactly at the timeout nothing expires (Java: now - last > timeout) */
    expired = NULL;
    n = 0;
    assert_int_equal(bcm_consumer_expire(&t, 100000 + 120000, 120000, &expired, &n), 0);
    free(expired);
    bcm_subscription_release(&s);
    bcm_consumer_table_free(&t);
}

static void test_client_id_change_on_same_connection_is_not_a_new_member(void **state)
{
    (void)state;
    bcm_consumer_table t;
    bcm_consumer_table_init(&t);
    bcm_subscription s = make_sub("T", "*", 1);
    reg(&t, "CG", 1, "before", 100, &s, 1);
    assert_int_equal(reg(&t, "CG", 1, "after", 200, &s, 1), 0);
    assert_non_null(bcm_consumer_find_client(&t, "CG", "after"));
    assert_null(bcm_consumer_find_client(&t, "CG", "before"));
    bcm_subscription_release(&s);
    bcm_consumer_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_connection_changes_group_and_repeat_does_not),
        cmocka_unit_test(test_newer_expression_replaces_silently),
        cmocka_unit_test(test_topic_added_or_removed_changes_group),
        cmocka_unit_test(test_unregister_notifies_remaining_and_removes_empty_group),
        cmocka_unit_test(test_channel_close_leaves_every_group),
        cmocka_unit_test(test_expiry_removes_silent_clients_only),
        cmocka_unit_test(test_client_id_change_on_same_connection_is_not_a_new_member),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
