/* grpc_bench_conn.c — one HTTP/2 connection of rmqbench's gRPC mode: TCP
 * (+ TLS), an nghttp2 client session, calls as streams. Kept cheap on
 * purpose: the figures must be the server's, so no thread, no copy of a
 * response beyond reassembling gRPC messages split over DATA frames. */
#include "grpc_bench_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct gbc_conn {
    int fd;
    SSL *ssl;
    nghttp2_session *h2;
    char authority[128];
    char client_id[96];
    int scheme_https;
    unsigned open_calls;
    uint64_t request_seq;
    int broken;
};

uint64_t gbc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static ssize_t send_cb(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *ud)
{
    (void)s;
    (void)flags;
    gbc_conn *c = ud;
    if (c->ssl) {
        ERR_clear_error();
        int n = SSL_write(c->ssl, data, (int)len);
        if (n > 0)
            return n;
        int e = SSL_get_error(c->ssl, n);
        return e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ ? NGHTTP2_ERR_WOULDBLOCK
                                                                     : NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
    if (n >= 0)
        return n;
    return errno == EAGAIN || errno == EINTR ? NGHTTP2_ERR_WOULDBLOCK
                                             : NGHTTP2_ERR_CALLBACK_FAILURE;
}

static ssize_t recv_cb(nghttp2_session *s, uint8_t *buf, size_t len, int flags, void *ud)
{
    (void)s;
    (void)flags;
    gbc_conn *c = ud;
    if (c->ssl) {
        ERR_clear_error();
        int n = SSL_read(c->ssl, buf, (int)len);
        if (n > 0)
            return n;
        int e = SSL_get_error(c->ssl, n);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
            return NGHTTP2_ERR_WOULDBLOCK;
        return e == SSL_ERROR_ZERO_RETURN ? NGHTTP2_ERR_EOF : NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    ssize_t n = recv(c->fd, buf, len, 0);
    if (n > 0)
        return n;
    if (n == 0)
        return NGHTTP2_ERR_EOF;
    return errno == EAGAIN || errno == EINTR ? NGHTTP2_ERR_WOULDBLOCK
                                             : NGHTTP2_ERR_CALLBACK_FAILURE;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags, void *ud)
{
    (void)flags;
    (void)ud;
    gbc_call *call = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
    if (!call)
        return 0;
    if (namelen == 11 && memcmp(name, "grpc-status", 11) == 0) {
        int v = 0;
        for (size_t i = 0; i < valuelen && value[i] >= '0' && value[i] <= '9'; i++)
            v = v * 10 + (value[i] - '0');
        call->grpc_status = v;
    } else if (namelen == 12 && memcmp(name, "grpc-message", 12) == 0) {
        snprintf(call->grpc_message, sizeof call->grpc_message, "%.*s", (int)valuelen,
                 (const char *)value);
    }
    return 0;
}

/* Append a DATA chunk and hand every whole gRPC message on. */
static int on_data(nghttp2_session *s, uint8_t flags, int32_t stream_id, const uint8_t *data,
                   size_t len, void *ud)
{
    (void)flags;
    (void)ud;
    gbc_call *call = nghttp2_session_get_stream_user_data(s, stream_id);
    if (!call)
        return 0;
    if (call->in_len == 0) {
        /* the common case: whole messages in this chunk, no copy */
        while (len >= 5) {
            uint32_t mlen = (uint32_t)data[1] << 24 | (uint32_t)data[2] << 16 |
                            (uint32_t)data[3] << 8 | data[4];
            if (len - 5 < mlen)
                break;
            if (call->on_message)
                call->on_message(call, data + 5, mlen);
            data += 5 + mlen;
            len -= 5 + mlen;
        }
        if (len == 0)
            return 0;
    }
    if (call->in_len + len > call->in_cap) {
        size_t cap = call->in_cap ? call->in_cap : 4096;
        while (cap < call->in_len + len)
            cap *= 2;
        uint8_t *p = realloc(call->in, cap);
        if (!p)
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        call->in = p;
        call->in_cap = cap;
    }
    memcpy(call->in + call->in_len, data, len);
    call->in_len += len;
    size_t off = 0;
    while (call->in_len - off >= 5) {
        const uint8_t *m = call->in + off;
        uint32_t mlen = (uint32_t)m[1] << 24 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 8 | m[4];
        if (call->in_len - off - 5 < mlen)
            break;
        if (call->on_message)
            call->on_message(call, m + 5, mlen);
        off += 5 + mlen;
    }
    memmove(call->in, call->in + off, call->in_len - off);
    call->in_len -= off;
    return 0;
}

static int on_close(nghttp2_session *s, int32_t stream_id, uint32_t error_code, void *ud)
{
    (void)error_code;
    gbc_conn *c = ud;
    gbc_call *call = nghttp2_session_get_stream_user_data(s, stream_id);
    if (!call)
        return 0;
    nghttp2_session_set_stream_user_data(s, stream_id, NULL);
    c->open_calls--;
    free(call->req);
    call->req = NULL;
    free(call->in);
    call->in = NULL;
    call->in_len = call->in_cap = 0;
    call->stream_id = 0;
    if (call->on_done)
        call->on_done(call, call->grpc_status);
    return 0;
}

static ssize_t read_body(nghttp2_session *s, int32_t stream_id, uint8_t *buf, size_t len,
                         uint32_t *data_flags, nghttp2_data_source *src, void *ud)
{
    (void)s;
    (void)stream_id;
    (void)ud;
    gbc_call *call = src->ptr;
    size_t left = call->req_len - call->req_off;
    if (left == 0 && call->keep_open)
        return NGHTTP2_ERR_DEFERRED; /* a Telemetry stream stays open */
    size_t n = left < len ? left : len;
    memcpy(buf, call->req + call->req_off, n);
    call->req_off += n;
    if (call->req_off == call->req_len && !call->keep_open)
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* Every stream the session still has ends with grpc_status -1. */
static void fail_open_calls(gbc_conn *c)
{
    for (int32_t id = 1; c->open_calls > 0 && id < (int32_t)(c->request_seq * 2 + 2); id += 2) {
        if (nghttp2_session_get_stream_user_data(c->h2, id))
            on_close(c->h2, id, NGHTTP2_CANCEL, c);
    }
}

gbc_conn *gbc_connect(const struct sockaddr *addr, const char *authority, SSL_CTX *tls,
                      const char *client_id)
{
    gbc_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    snprintf(c->authority, sizeof c->authority, "%s", authority);
    snprintf(c->client_id, sizeof c->client_id, "%s", client_id);
    c->scheme_https = tls != NULL;
    socklen_t alen =
        addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    c->fd = socket(addr->sa_family, SOCK_STREAM, 0);
    if (c->fd < 0 || connect(c->fd, addr, alen) != 0) {
        fprintf(stderr, "rmqbench: connect to %s: %s\n", authority, strerror(errno));
        gbc_close(c);
        return NULL;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (tls) {
        c->ssl = SSL_new(tls);
        if (!c->ssl || SSL_set_fd(c->ssl, c->fd) != 1 || SSL_connect(c->ssl) != 1) {
            fprintf(stderr, "rmqbench: TLS handshake with %s failed\n", authority);
            ERR_print_errors_fp(stderr);
            gbc_close(c);
            return NULL;
        }
        const unsigned char *alpn = NULL;
        unsigned alpn_len = 0;
        SSL_get0_alpn_selected(c->ssl, &alpn, &alpn_len);
        if (alpn_len != 2 || memcmp(alpn, "h2", 2) != 0) {
            fprintf(stderr, "rmqbench: %s did not choose h2 by ALPN\n", authority);
            gbc_close(c);
            return NULL;
        }
    }
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    nghttp2_session_callbacks *cb;
    if (nghttp2_session_callbacks_new(&cb) != 0) {
        gbc_close(c);
        return NULL;
    }
    nghttp2_session_callbacks_set_send_callback(cb, send_cb);
    nghttp2_session_callbacks_set_recv_callback(cb, recv_cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    int rc = nghttp2_session_client_new(&c->h2, cb, c);
    nghttp2_session_callbacks_del(cb);
    if (rc != 0) {
        gbc_close(c);
        return NULL;
    }
    /* wide windows: 32 batches of 32 KiB in flight must not wait for
     * WINDOW_UPDATEs (the Go client's gRPC opens its windows too) */
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 1000},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 4 << 20},
    };
    if (nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, iv, 2) != 0 ||
        nghttp2_session_set_local_window_size(c->h2, NGHTTP2_FLAG_NONE, 0, 64 << 20) != 0) {
        gbc_close(c);
        return NULL;
    }
    return c;
}

void gbc_close(gbc_conn *c)
{
    if (!c)
        return;
    if (c->h2) {
        fail_open_calls(c); /* before the session and its stream data go */
        nghttp2_session_del(c->h2);
    }
    if (c->ssl)
        SSL_free(c->ssl);
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}

int gbc_fd(const gbc_conn *c)
{
    return c->fd;
}

short gbc_events(const gbc_conn *c)
{
    short ev = 0;
    if (nghttp2_session_want_read(c->h2))
        ev |= POLLIN;
    if (nghttp2_session_want_write(c->h2))
        ev |= POLLOUT;
    return ev;
}

int gbc_on_ready(gbc_conn *c)
{
    if (c->broken)
        return -1;
    int rc = nghttp2_session_recv(c->h2);
    if (rc == 0)
        rc = nghttp2_session_send(c->h2);
    if (rc != 0 || (!nghttp2_session_want_read(c->h2) && !nghttp2_session_want_write(c->h2))) {
        if (rc != 0)
            fprintf(stderr, "rmqbench: connection to %s lost: %s\n", c->authority,
                    nghttp2_strerror(rc));
        c->broken = 1;
        fail_open_calls(c);
        return -1;
    }
    return 0;
}

unsigned gbc_open_calls(const gbc_conn *c)
{
    return c->open_calls;
}

#define NV(n, v)                                                                                   \
    {                                                                                              \
        (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE             \
    }

int gbc_start(gbc_conn *c, gbc_call *call, const char *method, const uint8_t *body, size_t len,
              unsigned timeout_ms)
{
    if (c->broken)
        return -1;
    call->conn = c;
    call->grpc_status = -1;
    call->grpc_message[0] = '\0';
    call->in_len = 0;
    call->req = malloc(len + 5);
    if (!call->req)
        return -1;
    call->req[0] = 0;
    call->req[1] = (uint8_t)(len >> 24);
    call->req[2] = (uint8_t)(len >> 16);
    call->req[3] = (uint8_t)(len >> 8);
    call->req[4] = (uint8_t)len;
    memcpy(call->req + 5, body, len);
    call->req_len = len + 5;
    call->req_off = 0;
    char path[96], timeout[16], request_id[48], date[24];
    snprintf(path, sizeof path, "/apache.rocketmq.v2.MessagingService/%s", method);
    snprintf(timeout, sizeof timeout, "%um", timeout_ms);
    /* unique per call, as the 5.x clients' UUIDs are */
    snprintf(request_id, sizeof request_id, "%08x-%016llx", (unsigned)getpid(),
             (unsigned long long)++c->request_seq);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y%m%dT%H%M%SZ", &tm);
    const nghttp2_nv nv[] = {
        NV(":method", "POST"),
        NV(":scheme", c->scheme_https ? "https" : "http"),
        NV(":path", path),
        NV(":authority", c->authority),
        NV("content-type", "application/grpc"),
        NV("te", "trailers"),
        NV("grpc-timeout", timeout),
        NV("x-mq-language", "CPP"),
        NV("x-mq-protocol", "v2"),
        NV("x-mq-request-id", request_id),
        NV("x-mq-client-version", "5.0.0"),
        NV("x-mq-client-id", c->client_id),
        NV("x-mq-namespace", ""),
        NV("x-mq-date-time", date),
    };
    nghttp2_data_provider dp = {.source.ptr = call, .read_callback = read_body};
    call->started_ns = gbc_now_ns();
    int32_t id = nghttp2_submit_request(c->h2, NULL, nv, sizeof nv / sizeof nv[0], &dp, call);
    if (id < 0) {
        free(call->req);
        call->req = NULL;
        return -1;
    }
    call->stream_id = id;
    c->open_calls++;
    return 0;
}

void gbc_cancel(gbc_call *call)
{
    if (call->conn && call->stream_id > 0)
        nghttp2_submit_rst_stream(call->conn->h2, NGHTTP2_FLAG_NONE, call->stream_id,
                                  NGHTTP2_CANCEL);
}
