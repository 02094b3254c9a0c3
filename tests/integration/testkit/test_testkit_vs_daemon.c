/* test_testkit_vs_daemon.c — the test kit answers as the daemon does: the
 * first-party plugins' recorded Java 4.9.8 frames (tests/vectors), and
 * hand-built filter requests, go to a real rmqhostd and to the same .so in
 * librmqhost-testkit; every answer of the kit must equal the daemon's (and,
 * where a recording exists, Java's) in code, flag, opaque, serialization,
 * remark, ext fields and JSON body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmqhost/testkit.h>

#include "replay_diff.h"
#include "rmq_test_support.h"

#define WAIT_MS 5000
#define NCH 3

/* Session values: the client's port and subscription timestamps. */
static const char *const IGNORED[] = {"clientAddr", "subVersion", NULL};
static const replay_ignore IGN = {IGNORED};

typedef struct pair {
    rmq_test_daemon d;
    int port;
    int fd[NCH + 1];
    rmq_testkit *kit;
    int kch[NCH + 1];
} pair;

typedef struct step {
    int ch;
    const char *request;  /* vector file */
    const char *recorded; /* Java's answer, NULL = oneway or none recorded */
} step;

static void pair_start(pair *p, const char *server, const char *const *so_names,
                       const char *const *conf_settings, const char *const *const *kit_settings,
                       size_t n)
{
    memset(p, 0, sizeof(*p));
    const char *servers[] = {server, NULL};
    assert_int_equal(rmq_td_init(&p->d, servers, NULL), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(
            rmq_td_add_plugin(&p->d, so_names[i], so_names[i], server, conf_settings[i]), 0);
    assert_int_equal(rmq_td_start(&p->d, NULL), 0);
    p->port = rmq_td_port(&p->d, server);
    assert_true(p->port > 0);

    p->kit = rmq_tk_new();
    assert_non_null(p->kit);
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s.so", RMQ_TEST_PLUGIN_DIR, so_names[i]);
        assert_int_equal(rmq_tk_add_plugin(p->kit, so_names[i], path, kit_settings[i]), 0);
    }
    char err[512];
    if (rmq_tk_start(p->kit, err, sizeof(err)) != 0)
        fail_msg("kit: %s", err);
    for (int c = 1; c <= NCH; c++) {
        p->fd[c] = rmq_tc_connect(p->port);
        assert_true(p->fd[c] >= 0);
        p->kch[c] = rmq_tk_open_channel(p->kit);
        assert_true(p->kch[c] > 0);
    }
}

static void pair_stop(pair *p)
{
    for (int c = 1; c <= NCH; c++)
        if (p->fd[c] > 0)
            close(p->fd[c]);
    rmq_tk_free(p->kit);
    assert_int_equal(rmq_td_stop_reporting(&p->d), 0);
    rmq_td_cleanup(&p->d);
}

static rmq_cmd *daemon_answer(int fd, int32_t opaque)
{
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (rmq_test_now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 200);
        if (c && (c->flag & RMQ_FLAG_RESPONSE) && c->opaque == opaque)
            return c;
        rmq_cmd_free(c);
    }
    return NULL;
}

/* Send one frame to both; compare the answers (none for oneway). */
static void both(pair *p, int ch, const char *label, const unsigned char *frame, size_t len,
                 const char *recorded)
{
    char err[256];
    rmq_cmd *req = rmq_cmd_decode(frame, len, err, sizeof(err));
    if (!req)
        fail_msg("%s: %s", label, err);
    int32_t opaque = req->opaque;
    bool oneway = (req->flag & RMQ_FLAG_ONEWAY) != 0;
    rmq_cmd_free(req);
    assert_int_equal(rmq_tc_send_raw(p->fd[ch], frame, len), 0);
    assert_int_equal(rmq_tk_send_frame(p->kit, p->kch[ch], frame, len), 0);
    if (oneway)
        return;
    rmq_cmd *want = daemon_answer(p->fd[ch], opaque);
    rmq_cmd *got = rmq_tk_wait_answer(p->kit, p->kch[ch], opaque, WAIT_MS);
    if (!want)
        fail_msg("%s: the daemon did not answer", label);
    char why[2048];
    if (replay_diff(want, got, &IGN, why, sizeof(why)))
        fail_msg("%s: kit vs daemon: %s", label, why);
    if (recorded) {
        rmq_cmd *java = rmq_tc_load_vector_cmd(recorded, err, sizeof(err));
        if (!java)
            fail_msg("%s", err);
        if (replay_diff(java, got, &IGN, why, sizeof(why)))
            fail_msg("%s: kit vs Java: %s", label, why);
        rmq_cmd_free(java);
    }
    rmq_cmd_free(want);
    rmq_tk_cmd_free(got);
}

static void run_steps(pair *p, const step *steps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t len;
        unsigned char *frame = rmq_tc_load_vector(steps[i].request, &len);
        if (!frame)
            fail_msg("vector %s missing", steps[i].request);
        both(p, steps[i].ch, steps[i].request, frame, len, steps[i].recorded);
        free(frame);
    }
}

/* GET_ROUTEINFO of ProofTopic answers SUCCESS on channel NCH of both. */
static bool route_known(pair *p)
{
    const char *kv[] = {"topic", "ProofTopic", NULL};
    bool daemon_ok = false, kit_ok = false;
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    for (int opaque = 900; (!daemon_ok || !kit_ok) && rmq_test_now_ms() < deadline; opaque++) {
        rmq_cmd *req = rmq_tc_request(105, opaque, kv);
        if (!daemon_ok) {
            rmq_cmd *r = rmq_tc_call(p->fd[NCH], req, WAIT_MS);
            daemon_ok = r && r->code == 0;
            rmq_cmd_free(r);
        }
        if (!kit_ok) {
            rmq_cmd *r = rmq_tk_call(p->kit, p->kch[NCH],
                                     rmq_tk_request(105, RMQ_TK_JSON, false, kv), WAIT_MS);
            kit_ok = r && rmq_tk_code(r) == 0;
            rmq_tk_cmd_free(r);
        }
        rmq_cmd_free(req);
        if (!daemon_ok || !kit_ok)
            rmq_test_pause_ms(5);
    }
    return daemon_ok && kit_ok;
}

static void test_namesrv_vectors(void **state)
{
    (void)state;
    static const step steps[] = {
        {1, "103-register-broker.req.bin", "103-register-broker.resp.bin"},
        {1, "103-register-broker.oneway.bin", NULL},
    };
    static const step after_oneway[] = {
        {1, "105-get-routeinfo.req.bin", "105-get-routeinfo.resp.bin"},
        {1, "105-get-routeinfo.legacy-version0.req.bin",
         "105-get-routeinfo.legacy-version0.resp.bin"},
        {1, "105-get-routeinfo.legacy-version0-standardjson.req.bin",
         "105-get-routeinfo.legacy-version0-standardjson.resp.bin"},
        {2, "105-get-routeinfo.rocketmq.req.bin", "105-get-routeinfo.rocketmq.resp.bin"},
        {1, "105-get-routeinfo.tbw102.req.bin", "105-get-routeinfo.tbw102.resp.bin"},
        {1, "105-get-routeinfo.topic-not-exist.req.bin",
         "105-get-routeinfo.topic-not-exist.resp.bin"},
        {2, "105-get-routeinfo.topic-not-exist.rocketmq.req.bin",
         "105-get-routeinfo.topic-not-exist.rocketmq.resp.bin"},
        {1, "106-get-broker-cluster-info.req.bin", "106-get-broker-cluster-info.resp.bin"},
        {2, "106-get-broker-cluster-info.rocketmq.req.bin",
         "106-get-broker-cluster-info.rocketmq.resp.bin"},
        {1, "100-put-kv-config.req.bin", "100-put-kv-config.resp.bin"},
        {1, "101-get-kv-config.req.bin", "101-get-kv-config.resp.bin"},
        {1, "101-get-kv-config.not-found.req.bin", "101-get-kv-config.not-found.resp.bin"},
        {2, "100-put-kv-config.rocketmq.req.bin", "100-put-kv-config.rocketmq.resp.bin"},
        {2, "101-get-kv-config.rocketmq.req.bin", "101-get-kv-config.rocketmq.resp.bin"},
        {1, "102-delete-kv-config.req.bin", "102-delete-kv-config.resp.bin"},
        {1, "104-unregister-broker.req.bin", "104-unregister-broker.resp.bin"},
        {1, "105-get-routeinfo.req.bin", NULL},
        /* 319 GET_NAMESRV_CONFIG is left out: its body lists the state
         * directory's paths, which differ between any two instances */
    };
    pair p;
    pair_start(&p, "namesrv", (const char *[]){"namesrv"}, (const char *[]){NULL},
               (const char *const *[]){NULL}, 1);
    run_steps(&p, steps, sizeof(steps) / sizeof(steps[0]));
    /* the oneway registration runs on an executor: its effect shows when it
     * shows, on both sides, before the steps that read it */
    assert_true(route_known(&p));
    run_steps(&p, after_oneway, sizeof(after_oneway) / sizeof(after_oneway[0]));
    pair_stop(&p);
}

static const char BCM_CONF[] =
    "brokerName = \"broker-a\"; topics = \"ProofTopic:4\"; namesrvAddr = \"127.0.0.1:1\";";
static const char *const BCM_KIT[] = {"brokerName",  "broker-a",    "topics", "ProofTopic:4",
                                      "namesrvAddr", "127.0.0.1:1", NULL};

static void test_broker_client_mgr_vectors(void **state)
{
    (void)state;
    static const step steps[] = {
        {1, "34-heart-beat.consumer.req.bin", "34-heart-beat.consumer.resp.bin"},
        {1, "38-get-consumer-list-by-group.req.bin", "38-get-consumer-list-by-group.resp.bin"},
        {1, "14-query-consumer-offset.req.bin", "14-query-consumer-offset.resp.bin"},
        {2, "203-get-consumer-connection-list.req.bin",
         "203-get-consumer-connection-list.resp.bin"},
        {1, "15-update-consumer-offset.oneway.bin", NULL},
        {1, "15-update-consumer-offset.req.bin", "15-update-consumer-offset.resp.bin"},
        {1, "35-unregister-client.consumer.req.bin", "35-unregister-client.consumer.resp.bin"},
        {2, "34-heart-beat.producer.req.bin", "34-heart-beat.producer.resp.bin"},
        {2, "35-unregister-client.producer.req.bin", "35-unregister-client.producer.resp.bin"},
        {3, "34-heart-beat.consumer.rocketmq.req.bin", "34-heart-beat.consumer.rocketmq.resp.bin"},
        {3, "208-get-consume-stats.req.bin", NULL},
    };
    pair p;
    pair_start(&p, "broker", (const char *[]){"broker-client-mgr"}, (const char *[]){BCM_CONF},
               (const char *const *[]){BCM_KIT}, 1);
    run_steps(&p, steps, sizeof(steps) / sizeof(steps[0]));
    pair_stop(&p);
}

static void send_built(pair *p, int ch, const char *label, int code, int opaque,
                       const char *const *kv, const char *body)
{
    rmq_cmd *req = rmq_tc_request(code, opaque, kv);
    assert_non_null(req);
    if (body)
        assert_int_equal(rmq_cmd_set_body(req, body, strlen(body), NULL, NULL), 0);
    size_t cap = rmq_cmd_encoded_size_bound(req);
    unsigned char *frame = malloc(cap);
    assert_non_null(frame);
    size_t len = rmq_cmd_encode(req, frame, cap);
    assert_true(len > 0);
    rmq_cmd_free(req);
    both(p, ch, label, frame, len, NULL);
    free(frame);
}

static const char *check_body(char *buf, size_t len, const char *expr)
{
    snprintf(buf, len,
             "{\"clientId\":\"127.0.0.1@1\",\"group\":\"CG\",\"subscriptionData\":{"
             "\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"SQL92\","
             "\"subString\":\"%s\",\"subVersion\":1700000000000,\"tagsSet\":[],"
             "\"topic\":\"FltTopic\"}}",
             expr);
    return buf;
}

static void test_filter_requests_with_broker_client_mgr(void **state)
{
    (void)state;
    pair p;
    pair_start(&p, "broker", (const char *[]){"broker-client-mgr", "filter"},
               (const char *[]){BCM_CONF, NULL}, (const char *const *[]){BCM_KIT, NULL}, 2);
    char body[1024];
    send_built(&p, 1, "301 without address", 301, 11, NULL, NULL);
    send_built(&p, 1, "301", 301, 12, (const char *[]){"filterServerAddr", "127.0.0.1:45001", NULL},
               NULL);
    send_built(&p, 1, "46 valid SQL92", 46, 13, NULL,
               check_body(body, sizeof(body), "a > 5 AND b IN ('x')"));
    send_built(&p, 1, "46 bad comparison", 46, 14, NULL, check_body(body, sizeof(body), "a > 'x'"));
    send_built(&p, 1, "46 lexical error", 46, 15, NULL, check_body(body, sizeof(body), "a != 1"));
    send_built(&p, 1, "46 trailing input", 46, 16, NULL,
               check_body(body, sizeof(body), "a = 1 garbage"));
    /* the consumer vectors again, with the filter plugin beside */
    static const step steps[] = {
        {2, "34-heart-beat.consumer.req.bin", "34-heart-beat.consumer.resp.bin"},
        {2, "38-get-consumer-list-by-group.req.bin", "38-get-consumer-list-by-group.resp.bin"},
    };
    run_steps(&p, steps, sizeof(steps) / sizeof(steps[0]));
    pair_stop(&p);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test(test_namesrv_vectors),
        cmocka_unit_test(test_broker_client_mgr_vectors),
        cmocka_unit_test(test_filter_requests_with_broker_client_mgr),
    };
    struct CMUnitTest chosen[sizeof(all) / sizeof(all[0])];
    size_t n = 0;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (rmq_test_name_selected(argc > 1 ? argv[1] : NULL, all[i].name))
            chosen[n++] = all[i];
    return _cmocka_run_group_tests("testkit_vs_daemon", chosen, n, NULL, NULL);
}
