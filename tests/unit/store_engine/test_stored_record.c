/* test_stored_record.c — the record codec on real Java 4.9.8 records (the
 * PULL and VIEW bodies of tests/vectors): decode field by field, re-encode
 * byte-identical, reject every truncation and corruption, read properties
 * with Java's rules (empty names/values dropped, last wins). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store_test_util.h"

#include <zlib.h>

static void test_view_record_decodes_field_by_field(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = st_vector_body("33-view-message-by-id.resp.bin", &len);
    assert_int_equal(len, 226);
    stored_record r;
    assert_int_equal(stored_record_decode(b, len, true, &r), STORED_RECORD_OK);
    assert_int_equal(r.total_size, 226);
    assert_int_equal(r.queue_id, 2);
    assert_int_equal(r.phys_offset, 0);
    assert_int_equal(r.born_ip_len, 4);
    assert_int_equal(r.born_ip[0], 127);
    assert_int_equal(r.born_port, 0xbb8c);
    assert_int_equal(r.store_ip[3], 2);
    assert_int_equal(r.store_port, 19402);
    assert_int_equal(r.body_len, 21);
    assert_memory_equal(r.body, "hello with properties", 21);
    assert_int_equal(r.topic_len, 8);
    assert_memory_equal(r.topic, "RecTopic", 8);
    const char *v;
    size_t vl;
    assert_true(stored_props_get(r.props, r.props_len, "color", &v, &vl));
    assert_int_equal(vl, 3);
    assert_memory_equal(v, "red", 3);
    assert_true(stored_props_get(r.props, r.props_len, "KEYS", &v, &vl));
    assert_memory_equal(v, "KEY-A KEY-B", 11);
    free(b);
}

static void test_pull_records_reencode_byte_identical(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = st_vector_body("11-pull-message.found-4.resp.bin", &len);
    size_t pos = 0;
    int count = 0;
    int64_t phys[] = {0xe2, 0x1b8, 0x28e, 0x364};
    while (pos < len) {
        stored_record r;
        assert_int_equal(stored_record_decode(b + pos, len - pos, true, &r), STORED_RECORD_OK);
        assert_int_equal(r.phys_offset, phys[count]);
        assert_int_equal(r.queue_offset, count);
        uint8_t out[1024];
        size_t n = stored_record_encode(&r, true, out, sizeof out);
        assert_int_equal(n, (size_t)r.total_size);
        assert_memory_equal(out, b + pos, n);
        /* last wins: the batch-level WAIT repeats */
        const char *v;
        size_t vl;
        assert_true(stored_props_get(r.props, r.props_len, "TAGS", &v, &vl));
        assert_memory_equal(v, "TagB", 4);
        pos += n;
        count++;
    }
    assert_int_equal(count, 4);
    free(b);
}

static void test_truncations_and_corruptions_are_rejected(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = st_vector_body("33-view-message-by-id.resp.bin", &len);
    stored_record r;
    for (size_t n = 0; n < len; n++)
        assert_int_not_equal(stored_record_decode(b, n, false, &r), STORED_RECORD_OK);
    uint8_t c[226];
    memcpy(c, b, len);
    c[100] ^= 1; /* body byte */
    assert_int_equal(stored_record_decode(c, len, true, &r), STORED_RECORD_BAD_CRC);
    assert_int_equal(stored_record_decode(c, len, false, &r), STORED_RECORD_OK);
    memcpy(c, b, len);
    c[4] = 0;
    assert_int_equal(stored_record_decode(c, len, false, &r), STORED_RECORD_BAD_MAGIC);
    memcpy(c, b, len);
    stored_put_be32(c, 225);
    assert_int_not_equal(stored_record_decode(c, len, false, &r), STORED_RECORD_OK);
    memcpy(c, b, len);
    stored_put_be32(c + 84, 0x7fffffff); /* BODYLENGTH */
    assert_int_equal(stored_record_decode(c, len, false, &r), STORED_RECORD_BAD_LENGTHS);
    memcpy(c, b, len);
    stored_put_be32(c + 84, 0xffffffff);
    assert_int_equal(stored_record_decode(c, len, false, &r), STORED_RECORD_BAD_LENGTHS);
    uint8_t blank[8];
    stored_put_be32(blank, 4000);
    stored_put_be32(blank + 4, STORED_RECORD_BLANK_MAGIC);
    assert_int_equal(stored_record_decode(blank, 8, false, &r), STORED_RECORD_BLANK);
    assert_int_equal(r.total_size, 4000);
    free(b);
}

static void test_ipv6_hosts_set_sysflag_bits_and_sizes(void **state)
{
    (void)state;
    uint8_t ip6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    uint8_t ip4[4] = {10, 0, 0, 1};
    stored_record r = {.queue_id = 1,
                       .queue_offset = 7,
                       .phys_offset = 99,
                       .born_ip = ip6,
                       .born_ip_len = 16,
                       .born_port = 1,
                       .store_ip = ip4,
                       .store_ip_len = 4,
                       .store_port = 2,
                       .body = (const uint8_t *)"x",
                       .body_len = 1,
                       .topic = "T",
                       .topic_len = 1,
                       .props = "a\001b",
                       .props_len = 3};
    uint8_t out[256];
    size_t n = stored_record_encode(&r, true, out, sizeof out);
    assert_int_equal(n, 91 + 1 + 1 + 3 + 12);
    stored_record d;
    assert_int_equal(stored_record_decode(out, n, true, &d), STORED_RECORD_OK);
    assert_int_equal(d.sys_flag, STORED_SYSFLAG_BORNHOST_V6);
    assert_int_equal(d.born_ip_len, 16);
    assert_memory_equal(d.born_ip, ip6, 16);
    assert_int_equal(d.store_ts, 0);
    assert_int_equal(stored_record_store_ts_pos(d.sys_flag), 68);
    assert_int_equal(stored_record_encode(&r, true, out, n - 1), 0);
    r.topic_len = 128;
    assert_int_equal(stored_record_encode(&r, true, out, sizeof out), 0);
}

static void test_props_rules(void **state)
{
    (void)state;
    const char *v;
    size_t vl;
    const char p[] = "A\001\002\0011\002A\0012\002B\001x\002A\0013\002noSep\002A\001";
    assert_true(stored_props_get(p, sizeof p - 1, "A", &v, &vl));
    assert_int_equal(vl, 1);
    assert_memory_equal(v, "3", 1);
    assert_true(stored_props_get(p, sizeof p - 1, "B", &v, &vl));
    assert_false(stored_props_get(p, sizeof p - 1, "noSep", &v, &vl));
    assert_false(stored_props_get("", 0, "A", &v, &vl));
    assert_int_equal(stored_record_body_crc("", 0), 0);
}

/* BODYCRC is Java's CRC32 & 0x7FFFFFFF, whichever library computes it
 * (libdeflate when built with it): the same value as zlib's for every
 * length (alignment and tail handling differ by length) and content. */
static void test_body_crc_matches_zlib(void **state)
{
    (void)state;
    static unsigned char buf[70000];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
    for (size_t len = 1; len < sizeof buf; len = len < 300 ? len + 1 : len * 3 / 2 + 7) {
        for (size_t off = 0; off < 8; off += 3) {
            uLong z = crc32(0L, buf + off, (uInt)len);
            assert_int_equal(stored_record_body_crc(buf + off, len), (int32_t)(z & 0x7FFFFFFF));
        }
    }
    assert_int_equal(stored_record_body_crc(buf, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_record_decodes_field_by_field),
        cmocka_unit_test(test_pull_records_reencode_byte_identical),
        cmocka_unit_test(test_truncations_and_corruptions_are_rejected),
        cmocka_unit_test(test_ipv6_hosts_set_sysflag_bits_and_sizes),
        cmocka_unit_test(test_props_rules),
        cmocka_unit_test(test_body_crc_matches_zlib),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
