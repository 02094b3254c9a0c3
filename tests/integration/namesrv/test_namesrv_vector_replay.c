/* test_namesrv_vector_replay.c — the NameServer frames recorded from Java
 * 4.9.8 (tests/vectors) replayed in their recorded order against the
 * daemon; every answer must match the recorded one in code, flag, opaque,
 * ext fields and JSON content (key order and list order aside). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namesrv_frames.h"

typedef struct replay_step {
    const char *request;  /* vector file sent as is */
    const char *response; /* recorded answer, NULL for oneway */
} replay_step;

static const replay_step STEPS[] = {
    {"103-register-broker.req.bin", "103-register-broker.resp.bin"},
    {"103-register-broker.oneway.bin", NULL},
    {"105-get-routeinfo.req.bin", "105-get-routeinfo.resp.bin"},
    {"105-get-routeinfo.legacy-version0.req.bin", "105-get-routeinfo.legacy-version0.resp.bin"},
    {"105-get-routeinfo.legacy-version0-standardjson.req.bin",
     "105-get-routeinfo.legacy-version0-standardjson.resp.bin"},
    {"105-get-routeinfo.rocketmq.req.bin", "105-get-routeinfo.rocketmq.resp.bin"},
    {"105-get-routeinfo.tbw102.req.bin", "105-get-routeinfo.tbw102.resp.bin"},
    {"105-get-routeinfo.topic-not-exist.req.bin", "105-get-routeinfo.topic-not-exist.resp.bin"},
    {"105-get-routeinfo.topic-not-exist.rocketmq.req.bin",
     "105-get-routeinfo.topic-not-exist.rocketmq.resp.bin"},
    {"106-get-broker-cluster-info.req.bin", "106-get-broker-cluster-info.resp.bin"},
    {"106-get-broker-cluster-info.rocketmq.req.bin",
     "106-get-broker-cluster-info.rocketmq.resp.bin"},
    {"100-put-kv-config.req.bin", "100-put-kv-config.resp.bin"},
    {"101-get-kv-config.req.bin", "101-get-kv-config.resp.bin"},
    {"101-get-kv-config.not-found.req.bin", "101-get-kv-config.not-found.resp.bin"},
    {"100-put-kv-config.rocketmq.req.bin", "100-put-kv-config.rocketmq.resp.bin"},
    {"101-get-kv-config.rocketmq.req.bin", "101-get-kv-config.rocketmq.resp.bin"},
    {"102-delete-kv-config.req.bin", "102-delete-kv-config.resp.bin"},
    {"104-unregister-broker.req.bin", "104-unregister-broker.resp.bin"},
};

static rmq_cmd *load_cmd(const char *name)
{
    char why[300];
    rmq_cmd *c = rmq_tc_load_vector_cmd(name, why, sizeof(why));
    if (!c)
        fail_msg("%s", why);
    return c;
}

static void assert_same_answer(const char *name, const rmq_cmd *want, const rmq_cmd *got)
{
    char why[512];
    if (!rmq_tc_same_answer_head(want, got, why, sizeof(why)))
        fail_msg("%s: %s", name, why);
    if (want->body_len)
        assert_true(ns_same_json((const char *)want->body, want->body_len, (const char *)got->body,
                                 got->body_len));
}

static int setup(void **state)
{
    return ns_setup(state, NULL);
}

static void test_recorded_namesrv_frames_are_answered_equivalently(void **state)
{
    ns_fixture *f = *state;
    for (size_t i = 0; i < sizeof(STEPS) / sizeof(STEPS[0]); i++) {
        size_t len;
        unsigned char *req = rmq_tc_load_vector(STEPS[i].request, &len);
        assert_non_null(req);
        assert_int_equal(rmq_tc_send_raw(f->fd, req, len), 0);
        free(req);
        if (!STEPS[i].response) {
            /* oneway: its effect must show before the next step relies on it */
            assert_true(ns_wait_route_code(f->fd, "ProofTopic", 0, NS_WAIT_MS));
            continue;
        }
        rmq_cmd *got = rmq_tc_recv(f->fd, NS_WAIT_MS);
        if (!got)
            fail_msg("%s: no answer", STEPS[i].request);
        rmq_cmd *want = load_cmd(STEPS[i].response);
        assert_same_answer(STEPS[i].request, want, got);
        rmq_cmd_free(want);
        rmq_cmd_free(got);
    }
}
int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_recorded_namesrv_frames_are_answered_equivalently,
                                        setup, ns_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
