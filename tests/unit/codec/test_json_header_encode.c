/* test_json_header_encode.c — the JSON header is written the way fastjson
 * writes it: key order, omitted nulls, "{}" for empty ext, escaping. */
#include "codec_test_frames.h"

#include <stdlib.h>
#include <string.h>

/* header text of cmd's JSON encoding, NUL-terminated, malloc'd */
static char *header_text(rmq_cmd *cmd)
{
    cmd->serialize_type = RMQ_SERIALIZE_JSON;
    size_t len;
    uint8_t *f = codec_encode(cmd, &len);
    size_t h = rmq_cmd_header_size(cmd);
    assert_int_equal(len, 8 + h + cmd->body_len);
    char *t = malloc(h + 1);
    memcpy(t, f + 8, h);
    t[h] = '\0';
    free(f);
    return t;
}

static void test_empty_ext_is_written_as_braces_and_null_values_are_dropped(void **state)
{
    (void)state;
    rmq_cmd *c = rmq_cmd_new();
    c->has_ext = true;
    char *t = header_text(c);
    assert_string_equal(t, "{\"code\":0,\"extFields\":{},\"flag\":0,\"language\":\"JAVA\","
                           "\"opaque\":0,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":409}");
    free(t);
    rmq_cmd_free(c);

    c = codec_decode_json("{\"extFields\":{\"a\":null,\"b\":2,\"c\":null,\"d\":\"x\"}}", NULL, 0);
    assert_non_null(c);
    t = header_text(c);
    assert_string_equal(t, "{\"code\":0,\"extFields\":{\"b\":\"2\",\"d\":\"x\"},\"flag\":0,"
                           "\"language\":\"JAVA\",\"opaque\":0,\"serializeTypeCurrentRPC\":"
                           "\"JSON\",\"version\":0}");
    free(t);
    rmq_cmd_free(c);
}

static void test_ext_values_are_strings_in_insertion_order(void **state)
{
    (void)state;
    rmq_cmd *c = codec_decode_json(
        "{\"code\":105,\"language\":\"JAVA\",\"opaque\":3,\"flag\":0,\"version\":121,"
        "\"extFields\":{\"topic\":\"T\",\"queueId\":0,\"flag\":true}}",
        NULL, 0);
    assert_non_null(c);
    char *t = header_text(c);
    assert_string_equal(t, "{\"code\":105,\"extFields\":{\"topic\":\"T\",\"queueId\":\"0\","
                           "\"flag\":\"true\"},\"flag\":0,\"language\":\"JAVA\",\"opaque\":3,"
                           "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":121}");
    free(t);
    rmq_cmd_free(c);
}

static void test_fastjson_escaping_of_remark_and_ext(void **state)
{
    (void)state;
    rmq_cmd *c = rmq_cmd_new();
    c->code = -1;
    c->opaque = INT32_MIN;
    c->flag = 1;
    c->language = 200; /* no name: written as OTHER */
    c->version = -5;
    /* controls, quote, backslash, slash, DEL, U+0085, U+00E9, U+2028, U+2029 */
    assert_int_equal(rmq_cmd_set_remark(c, "a\x01\x1f\b\t\n\f\r\v\"\\/\x7f\xc2\x85\xc3\xa9"
                                           "\xe2\x80\xa8\xe2\x80\xa9z"),
                     0);
    assert_int_equal(rmq_cmd_ext_set(c, "k\"\n", "v\\"), 0);
    char *t = header_text(c);
    assert_string_equal(t, "{\"code\":-1,\"extFields\":{\"k\\\"\\n\":\"v\\\\\"},\"flag\":1,"
                           "\"language\":\"OTHER\",\"opaque\":-2147483648,\"remark\":\"a\\u0001"
                           "\\u001F\\b\\t\\n\\f\\r\\u000B\\\"\\\\/\\u007F\\u0085\xc3\xa9\\u2028"
                           "\xe2\x80\xa9z\",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":-5}");
    /* and the decoder reads every escape back */
    rmq_cmd *d = codec_decode_json(t, NULL, 0);
    assert_non_null(d);
    assert_string_equal(d->remark, c->remark);
    assert_string_equal(rmq_cmd_ext_get(d, "k\"\n"), "v\\");
    assert_int_equal(d->language, RMQ_LANG_OTHER);
    rmq_cmd_free(d);
    free(t);
    rmq_cmd_free(c);
}

static void test_empty_remark_is_written_and_null_remark_omitted(void **state)
{
    (void)state;
    rmq_cmd *c = rmq_cmd_new();
    rmq_cmd_set_remark(c, "");
    char *t = header_text(c);
    assert_non_null(strstr(t, ",\"remark\":\"\","));
    free(t);
    rmq_cmd_set_remark(c, NULL);
    t = header_text(c);
    assert_null(strstr(t, "remark"));
    free(t);
    rmq_cmd_free(c);
}

static void test_unknown_serialize_type_cannot_be_encoded(void **state)
{
    (void)state;
    rmq_cmd *c = rmq_cmd_new();
    c->serialize_type = 2;
    uint8_t buf[256];
    assert_int_equal(rmq_cmd_header_size(c), 0);
    assert_int_equal(rmq_cmd_encoded_size(c), 0);
    assert_int_equal(rmq_cmd_encode(c, buf, sizeof buf), 0);
    assert_int_equal(rmq_cmd_encode_header(c, buf, sizeof buf), 0);
    rmq_cmd_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_ext_is_written_as_braces_and_null_values_are_dropped),
        cmocka_unit_test(test_ext_values_are_strings_in_insertion_order),
        cmocka_unit_test(test_fastjson_escaping_of_remark_and_ext),
        cmocka_unit_test(test_empty_remark_is_written_and_null_remark_omitted),
        cmocka_unit_test(test_unknown_serialize_type_cannot_be_encoded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
