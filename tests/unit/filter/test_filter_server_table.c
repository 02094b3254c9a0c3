/* test_filter_server_table.c — the filter-server registry keeps one entry
 * per connection, refreshes on re-registration and expires entries idle for
 * more than the limit (protocol.md §6.2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "filter_server_table.h"

static void test_reregistration_on_a_known_channel_only_refreshes(void **state)
{
    (void)state;
    filter_server_table t;
    filter_server_table_init(&t);
    assert_int_equal(filter_server_table_register(&t, 7, "10.0.0.1:3000", 100), 1);
    assert_int_equal(filter_server_table_register(&t, 7, "10.0.0.1:3000", 200), 0);
    assert_int_equal(filter_server_table_register(&t, 8, "10.0.0.2:3000", 200), 1);
    char buf[128];
    assert_int_equal(filter_server_table_to_json(&t, buf, sizeof buf),
                     strlen("[\"10.0.0.1:3000\",\"10.0.0.2:3000\"]"));
    assert_string_equal(buf, "[\"10.0.0.1:3000\",\"10.0.0.2:3000\"]");
    filter_server_table_dispose(&t);
}

static void test_expiry_removes_only_entries_idle_longer_than_the_limit(void **state)
{
    (void)state;
    filter_server_table t;
    filter_server_table_init(&t);
    filter_server_table_register(&t, 1, "a:1", 1000);
    filter_server_table_register(&t, 2, "b:2", 5000);
    uint64_t out[4];
    /* exactly at the limit: kept (Java compares with >) */
    assert_int_equal(filter_server_table_expire(&t, 31000, 30000, out, 4), 0);
    assert_int_equal(filter_server_table_expire(&t, 31001, 30000, out, 4), 1);
    assert_int_equal(out[0], 1);
    char buf[64];
    filter_server_table_to_json(&t, buf, sizeof buf);
    assert_string_equal(buf, "[\"b:2\"]");
    filter_server_table_dispose(&t);
}

static void test_channel_removal_and_empty_list(void **state)
{
    (void)state;
    filter_server_table t;
    filter_server_table_init(&t);
    filter_server_table_register(&t, 1, "a:1", 0);
    assert_true(filter_server_table_remove(&t, 1));
    assert_false(filter_server_table_remove(&t, 1));
    char buf[8];
    assert_int_equal(filter_server_table_to_json(&t, buf, sizeof buf), 2);
    assert_string_equal(buf, "[]");
    filter_server_table_dispose(&t);
}

static void test_json_escapes_wire_text_and_reports_needed_length(void **state)
{
    (void)state;
    filter_server_table t;
    filter_server_table_init(&t);
    filter_server_table_register(&t, 1, "a\"b\\c", 0);
    char small[4];
    size_t need = filter_server_table_to_json(&t, small, sizeof small);
    assert_int_equal(need, strlen("[\"a\\\"b\\\\c\"]"));
    assert_int_equal(strlen(small), 3);
    char big[64];
    filter_server_table_to_json(&t, big, sizeof big);
    assert_string_equal(big, "[\"a\\\"b\\\\c\"]");
    filter_server_table_dispose(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reregistration_on_a_known_channel_only_refreshes),
        cmocka_unit_test(test_expiry_removes_only_entries_idle_longer_than_the_limit),
        cmocka_unit_test(test_channel_removal_and_empty_list),
        cmocka_unit_test(test_json_escapes_wire_text_and_reports_needed_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
