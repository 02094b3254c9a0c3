/* blocking_call.c — owns the one-request-at-a-time connection of the
 * create-topics and delete-topics modes. */
#include "blocking_call.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "response_peek.h"

uint64_t rmq_bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void rmq_bench_pcts(uint64_t *v, size_t n, double *p50_ms, double *p99_ms)
{
    qsort(v, n, sizeof *v, cmp_u64);
    *p50_ms = (double)v[n / 2] / 1e6;
    *p99_ms = (double)v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] / 1e6;
}

int rmq_blocking_connect(rmq_blocking_conn *c, const struct sockaddr_storage *addr,
                         const char *what)
{
    memset(c, 0, sizeof *c);
    c->fd = socket(addr->ss_family, SOCK_STREAM, 0);
    if (c->fd < 0 || connect(c->fd, (const struct sockaddr *)addr,
                             addr->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                         : sizeof(struct sockaddr_in)) != 0) {
        fprintf(stderr, "rmqbench: cannot connect to %s\n", what);
        if (c->fd >= 0)
            close(c->fd);
        c->fd = -1;
        return -1;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return 0;
}

void rmq_blocking_close(rmq_blocking_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->buf);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int room(rmq_blocking_conn *c, size_t n)
{
    if (n <= c->cap)
        return 0;
    uint8_t *nb = realloc(c->buf, n);
    if (!nb)
        return -1;
    c->buf = nb;
    c->cap = n;
    return 0;
}

int32_t rmq_blocking_call(rmq_blocking_conn *c, const rmq_cmd *req)
{
    size_t n = rmq_cmd_encoded_size(req);
    if (room(c, n) != 0 || rmq_cmd_encode(req, c->buf, n) != n || write_all(c->fd, c->buf, n) != 0)
        return INT32_MIN;
    uint8_t pre[4];
    if (read_all(c->fd, pre, 4) != 0)
        return INT32_MIN;
    size_t len = ((size_t)pre[0] << 24) | ((size_t)pre[1] << 16) | ((size_t)pre[2] << 8) | pre[3];
    if (room(c, len + 4) != 0)
        return INT32_MIN;
    memcpy(c->buf, pre, 4);
    if (read_all(c->fd, c->buf + 4, len) != 0)
        return INT32_MIN;
    rmq_frame_peek pk;
    if (rmq_peek_frame(c->buf, len + 4, &pk) != 0)
        return INT32_MIN;
    return pk.code;
}
