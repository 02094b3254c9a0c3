/* test_host_integration.c — the remoting host end to end: a real rmqhostd
 * with the hosttest plugin, driven with raw frames over loopback. Each test
 * names the behaviour it proves; run one with `test_host_integration NAME`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "child_lifetime.h"
#include "rmq_test_support.h"

#define RECV_MS 5000

typedef struct fixture {
    rmq_test_daemon d;
    int port;
} fixture;

static const char *const SERVERS[] = {"main", NULL};

static int start_daemon(fixture *f, const char *extra_host_conf, const char *const *args)
{
    if (rmq_td_init(&f->d, SERVERS, extra_host_conf) != 0)
        return -1;
    if (rmq_td_add_plugin(&f->d, "hosttest", "hosttest", "main", NULL) != 0)
        return -1;
    if (rmq_td_start(&f->d, args) != 0)
        return -1;
    f->port = rmq_td_port(&f->d, "main");
    return f->port > 0 ? 0 : -1;
}

static int setup_default(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (!f || start_daemon(f, NULL, NULL) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f) {
        rmq_td_cleanup(&f->d);
        free(f);
    }
    return 0;
}

static rmq_cmd *echo_req(int opaque, const char *msg)
{
    const char *kv[] = {"msg", msg, NULL};
    return rmq_tc_request(7001, opaque, kv);
}

/* ---- dispatch ---------------------------------------------------------- */

static void test_unknown_code_gets_code_3_with_java_remark(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    rmq_cmd *req = rmq_tc_request(555, 41, NULL);
    rmq_cmd *resp = rmq_tc_call(fd, req, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 3);
    assert_int_equal(resp->opaque, 41);
    assert_int_equal(resp->flag & 1, 1);
    assert_string_equal(resp->remark, " request type 555 not supported");
    assert_int_equal(resp->version, 409);
    rmq_cmd_free(req);
    rmq_cmd_free(resp);
    close(fd);
}

static void test_oneway_request_gets_no_response(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *oneway = echo_req(50, "quiet");
    oneway->flag = 2;
    rmq_cmd *unknown_oneway = rmq_tc_request(556, 51, NULL);
    unknown_oneway->flag = 2;
    rmq_cmd *normal = echo_req(52, "loud");
    assert_int_equal(rmq_tc_send(fd, oneway), 0);
    assert_int_equal(rmq_tc_send(fd, unknown_oneway), 0);
    assert_int_equal(rmq_tc_send(fd, normal), 0);
    rmq_cmd *resp = rmq_tc_recv(fd, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->opaque, 52);
    rmq_cmd_free(resp);
    /* Nothing else is pending on the wire. */
    assert_null(rmq_tc_recv(fd, 300));
    rmq_cmd_free(oneway);
    rmq_cmd_free(unknown_oneway);
    rmq_cmd_free(normal);
    close(fd);
}

static void test_json_request_gets_json_response(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *req = echo_req(60, "json");
    rmq_cmd_set_body(req, "abc", 3, NULL, NULL);
    rmq_cmd *resp = rmq_tc_call(fd, req, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->serialize_type, RMQ_SERIALIZE_JSON);
    assert_int_equal(resp->code, 0);
    assert_string_equal(rmq_cmd_ext_get(resp, "echo"), "json");
    assert_int_equal(resp->body_len, 3);
    assert_memory_equal(resp->body, "abc", 3);
    rmq_cmd_free(req);
    rmq_cmd_free(resp);
    close(fd);
}

static void test_rocketmq_request_gets_rocketmq_response(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *req = echo_req(61, "binary");
    req->serialize_type = RMQ_SERIALIZE_ROCKETMQ;
    rmq_cmd *resp = rmq_tc_call(fd, req, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->serialize_type, RMQ_SERIALIZE_ROCKETMQ);
    assert_string_equal(rmq_cmd_ext_get(resp, "echo"), "binary");
    /* An error answer to a binary request is binary too. */
    rmq_cmd *bad = rmq_tc_request(557, 62, NULL);
    bad->serialize_type = RMQ_SERIALIZE_ROCKETMQ;
    rmq_cmd *err = rmq_tc_call(fd, bad, RECV_MS);
    assert_non_null(err);
    assert_int_equal(err->code, 3);
    assert_int_equal(err->serialize_type, RMQ_SERIALIZE_ROCKETMQ);
    rmq_cmd_free(req);
    rmq_cmd_free(resp);
    rmq_cmd_free(bad);
    rmq_cmd_free(err);
    close(fd);
}

static void test_failing_processor_gets_system_error_with_remark(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *req = rmq_tc_request(7003, 70, NULL);
    rmq_cmd *resp = rmq_tc_call(fd, req, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 1);
    assert_string_equal(resp->remark, "boom");
    rmq_cmd_free(req);
    rmq_cmd_free(resp);
    close(fd);
}

static void test_reject_hook_gets_system_busy_rejectrequest(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *req = rmq_tc_request(7004, 71, NULL);
    rmq_cmd *resp = rmq_tc_call(fd, req, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 2);
    assert_string_equal(resp->remark, "[REJECTREQUEST]system busy, start flow control for a while");
    rmq_cmd_free(req);
    rmq_cmd_free(resp);
    close(fd);
}

static void test_rpc_hooks_see_and_can_refuse_every_request(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    const char *deny[] = {"deny", "1", "msg", "x", NULL};
    rmq_cmd *req = rmq_tc_request(7001, 72, deny);
    rmq_cmd *resp = rmq_tc_call(fd, req, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 16);
    assert_string_equal(resp->remark, "denied by hook");
    rmq_cmd_free(req);
    rmq_cmd_free(resp);
    rmq_cmd *count = rmq_tc_request(7010, 73, NULL);
    resp = rmq_tc_call(fd, count, RECV_MS);
    assert_non_null(resp);
    long before = atol(rmq_cmd_ext_get(resp, "answersSeen"));
    rmq_cmd_free(resp);
    rmq_cmd *e = echo_req(74, "seen");
    resp = rmq_tc_call(fd, e, RECV_MS);
    rmq_cmd_free(resp);
    resp = rmq_tc_call(fd, count, RECV_MS);
    assert_non_null(resp);
    /* The echo and the previous count answer both went through the after hook. */
    assert_int_equal(atol(rmq_cmd_ext_get(resp, "answersSeen")), before + 2);
    rmq_cmd_free(resp);
    rmq_cmd_free(count);
    rmq_cmd_free(e);
    close(fd);
}

static void test_full_executor_gets_system_busy_overload(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    /* Executor "slow" has one thread and a queue of one: the third request
     * while the first sleeps finds the queue full. */
    const char *kv[] = {"sleep_ms", "700", NULL};
    int busy = 0, ok = 0;
    for (int i = 0; i < 3; i++) {
        rmq_cmd *req = rmq_tc_request(7002, 80 + i, kv);
        assert_int_equal(rmq_tc_send(fd, req), 0);
        rmq_cmd_free(req);
    }
    for (int i = 0; i < 3; i++) {
        rmq_cmd *resp = rmq_tc_recv(fd, RECV_MS);
        assert_non_null(resp);
        if (resp->code == 2) {
            busy++;
            assert_string_equal(resp->remark,
                                "[OVERLOAD]system busy, start flow control for a while");
        } else {
            assert_int_equal(resp->code, 0);
            ok++;
        }
        rmq_cmd_free(resp);
    }
    /* Depending on when the worker dequeues, the second may be refused too. */
    assert_true(busy >= 1);
    assert_true(ok >= 1);
    assert_int_equal(busy + ok, 3);
    close(fd);
}

static void test_pipelined_requests_in_one_write_are_all_answered(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    uint8_t buf[200 * 160];
    size_t n = 0;
    for (int i = 0; i < 200; i++) {
        rmq_cmd *req = echo_req(1000 + i, "p");
        n += rmq_cmd_encode(req, buf + n, sizeof(buf) - n);
        rmq_cmd_free(req);
    }
    assert_int_equal(rmq_tc_send_raw(fd, buf, n), 0);
    for (int i = 0; i < 200; i++) {
        rmq_cmd *resp = rmq_tc_recv(fd, RECV_MS);
        assert_non_null(resp);
        assert_int_equal(resp->opaque, 1000 + i); /* inline: answered in order */
        rmq_cmd_free(resp);
    }
    close(fd);
}

static rmq_cmd *body_req(int code, int opaque, size_t len, unsigned seed)
{
    rmq_cmd *req = rmq_tc_request(code, opaque, NULL);
    uint8_t *body = malloc(len);
    assert_non_null(body);
    for (size_t i = 0; i < len; i++)
        body[i] = (uint8_t)(i * seed + (i >> 7) + seed);
    assert_int_equal(rmq_cmd_set_body(req, body, len, NULL, NULL), 0);
    free(body);
    return req;
}

static void assert_same_body(const rmq_cmd *got, const rmq_cmd *sent)
{
    assert_int_equal(got->code, 0);
    assert_int_equal(got->body_len, sent->body_len);
    assert_memory_equal(got->body, sent->body, sent->body_len);
}

/* Request bodies are handled where they were read (the connection's read
 * buffer). A request that outlives its read — deferred by an inline
 * processor that kept the body pointer from before defer(), or queued on an
 * executor — still sees its own bytes after much more data went through
 * that connection (the buffer is reused, moved and regrown meanwhile). */
static void test_held_request_bodies_survive_later_reads(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    rmq_cmd *held = body_req(7014, 1, 3000, 7);   /* deferred inline */
    rmq_cmd *gated = body_req(7015, 2, 5000, 11); /* waits on its executor */
    rmq_cmd *c = body_req(7001, 3, 20000, 13);
    rmq_cmd *d = body_req(7001, 4, 30000, 17);
    size_t cap = 3000 + 5000 + 20000 + 30000 + 4 * 512;
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    size_t n = 0;
    n += rmq_cmd_encode(held, buf + n, cap - n);
    n += rmq_cmd_encode(gated, buf + n, cap - n);
    n += rmq_cmd_encode(c, buf + n, cap - n);
    size_t d_at = n;
    n += rmq_cmd_encode(d, buf + n, cap - n);
    /* one write ending inside d: the rest of the read buffer moves on */
    size_t first = d_at + (n - d_at) / 2;
    assert_int_equal(rmq_tc_send_raw(fd, buf, first), 0);
    rmq_cmd *resp = rmq_tc_recv(fd, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->opaque, 3);
    assert_same_body(resp, c);
    rmq_cmd_free(resp);
    assert_int_equal(rmq_tc_send_raw(fd, buf + first, n - first), 0);
    resp = rmq_tc_recv(fd, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->opaque, 4);
    assert_same_body(resp, d);
    rmq_cmd_free(resp);
    free(buf);
    /* more reads through the same connection, some pipelined */
    for (int i = 0; i < 40; i++) {
        rmq_cmd *e = body_req(7001, 100 + i, 1000 + (size_t)i * 997, 19 + (unsigned)i);
        assert_int_equal(rmq_tc_send(fd, e), 0);
        if (i % 4 == 3) {
            for (int k = 3; k >= 0; k--) {
                resp = rmq_tc_recv(fd, RECV_MS);
                assert_non_null(resp);
                assert_int_equal(resp->opaque, 100 + i - k);
                assert_int_equal(resp->body_len, 1000 + (size_t)(i - k) * 997);
                rmq_cmd_free(resp);
            }
        }
        rmq_cmd_free(e);
    }
    rmq_cmd *rel = rmq_tc_request(7016, 9, NULL);
    assert_int_equal(rmq_tc_send(fd, rel), 0);
    rmq_cmd_free(rel);
    bool seen[3] = {false, false, false};
    for (int i = 0; i < 3; i++) {
        resp = rmq_tc_recv(fd, RECV_MS);
        assert_non_null(resp);
        if (resp->opaque == 1)
            assert_same_body(resp, held);
        else if (resp->opaque == 2)
            assert_same_body(resp, gated);
        else
            assert_int_equal(resp->opaque, 9);
        seen[resp->opaque == 1 ? 0 : resp->opaque == 2 ? 1 : 2] = true;
        rmq_cmd_free(resp);
    }
    assert_true(seen[0] && seen[1] && seen[2]);
    rmq_cmd_free(held);
    rmq_cmd_free(gated);
    rmq_cmd_free(c);
    rmq_cmd_free(d);
    close(fd);
}

/* A request deferred in the same read as a frame that closes the
 * connection keeps its body: the plugin reads it when it answers later. */
static void test_held_request_bodies_survive_their_connection_closing(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    rmq_cmd *held = body_req(7014, 1, 4000, 23);
    uint8_t buf[4096 + 512];
    size_t n = rmq_cmd_encode(held, buf, sizeof(buf));
    assert_true(n > 0);
    static const uint8_t garbage[8] = {0xFF, 0xFF, 0xFF, 0xF0, 0, 0, 0, 0}; /* length < 0 */
    memcpy(buf + n, garbage, sizeof(garbage));
    assert_int_equal(rmq_tc_send_raw(fd, buf, n + sizeof(garbage)), 0);
    assert_true(rmq_tc_wait_closed(fd, RECV_MS));
    close(fd);
    rmq_cmd_free(held);
    /* released from another connection: the body is read after the close */
    int fd2 = rmq_tc_connect(f->port);
    assert_true(fd2 >= 0);
    rmq_cmd *rel = rmq_tc_request(7016, 2, NULL);
    rmq_cmd *resp = rmq_tc_call(fd2, rel, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 0);
    rmq_cmd_free(resp);
    rmq_cmd_free(rel);
    rmq_cmd *echo = body_req(7001, 3, 100, 5);
    resp = rmq_tc_call(fd2, echo, RECV_MS);
    assert_non_null(resp);
    assert_same_body(resp, echo);
    rmq_cmd_free(resp);
    rmq_cmd_free(echo);
    close(fd2);
}

/* Frames of at least 128 KiB are read into a buffer of their own and the
 * command borrows the body: small frames before and after one in the same
 * write, a large body arriving in pieces, and a client leaving halfway are
 * all handled, and the echoed bodies are byte-identical. */
static void test_pipelined_large_frames_mixed_with_small_ones_are_answered(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    size_t big = 1500000;
    uint8_t *body = malloc(big);
    assert_non_null(body);
    for (size_t i = 0; i < big; i++)
        body[i] = (uint8_t)(i * 131u + (i >> 11));
    size_t cap = 2 * (big + 4096);
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    size_t n = 0;
    /* small, large, small, large (one byte smaller), small: one write */
    for (int i = 0; i < 5; i++) {
        rmq_cmd *req = echo_req(500 + i, i % 2 ? "large" : "small");
        if (i % 2)
            assert_int_equal(rmq_cmd_set_body(req, body, big - (size_t)(i == 3), NULL, NULL), 0);
        n += rmq_cmd_encode(req, buf + n, cap - n);
        rmq_cmd_free(req);
    }
    /* in uneven pieces, so reads end inside headers and bodies */
    for (size_t off = 0; off < n;) {
        size_t piece = off % 3 == 0 ? 70001 : 4093;
        if (piece > n - off)
            piece = n - off;
        assert_int_equal(rmq_tc_send_raw(fd, buf + off, piece), 0);
        off += piece;
    }
    for (int i = 0; i < 5; i++) {
        rmq_cmd *resp = rmq_tc_recv(fd, RECV_MS * 2);
        assert_non_null(resp);
        assert_int_equal(resp->opaque, 500 + i);
        assert_string_equal(rmq_cmd_ext_get(resp, "echo"), i % 2 ? "large" : "small");
        if (i % 2) {
            assert_int_equal(resp->body_len, big - (size_t)(i == 3));
            assert_memory_equal(resp->body, body, resp->body_len);
        } else {
            assert_int_equal(resp->body_len, 0);
        }
        rmq_cmd_free(resp);
    }
    /* half a large frame, then the client goes: the daemon drops it */
    rmq_cmd *req = echo_req(600, "gone");
    assert_int_equal(rmq_cmd_set_body(req, body, big, NULL, NULL), 0);
    n = rmq_cmd_encode(req, buf, cap);
    rmq_cmd_free(req);
    int quitter = rmq_tc_connect(f->port);
    assert_true(quitter >= 0);
    assert_int_equal(rmq_tc_send_raw(quitter, buf, n / 2), 0);
    close(quitter);
    rmq_cmd *again = echo_req(601, "still");
    rmq_cmd *resp = rmq_tc_call(fd, again, RECV_MS);
    assert_non_null(resp);
    assert_string_equal(rmq_cmd_ext_get(resp, "echo"), "still");
    rmq_cmd_free(resp);
    rmq_cmd_free(again);
    free(buf);
    free(body);
    close(fd);
}

static void test_frame_split_byte_by_byte_is_reassembled(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *req = echo_req(90, "split");
    uint8_t buf[512];
    size_t n = rmq_cmd_encode(req, buf, sizeof(buf));
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rmq_tc_send_raw(fd, buf + i, 1), 0);
    rmq_cmd *resp = rmq_tc_recv(fd, RECV_MS);
    assert_non_null(resp);
    assert_string_equal(rmq_cmd_ext_get(resp, "echo"), "split");
    rmq_cmd_free(req);
    rmq_cmd_free(resp);
    close(fd);
}

/* ---- malformed frames --------------------------------------------------- */

static void expect_closed_and_other_served(fixture *f, const uint8_t *garbage, size_t len,
                                           const char *log_reason)
{
    int other = rmq_tc_connect(f->port);
    int bad = rmq_tc_connect(f->port);
    assert_true(other >= 0 && bad >= 0);
    /* The bystander is connected and served before and after. */
    rmq_cmd *req = echo_req(1, "before");
    rmq_cmd *resp = rmq_tc_call(other, req, RECV_MS);
    assert_non_null(resp);
    rmq_cmd_free(resp);
    assert_int_equal(rmq_tc_send_raw(bad, garbage, len), 0);
    assert_true(rmq_tc_wait_closed(bad, RECV_MS));
    resp = rmq_tc_call(other, req, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 0);
    rmq_cmd_free(resp);
    rmq_cmd_free(req);
    close(bad);
    close(other);
    assert_true(rmq_td_log_contains(&f->d, log_reason));
}

static void test_oversized_frame_closes_only_that_connection(void **state)
{
    const uint8_t frame[] = {0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};
    expect_closed_and_other_served(*state, frame, sizeof(frame), "closing connection 127.0.0.1");
}

static void test_header_longer_than_frame_closes_only_that_connection(void **state)
{
    const uint8_t frame[] = {0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x20, 'a', 'b', 'c', 'd'};
    expect_closed_and_other_served(*state, frame, sizeof(frame), "closing connection");
}

static void test_unknown_serialize_type_closes_only_that_connection(void **state)
{
    const uint8_t frame[] = {0x00, 0x00, 0x00, 0x06, 0x05, 0x00, 0x00, 0x02, '{', '}'};
    expect_closed_and_other_served(*state, frame, sizeof(frame), "closing connection");
}

static void test_undecodable_json_header_closes_only_that_connection(void **state)
{
    const char *hdr = "{\"code\":105,garbage";
    uint8_t frame[64];
    uint32_t hl = (uint32_t)strlen(hdr);
    uint32_t len = 4 + hl;
    frame[0] = (uint8_t)(len >> 24);
    frame[1] = (uint8_t)(len >> 16);
    frame[2] = (uint8_t)(len >> 8);
    frame[3] = (uint8_t)len;
    frame[4] = 0;
    frame[5] = (uint8_t)(hl >> 16);
    frame[6] = (uint8_t)(hl >> 8);
    frame[7] = (uint8_t)hl;
    memcpy(frame + 8, hdr, hl);
    expect_closed_and_other_served(*state, frame, 8 + hl, "undecodable header");
}

static void test_large_frame_with_undecodable_header_closes_only_that_connection(void **state)
{
    const char *hdr = "{\"code\":105,garbage";
    uint32_t hl = (uint32_t)strlen(hdr);
    size_t body = 300000;
    size_t total = 8 + hl + body;
    uint8_t *frame = calloc(1, total);
    assert_non_null(frame);
    uint32_t len = (uint32_t)(total - 4);
    frame[0] = (uint8_t)(len >> 24);
    frame[1] = (uint8_t)(len >> 16);
    frame[2] = (uint8_t)(len >> 8);
    frame[3] = (uint8_t)len;
    frame[5] = (uint8_t)(hl >> 16);
    frame[6] = (uint8_t)(hl >> 8);
    frame[7] = (uint8_t)hl;
    memcpy(frame + 8, hdr, hl);
    expect_closed_and_other_served(*state, frame, total, "undecodable header");
    free(frame);
}

static void test_tls_client_hello_closes_only_that_connection(void **state)
{
    const uint8_t hello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03};
    expect_closed_and_other_served(*state, hello, sizeof(hello), "closing connection");
}

/* ---- connections --------------------------------------------------------- */

static void test_thousand_simultaneous_connections_are_served(void **state)
{
    fixture *f = *state;
    enum { N = 1000 };
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < N + 64 && rl.rlim_max >= N + 64) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < N + 64)
        skip();
    int *fds = calloc(N, sizeof(int));
    assert_non_null(fds);
    for (int i = 0; i < N; i++) {
        fds[i] = rmq_tc_connect(f->port);
        assert_true(fds[i] >= 0);
    }
    for (int i = 0; i < N; i++) {
        rmq_cmd *req = echo_req(i, "many");
        assert_int_equal(rmq_tc_send(fds[i], req), 0);
        rmq_cmd_free(req);
    }
    for (int i = 0; i < N; i++) {
        rmq_cmd *resp = rmq_tc_recv(fds[i], RECV_MS);
        assert_non_null(resp);
        assert_int_equal(resp->opaque, i);
        rmq_cmd_free(resp);
        close(fds[i]);
    }
    free(fds);
}

/* ---- outgoing calls ------------------------------------------------------- */

static int listen_silent(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0)
        return -1;
    socklen_t len = sizeof(a);
    getsockname(fd, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    return fd;
}

/* A peer the daemon can dial: listening on loopback, its "127.0.0.1:port"
 * in addr. */
static int listen_peer(char *addr, size_t cap)
{
    int port;
    int lfd = listen_silent(&port);
    assert_true(lfd >= 0);
    snprintf(addr, cap, "127.0.0.1:%d", port);
    return lfd;
}

static int accept_new(int lfd, int timeout_ms)
{
    struct pollfd pfd = {.fd = lfd, .events = POLLIN};
    if (poll(&pfd, 1, timeout_ms) != 1)
        return -1;
    return accept(lfd, NULL, NULL);
}

/* The connection the daemon dialled to the peer listening on lfd, and the
 * request it sent first (the test plugin's calls send 105) in *asked. */
static int accept_asked(int lfd, rmq_cmd **asked)
{
    int peer = accept_new(lfd, RECV_MS);
    assert_true(peer >= 0);
    *asked = rmq_tc_recv(peer, RECV_MS);
    assert_non_null(*asked);
    assert_int_equal((*asked)->code, 105);
    return peer;
}

/* A request the peer sends on the daemon's connection reaches the client
 * processor, which is given the address the connection was dialled for. */
static void assert_processor_sees_addr(int peer, int opaque, const char *addr)
{
    rmq_cmd *back = rmq_tc_request(7020, opaque, NULL);
    rmq_cmd *answer = rmq_tc_call_response(peer, back, RECV_MS);
    assert_non_null(answer);
    assert_int_equal(answer->code, 0);
    assert_string_equal(rmq_cmd_ext_get(answer, "addr"), addr);
    rmq_cmd_free(answer);
    rmq_cmd_free(back);
}

static void test_invoke_sync_to_silent_peer_times_out(void **state)
{
    fixture *f = *state;
    int peer_port;
    int lfd = listen_silent(&peer_port);
    assert_true(lfd >= 0);
    char addr[64];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", peer_port);
    const char *kv[] = {"addr", addr, "timeout_ms", "300", NULL};
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *req = rmq_tc_request(7005, 100, kv);
    rmq_cmd *resp = rmq_tc_call(fd, req, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 0);
    assert_string_equal(rmq_cmd_ext_get(resp, "err"), "-110"); /* RMQ_ETIMEDOUT */
    rmq_cmd_free(req);
    rmq_cmd_free(resp);
    close(fd);
    close(lfd);
}

static void test_invoke_sync_to_closed_port_fails_cleanly(void **state)
{
    fixture *f = *state;
    int peer_port;
    int lfd = listen_silent(&peer_port);
    close(lfd); /* nobody listens there any more */
    char addr[64];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", peer_port);
    const char *kv[] = {"addr", addr, "timeout_ms", "2000", NULL};
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *req = rmq_tc_request(7005, 101, kv);
    rmq_cmd *resp = rmq_tc_call(fd, req, RECV_MS);
    assert_non_null(resp);
    assert_string_equal(rmq_cmd_ext_get(resp, "err"), "-111"); /* RMQ_ECONNREFUSED */
    rmq_cmd_free(req);
    rmq_cmd_free(resp);
    close(fd);
}

static void test_invoke_sync_gets_the_peers_answer(void **state)
{
    fixture *f = *state;
    /* The daemon calls itself: code 105 is unknown to hosttest → code 3. */
    char addr[64];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", f->port);
    const char *kv[] = {"addr", addr, "timeout_ms", "3000", NULL};
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *req = rmq_tc_request(7005, 102, kv);
    rmq_cmd *resp = rmq_tc_call(fd, req, RECV_MS);
    assert_non_null(resp);
    assert_string_equal(rmq_cmd_ext_get(resp, "err"), "0");
    assert_string_equal(rmq_cmd_ext_get(resp, "answerCode"), "3");
    rmq_cmd_free(req);
    rmq_cmd_free(resp);
    close(fd);
}

/* ABI 1.12: a peer's requests on the connection the daemon dialled reach
 * the plugin's client processor (answered, or not for oneway); a code no
 * plugin registered is answered code 3 as before. The test is the peer: it
 * listens, has the daemon call it (7005), and sends requests back on the
 * accepted connection before it answers the call. */
static void test_requests_on_outgoing_connections_reach_the_client_processor(void **state)
{
    fixture *f = *state;
    char addr[64];
    int lfd = listen_peer(addr, sizeof addr);
    const char *kv[] = {"addr", addr, "timeout_ms", "10000", NULL};
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *call = rmq_tc_request(7005, 103, kv);
    assert_int_equal(rmq_tc_send(fd, call), 0);
    rmq_cmd *asked;
    int peer = accept_asked(lfd, &asked);

    rmq_cmd *oneway = rmq_tc_request(7020, 901, NULL);
    oneway->flag |= RMQ_FLAG_ONEWAY;
    assert_int_equal(rmq_tc_send(peer, oneway), 0);
    rmq_cmd *back = rmq_tc_request(7020, 902, NULL);
    rmq_cmd *answer = rmq_tc_call_response(peer, back, RECV_MS);
    assert_non_null(answer);
    assert_int_equal(answer->code, 0);
    assert_string_equal(rmq_cmd_ext_get(answer, "addr"), addr);
    assert_string_equal(rmq_cmd_ext_get(answer, "seen"), "2"); /* the oneway one came first */
    rmq_cmd *unknown = rmq_tc_request(7021, 903, NULL);
    rmq_cmd *code3 = rmq_tc_call_response(peer, unknown, RECV_MS);
    assert_non_null(code3);
    assert_int_equal(code3->code, 3);

    /* the daemon's own call still completes on the same connection */
    rmq_cmd *reply = rmq_cmd_new_response(asked, 0, NULL);
    assert_int_equal(rmq_tc_send(peer, reply), 0);
    rmq_cmd *done = rmq_tc_recv(fd, RECV_MS);
    assert_non_null(done);
    assert_string_equal(rmq_cmd_ext_get(done, "err"), "0");
    assert_string_equal(rmq_cmd_ext_get(done, "answerCode"), "0");
    rmq_cmd_free(done);
    rmq_cmd_free(reply);
    rmq_cmd_free(code3);
    rmq_cmd_free(unknown);
    rmq_cmd_free(answer);
    rmq_cmd_free(back);
    rmq_cmd_free(oneway);
    rmq_cmd_free(asked);
    rmq_cmd_free(call);
    close(peer);
    close(fd);
    close(lfd);
}

/* ABI 1.14: "ip:port#tag" dials a connection of its own per tag (the
 * untagged address another one), a later call with the same tag reuses
 * it, the request carries the language / version the plugin set, and the
 * client processor is given the tagged address for requests on it. */
static bool call_tagged(int fd, const char *addr, const char *lang, const char *ver)
{
    const char *kv[] = {"addr", addr,      "timeout_ms", "10000", "language",
                        lang,   "version", ver,          NULL};
    rmq_cmd *call = rmq_tc_request(7005, 104, kv);
    int rc = rmq_tc_send(fd, call);
    rmq_cmd_free(call);
    return rc == 0;
}

/* Answer the daemon's request on `peer` and read its 7005 answer on fd. */
static void answer_and_check(int fd, int peer, rmq_cmd *asked)
{
    rmq_cmd *reply = rmq_cmd_new_response(asked, 0, NULL);
    assert_int_equal(rmq_tc_send(peer, reply), 0);
    rmq_cmd *done = rmq_tc_recv(fd, RECV_MS);
    assert_non_null(done);
    assert_string_equal(rmq_cmd_ext_get(done, "err"), "0");
    rmq_cmd_free(done);
    rmq_cmd_free(reply);
}

static void test_tagged_addresses_have_their_own_connections(void **state)
{
    fixture *f = *state;
    char plain[64], tag_a[80], tag_b[80];
    int lfd = listen_peer(plain, sizeof plain);
    snprintf(tag_a, sizeof tag_a, "%s#client-a", plain);
    snprintf(tag_b, sizeof tag_b, "%s#client-b", plain);
    int fd = rmq_tc_connect(f->port);

    /* tag a: a new connection; the request carries PYTHON (3) / V5_1_2 (437) */
    assert_true(call_tagged(fd, tag_a, "3", "437"));
    rmq_cmd *asked;
    int pa = accept_asked(lfd, &asked);
    assert_int_equal(asked->language, 3);
    assert_int_equal(asked->version, 437);
    assert_null(rmq_cmd_ext_get(asked, "languageRefused"));
    /* a request on it reaches the client processor with the tagged address */
    assert_processor_sees_addr(pa, 911, tag_a);
    answer_and_check(fd, pa, asked);
    rmq_cmd_free(asked);

    /* tag b and the untagged address: one new connection each */
    const char *others[] = {tag_b, plain};
    for (int i = 0; i < 2; i++) {
        assert_true(call_tagged(fd, others[i], "0", "409"));
        rmq_cmd *q;
        int p = accept_asked(lfd, &q);
        assert_int_equal(q->language, 0);
        answer_and_check(fd, p, q);
        rmq_cmd_free(q);
        close(p);
    }

    /* tag a again: its connection, no new one */
    assert_true(call_tagged(fd, tag_a, "3", "437"));
    rmq_cmd *again = rmq_tc_recv(pa, RECV_MS);
    assert_non_null(again);
    assert_int_equal(accept_new(lfd, 200), -1);
    answer_and_check(fd, pa, again);
    rmq_cmd_free(again);

    /* an empty tag, or a language outside a byte, is refused */
    char empty[80];
    snprintf(empty, sizeof empty, "%s#", plain);
    const char *kv[] = {"addr", empty, "timeout_ms", "1000", NULL};
    rmq_cmd *bad = rmq_tc_request(7005, 105, kv);
    rmq_cmd *resp = rmq_tc_call(fd, bad, RECV_MS);
    assert_non_null(resp);
    assert_string_equal(rmq_cmd_ext_get(resp, "err"), "-22"); /* RMQ_EINVAL */
    rmq_cmd_free(resp);
    rmq_cmd_free(bad);
    assert_true(call_tagged(fd, tag_a, "300", "437"));
    rmq_cmd *refused = rmq_tc_recv(pa, RECV_MS);
    assert_non_null(refused);
    assert_string_equal(rmq_cmd_ext_get(refused, "languageRefused"), "300");
    answer_and_check(fd, pa, refused);
    rmq_cmd_free(refused);
    close(pa);
    close(fd);
    close(lfd);
}

/* ABI 1.15: close_outgoing drains then closes. */
static int call_err(int fd, int code, const char *addr, const char *timeout_ms)
{
    const char *kv[] = {"addr", addr, "timeout_ms", timeout_ms, NULL};
    rmq_cmd *req = rmq_tc_request(code, 120, kv);
    rmq_cmd *resp = rmq_tc_call(fd, req, RECV_MS);
    const char *err = resp ? rmq_cmd_ext_get(resp, "err") : NULL;
    int rc = err ? atoi(err) : -9999;
    rmq_cmd_free(resp);
    rmq_cmd_free(req);
    return rc;
}

/* `rmqhostctl stats`: the daemon's open outgoing connections, or -1. */
static long outgoing_count(fixture *f)
{
    int status = -1;
    const char *out = rmq_td_ctl_output(&f->d, &status, "stats", NULL);
    const char *at = out && status == 0 ? strstr(out, "outgoing connections: ") : NULL;
    return at ? atol(at + strlen("outgoing connections: ")) : -1;
}

/* Closing is asynchronous: look again until the count is `want`. */
static bool outgoing_count_becomes(fixture *f, long want)
{
    for (int i = 0; i < RECV_MS / 50; i++) {
        if (outgoing_count(f) == want)
            return true;
        usleep(50 * 1000);
    }
    return false;
}

/* The daemon's side of the connection is closed: an orderly EOF. */
static bool peer_sees_eof(int peer)
{
    struct pollfd pfd = {.fd = peer, .events = POLLIN};
    char b;
    return poll(&pfd, 1, RECV_MS) == 1 && recv(peer, &b, 1, 0) == 0;
}

/* The plugin's log of async callbacks ("err/answerCode;" each), once it
 * contains `want`; the text in `out` either way. */
static bool async_log_has(int fd, const char *want, char *out, size_t cap)
{
    for (int i = 0; i < RECV_MS / 50; i++) {
        rmq_cmd *req = rmq_tc_request(7023, 121, NULL);
        rmq_cmd *resp = rmq_tc_call(fd, req, RECV_MS);
        const char *log = resp ? rmq_cmd_ext_get(resp, "log") : NULL;
        snprintf(out, cap, "%s", log ? log : "");
        rmq_cmd_free(resp);
        rmq_cmd_free(req);
        if (strstr(out, want))
            return true;
        usleep(50 * 1000);
    }
    return false;
}

static void test_close_outgoing_drains_then_closes(void **state)
{
    fixture *f = *state;
    char plain[64], tag[80], bad[80], never[80], log[512];
    int lfd = listen_peer(plain, sizeof plain);
    snprintf(tag, sizeof tag, "%s#gone-client", plain);
    snprintf(bad, sizeof bad, "%s#", plain);
    snprintf(never, sizeof never, "%s#never-dialled", plain);
    int fd = rmq_tc_connect(f->port);
    long base = outgoing_count(f);
    assert_true(base >= 0);

    /* a call in flight on the tagged connection */
    assert_int_equal(call_err(fd, 7022, tag, "10000"), 0);
    rmq_cmd *asked;
    int pa = accept_asked(lfd, &asked);
    assert_true(outgoing_count_becomes(f, base + 1));

    /* close it; a request sent after the close dials a new connection (the
     * close ran before it on the address's loop) */
    assert_int_equal(call_err(fd, 7021, tag, "0"), 0);
    assert_int_equal(call_err(fd, 7022, tag, "1500"), 0);
    rmq_cmd *asked_b;
    int pb = accept_asked(lfd, &asked_b);
    assert_true(outgoing_count_becomes(f, base + 2));
    /* the draining connection still carries its call's traffic */
    assert_processor_sees_addr(pa, 912, tag);

    /* its answer reaches the callback; then the connection closes */
    rmq_cmd *reply = rmq_cmd_new_response(asked, 0, NULL);
    assert_int_equal(rmq_tc_send(pa, reply), 0);
    rmq_cmd_free(reply);
    assert_true(async_log_has(fd, "0/0;", log, sizeof log));
    assert_true(peer_sees_eof(pa));
    assert_true(outgoing_count_becomes(f, base + 1));

    /* closing the new one while its call is never answered: the callback
     * gets the timeout, then the connection closes */
    assert_int_equal(call_err(fd, 7021, tag, "0"), 0);
    assert_true(async_log_has(fd, "-110/-1;", log, sizeof log));
    assert_true(peer_sees_eof(pb));
    assert_true(outgoing_count_becomes(f, base));
    /* each callback ran exactly once */
    assert_true(strcmp(log, "0/0;-110/-1;") == 0 || strcmp(log, "-110/-1;0/0;") == 0);

    /* nothing to close is fine; an address invoke_*_addr refuses is not */
    assert_int_equal(call_err(fd, 7021, never, "0"), 0);
    assert_int_equal(call_err(fd, 7021, bad, "0"), -22); /* RMQ_EINVAL */

    /* and the tag dials again */
    assert_int_equal(call_err(fd, 7022, tag, "10000"), 0);
    rmq_cmd *asked_c;
    int pc = accept_asked(lfd, &asked_c);
    reply = rmq_cmd_new_response(asked_c, 0, NULL);
    assert_int_equal(rmq_tc_send(pc, reply), 0);
    rmq_cmd_free(reply);
    char want[64];
    snprintf(want, sizeof want, "%s0/0;", log);
    assert_true(async_log_has(fd, want, log, sizeof log));
    assert_true(outgoing_count_becomes(f, base + 1));
    rmq_cmd_free(asked_c);
    rmq_cmd_free(asked_b);
    rmq_cmd_free(asked);
    close(pc);
    close(pb);
    close(pa);
    close(fd);
    close(lfd);
}

/* ---- idle ----------------------------------------------------------------- */

static bool events_show(fixture *f, const char *first, const char *then)
{
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *req = rmq_tc_request(7006, 1, NULL);
    rmq_cmd *resp = rmq_tc_call(fd, req, RECV_MS);
    bool ok = false;
    if (resp && resp->body) {
        char *text = strndup((const char *)resp->body, resp->body_len);
        char *a = strstr(text, first);
        ok = a && strstr(a + strlen(first), then);
        free(text);
    }
    rmq_cmd_free(req);
    rmq_cmd_free(resp);
    close(fd);
    return ok;
}

static void test_idle_connection_is_closed_with_idle_then_close_events(void **state)
{
    (void)state;
    fixture f;
    memset(&f, 0, sizeof(f));
    if (rmq_td_init(&f.d, NULL, "") != 0)
        fail();
    rmq_td_write_conf(&f.d, "host.conf", "");
    char host[1024];
    snprintf(host, sizeof(host),
             "state_dir = \"%s\";\nadmin_socket = \"%s\";\nlog_level = \"debug\";\n"
             "io_threads = 2;\nservers = { main = { listen = \"127.0.0.1:0\"; "
             "channel_max_idle_seconds = 1; }; };\n",
             f.d.state_dir, f.d.admin_socket);
    rmq_td_write_conf(&f.d, "host.conf", host);
    rmq_td_add_plugin(&f.d, "hosttest", "hosttest", "main", NULL);
    assert_int_equal(rmq_td_start(&f.d, NULL), 0);
    f.port = rmq_td_port(&f.d, "main");
    int fd = rmq_tc_connect(f.port);
    struct sockaddr_in me;
    socklen_t len = sizeof(me);
    getsockname(fd, (struct sockaddr *)&me, &len);
    char idle[64], closed[64];
    snprintf(idle, sizeof(idle), "IDLE 127.0.0.1:%d\n", ntohs(me.sin_port));
    snprintf(closed, sizeof(closed), "CLOSE 127.0.0.1:%d\n", ntohs(me.sin_port));
    assert_true(rmq_tc_wait_closed(fd, 5000));
    close(fd);
    bool seen = false;
    for (int i = 0; i < 100 && !seen; i++) {
        seen = events_show(&f, idle, closed);
        if (!seen)
            usleep(20000);
    }
    assert_true(seen);
    assert_int_equal(rmq_td_stop(&f.d), 0);
    rmq_td_cleanup(&f.d);
}

/* ---- back-pressure ---------------------------------------------------------- */

static long rss_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *fp = fopen(path, "r");
    long kb = -1;
    while (fp && fgets(line, sizeof(line), fp))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (fp)
        fclose(fp);
    return kb;
}

static void test_client_that_never_reads_cannot_grow_daemon_memory(void **state)
{
    (void)state;
    fixture f;
    memset(&f, 0, sizeof(f));
    assert_int_equal(
        start_daemon(&f, "write_high_water = 1048576;\nwrite_low_water = 262144;", NULL), 0);
    int fd = rmq_tc_connect(f.port);
    int rcv = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
    long before = rss_kb(f.d.pid);
    /* Ask for 256 MiB of answers and never read them. */
    const char *kv[] = {"size", "262144", NULL};
    rmq_cmd *req = rmq_tc_request(7007, 1, kv);
    uint8_t frame[256];
    size_t n = rmq_cmd_encode(req, frame, sizeof(frame));
    rmq_cmd_free(req);
    int sent = 0;
    for (int i = 0; i < 1024; i++) {
        struct pollfd p = {fd, POLLOUT, 0};
        if (poll(&p, 1, 200) <= 0)
            break; /* the daemon stopped reading: our send buffer is full */
        if (send(fd, frame, n, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)n)
            break;
        sent++;
    }
    (void)sent;
    /* Without back-pressure the daemon would build 256 MiB of answers; it
     * holds about the high-water mark plus one answer. Sample a while. */
    long after = 0;
    for (int i = 0; i < 10; i++) {
        long r = rss_kb(f.d.pid);
        if (r > after)
            after = r;
        usleep(50000);
    }
    assert_true(after - before < 64 * 1024);
    /* Others are still served. */
    int other = rmq_tc_connect(f.port);
    rmq_cmd *e = echo_req(5, "alive");
    rmq_cmd *resp = rmq_tc_call(other, e, RECV_MS);
    assert_non_null(resp);
    rmq_cmd_free(resp);
    rmq_cmd_free(e);
    close(other);
    close(fd);
    assert_int_equal(rmq_td_stop(&f.d), 0);
    rmq_td_cleanup(&f.d);
}

/* ---- shutdown ----------------------------------------------------------------- */

static void test_sigterm_under_load_answers_accepted_requests_and_exits_0(void **state)
{
    (void)state;
    fixture f;
    memset(&f, 0, sizeof(f));
    assert_int_equal(start_daemon(&f, NULL, NULL), 0);
    int fd = rmq_tc_connect(f.port);
    enum { N = 20 };
    uint8_t buf[N * 200];
    size_t n = 0;
    const char *kv[] = {"sleep_ms", "150", NULL};
    for (int i = 0; i < N; i++) {
        rmq_cmd *req = rmq_tc_request(7008, 500 + i, kv);
        n += rmq_cmd_encode(req, buf + n, sizeof(buf) - n);
        rmq_cmd_free(req);
    }
    assert_int_equal(rmq_tc_send_raw(fd, buf, n), 0);
    /* The first answer proves the batch was read; then stop the daemon. */
    rmq_cmd *first = rmq_tc_recv(fd, RECV_MS);
    assert_non_null(first);
    rmq_cmd_free(first);
    kill(f.d.pid, SIGTERM);
    int answered = 1;
    for (int i = 1; i < N; i++) {
        rmq_cmd *resp = rmq_tc_recv(fd, RECV_MS);
        if (!resp)
            break;
        assert_int_equal(resp->code, 0);
        answered++;
        rmq_cmd_free(resp);
    }
    assert_int_equal(answered, N);
    assert_int_equal(rmq_td_stop(&f.d), 0);
    close(fd);
    rmq_td_cleanup(&f.d);
}

static void test_restart_on_same_port_at_once(void **state)
{
    (void)state;
    fixture f;
    memset(&f, 0, sizeof(f));
    assert_int_equal(start_daemon(&f, NULL, NULL), 0);
    int fd = rmq_tc_connect(f.port); /* leaves a TIME_WAIT behind */
    rmq_cmd *e = echo_req(1, "x");
    rmq_cmd *resp = rmq_tc_call(fd, e, RECV_MS);
    rmq_cmd_free(resp);
    close(fd);
    int port = f.port;
    assert_int_equal(rmq_td_stop(&f.d), 0);
    char listen[64];
    snprintf(listen, sizeof(listen), "servers.main.listen=127.0.0.1:%d", port);
    const char *args[] = {"-o", listen, NULL};
    assert_int_equal(rmq_td_start(&f.d, args), 0);
    assert_int_equal(rmq_td_port(&f.d, "main"), port);
    fd = rmq_tc_connect(port);
    resp = rmq_tc_call(fd, e, RECV_MS);
    assert_non_null(resp);
    rmq_cmd_free(resp);
    rmq_cmd_free(e);
    close(fd);
    rmq_td_cleanup(&f.d);
}

static void test_second_daemon_on_same_state_dir_is_refused(void **state)
{
    fixture *f = *state;
    char other[1100];
    snprintf(other, sizeof(other), "%s/../conf2", f->d.conf_dir);
    /* Same conf dir, other port: the state_dir lock must refuse it. */
    const char *argv[] = {
        RMQ_TEST_DAEMON, "-c", f->d.conf_dir, "-o", "servers.main.listen=127.0.0.1:0", NULL};
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        if (rmq_child_die_with_parent(parent) != 0)
            _exit(126);
        int devnull = open("/dev/null", 1);
        dup2(devnull, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 1);
}

/* ---- descriptor exhaustion ------------------------------------------------------ */

static void test_out_of_descriptors_pauses_accepting_and_recovers(void **state)
{
    (void)state;
    fixture f;
    memset(&f, 0, sizeof(f));
    assert_int_equal(start_daemon(&f, NULL, NULL), 0);
    int keep = rmq_tc_connect(f.port);
    rmq_cmd *e = echo_req(1, "before");
    rmq_cmd *resp = rmq_tc_call(keep, e, RECV_MS);
    assert_non_null(resp);
    rmq_cmd_free(resp);
    /* Leave the daemon a handful of descriptors above what it uses now. */
    char fdpath[64];
    snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd", (int)f.d.pid);
    int used = 0;
    DIR *dir = opendir(fdpath);
    assert_non_null(dir);
    while (readdir(dir))
        used++;
    closedir(dir);
    struct rlimit old;
    assert_int_equal(prlimit(f.d.pid, RLIMIT_NOFILE, NULL, &old), 0);
    struct rlimit lim = {(rlim_t)used + 4, old.rlim_max};
    if (prlimit(f.d.pid, RLIMIT_NOFILE, &lim, NULL) != 0)
        skip();
    int fds[32];
    for (int i = 0; i < 32; i++)
        fds[i] = rmq_tc_connect(f.port); /* the kernel accepts them into the backlog */
    /* The daemon ran out, says so, and still serves the connection it has. */
    bool logged = false;
    for (int i = 0; i < 200 && !logged; i++) {
        logged = rmq_td_log_contains(&f.d, "not accepting for 1 s");
        if (!logged)
            usleep(10000);
    }
    assert_true(logged);
    resp = rmq_tc_call(keep, e, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 0);
    rmq_cmd_free(resp);
    /* Descriptors back: new connections are served again. */
    for (int i = 0; i < 32; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    assert_int_equal(prlimit(f.d.pid, RLIMIT_NOFILE, &old, NULL), 0);
    int again = rmq_tc_connect(f.port);
    resp = rmq_tc_call(again, e, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 0);
    rmq_cmd_free(resp);
    rmq_cmd_free(e);
    close(again);
    close(keep);
    assert_int_equal(rmq_td_stop(&f.d), 0);
    rmq_td_cleanup(&f.d);
}

/* ---- IPv6 listen ------------------------------------------------------------------ */

static void test_ipv6_listen_address_is_served(void **state)
{
    (void)state;
    int probe = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in6 a6;
    memset(&a6, 0, sizeof(a6));
    a6.sin6_family = AF_INET6;
    a6.sin6_addr = in6addr_loopback;
    bool have_v6 = probe >= 0 && bind(probe, (struct sockaddr *)&a6, sizeof(a6)) == 0;
    if (probe >= 0)
        close(probe);
    if (!have_v6)
        skip();
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    rmq_td_add_plugin(&d, "hosttest", "hosttest", "main", NULL);
    const char *args[] = {"-o", "servers.main.listen=[::1]:0", NULL};
    assert_int_equal(rmq_td_start(&d, args), 0);
    int port = rmq_td_port(&d, "main");
    assert_true(port > 0);
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    a6.sin6_port = htons((uint16_t)port);
    assert_int_equal(connect(fd, (struct sockaddr *)&a6, sizeof(a6)), 0);
    rmq_cmd *e = echo_req(6, "over v6");
    rmq_cmd *resp = rmq_tc_call(fd, e, RECV_MS);
    assert_non_null(resp);
    assert_string_equal(rmq_cmd_ext_get(resp, "echo"), "over v6");
    rmq_cmd_free(resp);
    rmq_cmd_free(e);
    close(fd);
    assert_true(rmq_td_log_contains(&d, "listening on [::1]:"));
    assert_int_equal(rmq_td_stop(&d), 0);
    rmq_td_cleanup(&d);
}

/* ---- VIP listener -------------------------------------------------------- */

/* A second address per server (Java's VIP port): every code is served
 * there except those registered RMQ_PROC_NOT_ON_VIP, which get Java's
 * code 3 answer; listen.addrs names it "<server>.vip". */
static void check_vip(rmq_test_daemon *d)
{
    int port = rmq_td_port(d, "main"), vip = rmq_td_port(d, "main.vip");
    assert_true(port > 0);
    assert_true(vip > 0);
    assert_true(vip != port);
    int fm = rmq_tc_connect(port), fv = rmq_tc_connect(vip);
    assert_true(fm >= 0 && fv >= 0);
    for (int round = 0; round < 2; round++) { /* the second round uses the cached answer */
        rmq_cmd *e = echo_req(1, "vip");
        rmq_cmd *r = rmq_tc_call(fv, e, RECV_MS);
        assert_non_null(r);
        assert_string_equal(rmq_cmd_ext_get(r, "echo"), "vip");
        rmq_cmd_free(r);
        rmq_cmd_free(e);
        const char *kv[] = {"msg", "main only", NULL};
        rmq_cmd *q = rmq_tc_request(7011, 2, kv);
        r = rmq_tc_call(fv, q, RECV_MS);
        assert_non_null(r);
        assert_int_equal(r->code, 3);
        assert_string_equal(r->remark, " request type 7011 not supported");
        rmq_cmd_free(r);
        r = rmq_tc_call(fm, q, RECV_MS);
        assert_non_null(r);
        assert_int_equal(r->code, 0);
        assert_string_equal(rmq_cmd_ext_get(r, "echo"), "main only");
        rmq_cmd_free(r);
        rmq_cmd_free(q);
    }
    close(fm);
    close(fv);
    assert_true(rmq_td_log_contains(d, "(VIP)"));
}

static void test_vip_listen_serves_all_but_main_only_codes(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    /* host.conf as written by rmq_td_init, with vip_listen added */
    char path[512];
    snprintf(path, sizeof(path), "%s/host.conf", d.conf_dir);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    static char text[8192];
    size_t n = fread(text, 1, sizeof(text) - 1, fp);
    fclose(fp);
    text[n] = '\0';
    char *at = strstr(text, "listen = \"127.0.0.1:0\";");
    assert_non_null(at);
    static char out[8400];
    snprintf(out, sizeof(out), "%.*svip_listen = \"127.0.0.1:0\"; %s", (int)(at - text), text, at);
    assert_int_equal(rmq_td_write_conf(&d, "host.conf", out), 0);
    rmq_td_add_plugin(&d, "hosttest", "hosttest", "main", NULL);
    assert_int_equal(rmq_td_start(&d, NULL), 0);
    check_vip(&d);
    assert_int_equal(rmq_td_stop(&d), 0);
    rmq_td_cleanup(&d);
}

static void test_vip_listen_override_on_the_command_line(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    rmq_td_add_plugin(&d, "hosttest", "hosttest", "main", NULL);
    const char *args[] = {"-o", "servers.main.vip_listen=127.0.0.1:0", NULL};
    assert_int_equal(rmq_td_start(&d, args), 0);
    check_vip(&d);
    assert_int_equal(rmq_td_stop(&d), 0);
    rmq_td_cleanup(&d);
}

static void test_vip_listen_bad_address_is_refused_naming_it(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    rmq_td_add_plugin(&d, "hosttest", "hosttest", "main", NULL);
    const char *args[] = {"-o", "servers.main.vip_listen=nowhere", NULL};
    assert_int_not_equal(rmq_td_start(&d, args), 0);
    assert_true(rmq_td_log_contains(&d, "bad vip_listen address 'nowhere'"));
    rmq_td_cleanup(&d);
}

/* Without vip_listen nothing is on the VIP list and main-only codes work. */
static void test_fallback_binding_serves_when_alone(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *q = rmq_tc_request(7012, 3, NULL);
    rmq_cmd *r = rmq_tc_call(fd, q, RECV_MS);
    assert_non_null(r);
    assert_string_equal(r->remark, "fallback");
    rmq_cmd_free(r);
    rmq_cmd_free(q);
    assert_int_equal(rmq_td_port(&f->d, "main.vip"), -1);
    close(fd);
}

/* ---- private plugin copies ---------------------------------------------------------- */

static int count_plugin_copies(const rmq_test_daemon *d)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/.plugins", d->state_dir);
    DIR *dp = opendir(dir);
    if (!dp)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)))
        n += strstr(e->d_name, ".so") != NULL;
    closedir(dp);
    return n;
}

static void test_plugin_copy_lives_while_loaded_and_is_removed_at_stop(void **state)
{
    (void)state;
    fixture f;
    memset(&f, 0, sizeof(f));
    assert_int_equal(start_daemon(&f, NULL, NULL), 0);
    /* on disk while loaded, so perf and gdb can read the plugin's symbols */
    assert_int_equal(count_plugin_copies(&f.d), 1);
    assert_int_equal(rmq_td_stop(&f.d), 0);
    assert_int_equal(count_plugin_copies(&f.d), 0);
    /* a copy left by a daemon that was killed is removed at the next start */
    assert_int_equal(rmq_td_start(&f.d, NULL), 0);
    kill(f.d.pid, SIGKILL);
    waitpid(f.d.pid, NULL, 0);
    f.d.pid = -1;
    assert_int_equal(count_plugin_copies(&f.d), 1);
    assert_int_equal(rmq_td_start(&f.d, NULL), 0);
    assert_int_equal(count_plugin_copies(&f.d), 1);
    assert_true(rmq_td_log_contains(&f.d, "removed stale plugin copy"));
    assert_int_equal(rmq_td_stop(&f.d), 0);
    rmq_td_cleanup(&f.d);
}

/* ---- configuration ------------------------------------------------------------- */

/* Run rmqhostd with args; capture stderr+stdout; return the exit status. */
static int run_daemon_capture(const char *const *args, char *out, size_t cap)
{
    char cmd[4096];
    size_t n = (size_t)snprintf(cmd, sizeof(cmd), "%s", RMQ_TEST_DAEMON);
    for (size_t i = 0; args[i]; i++)
        n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " '%s'", args[i]);
    snprintf(cmd + n, sizeof(cmd) - n, " 2>&1");
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t got = fread(out, 1, cap - 1, p);
    out[got] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_check_reports_syntax_error_as_file_line(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    rmq_td_add_plugin(&d, "hosttest", "hosttest", "main", NULL);
    assert_int_equal(rmq_td_write_conf(&d, "60-broken.conf", "plugin = {\n  name = \"x\"\n"), 0);
    char out[4096];
    const char *args[] = {"-c", d.conf_dir, "--check", NULL};
    assert_int_equal(run_daemon_capture(args, out, sizeof(out)), 2);
    assert_non_null(strstr(out, "60-broken.conf:"));
    rmq_td_cleanup(&d);
}

static void test_check_accepts_a_valid_configuration(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    rmq_td_add_plugin(&d, "hosttest", "hosttest", "main", NULL);
    char out[4096];
    const char *args[] = {"-c", d.conf_dir, "--check", NULL};
    assert_int_equal(run_daemon_capture(args, out, sizeof(out)), 0);
    assert_non_null(strstr(out, "is valid"));
    rmq_td_cleanup(&d);
}

static void test_unknown_override_key_is_an_error_naming_the_key(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    rmq_td_add_plugin(&d, "hosttest", "hosttest", "main", NULL);
    char out[4096];
    const char *args[] = {"-c", d.conf_dir, "-o", "servers.main.colour=blue", "--check", NULL};
    assert_int_equal(run_daemon_capture(args, out, sizeof(out)), 2);
    assert_non_null(strstr(out, "servers.main.colour"));
    const char *args2[] = {"-c",      d.conf_dir, "-o", "plugins.hosttest.settings.nope=1",
                           "--check", NULL};
    assert_int_equal(run_daemon_capture(args2, out, sizeof(out)), 2);
    assert_non_null(strstr(out, "has no setting 'nope'"));
    const char *args3[] = {"-c", d.conf_dir, "-o", "io_threads=many", "--check", NULL};
    assert_int_equal(run_daemon_capture(args3, out, sizeof(out)), 2);
    assert_non_null(strstr(out, "io_threads"));
    rmq_td_cleanup(&d);
}

/* protocol = "remoting" | "grpc", in host.conf and as -o */
static void test_server_protocol_is_checked(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, (const char *[]){"main@protocol = \"http\";", NULL}, NULL), 0);
    char out[4096];
    const char *args[] = {"-c", d.conf_dir, "--check", NULL};
    assert_int_equal(run_daemon_capture(args, out, sizeof(out)), 2);
    assert_non_null(strstr(out, "server 'main': protocol must be \"remoting\" or \"grpc\""));
    rmq_td_cleanup(&d);

    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    const char *args2[] = {"-c", d.conf_dir, "-o", "servers.main.protocol=http2", "--check", NULL};
    assert_int_equal(run_daemon_capture(args2, out, sizeof(out)), 2);
    assert_non_null(strstr(out, "-o servers.main.protocol: 'http2' is not remoting or grpc"));
    const char *args3[] = {"-c", d.conf_dir, "-o", "servers.main.protocol=grpc", "--check", NULL};
    assert_int_equal(run_daemon_capture(args3, out, sizeof(out)), 0);
    rmq_td_cleanup(&d);
}

static void test_missing_plugin_is_refused_unless_optional(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    rmq_td_add_plugin(&d, "hosttest", "hosttest", "main", NULL);
    rmq_td_write_conf(&d, "70-ghost.conf",
                      "plugin = { name = \"ghost\"; path = \"/nonexistent/ghost.so\"; "
                      "server = \"main\"; };\n");
    char out[4096];
    const char *args[] = {"-c", d.conf_dir, "--check", NULL};
    assert_int_equal(run_daemon_capture(args, out, sizeof(out)), 2);
    assert_non_null(strstr(out, "ghost"));
    /* Optional: the daemon starts and serves without it. */
    rmq_td_write_conf(&d, "70-ghost.conf",
                      "plugin = { name = \"ghost\"; path = \"/nonexistent/ghost.so\"; "
                      "server = \"main\"; optional = true; };\n");
    assert_int_equal(rmq_td_start(&d, NULL), 0);
    int fd = rmq_tc_connect(rmq_td_port(&d, "main"));
    rmq_cmd *e = echo_req(1, "still here");
    rmq_cmd *resp = rmq_tc_call(fd, e, RECV_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 0);
    rmq_cmd_free(resp);
    rmq_cmd_free(e);
    close(fd);
    assert_true(rmq_td_log_contains(&d, "continuing without it (optional)"));
    assert_int_equal(rmq_td_stop(&d), 0);
    rmq_td_cleanup(&d);
}

static void test_version_and_list_settings(void **state)
{
    (void)state;
    char out[8192];
    const char *v[] = {"--version", NULL};
    assert_int_equal(run_daemon_capture(v, out, sizeof(out)), 0);
    assert_non_null(strstr(out, "rmqhostd "));
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    char conf[1024];
    snprintf(conf, sizeof(conf),
             "plugin = { name = \"echo\"; path = \"%s/echo.so\"; server = \"main\"; };\n",
             RMQ_TEST_PLUGIN_DIR);
    rmq_td_write_conf(&d, "50-echo.conf", conf);
    const char *l[] = {"-c", d.conf_dir, "--list-settings", NULL};
    assert_int_equal(run_daemon_capture(l, out, sizeof(out)), 0);
    assert_non_null(strstr(out, "greeting"));
    assert_non_null(strstr(out, "delay_ms"));
    rmq_td_cleanup(&d);
}

#define T(fn) cmocka_unit_test(fn)

/* Keep the tests whose name matches one of the ':'-separated globs. */
static size_t select_tests(const struct CMUnitTest *all, size_t n, const char *filter,
                           struct CMUnitTest *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (rmq_test_name_selected(filter, all[i].name))
            out[k++] = all[i];
    return k;
}

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : NULL;
    const struct CMUnitTest shared[] = {
        T(test_unknown_code_gets_code_3_with_java_remark),
        T(test_oneway_request_gets_no_response),
        T(test_json_request_gets_json_response),
        T(test_rocketmq_request_gets_rocketmq_response),
        T(test_failing_processor_gets_system_error_with_remark),
        T(test_reject_hook_gets_system_busy_rejectrequest),
        T(test_rpc_hooks_see_and_can_refuse_every_request),
        T(test_full_executor_gets_system_busy_overload),
        T(test_pipelined_requests_in_one_write_are_all_answered),
        T(test_frame_split_byte_by_byte_is_reassembled),
        T(test_pipelined_large_frames_mixed_with_small_ones_are_answered),
        T(test_held_request_bodies_survive_later_reads),
        T(test_held_request_bodies_survive_their_connection_closing),
        T(test_oversized_frame_closes_only_that_connection),
        T(test_header_longer_than_frame_closes_only_that_connection),
        T(test_unknown_serialize_type_closes_only_that_connection),
        T(test_undecodable_json_header_closes_only_that_connection),
        T(test_large_frame_with_undecodable_header_closes_only_that_connection),
        T(test_tls_client_hello_closes_only_that_connection),
        T(test_thousand_simultaneous_connections_are_served),
        T(test_invoke_sync_to_silent_peer_times_out),
        T(test_invoke_sync_to_closed_port_fails_cleanly),
        T(test_invoke_sync_gets_the_peers_answer),
        T(test_requests_on_outgoing_connections_reach_the_client_processor),
        T(test_tagged_addresses_have_their_own_connections),
        T(test_close_outgoing_drains_then_closes),
        T(test_second_daemon_on_same_state_dir_is_refused),
        T(test_fallback_binding_serves_when_alone),
    };
    const struct CMUnitTest own[] = {
        T(test_idle_connection_is_closed_with_idle_then_close_events),
        T(test_client_that_never_reads_cannot_grow_daemon_memory),
        T(test_sigterm_under_load_answers_accepted_requests_and_exits_0),
        T(test_restart_on_same_port_at_once),
        T(test_out_of_descriptors_pauses_accepting_and_recovers),
        T(test_ipv6_listen_address_is_served),
        T(test_vip_listen_serves_all_but_main_only_codes),
        T(test_vip_listen_override_on_the_command_line),
        T(test_vip_listen_bad_address_is_refused_naming_it),
        T(test_plugin_copy_lives_while_loaded_and_is_removed_at_stop),
        T(test_check_reports_syntax_error_as_file_line),
        T(test_check_accepts_a_valid_configuration),
        T(test_unknown_override_key_is_an_error_naming_the_key),
        T(test_missing_plugin_is_refused_unless_optional),
        T(test_server_protocol_is_checked),
        T(test_version_and_list_settings),
    };
    struct CMUnitTest pick[32];
    int failed = 0;
    size_t n = select_tests(shared, sizeof(shared) / sizeof(shared[0]), filter, pick);
    if (n)
        failed += _cmocka_run_group_tests("host_shared_daemon", pick, n, setup_default, teardown);
    n = select_tests(own, sizeof(own) / sizeof(own[0]), filter, pick);
    if (n)
        failed += _cmocka_run_group_tests("host_own_daemon", pick, n, NULL, NULL);
    return failed;
}
