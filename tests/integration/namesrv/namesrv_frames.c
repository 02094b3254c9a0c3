/* namesrv_frames.c — daemon fixture, frame builders and lenient JSON
 * comparison for the NameServer integration tests. Never decides pass/fail
 * beyond fixture set-up. */
#include "namesrv_frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void ns_start(ns_fixture *f, const char *settings_body)
{
    memset(f, 0, sizeof(*f));
    f->fd = -1;
    const char *servers[] = {"namesrv", NULL};
    assert_int_equal(rmq_td_init(&f->d, servers, NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&f->d, "namesrv", "namesrv", "namesrv", settings_body), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    f->port = rmq_td_port(&f->d, "namesrv");
    assert_true(f->port > 0);
    f->fd = rmq_tc_connect(f->port);
    assert_true(f->fd >= 0);
}

void ns_restart(ns_fixture *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->d.pid > 0)
        assert_int_equal(rmq_td_stop(&f->d), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    f->port = rmq_td_port(&f->d, "namesrv");
    assert_true(f->port > 0);
    f->fd = rmq_tc_connect(f->port);
    assert_true(f->fd >= 0);
}

void ns_stop(ns_fixture *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    rmq_td_cleanup(&f->d);
}

int ns_setup(void **state, const char *settings_body)
{
    ns_fixture *f = calloc(1, sizeof(*f));
    ns_start(f, settings_body);
    *state = f;
    return 0;
}

int ns_teardown(void **state)
{
    ns_stop(*state);
    free(*state);
    return 0;
}

static int next_opaque(void)
{
    /* requests are sequential per connection: a clock-derived id is unique
     * enough and needs no shared counter */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int)(((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) & 0x3FFFFFFF);
}

rmq_cmd *ns_request(int code, const char *const *kv, const void *body, size_t len, int version)
{
    rmq_cmd *c = rmq_tc_request(code, next_opaque(), kv);
    assert_non_null(c);
    if (version >= 0)
        c->version = version;
    if (body && len)
        assert_int_equal(rmq_cmd_set_body(c, body, len, NULL, NULL), 0);
    return c;
}

rmq_cmd *ns_call(int fd, rmq_cmd *req)
{
    rmq_cmd *resp = rmq_tc_call(fd, req, NS_WAIT_MS);
    if (!resp)
        fail_msg("no answer to request code %d", req->code);
    assert_int_equal(resp->opaque, req->opaque);
    rmq_cmd_free(req);
    return resp;
}

char *ns_body_json(long long counter, const char *topics)
{
    char *body = rmq_tb_register_body_json(counter, 1700000000000LL, topics);
    assert_non_null(body);
    return body;
}

rmq_cmd *ns_register(int fd, const char *cluster, const char *name, const char *addr, long long id,
                     long long counter, const char *topics)
{
    char *body = ns_body_json(counter, topics);
    rmq_tc_broker b = {.cluster = cluster, .name = name, .addr = addr, .id = id};
    rmq_cmd *req = rmq_tc_register_broker_request(next_opaque(), &b, body, strlen(body));
    assert_non_null(req);
    rmq_cmd *r = ns_call(fd, req);
    free(body);
    return r;
}

int ns_broker_connect(ns_fixture *f, const char *name, const char *addr, const char *topic)
{
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    rmq_cmd *r = ns_register(fd, "C", name, addr, 0, 1, topic);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    return fd;
}

rmq_cmd *ns_route(int fd, const char *topic, int version, bool accept_standard)
{
    const char *kv[] = {"topic", topic, accept_standard ? "acceptStandardJsonOnly" : NULL, "true",
                        NULL};
    return ns_call(fd, ns_request(105, kv, NULL, 0, version));
}

char *ns_body_text(const rmq_cmd *resp)
{
    if (!resp->body || !resp->body_len)
        return NULL;
    char *s = malloc(resp->body_len + 1);
    memcpy(s, resp->body, resp->body_len);
    s[resp->body_len] = '\0';
    return s;
}

/* Quotes fastjson's bare object keys so jansson can read the text. */
static char *quote_bare_keys(const char *in, size_t len)
{
    char *out = malloc(len * 3 + 16);
    char stack[256]; /* '{' or '[' per open container */
    int depth = 0;
    size_t o = 0;
    bool expect_key = false;
    for (size_t i = 0; i < len; i++) {
        char c = in[i];
        if (c == '"') {
            out[o++] = c;
            for (i++; i < len && in[i] != '"'; i++) {
                out[o++] = in[i];
                if (in[i] == '\\' && i + 1 < len)
                    out[o++] = in[++i];
            }
            if (i < len)
                out[o++] = '"';
            expect_key = false;
            continue;
        }
        if (expect_key && c != ' ' && c != '}' && c != ',') {
            out[o++] = '"';
            while (i < len && in[i] != ':' && in[i] != ' ')
                out[o++] = in[i++];
            out[o++] = '"';
            i--;
            expect_key = false;
            continue;
        }
        if (c == '{' || c == '[') {
            if (depth < (int)sizeof(stack))
                stack[depth++] = c;
            expect_key = c == '{';
        } else if (c == '}' || c == ']') {
            if (depth > 0)
                depth--;
            expect_key = false;
        } else if (c == ',') {
            expect_key = depth > 0 && stack[depth - 1] == '{';
        }
        out[o++] = c;
    }
    out[o] = '\0';
    return out;
}

json_t *ns_parse_lenient(const char *text, size_t len)
{
    char *q = quote_bare_keys(text, len);
    json_t *j = json_loads(q, 0, NULL);
    free(q);
    return j;
}

/* Arrays compare as multisets: Java's list order is HashMap order. */
static bool same_value(json_t *a, json_t *b);

static bool same_array(json_t *a, json_t *b)
{
    size_t n = json_array_size(a);
    if (n != json_array_size(b))
        return false;
    bool *used = calloc(n ? n : 1, sizeof(bool));
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        bool hit = false;
        for (size_t j = 0; j < n && !hit; j++) {
            if (!used[j] && same_value(json_array_get(a, i), json_array_get(b, j))) {
                used[j] = true;
                hit = true;
            }
        }
        ok = hit;
    }
    free(used);
    return ok;
}

static bool same_value(json_t *a, json_t *b)
{
    if (json_is_array(a) && json_is_array(b))
        return same_array(a, b);
    if (json_is_object(a) && json_is_object(b)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        json_t *v;
        json_object_foreach(a, k, v)
        {
            json_t *w = json_object_get(b, k);
            if (!w || !same_value(v, w))
                return false;
        }
        return true;
    }
    return json_equal(a, b);
}

bool ns_same_json(const char *a, size_t alen, const char *b, size_t blen)
{
    json_t *ja = ns_parse_lenient(a, alen), *jb = ns_parse_lenient(b, blen);
    bool same = ja && jb && same_value(ja, jb);
    if (!same)
        fprintf(stderr, "JSON differs:\n  %.*s\n  %.*s\n", (int)alen, a, (int)blen, b);
    json_decref(ja);
    json_decref(jb);
    return same;
}

bool ns_wait_route_code(int fd, const char *topic, int code, int deadline_ms)
{
    uint64_t end = rmq_test_now_ms() + (uint64_t)deadline_ms;
    for (;;) {
        rmq_cmd *r = ns_route(fd, topic, 409, false);
        int got = r->code;
        rmq_cmd_free(r);
        if (got == code)
            return true;
        if (rmq_test_now_ms() > end)
            return false;
        rmq_test_pause_ms(50);
    }
}
