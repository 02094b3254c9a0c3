/* test_grpc_wire.c — gRPC length-prefixed messages cut anywhere by DATA
 * frames, the limits a reader enforces, grpc-timeout units and
 * grpc-message percent-encoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "grpc_wire.h"

static size_t frame(uint8_t *out, const char *text)
{
    size_t n = strlen(text);
    grpc_msg_prefix(out, (uint32_t)n);
    memcpy(out + GRPC_PREFIX_LEN, text, n);
    return GRPC_PREFIX_LEN + n;
}

static void messages_cut_at_every_byte(void **state)
{
    (void)state;
    uint8_t wire[64];
    size_t n = frame(wire, "hello");
    n += frame(wire + n, "");
    n += frame(wire + n, "world!");
    for (size_t cut = 0; cut <= n; cut++) {
        grpc_msg_reader r;
        grpc_msg_reader_init(&r, 1024);
        const char *want[] = {"hello", "", "world!"};
        size_t got = 0;
        const uint8_t *parts[2] = {wire, wire + cut};
        size_t lens[2] = {cut, n - cut};
        for (int p = 0; p < 2; p++) {
            assert_int_equal(grpc_msg_reader_feed(&r, parts[p], lens[p]), 0);
            const uint8_t *m;
            size_t ml;
            grpc_read_status st;
            while ((st = grpc_msg_reader_next(&r, &m, &ml)) == GRPC_READ_MESSAGE) {
                assert_true(got < 3);
                assert_int_equal(ml, strlen(want[got]));
                assert_memory_equal(m, want[got], ml);
                grpc_msg_reader_consume(&r, ml);
                got++;
            }
            assert_int_equal(st, GRPC_READ_NEED_MORE);
        }
        assert_int_equal(got, 3);
        assert_int_equal(grpc_msg_reader_pending(&r), 0);
        grpc_msg_reader_free(&r);
    }
}

static void incomplete_message_stays_pending(void **state)
{
    (void)state;
    uint8_t wire[16];
    size_t n = frame(wire, "abcdef");
    grpc_msg_reader r;
    grpc_msg_reader_init(&r, 1024);
    assert_int_equal(grpc_msg_reader_feed(&r, wire, n - 1), 0);
    const uint8_t *m;
    size_t ml;
    assert_int_equal(grpc_msg_reader_next(&r, &m, &ml), GRPC_READ_NEED_MORE);
    assert_int_equal(grpc_msg_reader_pending(&r), n - 1);
    grpc_msg_reader_free(&r);
}

static void limits(void **state)
{
    (void)state;
    grpc_msg_reader r;
    grpc_msg_reader_init(&r, 10);
    uint8_t big[5];
    grpc_msg_prefix(big, 11); /* refused from the prefix alone */
    assert_int_equal(grpc_msg_reader_feed(&r, big, 5), 0);
    const uint8_t *m;
    size_t ml;
    assert_int_equal(grpc_msg_reader_next(&r, &m, &ml), GRPC_READ_TOO_LARGE);
    grpc_msg_reader_free(&r);

    grpc_msg_reader_init(&r, 10);
    uint8_t exact[15];
    grpc_msg_prefix(exact, 10);
    memset(exact + 5, 'x', 10);
    assert_int_equal(grpc_msg_reader_feed(&r, exact, 15), 0);
    assert_int_equal(grpc_msg_reader_next(&r, &m, &ml), GRPC_READ_MESSAGE);
    assert_int_equal(ml, 10);
    grpc_msg_reader_free(&r);

    grpc_msg_reader_init(&r, 10);
    uint8_t comp[6] = {1, 0, 0, 0, 1, 'z'};
    assert_int_equal(grpc_msg_reader_feed(&r, comp, 6), 0);
    assert_int_equal(grpc_msg_reader_next(&r, &m, &ml), GRPC_READ_COMPRESSED);
    grpc_msg_reader_free(&r);
}

static void prefix_is_big_endian(void **state)
{
    (void)state;
    uint8_t p[5];
    grpc_msg_prefix(p, 0x01020304u);
    const uint8_t want[5] = {0, 1, 2, 3, 4};
    assert_memory_equal(p, want, 5);
}

static bool timeout_of(const char *v, uint64_t *ms)
{
    return grpc_timeout_parse(v, strlen(v), ms);
}

static void timeouts(void **state)
{
    (void)state;
    uint64_t ms = 0;
    assert_true(timeout_of("2H", &ms));
    assert_int_equal(ms, 7200000);
    assert_true(timeout_of("3M", &ms));
    assert_int_equal(ms, 180000);
    assert_true(timeout_of("10S", &ms));
    assert_int_equal(ms, 10000);
    assert_true(timeout_of("250m", &ms));
    assert_int_equal(ms, 250);
    assert_true(timeout_of("1500u", &ms)); /* rounded up */
    assert_int_equal(ms, 2);
    assert_true(timeout_of("1n", &ms));
    assert_int_equal(ms, 1);
    assert_true(timeout_of("99999999m", &ms)); /* 8 digits: the most allowed */
    assert_int_equal(ms, 99999999);
    assert_false(timeout_of("123456789m", &ms));
    assert_false(timeout_of("S", &ms));
    assert_false(timeout_of("10", &ms));
    assert_false(timeout_of("10s", &ms));
    assert_false(timeout_of("-1S", &ms));
    assert_false(timeout_of("1 S", &ms));
}

static void message_encoding(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(grpc_message_encode("plain text", out, sizeof out), 10);
    assert_string_equal(out, "plain text");
    grpc_message_encode("100% \xc3\xbc\n", out, sizeof out);
    assert_string_equal(out, "100%25 %C3%BC%0A");
    /* cut on a whole escape, never inside one */
    assert_int_equal(grpc_message_encode("ab\xff", out, 5), 2);
    assert_string_equal(out, "ab");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(messages_cut_at_every_byte),
        cmocka_unit_test(incomplete_message_stays_pending),
        cmocka_unit_test(limits),
        cmocka_unit_test(prefix_is_big_endian),
        cmocka_unit_test(timeouts),
        cmocka_unit_test(message_encoding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
