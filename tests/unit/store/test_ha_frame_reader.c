/* test_ha_frame_reader.c — the slave's HA frame reader (ha_frame.c): frames
 * of a stream cut at arbitrary points come out whole, in order, with their
 * bytes intact; many frames received in one read are consumed without the
 * rest being moved (the head advances, the buffered bytes stay where they
 * were); a partial frame left near the end of the buffer moves to the front
 * once room runs short, so a frame as big as the buffer still fits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ha_frame.h"

/* frame i: phys 1000 * i, body of (i * 37) % 300 bytes, each byte i + k */
static size_t put_frame(uint8_t *p, int i)
{
    int32_t n = (i * 37) % 300;
    ha_put_be64(p, 1000LL * i);
    p[8] = 0, p[9] = 0, p[10] = (uint8_t)(n >> 8), p[11] = (uint8_t)n;
    for (int32_t k = 0; k < n; k++)
        p[HA_HEADER + k] = (uint8_t)(i + k);
    return HA_HEADER + (size_t)n;
}

static void stream_cut_anywhere_yields_every_frame(void **state)
{
    (void)state;
    static uint8_t stream[200 * (HA_HEADER + 300)];
    size_t total = 0;
    for (int i = 0; i < 200; i++)
        total += put_frame(stream + total, i);
    for (size_t piece = 1; piece <= 4096; piece = piece * 3 + 1) {
        ha_frame_reader r;
        assert_int_equal(ha_frame_reader_init(&r, 1024), 0);
        size_t fed = 0;
        int next = 0;
        while (fed < total) {
            size_t room;
            uint8_t *dst = ha_frame_reader_space(&r, &room);
            assert_true(room > 0);
            size_t n = total - fed < piece ? total - fed : piece;
            n = n < room ? n : room;
            memcpy(dst, stream + fed, n);
            ha_frame_reader_added(&r, n);
            fed += n;
            int64_t phys;
            const uint8_t *body;
            int32_t len;
            while (ha_frame_next(&r, 300, &phys, &body, &len) == HA_FRAME_OK) {
                assert_int_equal(phys, 1000LL * next);
                assert_int_equal(len, (next * 37) % 300);
                for (int32_t k = 0; k < len; k++)
                    assert_int_equal(body[k], (uint8_t)(next + k));
                ha_frame_consume(&r);
                next++;
            }
        }
        assert_int_equal(next, 200);
        assert_int_equal(ha_frame_reader_pending(&r), 0);
        ha_frame_reader_free(&r);
    }
}

static void consuming_moves_the_head_not_the_bytes(void **state)
{
    (void)state;
    ha_frame_reader r;
    assert_int_equal(ha_frame_reader_init(&r, 65536), 0);
    size_t room;
    uint8_t *dst = ha_frame_reader_space(&r, &room);
    size_t n = 0;
    for (int i = 1; i <= 10; i++)
        n += put_frame(dst + n, i);
    ha_frame_reader_added(&r, n);
    int64_t phys;
    const uint8_t *body;
    int32_t len;
    const uint8_t *prev = NULL;
    for (int i = 1; i <= 10; i++) {
        assert_int_equal(ha_frame_next(&r, 300, &phys, &body, &len), HA_FRAME_OK);
        assert_int_equal(phys, 1000LL * i);
        /* each frame is read where it was received */
        assert_true(body - HA_HEADER >= r.buf && (!prev || body > prev));
        assert_int_equal(body[0], (uint8_t)i);
        prev = body;
        ha_frame_consume(&r);
    }
    assert_int_equal(ha_frame_next(&r, 300, &phys, &body, &len), HA_FRAME_MORE);
    ha_frame_reader_free(&r);
}

static void a_buffer_sized_frame_fits_after_a_partial_one_moves(void **state)
{
    (void)state;
    enum { CAP = 4096 };
    ha_frame_reader r;
    assert_int_equal(ha_frame_reader_init(&r, CAP), 0);
    static uint8_t big[CAP];
    ha_put_be64(big, 77);
    int32_t bn = CAP - HA_HEADER;
    big[8] = 0, big[9] = 0, big[10] = (uint8_t)(bn >> 8), big[11] = (uint8_t)bn;
    memset(big + HA_HEADER, 0xab, (size_t)bn);
    /* a small frame, then the first 100 bytes of the big one, near the end */
    size_t room;
    uint8_t *dst = ha_frame_reader_space(&r, &room);
    size_t small = put_frame(dst, 3);
    memcpy(dst + small, big, 100);
    ha_frame_reader_added(&r, small + 100);
    int64_t phys;
    const uint8_t *body;
    int32_t len;
    assert_int_equal(ha_frame_next(&r, CAP, &phys, &body, &len), HA_FRAME_OK);
    ha_frame_consume(&r);
    assert_int_equal(ha_frame_next(&r, CAP, &phys, &body, &len), HA_FRAME_MORE);
    size_t fed = 100;
    while (fed < CAP) {
        dst = ha_frame_reader_space(&r, &room);
        assert_true(room > 0); /* never stuck: the partial frame moved first */
        size_t n = CAP - fed < room ? CAP - fed : room;
        memcpy(dst, big + fed, n);
        ha_frame_reader_added(&r, n);
        fed += n;
    }
    assert_int_equal(ha_frame_next(&r, CAP, &phys, &body, &len), HA_FRAME_OK);
    assert_int_equal(phys, 77);
    assert_int_equal(len, bn);
    assert_int_equal(body[0], 0xab);
    assert_int_equal(body[bn - 1], 0xab);
    ha_frame_consume(&r);
    assert_int_equal(ha_frame_reader_pending(&r), 0);
    ha_frame_reader_reset(&r);
    ha_frame_reader_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stream_cut_anywhere_yields_every_frame),
        cmocka_unit_test(consuming_moves_the_head_not_the_bytes),
        cmocka_unit_test(a_buffer_sized_frame_fits_after_a_partial_one_moves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
