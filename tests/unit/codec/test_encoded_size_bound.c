/* test_encoded_size_bound.c — rmq_cmd_encoded_size_bound() is never below the
 * exact size, encoding into exactly that much room gives the same bytes as
 * the sized path, and every language name is written in full (the encoder
 * takes name lengths from a table). */
#include "codec_test_frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* bound >= exact, and rmq_cmd_encode into `bound` bytes equals the frame
 * encoded into an exactly sized buffer */
static void assert_bound_encodes_same(const rmq_cmd *c)
{
    size_t exact = rmq_cmd_encoded_size(c);
    assert_true(exact > 0);
    size_t bound = rmq_cmd_encoded_size_bound(c);
    assert_true(bound >= exact);
    uint8_t *want = malloc(exact);
    uint8_t *got = malloc(bound);
    assert_int_equal(rmq_cmd_encode(c, want, exact), exact);
    assert_int_equal(rmq_cmd_encode(c, got, bound), exact);
    assert_memory_equal(got, want, exact);
    free(want);
    free(got);
}

static void test_bound_covers_a_plain_response_with_body(void **state)
{
    (void)state;
    rmq_cmd *req = rmq_cmd_new();
    req->opaque = -2147483647 - 1;
    req->code = -2147483647 - 1;
    rmq_cmd *c = rmq_cmd_new_response(req, -2147483647 - 1, NULL);
    c->flag = -2147483647 - 1;
    c->version = -2147483647 - 1;
    c->language = 13; /* NODE_JS, the longest name */
    uint8_t body[300];
    memset(body, 'x', sizeof body);
    assert_int_equal(rmq_cmd_set_body(c, body, sizeof body, NULL, NULL), 0);
    assert_bound_encodes_same(c);
    c->serialize_type = RMQ_SERIALIZE_ROCKETMQ;
    c->code = -32768;
    c->version = 32767;
    assert_bound_encodes_same(c);
    rmq_cmd_free(c);
    rmq_cmd_free(req);
}

/* every byte of these strings takes fastjson's longest escape (\u00XX, or
 * one \uXXXX for a 2- or 3-byte sequence), the worst case the bound allows */
static void test_bound_covers_strings_that_escape_every_byte(void **state)
{
    (void)state;
    rmq_cmd *c = rmq_cmd_new();
    char ctl[64];
    for (size_t i = 0; i < sizeof ctl - 1; i++)
        ctl[i] = (char)(1 + i % 7); /* \u0001..\u0007: 6 bytes each */
    ctl[sizeof ctl - 1] = '\0';
    assert_int_equal(rmq_cmd_set_remark(c, ctl), 0);
    assert_int_equal(rmq_cmd_ext_set(c, ctl, ctl), 0);
    assert_int_equal(rmq_cmd_ext_set(c, "c1", "\xc2\x80\xc2\x9f\x7f\"\\\n"), 0);
    assert_int_equal(rmq_cmd_ext_set(c, "ls", "\xe2\x80\xa8\xe2\x80\xa8"), 0);
    assert_int_equal(rmq_cmd_ext_set(c, "", ""), 0);
    assert_bound_encodes_same(c);
    c->serialize_type = RMQ_SERIALIZE_ROCKETMQ;
    assert_bound_encodes_same(c);
    rmq_cmd_free(c);
}

static void test_bound_ignores_null_ext_values(void **state)
{
    (void)state;
    rmq_cmd *c = codec_decode_json("{\"code\":1,\"extFields\":{\"a\":null,\"b\":\"2\",\"\":\"e\"}}",
                                   NULL, 0);
    assert_non_null(c);
    assert_bound_encodes_same(c);
    c->serialize_type = RMQ_SERIALIZE_ROCKETMQ;
    assert_bound_encodes_same(c);
    rmq_cmd_free(c);
}

static void test_bound_is_zero_only_for_commands_that_cannot_be_encoded(void **state)
{
    (void)state;
    assert_int_equal(rmq_cmd_encoded_size_bound(NULL), 0);
    rmq_cmd *c = rmq_cmd_new();
    c->serialize_type = 2;
    assert_int_equal(rmq_cmd_encoded_size_bound(c), 0);
    assert_int_equal(rmq_cmd_encoded_size(c), 0);
    c->serialize_type = RMQ_SERIALIZE_JSON;
    assert_true(rmq_cmd_encoded_size_bound(c) >= rmq_cmd_encoded_size(c));
    rmq_cmd_free(c);
}

static void test_encode_into_too_little_room_fails_without_writing_past_it(void **state)
{
    (void)state;
    rmq_cmd *c = rmq_cmd_new();
    assert_int_equal(rmq_cmd_ext_set(c, "topic", "TopicTest"), 0);
    size_t exact = rmq_cmd_encoded_size(c);
    uint8_t *buf = malloc(exact + 16);
    for (size_t room = 0; room < exact; room++) {
        memset(buf, 0xAA, exact + 16);
        assert_int_equal(rmq_cmd_encode(c, buf, room), 0);
        for (size_t i = room; i < exact + 16; i++)
            assert_int_equal(buf[i], 0xAA);
    }
    assert_int_equal(rmq_cmd_encode(c, buf, exact), exact);
    free(buf);
    rmq_cmd_free(c);
}

static void test_every_language_name_is_encoded_whole(void **state)
{
    (void)state;
    for (int32_t lang = -1; lang <= 20; lang++) {
        rmq_cmd *c = rmq_cmd_new();
        c->language = lang;
        size_t len;
        uint8_t *frame = codec_encode(c, &len);
        char want[48];
        snprintf(want, sizeof want, "\"language\":\"%s\"", rmq_language_name(lang));
        assert_non_null(memmem(frame + 8, len - 8, want, strlen(want)));
        /* and the decoder maps the name back (unknown bytes come back OTHER) */
        rmq_cmd *back = rmq_cmd_decode(frame, len, NULL, 0);
        assert_non_null(back);
        assert_int_equal(back->language, lang >= 0 && lang <= 13 ? lang : RMQ_LANG_OTHER);
        rmq_cmd_free(back);
        free(frame);
        rmq_cmd_free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_covers_a_plain_response_with_body),
        cmocka_unit_test(test_bound_covers_strings_that_escape_every_byte),
        cmocka_unit_test(test_bound_ignores_null_ext_values),
        cmocka_unit_test(test_bound_is_zero_only_for_commands_that_cannot_be_encoded),
        cmocka_unit_test(test_encode_into_too_little_room_fails_without_writing_past_it),
        cmocka_unit_test(test_every_language_name_is_encoded_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
