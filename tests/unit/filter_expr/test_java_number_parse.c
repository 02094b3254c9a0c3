/* test_java_number_parse.c — the Java number parsers used on property
 * values accept exactly what Java accepts (protocol.md §6.5.4, §6.5.7 #10–11). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "java_number_parse.h"

static bool pi(const char *s, int32_t *v)
{
    return java_parse_int(s, strlen(s), v);
}
static bool pd(const char *s, double *v)
{
    return java_parse_double(s, strlen(s), v);
}

static void test_parse_int_accepts_sign_and_unicode_digits_only(void **state)
{
    (void)state;
    int32_t v;
    assert_true(pi("-2147483648", &v) && v == INT32_MIN);
    assert_true(pi("2147483647", &v) && v == INT32_MAX);
    assert_false(pi("2147483648", &v));
    assert_true(pi("+05", &v) && v == 5);
    assert_true(pi("\xef\xbc\x91\xef\xbc\x92", &v) && v == 12);
    assert_false(pi(" 1", &v));
    assert_false(pi("", &v));
    assert_false(pi("-", &v));
    assert_false(pi("1.0", &v));
    assert_false(pi("\xf0\x9d\x9f\x8e", &v)); /* U+1D7CE: outside the BMP, two UTF-16 units */
    int64_t l;
    assert_true(java_parse_long("-9223372036854775808", 20, &l) && l == INT64_MIN);
    assert_false(java_parse_long("9223372036854775808", 19, &l));
}

static void test_parse_double_follows_double_valueof(void **state)
{
    (void)state;
    double d;
    assert_true(pd(" 5.5 ", &d) && d == 5.5);
    assert_true(pd("1e3", &d) && d == 1000);
    assert_true(pd("2d", &d) && d == 2);
    assert_true(pd("0x1.8p1", &d) && d == 3);
    assert_true(pd("-Infinity", &d) && isinf(d) && d < 0);
    assert_true(pd("NaN", &d) && isnan(d));
    assert_true(pd(".5", &d) && d == 0.5);
    assert_true(pd("5.", &d) && d == 5);
    assert_false(pd("0x1.8", &d));
    assert_false(pd("1e", &d));
    assert_false(pd(".", &d));
    assert_false(pd("inf", &d));
    assert_false(pd("1 2", &d));
    assert_false(pd("\xef\xbc\x95", &d));
}

static void test_double_compare_orders_nan_and_signed_zero_like_java(void **state)
{
    (void)state;
    assert_int_equal(java_double_compare(NAN, NAN), 0);
    assert_int_equal(java_double_compare(NAN, INFINITY), 1);
    assert_int_equal(java_double_compare(-0.0, 0.0), -1);
    assert_int_equal(java_double_compare(1.0, 2.0), -1);
}

static void test_double_to_string_matches_java_forms(void **state)
{
    (void)state;
    char b[40];
    java_double_to_string(1.0, b, sizeof b);
    assert_string_equal(b, "1.0");
    java_double_to_string(1.5, b, sizeof b);
    assert_string_equal(b, "1.5");
    java_double_to_string(1e10, b, sizeof b);
    assert_string_equal(b, "1.0E10");
    java_double_to_string(0.001, b, sizeof b);
    assert_string_equal(b, "0.001");
    java_double_to_string(1.0e-4, b, sizeof b);
    assert_string_equal(b, "1.0E-4");
    java_double_to_string(123456.75, b, sizeof b);
    assert_string_equal(b, "123456.75");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_int_accepts_sign_and_unicode_digits_only),
        cmocka_unit_test(test_parse_double_follows_double_valueof),
        cmocka_unit_test(test_double_compare_orders_nan_and_signed_zero_like_java),
        cmocka_unit_test(test_double_to_string_matches_java_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
