/* test_subscription_check.c — CHECK_CLIENT_CONFIG's verdicts (protocol.md
 * §6.7): TAG never validated, SQL92 refused with 23 and Java's remark,
 * unknown types refused, property filtering disabled → SYSTEM_ERROR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "filter_engine.h"

static const rmq_fx_options opt49 = {.ops5x = false};

static void test_valid_sql92_subscription_is_accepted(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(rmq_fx_check(true, &opt49, "SQL92", "a > 5", err, sizeof err), 0);
    assert_int_equal(rmq_fx_check(true, &opt49, "SQL92", "a = 'x' b !", err, sizeof err), 0);
}

static void test_invalid_sql92_subscription_gets_code_23_and_java_remark(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(rmq_fx_check(true, &opt49, "SQL92", "a > 'x'", err, sizeof err), 23);
    assert_string_equal(err, "java.lang.RuntimeException: Value ''x'' cannot be compared.");
    assert_int_equal(rmq_fx_check(true, &opt49, "SQL92", "", err, sizeof err), 23);
    assert_true(strlen(err) > 0);
    assert_int_equal(rmq_fx_check(true, &opt49, "SQL92", NULL, err, sizeof err), 23);
}

static void test_tag_subscriptions_are_never_validated(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(rmq_fx_check(true, &opt49, "TAG", "||", err, sizeof err), 0);
    assert_int_equal(rmq_fx_check(true, &opt49, NULL, "a > 'x'", err, sizeof err), 0);
    assert_int_equal(rmq_fx_check(false, &opt49, "", "*", err, sizeof err), 0);
}

static void test_unknown_type_is_refused_like_a_parse_failure(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(rmq_fx_check(true, &opt49, "sql92", "a > 5", err, sizeof err), 23);
    assert_string_equal(err, "java.lang.NullPointerException");
}

static void test_disabled_property_filter_answers_system_error(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(rmq_fx_check(false, &opt49, "SQL92", "a > 5", err, sizeof err), 1);
    assert_string_equal(err, "The broker does not support consumer to filter message by SQL92");
}

static void test_5x_operators_are_checked_with_the_5x_grammar(void **state)
{
    (void)state;
    char err[256];
    rmq_fx_options opt5 = {.ops5x = true};
    assert_int_equal(rmq_fx_check(true, &opt49, "SQL92", "a NOT CONTAINS 'b'", err, sizeof err),
                     23);
    assert_int_equal(rmq_fx_check(true, &opt5, "SQL92", "a NOT CONTAINS 'b'", err, sizeof err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_sql92_subscription_is_accepted),
        cmocka_unit_test(test_invalid_sql92_subscription_gets_code_23_and_java_remark),
        cmocka_unit_test(test_tag_subscriptions_are_never_validated),
        cmocka_unit_test(test_unknown_type_is_refused_like_a_parse_failure),
        cmocka_unit_test(test_disabled_property_filter_answers_system_error),
        cmocka_unit_test(test_5x_operators_are_checked_with_the_5x_grammar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
