/* test_frame_reader.c — the codec library's blocking frame reader (shared by
 * rmqhost-replay and librmqhost-testkit) over a socketpair: frames split
 * across writes and packed into one, an undecodable frame skipped, and NULL
 * at the deadline, on EOF and on an invalid frame. */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "codec_test_frames.h"
#include "frame_reader.h"

typedef struct pair {
    int w, r;
    rmq_frame_reader rd;
} pair;

static int setup(void **state)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return -1;
    pair *p = malloc(sizeof(*p));
    p->w = sv[0];
    p->r = sv[1];
    rmq_frame_reader_init(&p->rd, RMQ_DEFAULT_MAX_FRAME_BYTES);
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    pair *p = *state;
    if (p->w >= 0)
        close(p->w);
    close(p->r);
    rmq_frame_reader_free(&p->rd);
    free(p);
    return 0;
}

static uint8_t *frame_with_code(int32_t code, size_t *len)
{
    rmq_cmd *c = rmq_cmd_new();
    assert_non_null(c);
    c->code = code;
    c->opaque = code + 1000;
    assert_int_equal(rmq_cmd_set_body(c, "body", 4, NULL, NULL), 0);
    uint8_t *f = codec_encode(c, len);
    rmq_cmd_free(c);
    return f;
}

static void write_all(int fd, const void *p, size_t n)
{
    assert_int_equal(write(fd, p, n), (ssize_t)n);
}

static uint64_t soon(void)
{
    return rmq_frame_reader_now_ms() + 5000;
}

static void test_frames_split_and_packed(void **state)
{
    pair *p = *state;
    size_t l1, l2;
    uint8_t *f1 = frame_with_code(11, &l1), *f2 = frame_with_code(22, &l2);
    /* f1 in two writes, then f2 in the same write as f1's tail */
    write_all(p->w, f1, 3);
    uint8_t *rest = malloc(l1 - 3 + l2);
    memcpy(rest, f1 + 3, l1 - 3);
    memcpy(rest + l1 - 3, f2, l2);
    write_all(p->w, rest, l1 - 3 + l2);
    rmq_cmd *a = rmq_frame_reader_next(&p->rd, p->r, soon());
    rmq_cmd *b = rmq_frame_reader_next(&p->rd, p->r, soon());
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->code, 11);
    assert_int_equal(a->opaque, 1011);
    assert_int_equal(a->body_len, 4);
    assert_memory_equal(a->body, "body", 4);
    assert_int_equal(b->code, 22);
    rmq_cmd_free(a);
    rmq_cmd_free(b);
    free(rest);
    free(f1);
    free(f2);
}

static void test_undecodable_frame_is_skipped(void **state)
{
    pair *p = *state;
    size_t lbad, lgood;
    /* a JSON header that is not JSON: framed correctly, decodes to nothing */
    uint8_t *bad = codec_make_frame(0, "{nope", 5, NULL, 0, &lbad);
    uint8_t *good = frame_with_code(33, &lgood);
    write_all(p->w, bad, lbad);
    write_all(p->w, good, lgood);
    rmq_cmd *c = rmq_frame_reader_next(&p->rd, p->r, soon());
    assert_non_null(c);
    assert_int_equal(c->code, 33);
    rmq_cmd_free(c);
    free(bad);
    free(good);
}

static void test_null_at_the_deadline_then_the_frame(void **state)
{
    pair *p = *state;
    size_t len;
    uint8_t *f = frame_with_code(44, &len);
    write_all(p->w, f, len - 1);
    assert_null(rmq_frame_reader_next(&p->rd, p->r, rmq_frame_reader_now_ms() + 20));
    /* the bytes read so far are kept */
    write_all(p->w, f + len - 1, 1);
    rmq_cmd *c = rmq_frame_reader_next(&p->rd, p->r, soon());
    assert_non_null(c);
    assert_int_equal(c->code, 44);
    rmq_cmd_free(c);
    free(f);
}

static void test_null_on_eof_and_on_invalid_frames(void **state)
{
    pair *p = *state;
    /* a length prefix below the 4-byte header length: never a frame */
    static const uint8_t invalid[8] = {0, 0, 0, 2, 0, 0, 0, 0};
    write_all(p->w, invalid, sizeof(invalid));
    assert_null(rmq_frame_reader_next(&p->rd, p->r, soon()));
    rmq_frame_reader_free(&p->rd);
    rmq_frame_reader_init(&p->rd, RMQ_DEFAULT_MAX_FRAME_BYTES);
    close(p->w);
    p->w = -1;
    assert_null(rmq_frame_reader_next(&p->rd, p->r, soon()));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_frames_split_and_packed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_undecodable_frame_is_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_at_the_deadline_then_the_frame, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_on_eof_and_on_invalid_frames, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
