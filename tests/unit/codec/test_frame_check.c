/* test_frame_check.c — rmq_frame_check: completeness, limits and rejection
 * reasons on hand-built prefixes. */
#include "codec_test_frames.h"

#include <stdlib.h>
#include <string.h>

static const char example_a_header[] =
    "{\"code\":105,\"extFields\":{\"topic\":\"TopicTest\"},\"flag\":0,\"language\":\"JAVA\","
    "\"opaque\":1,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":409}";

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void test_every_proper_prefix_needs_more(void **state)
{
    (void)state;
    size_t len;
    uint8_t *f = codec_make_frame(0, example_a_header, strlen(example_a_header), NULL, 0, &len);
    assert_int_equal(len, 139);
    for (size_t n = 0; n < len; n++) {
        size_t total = 12345;
        const char *reason = "untouched";
        assert_int_equal(rmq_frame_check(f, n, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason),
                         RMQ_FRAME_NEED_MORE);
        assert_int_equal(total, 12345);
    }
    size_t total = 0;
    const char *reason = NULL;
    assert_int_equal(rmq_frame_check(f, len, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason),
                     RMQ_FRAME_READY);
    assert_int_equal(total, 139);
    free(f);
}

static void test_back_to_back_frames_are_split_at_the_length(void **state)
{
    (void)state;
    size_t l1, l2;
    uint8_t *f1 = codec_make_frame(0, example_a_header, strlen(example_a_header), "xy", 2, &l1);
    uint8_t *f2 = codec_make_frame(1, "0123456789abcdefghijk", 21, NULL, 0, &l2);
    uint8_t *both = malloc(l1 + l2);
    memcpy(both, f1, l1);
    memcpy(both + l1, f2, l2);
    size_t total = 0;
    const char *reason;
    assert_int_equal(rmq_frame_check(both, l1 + l2, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason),
                     RMQ_FRAME_READY);
    assert_int_equal(total, l1);
    rmq_cmd *c1 = rmq_cmd_decode(both, total, NULL, 0);
    assert_non_null(c1);
    assert_int_equal(c1->code, 105);
    assert_int_equal(c1->body_len, 2);
    assert_memory_equal(c1->body, "xy", 2);
    rmq_cmd_free(c1);
    assert_int_equal(rmq_frame_check(both + l1, l2, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason),
                     RMQ_FRAME_READY);
    assert_int_equal(total, l2);
    free(both);
    free(f1);
    free(f2);
}

static void test_oversize_length_is_invalid_with_numbers_in_reason(void **state)
{
    (void)state;
    uint8_t b[8] = {0};
    put_be32(b, 99999999);
    const char *reason = NULL;
    size_t total;
    assert_int_equal(rmq_frame_check(b, 4, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason),
                     RMQ_FRAME_INVALID);
    assert_non_null(reason);
    assert_non_null(strstr(reason, "max_frame_bytes"));
    char err[128];
    assert_int_equal(
        rmq_frame_check_ex(b, 8, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason, err, sizeof err),
        RMQ_FRAME_INVALID);
    assert_string_equal(reason, "frame length 99999999 exceeds max_frame_bytes 16777216");
    assert_ptr_equal(reason, err);
}

static void test_max_frame_counts_the_length_prefix(void **state)
{
    (void)state;
    uint8_t b[8] = {0};
    const char *reason;
    size_t total;
    put_be32(b, RMQ_DEFAULT_MAX_FRAME_BYTES - 4); /* 16777212: Java's largest */
    assert_int_equal(rmq_frame_check(b, 8, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason),
                     RMQ_FRAME_NEED_MORE);
    put_be32(b, RMQ_DEFAULT_MAX_FRAME_BYTES - 3);
    assert_int_equal(rmq_frame_check(b, 8, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason),
                     RMQ_FRAME_INVALID);
    put_be32(b, 100);
    assert_int_equal(rmq_frame_check(b, 8, 103, &total, &reason), RMQ_FRAME_INVALID);
    assert_int_equal(rmq_frame_check(b, 8, 104, &total, &reason), RMQ_FRAME_NEED_MORE);
}

static void test_length_below_four_or_negative_is_invalid(void **state)
{
    (void)state;
    uint8_t b[8] = {0};
    const char *reason;
    size_t total;
    char err[96];
    for (uint32_t len = 0; len < 4; len++) {
        put_be32(b, len);
        assert_int_equal(rmq_frame_check(b, 4, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason),
                         RMQ_FRAME_INVALID);
        assert_non_null(reason);
    }
    put_be32(b, 0xFFFFFFF0u);
    assert_int_equal(
        rmq_frame_check_ex(b, 4, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason, err, sizeof err),
        RMQ_FRAME_INVALID);
    assert_string_equal(reason, "frame length -16 is negative");
}

static void test_header_length_beyond_frame_is_invalid(void **state)
{
    (void)state;
    uint8_t b[16] = {0};
    const char *reason;
    size_t total;
    char err[96];
    put_be32(b, 12);
    put_be32(b + 4, 9); /* 9 > 12 - 4 */
    assert_int_equal(
        rmq_frame_check_ex(b, 8, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason, err, sizeof err),
        RMQ_FRAME_INVALID);
    assert_string_equal(reason, "header length 9 exceeds frame length 12 - 4");
    put_be32(b + 4, 8);
    assert_int_equal(rmq_frame_check(b, 16, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason),
                     RMQ_FRAME_READY);
    assert_int_equal(total, 16);
}

static void test_unknown_serialize_type_is_invalid_from_its_first_byte(void **state)
{
    (void)state;
    uint8_t b[8] = {0};
    const char *reason = NULL;
    size_t total;
    put_be32(b, 30);
    put_be32(b + 4, 0x02000010u);
    assert_int_equal(rmq_frame_check(b, 5, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason),
                     RMQ_FRAME_INVALID);
    assert_non_null(strstr(reason, "serialize type"));
    b[4] = 0x16; /* a TLS ClientHello would also be refused earlier by size */
    assert_int_equal(rmq_frame_check(b, 8, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason),
                     RMQ_FRAME_INVALID);
}

static void test_decode_rejects_frame_total_not_matching_length(void **state)
{
    (void)state;
    size_t len;
    uint8_t *f = codec_make_frame(0, example_a_header, strlen(example_a_header), NULL, 0, &len);
    char err[128];
    assert_null(rmq_cmd_decode(f, len - 1, err, sizeof err));
    assert_true(err[0] != '\0');
    assert_null(rmq_cmd_decode(f, 7, err, sizeof err));
    assert_null(rmq_cmd_decode(NULL, 0, NULL, 0));
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_proper_prefix_needs_more),
        cmocka_unit_test(test_back_to_back_frames_are_split_at_the_length),
        cmocka_unit_test(test_oversize_length_is_invalid_with_numbers_in_reason),
        cmocka_unit_test(test_max_frame_counts_the_length_prefix),
        cmocka_unit_test(test_length_below_four_or_negative_is_invalid),
        cmocka_unit_test(test_header_length_beyond_frame_is_invalid),
        cmocka_unit_test(test_unknown_serialize_type_is_invalid_from_its_first_byte),
        cmocka_unit_test(test_decode_rejects_frame_total_not_matching_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
