/* frame_reader.c — a client's blocking frame reader: poll until the deadline,
 * recv into a growing buffer, hand out each complete frame decoded. Shared
 * by rmqhost-replay and librmqhost-testkit. */
#include "frame_reader.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define READ_CHUNK 65536u

void rmq_frame_reader_init(rmq_frame_reader *r, size_t max_frame_bytes)
{
    memset(r, 0, sizeof(*r));
    r->max_frame_bytes = max_frame_bytes;
}

void rmq_frame_reader_free(rmq_frame_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->len = r->cap = 0;
}

uint64_t rmq_frame_reader_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int reserve(rmq_frame_reader *r, size_t more)
{
    if (r->cap - r->len >= more)
        return 0;
    size_t ncap = r->cap ? r->cap : 2 * READ_CHUNK;
    while (ncap - r->len < more)
        ncap *= 2;
    uint8_t *nb = realloc(r->buf, ncap);
    if (!nb)
        return -1;
    r->buf = nb;
    r->cap = ncap;
    return 0;
}

rmq_cmd *rmq_frame_reader_next(rmq_frame_reader *r, int fd, uint64_t deadline_ms)
{
    for (;;) {
        size_t total = 0;
        const char *reason = NULL;
        rmq_frame_status st = rmq_frame_check(r->buf, r->len, r->max_frame_bytes, &total, &reason);
        if (st == RMQ_FRAME_INVALID)
            return NULL;
        if (st == RMQ_FRAME_READY) {
            char err[128];
            rmq_cmd *cmd = rmq_cmd_decode(r->buf, total, err, sizeof(err));
            memmove(r->buf, r->buf + total, r->len - total);
            r->len -= total;
            if (cmd)
                return cmd;
            continue;
        }
        uint64_t now = rmq_frame_reader_now_ms();
        if (now >= deadline_ms)
            return NULL;
        uint64_t wait = deadline_ms - now;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, wait > 60000u ? 60000 : (int)wait);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return NULL;
        if (pr == 0)
            continue; /* the deadline is checked above */
        if (reserve(r, READ_CHUNK) != 0)
            return NULL;
        ssize_t n = recv(fd, r->buf + r->len, r->cap - r->len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return NULL;
        r->len += (size_t)n;
    }
}
