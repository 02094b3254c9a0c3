/* rmq_test_client.c — blocking raw-frame client for integration tests:
 * connect to 127.0.0.1, send commands or raw bytes, receive whole frames
 * with a timeout. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame_file.h"
#include "rmq_test_support.h"

static long long now_ms(void)
{
    return (long long)rmq_test_now_ms();
}

uint64_t rmq_test_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void rmq_test_pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int rmq_tc_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return ntohs(a.sin_port);
}

int rmq_tc_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

int rmq_tc_send_raw(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int rmq_tc_send(int fd, const rmq_cmd *cmd)
{
    size_t need = rmq_cmd_encoded_size(cmd);
    if (need == 0)
        return -1;
    uint8_t *buf = malloc(need);
    if (!buf)
        return -1;
    size_t n = rmq_cmd_encode(cmd, buf, need);
    int rc = n ? rmq_tc_send_raw(fd, buf, n) : -1;
    free(buf);
    return rc;
}

/* Read exactly len bytes before the deadline; 0 ok, -1 timeout/EOF. */
static int read_full(int fd, uint8_t *buf, size_t len, long long deadline)
{
    size_t got = 0;
    while (got < len) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return -1;
        struct pollfd p = {fd, POLLIN, 0};
        int pr = poll(&p, 1, (int)left);
        if (pr <= 0)
            return -1;
        ssize_t r = recv(fd, buf + got, len - got, 0);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Once a frame has begun to arrive it is read to its end: giving up in the
 * middle would drop its first bytes and leave the stream out of step, so
 * that every later answer on the connection is lost (a short timeout in a
 * polling loop hit this when an answer arrived at the slice's last
 * millisecond). */
#define FRAME_GRACE_MS 10000

rmq_cmd *rmq_tc_recv(int fd, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    /* wait for the first byte without consuming anything */
    for (;;) {
        long long left = deadline - now_ms();
        if (left < 0)
            left = 0;
        struct pollfd p = {fd, POLLIN, 0};
        int pr = poll(&p, 1, (int)left);
        if (pr > 0)
            break;
        if (pr < 0 || left == 0)
            return NULL;
    }
    deadline = now_ms() + FRAME_GRACE_MS;
    uint8_t head[4];
    if (read_full(fd, head, 4, deadline) != 0)
        return NULL;
    uint32_t len =
        ((uint32_t)head[0] << 24) | ((uint32_t)head[1] << 16) | ((uint32_t)head[2] << 8) | head[3];
    if (len < 4 || len > 64u * 1024 * 1024)
        return NULL;
    uint8_t *buf = malloc(len + 4);
    if (!buf)
        return NULL;
    memcpy(buf, head, 4);
    if (read_full(fd, buf + 4, len, deadline) != 0) {
        free(buf);
        return NULL;
    }
    char err[128];
    rmq_cmd *c = rmq_cmd_decode(buf, len + 4, err, sizeof(err));
    free(buf);
    return c;
}

rmq_cmd *rmq_tc_call(int fd, const rmq_cmd *req, int timeout_ms)
{
    if (rmq_tc_send(fd, req) != 0)
        return NULL;
    return rmq_tc_recv(fd, timeout_ms);
}

rmq_cmd *rmq_tc_call_response(int fd, const rmq_cmd *req, int timeout_ms)
{
    if (rmq_tc_send(fd, req) != 0)
        return NULL;
    long long deadline = now_ms() + timeout_ms;
    while (now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 500);
        if (!c)
            continue;
        if ((c->flag & RMQ_FLAG_RESPONSE) && c->opaque == req->opaque)
            return c;
        rmq_cmd_free(c);
    }
    return NULL;
}

bool rmq_tc_wait_closed(int fd, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    uint8_t buf[4096];
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0)
            return false;
        struct pollfd p = {fd, POLLIN, 0};
        int pr = poll(&p, 1, (int)left);
        if (pr < 0)
            return false;
        if (pr == 0)
            return false;
        ssize_t r = recv(fd, buf, sizeof(buf), 0);
        if (r == 0)
            return true;
        if (r < 0)
            return errno == ECONNRESET;
    }
}

rmq_cmd *rmq_tc_request(int code, int opaque, const char *const *kv)
{
    rmq_cmd *c = rmq_cmd_new();
    if (!c)
        return NULL;
    c->code = code;
    c->opaque = opaque;
    c->version = 409;
    c->serialize_type = RMQ_SERIALIZE_JSON;
    for (size_t i = 0; kv && kv[i] && kv[i + 1]; i += 2) {
        if (rmq_cmd_ext_set(c, kv[i], kv[i + 1]) != 0) {
            rmq_cmd_free(c);
            return NULL;
        }
    }
    if (kv && kv[0])
        c->has_ext = true;
    return c;
}

unsigned char *rmq_tc_load_vector(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", RMQ_TEST_VECTORS_DIR, name);
    return rmq_frame_file_read(path, len);
}
