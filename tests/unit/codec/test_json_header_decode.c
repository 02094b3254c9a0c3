/* test_json_header_decode.c — what the JSON header decoder accepts from real
 * clients (protocol.md §2.2, Appendix B) and what it refuses, with reasons. */
#include "codec_test_frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rmq_cmd *decode_ok(const char *hdr)
{
    char err[160] = "";
    rmq_cmd *c = codec_decode_json(hdr, err, sizeof err);
    if (!c)
        fail_msg("decode of %s failed: %s", hdr, err);
    return c;
}

static void test_keys_in_any_order_and_unknown_values_of_every_shape_are_skipped(void **state)
{
    (void)state;
    rmq_cmd *c =
        decode_ok("{\"version\":121,\"junk\":{\"a\":[1,2.5e3,{\"b\":null}],\"c\":\"x}]\\\"\"},"
                  "\"opaque\":3,\"arr\":[],\"obj\":{},\"t\":true,\"code\":105,\"n\":-1,"
                  "\"language\":\"JAVA\",\"flag\":2,\"serializeTypeCurrentRPC\":\"JSON\"}");
    assert_int_equal(c->code, 105);
    assert_int_equal(c->version, 121);
    assert_int_equal(c->opaque, 3);
    assert_int_equal(c->flag, RMQ_FLAG_ONEWAY);
    assert_int_equal(c->language, RMQ_LANG_JAVA);
    assert_false(c->has_ext);
    rmq_cmd_free(c);
}

static void test_missing_keys_keep_defaults(void **state)
{
    (void)state;
    rmq_cmd *c = decode_ok("{\"code\":34}");
    assert_int_equal(c->code, 34);
    assert_int_equal(c->flag, 0);
    assert_int_equal(c->version, 0);
    assert_int_equal(c->opaque, 0);
    assert_int_equal(c->language, RMQ_LANG_JAVA);
    assert_null(c->remark);
    assert_false(c->has_ext);
    assert_int_equal(c->ext_count, 0);
    assert_null(c->body);
    rmq_cmd_free(c);
    c = decode_ok("{}");
    assert_int_equal(c->code, 0);
    rmq_cmd_free(c);
}

static void test_ali_ons_non_string_ext_values_become_text(void **state)
{
    (void)state;
    rmq_cmd *c = decode_ok("{\"code\":105,\"language\":\"JAVA\",\"opaque\":3,\"flag\":0,"
                           "\"version\":121,\"extFields\":{\"topic\":\"T\",\"queueId\":0,"
                           "\"flag\":true}}");
    assert_int_equal(c->code, 105);
    assert_int_equal(c->version, 121);
    assert_true(c->has_ext);
    assert_string_equal(rmq_cmd_ext_get(c, "topic"), "T");
    assert_string_equal(rmq_cmd_ext_get(c, "queueId"), "0");
    assert_string_equal(rmq_cmd_ext_get(c, "flag"), "true");
    rmq_cmd_free(c);
}

static void test_ext_numbers_keep_their_textual_form_and_null_keeps_the_key(void **state)
{
    (void)state;
    rmq_cmd *c = decode_ok("{\"extFields\":{\"a\":5,\"b\":-1,\"c\":1.5,\"d\":false,\"e\":null,"
                           "\"f\":1e10,\"g\":-0.25E-3,\"h\":\"\"}}");
    assert_string_equal(rmq_cmd_ext_get(c, "a"), "5");
    assert_string_equal(rmq_cmd_ext_get(c, "b"), "-1");
    assert_string_equal(rmq_cmd_ext_get(c, "c"), "1.5");
    assert_string_equal(rmq_cmd_ext_get(c, "d"), "false");
    assert_string_equal(rmq_cmd_ext_get(c, "f"), "1e10");
    assert_string_equal(rmq_cmd_ext_get(c, "g"), "-0.25E-3");
    assert_string_equal(rmq_cmd_ext_get(c, "h"), "");
    assert_null(rmq_cmd_ext_get(c, "e"));
    assert_int_equal(c->ext_count, 8);
    assert_string_equal(c->ext[4].key, "e");
    assert_null(c->ext[4].value);
    rmq_cmd_free(c);
}

static void test_cpp_client_trailing_newline_and_empty_remark(void **state)
{
    (void)state;
    rmq_cmd *c = decode_ok(
        "{\"code\":34,\"extFields\":{\"AccessKey\":\"\",\"OnsChannel\":\"ALIYUN\",\"Signature\":"
        "\"\"},\"flag\":0,\"language\":\"CPP\",\"opaque\":0,\"remark\":\"\","
        "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":333}\n");
    assert_int_equal(c->language, 1);
    assert_int_equal(c->version, 333);
    assert_non_null(c->remark);
    assert_string_equal(c->remark, "");
    assert_string_equal(rmq_cmd_ext_get(c, "AccessKey"), "");
    assert_string_equal(rmq_cmd_ext_get(c, "OnsChannel"), "ALIYUN");
    rmq_cmd_free(c);
    c = decode_ok(" \r\n\t{\"code\":1} \r\n\t ");
    assert_int_equal(c->code, 1);
    rmq_cmd_free(c);
}

static void test_language_as_number_or_name(void **state)
{
    (void)state;
    rmq_cmd *c = decode_ok("{\"language\":1}");
    assert_int_equal(c->language, 1);
    assert_string_equal(rmq_language_name(c->language), "CPP");
    rmq_cmd_free(c);
    c = decode_ok("{\"language\":\"NODE\"}");
    assert_int_equal(c->language, RMQ_LANG_OTHER);
    rmq_cmd_free(c);
    c = decode_ok("{\"language\":\"NODE_JS\"}");
    assert_int_equal(c->language, 13);
    rmq_cmd_free(c);
    c = decode_ok("{\"language\":\"A_VERY_LONG_UNKNOWN_LANGUAGE_NAME\"}");
    assert_int_equal(c->language, RMQ_LANG_OTHER);
    rmq_cmd_free(c);
    c = decode_ok("{\"language\":99}");
    assert_int_equal(c->language, RMQ_LANG_OTHER);
    rmq_cmd_free(c);
    c = decode_ok("{\"language\":\"GO\"}");
    assert_int_equal(c->language, 9);
    rmq_cmd_free(c);
}

static void test_string_escapes_decode_to_utf8(void **state)
{
    (void)state;
    rmq_cmd *c = decode_ok("{\"remark\":\"a\\u00e9\\u4E2D\\ud83d\\ude00\\n\\t\\r\\b\\f\\\"\\\\\\/"
                           "\\u0001z\",\"extFields\":{\"k\\u0041\":\"lone\\ud800x\"}}");
    assert_string_equal(c->remark, "a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\n\t\r\b\f\"\\/\x01z");
    assert_string_equal(rmq_cmd_ext_get(c, "kA"), "lone?x");
    rmq_cmd_free(c);
    /* raw UTF-8 passes through untouched */
    c = decode_ok("{\"remark\":\"caf\xc3\xa9 \xe4\xb8\xad\"}");
    assert_string_equal(c->remark, "caf\xc3\xa9 \xe4\xb8\xad");
    rmq_cmd_free(c);
}

static void test_fastjson_leniency_unquoted_keys_and_single_quotes(void **state)
{
    (void)state;
    rmq_cmd *c = decode_ok("{code:105,'extFields':{'topic':'T\\'x',queueId:1,},flag:0,"
                           "'remark':'it\"s',}");
    assert_int_equal(c->code, 105);
    assert_string_equal(rmq_cmd_ext_get(c, "topic"), "T'x");
    assert_string_equal(rmq_cmd_ext_get(c, "queueId"), "1");
    assert_string_equal(c->remark, "it\"s");
    rmq_cmd_free(c);
    c = decode_ok("{\"code\":\"105\",\"opaque\":-2147483648,\"flag\":null,\"remark\":null}");
    assert_int_equal(c->code, 105);
    assert_int_equal(c->opaque, INT32_MIN);
    assert_null(c->remark);
    rmq_cmd_free(c);
}

static void test_duplicate_keys_last_wins(void **state)
{
    (void)state;
    rmq_cmd *c = decode_ok("{\"code\":1,\"extFields\":{\"a\":\"1\",\"b\":\"2\",\"a\":\"3\"},"
                           "\"code\":2}");
    assert_int_equal(c->code, 2);
    assert_int_equal(c->ext_count, 2);
    assert_string_equal(c->ext[0].key, "a");
    assert_string_equal(c->ext[0].value, "3");
    rmq_cmd_free(c);
    c = decode_ok("{\"extFields\":{\"a\":\"1\"},\"extFields\":{\"b\":\"2\"}}");
    assert_int_equal(c->ext_count, 1);
    assert_null(rmq_cmd_ext_get(c, "a"));
    assert_string_equal(rmq_cmd_ext_get(c, "b"), "2");
    rmq_cmd_free(c);
    c = decode_ok("{\"extFields\":{\"a\":\"1\"},\"extFields\":null}");
    assert_false(c->has_ext);
    assert_int_equal(c->ext_count, 0);
    rmq_cmd_free(c);
}

static void test_many_ext_fields_and_long_values_outgrow_the_first_block(void **state)
{
    (void)state;
    size_t cap = 200000;
    char *hdr = malloc(cap);
    size_t n = (size_t)snprintf(hdr, cap, "{\"extFields\":{");
    for (int i = 0; i < 300; i++)
        n += (size_t)snprintf(hdr + n, cap - n, "%s\"k%d\":%d", i ? "," : "", i, i);
    n += (size_t)snprintf(hdr + n, cap - n, ",\"long\":\"");
    memset(hdr + n, 'x', 100000);
    n += 100000;
    snprintf(hdr + n, cap - n, "\"}}");
    rmq_cmd *c = decode_ok(hdr);
    assert_int_equal(c->ext_count, 301);
    assert_string_equal(rmq_cmd_ext_get(c, "k0"), "0");
    assert_string_equal(rmq_cmd_ext_get(c, "k299"), "299");
    assert_int_equal(strlen(rmq_cmd_ext_get(c, "long")), 100000);
    rmq_cmd_free(c);
    free(hdr);
}

static void test_invalid_headers_are_rejected_with_a_reason(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "   ",
        "[1]",
        "{\"code\":}",
        "{\"code\":1",
        "{\"code\":1}x",
        "{\"code\":1}{}",
        "{\"code\" 1}",
        "{\"code\":1 \"flag\":0}",
        "{\"code\":\"abc\"}",
        "{\"code\":1.5}",
        "{\"code\":99999999999}",
        "{\"code\":2147483648}",
        "{\"code\":-}",
        "{\"extFields\":{\"a\":{\"b\":1}}}",
        "{\"extFields\":{\"a\":[1]}}",
        "{\"extFields\":[1]}",
        "{\"extFields\":\"x\"}",
        "{\"extFields\":{\"a\":1",
        "{\"extFields\":{\"a\" \"b\"}}",
        "{\"extFields\":{\"a\":undefined}}",
        "{\"remark\":\"\\x41\"}",
        "{\"remark\":\"\\u12G4\"}",
        "{\"remark\":\"unterminated}",
        "{\"remark\":\"ends in backslash\\",
        "{\"remark\":{}}",
        "{\"junk\":[1,2}",
        "{\"junk\":{\"a\":1]}",
        "{\"junk\":{\"a\"}}",
        "{\"junk\":[,]}",
        "{\"junk\":}",
        "{:1}",
        "{\"language\":[]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[160] = "";
        rmq_cmd *c = codec_decode_json(bad[i], err, sizeof err);
        if (c)
            fail_msg("accepted bad header #%zu: %s", i, bad[i]);
        if (err[0] == '\0')
            fail_msg("no reason for bad header #%zu: %s", i, bad[i]);
    }
}

static void test_hostile_nesting_is_refused_without_recursion(void **state)
{
    (void)state;
    size_t depth = 100000;
    char *hdr = malloc(depth + 32);
    size_t n = (size_t)sprintf(hdr, "{\"junk\":");
    memset(hdr + n, '[', depth);
    hdr[n + depth] = '\0';
    char err[160] = "";
    assert_null(codec_decode_json(hdr, err, sizeof err));
    assert_non_null(strstr(err, "nesting"));
    /* 64 levels are still fine */
    n = (size_t)sprintf(hdr, "{\"junk\":");
    memset(hdr + n, '[', 64);
    memset(hdr + n + 64, ']', 64);
    strcpy(hdr + n + 128, ",\"code\":7}");
    rmq_cmd *c = decode_ok(hdr);
    assert_int_equal(c->code, 7);
    rmq_cmd_free(c);
    free(hdr);
}

static void test_reason_names_the_offset(void **state)
{
    (void)state;
    char err[160] = "";
    assert_null(codec_decode_json("{\"code\":x}", err, sizeof err));
    assert_string_equal(err, "bad JSON header at offset 8: code is not a 32-bit integer");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_in_any_order_and_unknown_values_of_every_shape_are_skipped),
        cmocka_unit_test(test_missing_keys_keep_defaults),
        cmocka_unit_test(test_ali_ons_non_string_ext_values_become_text),
        cmocka_unit_test(test_ext_numbers_keep_their_textual_form_and_null_keeps_the_key),
        cmocka_unit_test(test_cpp_client_trailing_newline_and_empty_remark),
        cmocka_unit_test(test_language_as_number_or_name),
        cmocka_unit_test(test_string_escapes_decode_to_utf8),
        cmocka_unit_test(test_fastjson_leniency_unquoted_keys_and_single_quotes),
        cmocka_unit_test(test_duplicate_keys_last_wins),
        cmocka_unit_test(test_many_ext_fields_and_long_values_outgrow_the_first_block),
        cmocka_unit_test(test_invalid_headers_are_rejected_with_a_reason),
        cmocka_unit_test(test_hostile_nesting_is_refused_without_recursion),
        cmocka_unit_test(test_reason_names_the_offset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
