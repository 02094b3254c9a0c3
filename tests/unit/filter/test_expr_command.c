/* test_expr_command.c — `rmqhostctl expr` (issue 5 item 5): literal EXPR
 * even when it starts with '-', KEY= is empty and an absent key is missing,
 * exit statuses, the `match` / `no match: …` first line and the --json form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "expr_command.h"

typedef struct sink {
    char text[4096];
} sink;

static void out(void *ud, const char *s)
{
    sink *k = ud;
    strncat(k->text, s, sizeof k->text - strlen(k->text) - 1);
}

static int run(sink *k, bool json, const char *const *argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    memset(k, 0, sizeof *k);
    rmq_fx_options opt = {0};
    return expr_command_run(&opt, argc, argv, json, out, k);
}

static void test_match_and_no_match_lines_say_why(void **state)
{
    (void)state;
    sink k;
    assert_int_equal(run(&k, false, (const char *const[]){"a > 5", "a=10", NULL}), 0);
    assert_string_equal(k.text, "match\n");
    assert_int_equal(run(&k, false, (const char *const[]){"a > 5", "a=1", NULL}), 0);
    assert_string_equal(k.text, "no match: false\n");
    assert_int_equal(run(&k, false, (const char *const[]){"a > 5", NULL}), 0);
    assert_true(strncmp(k.text, "no match: null", 14) == 0);
    assert_int_equal(run(&k, false, (const char *const[]){"a > 5", "a=5.5", NULL}), 0);
    assert_true(strncmp(k.text, "no match: evaluation error", 26) == 0);
    assert_non_null(strstr(k.text, "For input string: \"5.5\""));
}

static void test_empty_value_is_a_string_and_absent_key_is_missing(void **state)
{
    (void)state;
    sink k;
    assert_int_equal(run(&k, false, (const char *const[]){"a IS NOT NULL", "a=", NULL}), 0);
    assert_string_equal(k.text, "match\n");
    assert_int_equal(run(&k, false, (const char *const[]){"a IS NULL", "b=1", NULL}), 0);
    assert_string_equal(k.text, "match\n");
    assert_int_equal(run(&k, false, (const char *const[]){"a = 'x=y'", "a=x=y", NULL}), 0);
    assert_string_equal(k.text, "match\n");
}

static void test_expression_starting_with_dash_is_taken_literally(void **state)
{
    (void)state;
    sink k;
    /* "--x" is two minus signs, not an option, and does not compile */
    assert_int_equal(run(&k, false, (const char *const[]){"--", "--x", NULL}), 1);
    assert_true(strncmp(k.text, "error: ", 7) == 0);
    assert_int_equal(run(&k, false, (const char *const[]){"-a", NULL}), 1);
    assert_non_null(strstr(k.text, "Expression will not result in a boolean value"));
    assert_int_equal(run(&k, false, (const char *const[]){"--type", "SQL92", "--", "--json", NULL}),
                     1);
}

static void test_compile_error_exits_1_with_message_and_position(void **state)
{
    (void)state;
    sink k;
    assert_int_equal(run(&k, false, (const char *const[]){"a != 1", NULL}), 1);
    assert_true(strncmp(k.text,
                        "error: org.apache.rocketmq.filter.parser.TokenMgrError: Lexical error at "
                        "line 1, column 3.",
                        89) == 0);
    assert_non_null(strstr(k.text, "at character 3:\n    a != 1\n      ^\n"));
}

static void test_tag_type_matches_the_tags_property(void **state)
{
    (void)state;
    sink k;
    assert_int_equal(
        run(&k, false, (const char *const[]){"--type", "TAG", "TagA || TagB", "TAGS=TagB", NULL}),
        0);
    assert_string_equal(k.text, "match\n");
    assert_int_equal(run(&k, false, (const char *const[]){"--type=TAG", "TagA", "TAGS=TagC", NULL}),
                     0);
    assert_string_equal(k.text, "no match: false\n");
}

static void test_usage_errors_exit_2(void **state)
{
    (void)state;
    sink k;
    assert_int_equal(run(&k, false, (const char *const[]){NULL}), 2);
    assert_int_equal(run(&k, false, (const char *const[]){"--type", "sql", "a", NULL}), 2);
    assert_int_equal(run(&k, false, (const char *const[]){"a", "novalue", NULL}), 2);
    assert_int_equal(run(&k, false, (const char *const[]){"--type", NULL}), 2);
}

static void test_json_output_fields(void **state)
{
    (void)state;
    sink k;
    assert_int_equal(run(&k, true, (const char *const[]){"a > 5", "a=6", NULL}), 0);
    json_t *o = json_loads(k.text, 0, NULL);
    assert_true(json_is_true(json_object_get(o, "compile")));
    assert_true(json_is_null(json_object_get(o, "error")));
    assert_true(json_is_true(json_object_get(o, "result")));
    assert_true(json_is_null(json_object_get(o, "evalError")));
    json_decref(o);
    assert_int_equal(run(&k, false, (const char *const[]){"--json", "a > 5", "a=x", NULL}), 0);
    o = json_loads(k.text, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(o, "result")), "eval-error");
    assert_non_null(json_string_value(json_object_get(o, "evalError")));
    json_decref(o);
    assert_int_equal(run(&k, true, (const char *const[]){"a > 5", NULL}), 0);
    o = json_loads(k.text, 0, NULL);
    assert_true(json_is_null(json_object_get(o, "result")));
    json_decref(o);
    assert_int_equal(run(&k, true, (const char *const[]){"a >", NULL}), 1);
    o = json_loads(k.text, 0, NULL);
    assert_true(json_is_false(json_object_get(o, "compile")));
    assert_non_null(json_string_value(json_object_get(o, "error")));
    assert_true(json_is_null(json_object_get(o, "result")));
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match_and_no_match_lines_say_why),
        cmocka_unit_test(test_empty_value_is_a_string_and_absent_key_is_missing),
        cmocka_unit_test(test_expression_starting_with_dash_is_taken_literally),
        cmocka_unit_test(test_compile_error_exits_1_with_message_and_position),
        cmocka_unit_test(test_tag_type_matches_the_tags_property),
        cmocka_unit_test(test_usage_errors_exit_2),
        cmocka_unit_test(test_json_output_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
