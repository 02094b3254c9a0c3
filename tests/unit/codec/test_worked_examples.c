/* test_worked_examples.c — protocol.md §1.4–1.8: the encoder reproduces the
 * verified Java frames byte for byte and the decoder reads them back. */
#include "codec_test_frames.h"

#include <stdlib.h>
#include <string.h>

static const char example_a_header[] =
    "{\"code\":105,\"extFields\":{\"topic\":\"TopicTest\"},\"flag\":0,\"language\":\"JAVA\","
    "\"opaque\":1,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":409}";

static const char example_b_header[] =
    "{\"code\":17,\"flag\":1,\"language\":\"JAVA\",\"opaque\":1,\"remark\":\"No topic route info "
    "in name server for the topic: TopicTest\",\"serializeTypeCurrentRPC\":\"JSON\","
    "\"version\":409}";

static const char example_c_header[] =
    "{\"code\":0,\"flag\":1,\"language\":\"JAVA\",\"opaque\":1,\"serializeTypeCurrentRPC\":"
    "\"JSON\",\"version\":409}";

static const uint8_t example_d[] = {0x00, 0x00, 0x00, 0x2d, 0x01, 0x00, 0x00, 0x29, 0x00, 0x69,
                                    0x00, 0x01, 0x99, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
                                    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00,
                                    0x05, 0x74, 0x6f, 0x70, 0x69, 0x63, 0x00, 0x00, 0x00, 0x09,
                                    0x54, 0x6f, 0x70, 0x69, 0x63, 0x54, 0x65, 0x73, 0x74};

static const uint8_t example_e[] = {0x00, 0x00, 0x00, 0x20, 0x01, 0x00, 0x00, 0x15, 0x00,
                                    0x00, 0x00, 0x01, 0x99, 0x00, 0x00, 0x00, 0x01, 0x00,
                                    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                    0x00, 0x00, 0x7b, 0x22, 0x6b, 0x22, 0x3a, 0x31, 0x7d};

static rmq_cmd *example_a_cmd(uint8_t type)
{
    rmq_cmd *c = rmq_cmd_new();
    assert_non_null(c);
    c->code = 105;
    c->opaque = 1;
    c->serialize_type = type;
    assert_int_equal(rmq_cmd_ext_set(c, "topic", "TopicTest"), 0);
    return c;
}

static rmq_cmd *example_c_cmd(uint8_t type)
{
    rmq_cmd *req = rmq_cmd_new();
    req->opaque = 1;
    req->serialize_type = type;
    rmq_cmd *c = rmq_cmd_new_response(req, 0, NULL);
    rmq_cmd_free(req);
    assert_non_null(c);
    assert_int_equal(rmq_cmd_set_body(c, "{\"k\":1}", 7, NULL, NULL), 0);
    return c;
}

static void test_example_a_json_request_encodes_byte_exact(void **state)
{
    (void)state;
    size_t elen, len;
    uint8_t *expected =
        codec_make_frame(0, example_a_header, strlen(example_a_header), NULL, 0, &elen);
    assert_int_equal(elen, 139);
    assert_memory_equal(expected, "\x00\x00\x00\x87\x00\x00\x00\x83", 8);
    rmq_cmd *c = example_a_cmd(RMQ_SERIALIZE_JSON);
    assert_int_equal(rmq_cmd_header_size(c), 131);
    uint8_t *out = codec_encode(c, &len);
    assert_int_equal(len, elen);
    assert_memory_equal(out, expected, len);

    rmq_cmd *d = rmq_cmd_decode(expected, elen, NULL, 0);
    assert_non_null(d);
    assert_int_equal(d->serialize_type, RMQ_SERIALIZE_JSON);
    assert_true(d->has_ext);
    assert_int_equal(d->ext_count, 1);
    assert_null(d->body);
    codec_assert_same_cmd(c, d);
    rmq_cmd_free(d);
    rmq_cmd_free(c);
    free(out);
    free(expected);
}

static void test_example_b_error_response_with_remark(void **state)
{
    (void)state;
    rmq_cmd *req = rmq_cmd_new();
    req->opaque = 1;
    rmq_cmd *c = rmq_cmd_new_response(
        req, 17, "No topic route info in name server for the topic: TopicTest");
    size_t len;
    uint8_t *out = codec_encode(c, &len);
    assert_int_equal(len, 175);
    assert_memory_equal(out, "\x00\x00\x00\xab\x00\x00\x00\xa7", 8);
    assert_memory_equal(out + 8, example_b_header, strlen(example_b_header));
    rmq_cmd *d = rmq_cmd_decode(out, len, NULL, 0);
    assert_non_null(d);
    assert_false(d->has_ext);
    codec_assert_same_cmd(c, d);
    rmq_cmd_free(d);
    rmq_cmd_free(c);
    rmq_cmd_free(req);
    free(out);
}

static void test_example_c_json_response_with_body_encodes_byte_exact(void **state)
{
    (void)state;
    size_t elen, len;
    uint8_t *expected =
        codec_make_frame(0, example_c_header, strlen(example_c_header), "{\"k\":1}", 7, &elen);
    assert_int_equal(elen, 110);
    assert_memory_equal(expected, "\x00\x00\x00\x6a\x00\x00\x00\x5f", 8);
    rmq_cmd *c = example_c_cmd(RMQ_SERIALIZE_JSON);
    uint8_t *out = codec_encode(c, &len);
    assert_int_equal(len, elen);
    assert_memory_equal(out, expected, len);

    /* header-only encode leaves the body to the caller */
    uint8_t hdr[128];
    assert_int_equal(rmq_cmd_encode_header(c, hdr, sizeof hdr), 8 + 95);
    assert_memory_equal(hdr, expected, 8 + 95);
    assert_int_equal(rmq_cmd_encode_header(c, hdr, 8 + 94), 0);
    assert_int_equal(rmq_cmd_encode(c, out, len - 1), 0);

    rmq_cmd *d = rmq_cmd_decode(expected, elen, NULL, 0);
    assert_non_null(d);
    codec_assert_same_cmd(c, d);
    rmq_cmd_free(d);
    rmq_cmd_free(c);
    free(out);
    free(expected);
}

/* Asserts c encodes to exactly `expected`; returns `expected` decoded. */
static rmq_cmd *encode_exactly_and_decode(const rmq_cmd *c, const uint8_t *expected, size_t elen)
{
    size_t len;
    uint8_t *out = codec_encode(c, &len);
    assert_int_equal(len, elen);
    assert_memory_equal(out, expected, len);
    free(out);
    rmq_cmd *d = rmq_cmd_decode(expected, elen, NULL, 0);
    assert_non_null(d);
    return d;
}

static void test_example_d_binary_request_encodes_byte_exact(void **state)
{
    (void)state;
    rmq_cmd *c = example_a_cmd(RMQ_SERIALIZE_ROCKETMQ);
    rmq_cmd *d = encode_exactly_and_decode(c, example_d, sizeof example_d);
    assert_int_equal(d->serialize_type, RMQ_SERIALIZE_ROCKETMQ);
    assert_int_equal(d->code, 105);
    assert_int_equal(d->version, 409);
    assert_string_equal(rmq_cmd_ext_get(d, "topic"), "TopicTest");
    codec_assert_same_cmd(c, d);
    rmq_cmd_free(d);
    rmq_cmd_free(c);
}

static void test_example_e_binary_response_with_body_encodes_byte_exact(void **state)
{
    (void)state;
    rmq_cmd *c = example_c_cmd(RMQ_SERIALIZE_ROCKETMQ);
    rmq_cmd *d = encode_exactly_and_decode(c, example_e, sizeof example_e);
    assert_int_equal(d->flag, RMQ_FLAG_RESPONSE);
    assert_false(d->has_ext);
    assert_null(d->remark);
    codec_assert_same_cmd(c, d);
    rmq_cmd_free(d);
    rmq_cmd_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_a_json_request_encodes_byte_exact),
        cmocka_unit_test(test_example_b_error_response_with_remark),
        cmocka_unit_test(test_example_c_json_response_with_body_encodes_byte_exact),
        cmocka_unit_test(test_example_d_binary_request_encodes_byte_exact),
        cmocka_unit_test(test_example_e_binary_response_with_body_encodes_byte_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
