/* test_raw_client.c — rmq_tc_recv never drops part of a frame: a frame
 * whose first bytes arrive before the timeout and the rest after it is
 * still returned whole, and the next frame on the stream decodes. (Before,
 * the partial frame was discarded and every later answer on the connection
 * was lost: the store reload test's "pull not answered" after 25 s.) */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "rmq_test_support.h"

typedef struct later {
    int fd;
    const uint8_t *data;
    size_t len;
} later;

static void *write_later(void *arg)
{
    later *l = arg;
    usleep(300 * 1000);
    if (write(l->fd, l->data, l->len) != (ssize_t)l->len)
        abort();
    return NULL;
}

static size_t encode(int opaque, uint8_t **out)
{
    const char *kv[] = {"k", "v", NULL};
    rmq_cmd *c = rmq_tc_request(11, opaque, kv);
    rmq_cmd_set_body(c, "0123456789", 10, NULL, NULL);
    size_t need = rmq_cmd_encoded_size(c);
    *out = malloc(need);
    size_t n = rmq_cmd_encode(c, *out, need);
    rmq_cmd_free(c);
    return n;
}

static void test_frame_split_across_the_timeout_is_kept(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    uint8_t *a, *b;
    size_t na = encode(7, &a), nb = encode(8, &b);
    assert_true(na > 10 && nb > 10);
    /* the first 6 bytes now, the rest 300 ms later, then a second frame */
    assert_int_equal(write(sv[1], a, 6), 6);
    later l = {sv[1], a + 6, na - 6};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, write_later, &l), 0);
    rmq_cmd *first = rmq_tc_recv(sv[0], 50);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_non_null(first);
    assert_int_equal(first->opaque, 7);
    assert_int_equal(first->body_len, 10);
    rmq_cmd_free(first);
    assert_int_equal(write(sv[1], b, nb), (ssize_t)nb);
    rmq_cmd *second = rmq_tc_recv(sv[0], 1000);
    assert_non_null(second);
    assert_int_equal(second->opaque, 8);
    rmq_cmd_free(second);
    /* nothing pending: a plain timeout, nothing consumed */
    assert_null(rmq_tc_recv(sv[0], 50));
    free(a);
    free(b);
    close(sv[0]);
    close(sv[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_split_across_the_timeout_is_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
