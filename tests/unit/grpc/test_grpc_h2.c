/* test_grpc_h2.c — the HTTP/2 gRPC server session against an in-process
 * nghttp2 client: a call's headers, metadata and timeout reach on_call,
 * messages split across DATA frames arrive whole, the half-close and the
 * stream's end are reported; answers come back as headers, prefixed
 * messages and grpc-status/grpc-message trailers (or trailers-only);
 * malformed requests and a non-HTTP/2 peer are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_h2.h"
#include "grpc_wire.h"

/* ---- the server side's observations ---- */
typedef struct server_log {
    int calls, halfs, closes;
    int32_t last_stream;
    char path[128];
    char client_id[64];
    uint64_t timeout_ms;
    char msgs[8][64];
    size_t msg_lens[8];
    int nmsgs;
    grpc_h2 *h2;
    bool answer_on_half_close; /* answer inside the callback, as an inline handler does */
} server_log;

static void s_on_call(void *ud, int32_t id, const grpc_h2_call_info *info)
{
    server_log *l = ud;
    l->calls++;
    l->last_stream = id;
    snprintf(l->path, sizeof l->path, "%s", info->path);
    l->timeout_ms = info->timeout_ms;
    for (size_t i = 0; i < info->nheaders; i++)
        if (strcmp(info->headers[i].name, "x-mq-client-id") == 0)
            snprintf(l->client_id, sizeof l->client_id, "%s", info->headers[i].value);
}

static void s_on_message(void *ud, int32_t id, const uint8_t *msg, size_t len)
{
    (void)id;
    server_log *l = ud;
    if (l->nmsgs < 8) {
        size_t n = len < 63 ? len : 63;
        memcpy(l->msgs[l->nmsgs], msg, n);
        l->msgs[l->nmsgs][n] = 0;
        l->msg_lens[l->nmsgs++] = len;
    }
}

static void s_on_half_close(void *ud, int32_t id)
{
    server_log *l = ud;
    l->halfs++;
    if (l->answer_on_half_close) {
        grpc_h2_send_message(l->h2, id, (const uint8_t *)"pong", 4);
        grpc_h2_finish(l->h2, id, 0, NULL);
    }
}

static void s_on_close(void *ud, int32_t id)
{
    (void)id;
    ((server_log *)ud)->closes++;
}

static const grpc_h2_callbacks SCB = {s_on_call, s_on_message, s_on_half_close, s_on_close};

/* ---- the client ---- */
typedef struct client {
    nghttp2_session *s;
    char status[16];     /* :status */
    char grpc_status[8]; /* from trailers or trailers-only headers */
    char grpc_message[128];
    int header_blocks;
    uint8_t data[4096];
    size_t data_len;
    bool closed;
} client;

static int c_on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nl,
                       const uint8_t *value, size_t vl, uint8_t flags, void *ud)
{
    (void)s;
    (void)f;
    (void)flags;
    client *c = ud;
    char *dst = NULL;
    size_t cap = 0;
    if (nl == 7 && memcmp(name, ":status", 7) == 0)
        dst = c->status, cap = sizeof c->status;
    else if (nl == 11 && memcmp(name, "grpc-status", 11) == 0)
        dst = c->grpc_status, cap = sizeof c->grpc_status;
    else if (nl == 12 && memcmp(name, "grpc-message", 12) == 0)
        dst = c->grpc_message, cap = sizeof c->grpc_message;
    if (dst)
        snprintf(dst, cap, "%.*s", (int)vl, (const char *)value);
    return 0;
}

static int c_on_frame(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)s;
    if (f->hd.type == NGHTTP2_HEADERS)
        ((client *)ud)->header_blocks++;
    return 0;
}

static int c_on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *d, size_t len,
                     void *ud)
{
    (void)s;
    (void)flags;
    (void)id;
    client *c = ud;
    assert_true(c->data_len + len <= sizeof c->data);
    memcpy(c->data + c->data_len, d, len);
    c->data_len += len;
    return 0;
}

static int c_on_close(nghttp2_session *s, int32_t id, uint32_t code, void *ud)
{
    (void)s;
    (void)id;
    (void)code;
    ((client *)ud)->closed = true;
    return 0;
}

static void client_init(client *c)
{
    memset(c, 0, sizeof *c);
    nghttp2_session_callbacks *cb;
    assert_int_equal(nghttp2_session_callbacks_new(&cb), 0);
    nghttp2_session_callbacks_set_on_header_callback(cb, c_on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, c_on_frame);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, c_on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, c_on_close);
    assert_int_equal(nghttp2_session_client_new(&c->s, cb, c), 0);
    nghttp2_session_callbacks_del(cb);
    assert_int_equal(nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, NULL, 0), 0);
}

/* request body source: a fixed buffer handed out in small slices so the
 * messages cross DATA frames */
typedef struct body_src {
    const uint8_t *data;
    size_t len, off;
    bool end;
} body_src;

static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                         nghttp2_data_source *src, void *ud)
{
    (void)s;
    (void)id;
    (void)ud;
    body_src *b = src->ptr;
    size_t n = b->len - b->off;
    if (n == 0 && !b->end)
        return NGHTTP2_ERR_DEFERRED; /* the client's side stays open */
    if (n > 3)
        n = 3;
    if (n > len)
        n = len;
    memcpy(buf, b->data + b->off, n);
    b->off += n;
    if (b->off == b->len && b->end)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

#define NV(n, v)                                                                                   \
    {                                                                                              \
        (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, sizeof(v) - 1, NGHTTP2_NV_FLAG_NONE         \
    }

static int32_t client_call(client *c, const char *content_type, body_src *body)
{
    nghttp2_nv hd[] = {
        NV(":method", "POST"),
        NV(":scheme", "http"),
        NV(":path", "/apache.rocketmq.v2.MessagingService/QueryRoute"),
        NV(":authority", "127.0.0.1"),
        {(uint8_t *)"content-type", (uint8_t *)content_type, 12, strlen(content_type),
         NGHTTP2_NV_FLAG_NONE},
        NV("te", "trailers"),
        NV("grpc-timeout", "3S"),
        NV("x-mq-client-id", "client-7"),
    };
    nghttp2_data_provider dp = {.source.ptr = body, .read_callback = read_body};
    int32_t id = nghttp2_submit_request(c->s, NULL, hd, sizeof hd / sizeof hd[0], &dp, NULL);
    assert_true(id > 0);
    return id;
}

static int to_client(void *ud, const uint8_t *data, size_t len)
{
    client *c = ud;
    ssize_t n = nghttp2_session_mem_recv(c->s, data, len);
    return n == (ssize_t)len ? 0 : -1;
}

/* Move bytes both ways until neither side has anything to say. */
static void exchange(client *c, grpc_h2 *h)
{
    for (int round = 0; round < 100; round++) {
        bool moved = false;
        const uint8_t *d;
        ssize_t n;
        while ((n = nghttp2_session_mem_send(c->s, &d)) > 0) {
            assert_int_equal(grpc_h2_feed(h, d, (size_t)n), 0);
            moved = true;
        }
        assert_true(n == 0);
        if (nghttp2_session_want_write(c->s))
            moved = true;
        size_t before = c->data_len + (size_t)c->header_blocks;
        assert_int_equal(grpc_h2_flush(h, to_client, c), 0);
        if (c->data_len + (size_t)c->header_blocks != before)
            moved = true;
        if (!moved && !nghttp2_session_want_write(c->s))
            return;
    }
}

static uint8_t *two_messages(size_t *len)
{
    static uint8_t wire[64];
    size_t n = 0;
    grpc_msg_prefix(wire, 5);
    memcpy(wire + 5, "first", 5);
    n = 10;
    grpc_msg_prefix(wire + n, 6);
    memcpy(wire + n + 5, "second", 6);
    n += 11;
    *len = n;
    return wire;
}

static void call_with_messages_and_trailers(void **state)
{
    (void)state;
    server_log log = {0};
    grpc_h2 *h = grpc_h2_new(&SCB, &log, 1024);
    assert_non_null(h);
    log.h2 = h;
    client c;
    client_init(&c);
    size_t len;
    const uint8_t *wire = two_messages(&len);
    body_src body = {wire, len, 0, true};
    int32_t id = client_call(&c, "application/grpc", &body);
    exchange(&c, h);
    assert_int_equal(log.calls, 1);
    assert_int_equal(log.last_stream, id);
    assert_string_equal(log.path, "/apache.rocketmq.v2.MessagingService/QueryRoute");
    assert_string_equal(log.client_id, "client-7");
    assert_int_equal(log.timeout_ms, 3000);
    assert_int_equal(log.nmsgs, 2);
    assert_string_equal(log.msgs[0], "first");
    assert_string_equal(log.msgs[1], "second");
    assert_int_equal(log.halfs, 1);
    assert_false(c.closed);

    /* two answer messages, then trailers with an encoded message */
    assert_int_equal(grpc_h2_send_message(h, id, (const uint8_t *)"ans1", 4), 0);
    assert_int_equal(grpc_h2_send_message(h, id, (const uint8_t *)"", 0), 0);
    /* 13: a two-digit status (grpc_h2_finish writes it by hand) */
    assert_int_equal(grpc_h2_finish(h, id, 13, "no topic 100%"), 0);
    exchange(&c, h);
    assert_true(c.closed);
    assert_string_equal(c.status, "200");
    assert_int_equal(c.header_blocks, 2); /* headers, trailers */
    assert_string_equal(c.grpc_status, "13");
    assert_string_equal(c.grpc_message, "no topic 100%25");
    const uint8_t want[] = {0, 0, 0, 0, 4, 'a', 'n', 's', '1', 0, 0, 0, 0, 0};
    assert_int_equal(c.data_len, sizeof want);
    assert_memory_equal(c.data, want, sizeof want);
    assert_int_equal(log.closes, 1);
    /* a stream that is gone takes answers without effect */
    assert_int_equal(grpc_h2_send_message(h, id, (const uint8_t *)"late", 4), 0);
    assert_int_equal(grpc_h2_finish(h, id, 0, NULL), 0);
    nghttp2_session_del(c.s);
    grpc_h2_free(h);
}

static void answer_inside_callback_is_trailers_only_when_nothing_sent(void **state)
{
    (void)state;
    server_log log = {.answer_on_half_close = true};
    grpc_h2 *h = grpc_h2_new(&SCB, &log, 1024);
    log.h2 = h;
    client c;
    client_init(&c);
    size_t len;
    const uint8_t *wire = two_messages(&len);
    body_src body = {wire, len, 0, true};
    client_call(&c, "application/grpc+proto", &body);
    exchange(&c, h);
    assert_true(c.closed);
    assert_string_equal(c.grpc_status, "0");
    assert_int_equal(c.data_len, 9); /* "pong" with its prefix */
    nghttp2_session_del(c.s);
    grpc_h2_free(h);

    /* finish before any message: one HEADERS frame carries the status */
    server_log l2 = {0};
    h = grpc_h2_new(&SCB, &l2, 1024);
    client_init(&c);
    body_src b2 = {wire, len, 0, true};
    int32_t id = client_call(&c, "application/grpc", &b2);
    exchange(&c, h);
    assert_int_equal(grpc_h2_finish(h, id, 12, "Method not found: x/y"), 0);
    exchange(&c, h);
    assert_true(c.closed);
    assert_int_equal(c.header_blocks, 1);
    assert_string_equal(c.grpc_status, "12");
    assert_string_equal(c.grpc_message, "Method not found: x/y");
    assert_int_equal(c.data_len, 0);
    nghttp2_session_del(c.s);
    grpc_h2_free(h);
}

static void refusals(void **state)
{
    (void)state;
    /* not application/grpc: answered by the session, never reaches on_call */
    server_log log = {0};
    grpc_h2 *h = grpc_h2_new(&SCB, &log, 1024);
    client c;
    client_init(&c);
    size_t len;
    const uint8_t *wire = two_messages(&len);
    body_src body = {wire, len, 0, true};
    client_call(&c, "application/json", &body);
    exchange(&c, h);
    assert_int_equal(log.calls, 0);
    assert_true(c.closed);
    assert_string_equal(c.grpc_status, "13");
    assert_string_equal(c.grpc_message, "invalid content-type");
    nghttp2_session_del(c.s);
    grpc_h2_free(h);

    /* a message over the limit: RESOURCE_EXHAUSTED; the call ends */
    server_log l2 = {0};
    h = grpc_h2_new(&SCB, &l2, 4);
    client_init(&c);
    body_src b2 = {wire, len, 0, true};
    client_call(&c, "application/grpc", &b2);
    exchange(&c, h);
    assert_int_equal(l2.calls, 1);
    assert_int_equal(l2.nmsgs, 0);
    assert_int_equal(l2.halfs, 0);
    assert_true(c.closed);
    assert_string_equal(c.grpc_status, "8");
    assert_int_equal(l2.closes, 1);
    nghttp2_session_del(c.s);
    grpc_h2_free(h);

    /* end of stream inside a message: INTERNAL, no half-close reported */
    server_log l3 = {0};
    h = grpc_h2_new(&SCB, &l3, 1024);
    client_init(&c);
    body_src b3 = {wire, len - 2, 0, true};
    client_call(&c, "application/grpc", &b3);
    exchange(&c, h);
    assert_int_equal(l3.nmsgs, 1);
    assert_int_equal(l3.halfs, 0);
    assert_string_equal(c.grpc_status, "13");
    nghttp2_session_del(c.s);
    grpc_h2_free(h);

    /* not HTTP/2 at all (a remoting frame) */
    server_log l4 = {0};
    h = grpc_h2_new(&SCB, &l4, 1024);
    const uint8_t remoting[] = {0, 0, 0, 20, 0, 0, 0, 12, '{', '"', 'c', 'o', 'd', 'e', '"'};
    assert_int_equal(grpc_h2_feed(h, remoting, sizeof remoting), -1);
    grpc_h2_free(h);
}

static void open_calls_end_when_the_session_is_freed(void **state)
{
    (void)state;
    server_log log = {0};
    grpc_h2 *h = grpc_h2_new(&SCB, &log, 1024);
    client c;
    client_init(&c);
    size_t len;
    const uint8_t *wire = two_messages(&len);
    body_src body = {wire, len, 0, false}; /* the client keeps its side open */
    client_call(&c, "application/grpc", &body);
    exchange(&c, h);
    assert_int_equal(log.calls, 1);
    assert_int_equal(log.halfs, 0);
    assert_int_equal(log.closes, 0);
    grpc_h2_free(h);
    assert_int_equal(log.closes, 1);
    nghttp2_session_del(c.s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(call_with_messages_and_trailers),
        cmocka_unit_test(answer_inside_callback_is_trailers_only_when_nothing_sent),
        cmocka_unit_test(refusals),
        cmocka_unit_test(open_calls_end_when_the_session_is_freed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
