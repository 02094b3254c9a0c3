/* test_filter_expr_errors.c — compile errors carry Java's exception class
 * and message (protocol.md §6.5.6) and the position of the offending token. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiled_expr.h"
#include "filter_engine.h"

static int compile(const char *expr, char *err, size_t errlen, int *pos)
{
    rmq_fx_options opt = {0};
    struct rmq_filter_expr *e = NULL;
    int rc = rmq_fx_compile("SQL92", expr, strlen(expr), &opt, &e, err, errlen, pos);
    free(e);
    return rc;
}

static void test_lexical_error_names_char_and_column(void **state)
{
    (void)state;
    char err[512];
    int pos = -1;
    assert_int_equal(compile("a != 'x'", err, sizeof err, &pos), RMQ_EINVAL);
    assert_string_equal(err, "org.apache.rocketmq.filter.parser.TokenMgrError: Lexical error at "
                             "line 1, column 3.  Encountered: \"!\" (33), after : \"\"");
    assert_int_equal(pos, 3);
}

static void test_parse_error_reports_token_and_column(void **state)
{
    (void)state;
    char err[1024];
    int pos = -1;
    assert_int_equal(compile("a == 'x'", err, sizeof err, &pos), RMQ_EINVAL);
    assert_non_null(strstr(err, "org.apache.rocketmq.filter.parser.ParseException: Encountered \" "
                                "\"=\" \"= \"\" at line 1, column 4."));
    assert_non_null(strstr(err, "\nWas expecting one of:\n"));
    assert_int_equal(pos, 4);
}

static void test_incomplete_input_points_past_the_end(void **state)
{
    (void)state;
    char err[1024];
    int pos = -1;
    assert_int_equal(compile("a = 'x' AND", err, sizeof err, &pos), RMQ_EINVAL);
    assert_non_null(strstr(err, "Encountered \"<EOF>\" at line 1, column 12."));
    assert_int_equal(pos, 12);
}

static void test_second_line_errors_count_lines(void **state)
{
    (void)state;
    char err[1024];
    int pos = -1;
    assert_int_equal(compile("a = 1 AND\n  b ! 2", err, sizeof err, &pos), RMQ_EINVAL);
    assert_non_null(strstr(err, "line 2, column 5"));
    assert_int_equal(pos, 15);
}

static void test_semantic_errors_use_java_runtime_texts(void **state)
{
    (void)state;
    static const struct {
        const char *expr, *msg;
    } cases[] = {
        {"a > 'x'", "java.lang.RuntimeException: Value ''x'' cannot be compared."},
        {"a = 0.0", "java.lang.RuntimeException: 0.0 is less than 4.9E-324"},
        {"a = 1e400", "java.lang.RuntimeException: 1e400 is greater than 1.7976931348623157E308"},
        {"a = NULL", "java.lang.RuntimeException: 'NULL' cannot be compared."},
        {"TRUE = 5", "java.lang.RuntimeException: 'TRUE' cannot be compared with '5'"},
        {"a BETWEEN 3 AND 1", "java.lang.RuntimeException: Illegal values of between, left "
                              "value(3) must less than or equal to right value(1)"},
        {"a BETWEEN NULL AND 1",
         "java.lang.RuntimeException: Illegal values of between, values can not be null!"},
        {"a BETWEEN 5 AND 'x'",
         "java.lang.RuntimeException: java.lang.NumberFormatException: For input string: \"x\""},
        {"NOT a > 5", "java.lang.RuntimeException: Value '(NOT a)' cannot be compared."},
        {"NOT a IN ('x')",
         "java.lang.RuntimeException: Expected a property for In expression, got: (NOT a)"},
        {"5", "org.apache.rocketmq.filter.parser.ParseException: Expression will not result in a "
              "boolean value: 5"},
        {"a = -9223372036854775808",
         "java.lang.NumberFormatException: For input string: \"9223372036854775808\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[512];
        int pos = 0;
        assert_int_equal(compile(cases[i].expr, err, sizeof err, &pos), RMQ_EINVAL);
        assert_string_equal(err, cases[i].msg);
        assert_true(pos > 0);
    }
}

static void test_nesting_beyond_limit_is_refused_not_crashed(void **state)
{
    (void)state;
    size_t n = 100000;
    char *s = malloc(n + 16);
    assert_non_null(s);
    memset(s, '(', n);
    strcpy(s + n, "a");
    char err[256];
    assert_int_equal(compile(s, err, sizeof err, NULL), RMQ_EINVAL);
    assert_non_null(strstr(err, "nested deeper"));
    /* a long flat AND chain is fine up to the tree-depth bound */
    size_t terms = 1000, at = 0;
    char *chain = malloc(terms * 12 + 1);
    for (size_t i = 0; i < terms; i++)
        at += (size_t)sprintf(chain + at, "%sa = 1", i ? " AND " : "");
    assert_int_equal(compile(chain, err, sizeof err, NULL), 0);
    free(chain);
    free(s);
}

static void test_unknown_expression_type_is_not_found(void **state)
{
    (void)state;
    rmq_fx_options opt = {0};
    struct rmq_filter_expr *e = NULL;
    char err[128];
    assert_int_equal(rmq_fx_compile("sql92", "a > 5", 5, &opt, &e, err, sizeof err, NULL),
                     RMQ_ENOENT);
    assert_null(e);
}

static void test_compiled_block_is_self_contained_and_keeps_text(void **state)
{
    (void)state;
    rmq_fx_options opt = {0};
    struct rmq_filter_expr *e = NULL;
    char err[128];
    const char *text = "a IN ('x', 'y') AND b > 5";
    assert_int_equal(rmq_fx_compile("SQL92", text, strlen(text), &opt, &e, err, sizeof err, NULL),
                     0);
    assert_string_equal(rmq_fx_text(e), text);
    /* A byte copy evaluates the same after the original is gone: the block
     * holds offsets, never pointers. */
    struct rmq_filter_expr *copy = malloc(e->total_size);
    assert_non_null(copy);
    memcpy(copy, e, e->total_size);
    free(e);
    const char *kv[] = {"a", "y", "b", "6", NULL};
    assert_int_equal(rmq_fx_evaluate(copy, NULL, rmq_filter_kv_lookup, kv, NULL, 0),
                     RMQ_FILTER_TRUE);
    /* A block of another format is refused, not misread. */
    copy->format++;
    char why[64];
    assert_int_equal(rmq_fx_evaluate(copy, NULL, rmq_filter_kv_lookup, kv, why, sizeof why),
                     RMQ_FILTER_EVAL_ERROR);
    assert_string_equal(why, "stale compiled expression");
    free(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lexical_error_names_char_and_column),
        cmocka_unit_test(test_parse_error_reports_token_and_column),
        cmocka_unit_test(test_incomplete_input_points_past_the_end),
        cmocka_unit_test(test_second_line_errors_count_lines),
        cmocka_unit_test(test_semantic_errors_use_java_runtime_texts),
        cmocka_unit_test(test_nesting_beyond_limit_is_refused_not_crashed),
        cmocka_unit_test(test_unknown_expression_type_is_not_found),
        cmocka_unit_test(test_compiled_block_is_self_contained_and_keeps_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
