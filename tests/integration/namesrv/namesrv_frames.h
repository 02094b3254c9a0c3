/* namesrv_frames.h — what the NameServer integration tests share: a daemon
 * with the namesrv plugin, request builders for broker and admin frames, and
 * a JSON comparison that accepts fastjson's bare keys. */
#ifndef NAMESRV_FRAMES_H
#define NAMESRV_FRAMES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>

#include "rmq_test_support.h"

#define NS_WAIT_MS 10000

typedef struct ns_fixture {
    rmq_test_daemon d;
    int port;
    int fd;
} ns_fixture;

/* Start a daemon with the namesrv plugin; settings_body goes inside
 * `settings = { ... };` (may be NULL). fd is a connected client. */
void ns_start(ns_fixture *f, const char *settings_body);
/* Restart the same daemon (same state dir); reconnects fd. */
void ns_restart(ns_fixture *f);
void ns_stop(ns_fixture *f);
/* cmocka setup/teardown around ns_start/ns_stop: *state is the fixture.
 * A test file's setup passes its plugin settings. */
int ns_setup(void **state, const char *settings_body);
int ns_teardown(void **state);

/* A request with ext fields (key, value pairs, NULL-terminated) and an
 * optional body; version overrides 409 when >= 0. */
rmq_cmd *ns_request(int code, const char *const *kv, const void *body, size_t len, int version);
/* Send and wait for the answer (fails the test on timeout). Frees req. */
rmq_cmd *ns_call(int fd, rmq_cmd *req);

/* REGISTER_BROKER with a RegisterBrokerBody of `topics`
 * ("name:perm:read:write:sysflag,..."), bodyCrc32 computed, haServerAddr
 * 127.0.0.1:10912, compressed = false. */
rmq_cmd *ns_register(int fd, const char *cluster, const char *name, const char *addr, long long id,
                     long long counter, const char *topics);
/* rmq_tb_register_body_json at timestamp 1700000000000 (fails the test when
 * out of memory). */
char *ns_body_json(long long counter, const char *topics);

/* A new broker connection on which broker `name` (cluster "C", id 0,
 * counter 1) registered `topic` successfully; returns its fd. */
int ns_broker_connect(ns_fixture *f, const char *name, const char *addr, const char *topic);

/* GET_ROUTEINFO_BY_TOPIC; returns the response (caller frees). */
rmq_cmd *ns_route(int fd, const char *topic, int version, bool accept_standard);

/* Body text (NUL-terminated copy, caller frees) or NULL. */
char *ns_body_text(const rmq_cmd *resp);

/* Parse JSON that may use fastjson bare keys ({0:"a"}, {null:[..]}). */
json_t *ns_parse_lenient(const char *text, size_t len);
/* True when both bodies hold the same JSON value (key order ignored). */
bool ns_same_json(const char *a, size_t alen, const char *b, size_t blen);

/* Poll until GET_ROUTEINFO_BY_TOPIC answers `code` or the deadline passes. */
bool ns_wait_route_code(int fd, const char *topic, int code, int deadline_ms);

#endif
