/* test_binary_header_codec.c — ROCKETMQ binary header (protocol.md §2.3):
 * signed int16 fields, empty strings as null, every length bounded by the
 * header, and int16 limits on encode. */
#include "codec_test_frames.h"

#include <stdlib.h>
#include <string.h>

typedef struct hdr_buf {
    uint8_t b[512];
    size_t n;
} hdr_buf;

static void be(hdr_buf *h, uint32_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--)
        h->b[h->n++] = (uint8_t)(v >> (8 * i));
}

static void raw(hdr_buf *h, const char *s, size_t n)
{
    memcpy(h->b + h->n, s, n);
    h->n += n;
}

/* code..flag with the given code/version, then the caller appends the rest */
static void fixed(hdr_buf *h, uint16_t code, uint8_t lang, uint16_t version)
{
    h->n = 0;
    be(h, code, 2);
    h->b[h->n++] = lang;
    be(h, version, 2);
    be(h, 77, 4); /* opaque */
    be(h, 1, 4);  /* flag */
}

static rmq_cmd *decode_hdr(const hdr_buf *h, char *err, size_t errlen)
{
    size_t len;
    uint8_t *f = codec_make_frame(RMQ_SERIALIZE_ROCKETMQ, h->b, h->n, "B", 1, &len);
    rmq_cmd *c = rmq_cmd_decode(f, len, err, errlen);
    free(f);
    return c;
}

static void test_signed_fields_language_byte_and_null_strings(void **state)
{
    (void)state;
    hdr_buf h;
    fixed(&h, 0xFFFF, 200, 0x8000);
    be(&h, 0, 4); /* no remark */
    be(&h, 2 + 1 + 4 + 0 + 2 + 1 + 4 + 2, 4);
    be(&h, 1, 2), raw(&h, "a", 1), be(&h, 0, 4); /* empty value -> null */
    be(&h, 1, 2), raw(&h, "b", 1), be(&h, 2, 4), raw(&h, "xy", 2);
    rmq_cmd *c = decode_hdr(&h, NULL, 0);
    assert_non_null(c);
    assert_int_equal(c->code, -1);
    assert_int_equal(c->version, -32768);
    assert_int_equal(c->language, 200);
    assert_int_equal(c->opaque, 77);
    assert_int_equal(c->flag, 1);
    assert_null(c->remark);
    assert_true(c->has_ext);
    assert_int_equal(c->ext_count, 2);
    assert_string_equal(c->ext[0].key, "a");
    assert_null(c->ext[0].value);
    assert_string_equal(rmq_cmd_ext_get(c, "b"), "xy");
    assert_int_equal(c->body_len, 1);
    assert_memory_equal(c->body, "B", 1);

    /* re-encoding drops the null entry and keeps the signed values */
    size_t len;
    uint8_t *f = codec_encode(c, &len);
    rmq_cmd *d = rmq_cmd_decode(f, len, NULL, 0);
    assert_non_null(d);
    assert_int_equal(d->ext_count, 1);
    codec_assert_same_cmd(c, d);
    free(f);
    rmq_cmd_free(d);
    rmq_cmd_free(c);
}

static void test_duplicate_keys_last_wins_and_empty_key_is_dropped(void **state)
{
    (void)state;
    hdr_buf h;
    fixed(&h, 11, 0, 409);
    be(&h, 3, 4), raw(&h, "abc", 3);
    be(&h, 3 * (2 + 1 + 4 + 1) + (2 + 0 + 4 + 1), 4);
    be(&h, 1, 2), raw(&h, "k", 1), be(&h, 1, 4), raw(&h, "1", 1);
    be(&h, 1, 2), raw(&h, "j", 1), be(&h, 1, 4), raw(&h, "2", 1);
    be(&h, 0, 2), be(&h, 1, 4), raw(&h, "e", 1);
    be(&h, 1, 2), raw(&h, "k", 1), be(&h, 1, 4), raw(&h, "3", 1);
    char err[128] = "";
    rmq_cmd *c = decode_hdr(&h, err, sizeof err);
    assert_non_null(c);
    assert_string_equal(c->remark, "abc");
    assert_int_equal(c->ext_count, 2);
    assert_string_equal(rmq_cmd_ext_get(c, "k"), "3");
    assert_string_equal(rmq_cmd_ext_get(c, "j"), "2");
    rmq_cmd_free(c);
}

static void test_lengths_past_the_header_are_rejected(void **state)
{
    (void)state;
    hdr_buf h;
    char err[128];

    fixed(&h, 1, 0, 1);
    be(&h, 0, 4);
    be(&h, 0, 2); /* header of 19 bytes: ext length cut off */
    err[0] = '\0';
    assert_null(decode_hdr(&h, err, sizeof err));
    assert_non_null(strstr(err, "shorter than the 21-byte minimum"));

    fixed(&h, 1, 0, 1);
    be(&h, 1000, 4); /* remark length > header length */
    be(&h, 0, 4);
    assert_null(decode_hdr(&h, err, sizeof err));
    assert_non_null(strstr(err, "remark length 1000"));

    fixed(&h, 1, 0, 1);
    be(&h, 5, 4), raw(&h, "abcd", 4); /* remark eats the ext length */
    be(&h, 0, 4);
    assert_null(decode_hdr(&h, err, sizeof err));

    fixed(&h, 1, 0, 1);
    be(&h, 0, 4);
    be(&h, 8, 4), be(&h, 1, 2), raw(&h, "k", 1); /* ext length past header */
    assert_null(decode_hdr(&h, err, sizeof err));
    assert_non_null(strstr(err, "ext length 8"));

    fixed(&h, 1, 0, 1);
    be(&h, 0, 4);
    be(&h, 7, 4), be(&h, 6, 2), raw(&h, "k", 1), be(&h, 0, 4); /* key past region */
    assert_null(decode_hdr(&h, err, sizeof err));
    assert_non_null(strstr(err, "ext key length 6"));

    fixed(&h, 1, 0, 1);
    be(&h, 0, 4);
    be(&h, 8, 4), be(&h, 1, 2), raw(&h, "k", 1), be(&h, 9, 4), raw(&h, "v", 1);
    assert_null(decode_hdr(&h, err, sizeof err));
    assert_non_null(strstr(err, "ext value length 9"));

    fixed(&h, 1, 0, 1);
    be(&h, 0, 4);
    be(&h, 5, 4), be(&h, 1, 2), raw(&h, "k", 1), be(&h, 0, 2); /* value length cut */
    assert_null(decode_hdr(&h, err, sizeof err));

    fixed(&h, 1, 0, 1);
    be(&h, 0, 4);
    be(&h, 1, 4), raw(&h, "k", 1); /* key length cut */
    assert_null(decode_hdr(&h, err, sizeof err));

    fixed(&h, 1, 0, 1);
    be(&h, 0, 4);
    be(&h, 7, 4), be(&h, 0x8000, 2), raw(&h, "k", 1), be(&h, 0, 4); /* negative key len */
    assert_null(decode_hdr(&h, err, sizeof err));

    fixed(&h, 1, 0, 1);
    be(&h, 0, 4);
    be(&h, 7, 4), be(&h, 1, 2), raw(&h, "k", 1), be(&h, 0xFFFFFFFFu, 4); /* negative val */
    assert_null(decode_hdr(&h, err, sizeof err));
}

static void test_every_truncation_of_a_binary_header_is_refused(void **state)
{
    (void)state;
    hdr_buf h;
    fixed(&h, 310, 0, 409);
    be(&h, 2, 4), raw(&h, "ok", 2);
    be(&h, 2 + 5 + 4 + 3, 4), be(&h, 5, 2), raw(&h, "topic", 5), be(&h, 3, 4), raw(&h, "abc", 3);
    size_t full = h.n;
    for (size_t n = 0; n < full; n++) {
        hdr_buf t = h;
        t.n = n;
        assert_null(decode_hdr(&t, NULL, 0));
    }
    rmq_cmd *c = decode_hdr(&h, NULL, 0);
    assert_non_null(c);
    assert_string_equal(rmq_cmd_ext_get(c, "topic"), "abc");
    rmq_cmd_free(c);
}

static void test_negative_remark_length_means_no_remark_and_trailing_bytes_ignored(void **state)
{
    (void)state;
    hdr_buf h;
    fixed(&h, 1, 0, 1);
    be(&h, 0xFFFFFFFFu, 4);
    be(&h, 0, 4);
    raw(&h, "zz", 2);
    rmq_cmd *c = decode_hdr(&h, NULL, 0);
    assert_non_null(c);
    assert_null(c->remark);
    assert_false(c->has_ext);
    rmq_cmd_free(c);
}

static void test_encode_refuses_values_outside_int16(void **state)
{
    (void)state;
    rmq_cmd *c = rmq_cmd_new();
    c->serialize_type = RMQ_SERIALIZE_ROCKETMQ;
    c->code = 200050; /* a 5.x POP code */
    uint8_t buf[64];
    assert_int_equal(rmq_cmd_encoded_size(c), 0);
    assert_int_equal(rmq_cmd_encode(c, buf, sizeof buf), 0);
    c->code = 32767;
    c->version = 32768;
    assert_int_equal(rmq_cmd_header_size(c), 0);
    c->version = -32768;
    c->code = -32768;
    assert_int_equal(rmq_cmd_header_size(c), 21);
    /* the same command still goes out as JSON */
    c->code = 200050;
    c->serialize_type = RMQ_SERIALIZE_JSON;
    assert_true(rmq_cmd_header_size(c) > 0);
    rmq_cmd_free(c);
}

static void test_encode_skips_null_values_and_empty_remark(void **state)
{
    (void)state;
    rmq_cmd *c = rmq_cmd_new();
    c->serialize_type = RMQ_SERIALIZE_ROCKETMQ;
    rmq_cmd_set_remark(c, "");
    rmq_cmd_ext_set(c, "a", "");
    rmq_cmd_ext_set(c, "b", "v");
    size_t len;
    uint8_t *f = codec_encode(c, &len);
    static const uint8_t expected_tail[] = {0, 0, 0,   0,              /* remark */
                                            0, 0, 0,   7 + 8,          /* ext length */
                                            0, 1, 'a', 0,     0, 0, 0, /* empty value kept */
                                            0, 1, 'b', 0,     0, 0, 1, 'v'};
    assert_int_equal(len, 8 + 13 + sizeof expected_tail);
    assert_memory_equal(f + 8 + 13, expected_tail, sizeof expected_tail);
    rmq_cmd *d = rmq_cmd_decode(f, len, NULL, 0);
    assert_non_null(d);
    assert_null(d->remark);
    assert_null(rmq_cmd_ext_get(d, "a")); /* empty decodes as null, as in Java */
    assert_string_equal(rmq_cmd_ext_get(d, "b"), "v");
    rmq_cmd_free(d);
    free(f);
    rmq_cmd_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signed_fields_language_byte_and_null_strings),
        cmocka_unit_test(test_duplicate_keys_last_wins_and_empty_key_is_dropped),
        cmocka_unit_test(test_lengths_past_the_header_are_rejected),
        cmocka_unit_test(test_every_truncation_of_a_binary_header_is_refused),
        cmocka_unit_test(test_negative_remark_length_means_no_remark_and_trailing_bytes_ignored),
        cmocka_unit_test(test_encode_refuses_values_outside_int16),
        cmocka_unit_test(test_encode_skips_null_values_and_empty_remark),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
