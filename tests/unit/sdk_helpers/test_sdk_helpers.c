/* test_sdk_helpers.c — rmqhost/helpers.h: Java's number and boolean rules,
 * absent vs unparsable ext fields, typed setters, the oneway rule and
 * rmq_answer (through a plugin in the test kit), and the string map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/helpers.h>
#include <rmqhost/testkit.h>

static void test_parse_long_follows_long_parse_long(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_int_equal(rmq_parse_long("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(rmq_parse_long("-0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(rmq_parse_long("+7", &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(rmq_parse_long("-42", &v), 0);
    assert_int_equal(v, -42);
    assert_int_equal(rmq_parse_long("007", &v), 0);
    assert_int_equal(v, 7);
    assert_int_equal(rmq_parse_long("9223372036854775807", &v), 0);
    assert_true(v == INT64_MAX);
    assert_int_equal(rmq_parse_long("-9223372036854775808", &v), 0);
    assert_true(v == INT64_MIN);
    v = 5;
    const char *bad[] = {"9223372036854775808",
                         "-9223372036854775809",
                         "",
                         "+",
                         "-",
                         " 1",
                         "1 ",
                         "1a",
                         "0x10",
                         "1.0",
                         "1e3",
                         "--1",
                         "+-1",
                         "99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (rmq_parse_long(bad[i], &v) != RMQ_EINVAL)
            fail_msg("'%s' accepted", bad[i]);
    }
    assert_int_equal(v, 5); /* untouched on error */
    assert_int_equal(rmq_parse_long(NULL, &v), RMQ_ENOENT);
}

static void test_parse_int_and_bool_follow_java(void **state)
{
    (void)state;
    int32_t i = 0;
    assert_int_equal(rmq_parse_int("2147483647", &i), 0);
    assert_int_equal(i, INT32_MAX);
    assert_int_equal(rmq_parse_int("-2147483648", &i), 0);
    assert_int_equal(i, INT32_MIN);
    assert_int_equal(rmq_parse_int("2147483648", &i), RMQ_EINVAL);
    assert_int_equal(rmq_parse_int("-2147483649", &i), RMQ_EINVAL);
    assert_int_equal(rmq_parse_int("x", &i), RMQ_EINVAL);
    assert_int_equal(rmq_parse_int(NULL, &i), RMQ_ENOENT);

    assert_true(rmq_parse_bool("true"));
    assert_true(rmq_parse_bool("TRUE"));
    assert_true(rmq_parse_bool("tRuE"));
    assert_false(rmq_parse_bool("yes"));
    assert_false(rmq_parse_bool("1"));
    assert_false(rmq_parse_bool("truex"));
    assert_false(rmq_parse_bool("tru"));
    assert_false(rmq_parse_bool(""));
    assert_false(rmq_parse_bool(NULL));
}

/* ---- through a host API table (the kit's, which is the daemon's) ---- */

static int on_answer(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    const rmq_host_api *api = ud;
    int64_t n = -1;
    int rc = rmq_ext_long(api, cmd, "n", &n);
    if (rc == RMQ_EINVAL)
        return rmq_answer(api, req, cmd, 1, "n is not a number", NULL, 0);
    char body[32];
    int len =
        snprintf(body, sizeof(body), "%s:%lld", rc == RMQ_ENOENT ? "absent" : "n", (long long)n);
    return rmq_answer(api, req, cmd, 0, NULL, body, (size_t)len);
}

static int helper_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    return api->register_processor(ctx, 100, on_answer, (void *)api, NULL);
}

static const rmq_plugin_descriptor helper_plugin = {
    .abi_major = RMQ_ABI_MAJOR,
    .abi_minor = RMQ_ABI_MINOR,
    .descriptor_size = sizeof(rmq_plugin_descriptor),
    .name = "helpers",
    .init = helper_init,
};

static void assert_body(const rmq_cmd *c, const char *want)
{
    size_t len;
    const char *b = rmq_tk_body(c, &len);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(b, want, len);
}

static void test_ext_getters_setters_and_answers(void **state)
{
    (void)state;
    rmq_testkit *kit = rmq_tk_new();
    assert_non_null(kit);
    assert_int_equal(rmq_tk_add_plugin_descriptor(kit, "helpers", &helper_plugin, NULL), 0);
    char err[256];
    assert_int_equal(rmq_tk_start(kit, err, sizeof(err)), 0);
    const rmq_host_api *api = rmq_tk_api(kit);

    rmq_cmd *c = rmq_tk_request(100, RMQ_TK_JSON, false,
                                (const char *[]){"n", "12", "bad", "1x", "flag", "TRUE", NULL});
    int64_t v = 99;
    int32_t i = 0;
    bool b = false;
    assert_int_equal(rmq_ext_long(api, c, "n", &v), 0);
    assert_int_equal(v, 12);
    assert_int_equal(rmq_ext_int(api, c, "n", &i), 0);
    assert_int_equal(i, 12);
    assert_int_equal(rmq_ext_long(api, c, "bad", &v), RMQ_EINVAL);
    v = 99;
    assert_int_equal(rmq_ext_long(api, c, "missing", &v), RMQ_ENOENT);
    assert_int_equal(v, 99); /* a default set before stays */
    assert_int_equal(rmq_ext_bool(api, c, "flag", &b), 0);
    assert_true(b);
    assert_int_equal(rmq_ext_bool(api, c, "missing", &b), RMQ_ENOENT);
    assert_string_equal(rmq_ext_str(api, c, "bad"), "1x");
    assert_false(rmq_is_oneway(api, c));
    assert_int_equal(rmq_ext_set_long(api, c, "big", INT64_MIN), 0);
    assert_string_equal(rmq_tk_ext(c, "big"), "-9223372036854775808");
    assert_int_equal(rmq_ext_set_bool(api, c, "on", false), 0);
    assert_string_equal(rmq_tk_ext(c, "on"), "false");
    rmq_tk_cmd_free(c);
    c = rmq_tk_request(100, RMQ_TK_JSON, true, NULL);
    assert_true(rmq_is_oneway(api, c));
    rmq_tk_cmd_free(c);

    int ch = rmq_tk_open_channel(kit);
    rmq_cmd *a = rmq_tk_call(
        kit, ch, rmq_tk_request(100, 0, false, (const char *[]){"n", "-3", NULL}), 5000);
    assert_int_equal(rmq_tk_code(a), 0);
    assert_body(a, "n:-3");
    rmq_tk_cmd_free(a);
    a = rmq_tk_call(kit, ch, rmq_tk_request(100, 0, false, NULL), 5000);
    assert_body(a, "absent:-1");
    rmq_tk_cmd_free(a);
    a = rmq_tk_call(kit, ch, rmq_tk_request(100, 0, false, (const char *[]){"n", " 3", NULL}),
                    5000);
    assert_int_equal(rmq_tk_code(a), 1);
    assert_string_equal(rmq_tk_remark(a), "n is not a number");
    assert_null(rmq_tk_body(a, NULL));
    rmq_tk_cmd_free(a);
    /* oneway: rmq_answer sends nothing; the next answer on the channel is
     * the next request's */
    assert_null(rmq_tk_call(kit, ch, rmq_tk_request(100, 0, true, NULL), 5000));
    a = rmq_tk_call(kit, ch, rmq_tk_request(100, 0, false, (const char *[]){"n", "8", NULL}), 5000);
    assert_body(a, "n:8");
    rmq_tk_cmd_free(a);
    rmq_tk_free(kit);
}

static void test_string_map(void **state)
{
    (void)state;
    enum { N = 1000 };
    static char keys[N][16];
    rmq_str_map m;
    rmq_str_map_init(&m);
    assert_null(rmq_str_map_get(&m, "nothing"));
    assert_null(rmq_str_map_remove(&m, "nothing"));
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof(keys[i]), "topic-%d", i);
        int err = 1;
        assert_null(rmq_str_map_put(&m, keys[i], &keys[i], &err));
        assert_int_equal(err, 0);
    }
    assert_int_equal(rmq_str_map_count(&m), N);
    for (int i = 0; i < N; i++)
        assert_ptr_equal(rmq_str_map_get(&m, keys[i]), &keys[i]);
    int marker;
    assert_ptr_equal(rmq_str_map_put(&m, "topic-7", &marker, NULL), &keys[7]);
    assert_ptr_equal(rmq_str_map_get(&m, "topic-7"), &marker);
    assert_int_equal(rmq_str_map_count(&m), N);
    /* remove every even entry while iterating */
    rmq_str_map_iter it;
    rmq_str_map_iter_init(&it, &m);
    const char *k;
    void *v;
    size_t seen = 0;
    while (rmq_str_map_iter_next(&it, &k, &v)) {
        seen++;
        if (atoi(k + 6) % 2 == 0)
            assert_non_null(rmq_str_map_remove(&m, k));
    }
    assert_int_equal(seen, N);
    assert_int_equal(rmq_str_map_count(&m), N / 2);
    assert_null(rmq_str_map_get(&m, "topic-2"));
    assert_non_null(rmq_str_map_get(&m, "topic-3"));
    rmq_str_map_destroy(&m);
    assert_int_equal(rmq_str_map_count(&m), 0);
}

/* String.valueOf(double) of Java 8 for these values. */
static void test_java_double_text(void **state)
{
    (void)state;
    static const struct {
        double d;
        const char *want;
    } cases[] = {{0.0, "0.0"},     {1.0, "1.0"},
                 {12.5, "12.5"},   {0.1, "0.1"},
                 {100.0, "100.0"}, {1234567.0, "1234567.0"},
                 {1e7, "1.0E7"},   {12345678.9, "1.23456789E7"},
                 {0.001, "0.001"}, {0.0001, "1.0E-4"},
                 {-2.5, "-2.5"},   {1.0 / 3, "0.3333333333333333"},
                 {1e-5, "1.0E-5"}, {0.45230123, "0.45230123"}};
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_string_equal(rmq_java_double_text(cases[i].d, buf, sizeof buf), cases[i].want);
}

/* A before hook's remark (ABI 1.7): formatted into the host's buffer and
 * cut to its capacity with the NUL kept; a NULL text is no remark. */
static void test_remark_buffer_writers(void **state)
{
    (void)state;
    char text[8];
    rmq_remark_buf b = {.size = sizeof(b), .data = text, .cap = sizeof(text)};
    assert_int_equal(rmq_remark_printf(&b, "code=%d", 17), 7);
    assert_string_equal(text, "code=17");
    assert_int_equal(rmq_remark_set(&b, "No acl config for someone"), 25);
    assert_string_equal(text, "No acl ");
    assert_int_equal(rmq_remark_set(&b, NULL), 0);
    assert_string_equal(text, "");
    assert_int_equal(rmq_remark_set(NULL, "x"), RMQ_EINVAL);
    rmq_remark_buf none = {.size = sizeof(none), .data = NULL, .cap = 0};
    assert_int_equal(rmq_remark_printf(&none, "%s", "x"), RMQ_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_long_follows_long_parse_long),
        cmocka_unit_test(test_parse_int_and_bool_follow_java),
        cmocka_unit_test(test_ext_getters_setters_and_answers),
        cmocka_unit_test(test_string_map),
        cmocka_unit_test(test_java_double_text),
        cmocka_unit_test(test_remark_buffer_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
