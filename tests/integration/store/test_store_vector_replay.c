/* test_store_vector_replay.c — the recorded Java 4.9.8 frames of the message
 * path (tests/vectors: 310, 320, 11, 30, 31, 202, 33) replayed in their
 * recording order against rmqhostd with the store, configured as the
 * recording broker (broker-rec, RecCluster): the answers match in code,
 * remark, ext-field names and the values that do not depend on addresses;
 * the PULL body carries the same records (body, flag, sysFlag, queue,
 * offsets, born timestamp and the same properties); the statistics body has
 * the recorded shape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_test_client.h"

typedef struct fixture {
    rmq_test_daemon d;
    int port;
    int fd;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    int ns = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-rec\"; "
             "brokerClusterName = \"RecCluster\"; brokerIP1 = \"127.0.0.1\";",
             ns);
    if (!f || ns <= 0 || rmq_td_init(&f->d, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(&f->d, ns, "info", bcm) != 0 ||
        rmq_td_add_plugin(&f->d, "filter", "filter", "broker", NULL) != 0 ||
        rmq_td_add_plugin(&f->d, "store", "store", "broker",
                          "mappedFileSizeCommitLog = 1048576;") != 0 ||
        rmq_td_start(&f->d, NULL) != 0)
        return -1;
    f->port = rmq_td_port(&f->d, "broker");
    f->fd = rmq_tc_connect(f->port);
    *state = f;
    return f->fd >= 0 ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    close(f->fd);
    int st = rmq_td_stop_reporting(&f->d);
    rmq_td_cleanup(&f->d);
    free(f);
    return st == 0 ? 0 : -1;
}

/* Send the recorded request frame as it is; the answer (or NULL). */
static rmq_cmd *replay(fixture *f, const char *req_name)
{
    size_t len;
    unsigned char *buf = rmq_tc_load_vector(req_name, &len);
    assert_non_null(buf);
    assert_int_equal(rmq_tc_send_raw(f->fd, buf, len), 0);
    free(buf);
    return rmq_tc_recv(f->fd, 10000);
}

static rmq_cmd *recorded(const char *name)
{
    char why[256];
    rmq_cmd *c = rmq_tc_load_vector_cmd(name, why, sizeof why);
    if (!c)
        fail_msg("%s", why);
    return c;
}

/* code, flag, opaque, serialization, remark and the ext names match; the
 * values of `same_values` keys (NULL-terminated) too. */
static void expect_like(const rmq_cmd *want, const rmq_cmd *got, const char *const *same_values)
{
    assert_non_null(got);
    assert_int_equal(got->code, want->code);
    assert_int_equal(got->flag, want->flag);
    assert_int_equal(got->opaque, want->opaque);
    assert_int_equal(got->serialize_type, want->serialize_type);
    if (want->remark)
        assert_string_equal(got->remark, want->remark);
    else
        assert_null(got->remark);
    assert_int_equal(got->ext_count, want->ext_count);
    for (uint32_t i = 0; i < want->ext_count; i++)
        assert_non_null(rmq_cmd_ext_get(got, want->ext[i].key));
    for (const char *const *k = same_values; k && *k; k++)
        assert_string_equal(rmq_cmd_ext_get(got, *k), rmq_cmd_ext_get(want, *k));
}

static void expect_same_props(const stored_record *a, const stored_record *b)
{
    /* same entries as a map: every entry of one is in the other with its value */
    const stored_record *pair[2][2] = {{a, b}, {b, a}};
    for (int d = 0; d < 2; d++) {
        const stored_record *x = pair[d][0], *y = pair[d][1];
        size_t at = 0;
        while (at < x->props_len) {
            const char *seg = x->props + at;
            const char *end = memchr(seg, 2, x->props_len - at);
            size_t n = end ? (size_t)(end - seg) : x->props_len - at;
            const char *kv = memchr(seg, 1, n);
            if (kv && kv > seg && (size_t)(kv - seg) < n - 1) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)(kv - seg), seg);
                char *vx = st_prop(x, name), *vy = st_prop(y, name);
                if (!vy || strcmp(vx, vy) != 0)
                    fail_msg("property %s: %s vs %s", name, vx, vy ? vy : "(absent)");
                free(vx);
                free(vy);
            }
            at += n + 1;
        }
    }
}

static void expect_same_records(const rmq_cmd *want, const rmq_cmd *got, size_t n)
{
    stored_record w[8], g[8];
    assert_int_equal(st_records(want, w, 8), n);
    assert_int_equal(st_records(got, g, 8), n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(g[i].body_len, w[i].body_len);
        assert_memory_equal(g[i].body, w[i].body, (size_t)w[i].body_len);
        assert_int_equal(g[i].body_crc, w[i].body_crc);
        assert_int_equal(g[i].flag, w[i].flag);
        assert_int_equal(g[i].sys_flag, w[i].sys_flag);
        assert_int_equal(g[i].queue_id, w[i].queue_id);
        assert_int_equal(g[i].queue_offset, w[i].queue_offset);
        assert_true(g[i].born_ts == w[i].born_ts);
        assert_int_equal(g[i].reconsume_times, w[i].reconsume_times);
        assert_int_equal(g[i].topic_len, w[i].topic_len);
        assert_memory_equal(g[i].topic, w[i].topic, w[i].topic_len);
        expect_same_props(&w[i], &g[i]);
    }
}

static void heartbeat(fixture *f, const char *group, const char *topic, long long sub_version)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"clientID\":\"127.0.0.1@replay\",\"consumerDataSet\":[{\"consumeFromWhere\":"
             "\"CONSUME_FROM_LAST_OFFSET\",\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":"
             "\"%s\",\"messageModel\":\"CLUSTERING\",\"subscriptionDataSet\":[{"
             "\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"TAG\",\"subString\":"
             "\"*\",\"subVersion\":%lld,\"tagsSet\":[],\"topic\":\"%s\"}],\"unitMode\":false}],"
             "\"producerDataSet\":[]}",
             group, sub_version, topic);
    rmq_cmd *req = rmq_tc_request(34, 900, NULL);
    rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    rmq_cmd *r = rmq_tc_call_response(f->fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
}

static void message_path_replays_like_java(void **state)
{
    fixture *f = *state;
    static const char *const send_values[] = {"queueId", "queueOffset", "MSG_REGION", "TRACE_ON",
                                              NULL};
    /* recording order on RecTopic: user-props (q2), the batch (q3), compressed (q0) */
    const char *sends[] = {"310-send-message-v2.user-props", "320-send-batch-message",
                           "310-send-message-v2.compressed"};
    for (size_t i = 0; i < 3; i++) {
        char req[128], resp[128];
        snprintf(req, sizeof req, "%s.req.bin", sends[i]);
        snprintf(resp, sizeof resp, "%s.resp.bin", sends[i]);
        rmq_cmd *want = recorded(resp), *got = replay(f, req);
        expect_like(want, got, send_values);
        assert_int_equal(strlen(rmq_cmd_ext_get(got, "msgId")),
                         strlen(rmq_cmd_ext_get(want, "msgId")));
        rmq_cmd_free(want);
        rmq_cmd_free(got);
    }
    /* the push consumer's pull of queue 3 (after its heartbeat) */
    heartbeat(f, "rec_consumer_group", "RecTopic", 1796123538413LL);
    rmq_cmd *want = recorded("11-pull-message.found-4.resp.bin");
    rmq_cmd *got = replay(f, "11-pull-message.found-4.req.bin");
    static const char *const pull_values[] = {"maxOffset", "minOffset", "nextBeginOffset",
                                              "suggestWhichBrokerId", NULL};
    expect_like(want, got, pull_values);
    expect_same_records(want, got, 4);
    rmq_cmd_free(want);
    rmq_cmd_free(got);

    static const char *const offset_values[] = {"offset", NULL};
    const char *offsets[] = {"30-get-max-offset", "31-get-min-offset"};
    for (size_t i = 0; i < 2; i++) {
        char req[128], resp[128];
        snprintf(req, sizeof req, "%s.req.bin", offsets[i]);
        snprintf(resp, sizeof resp, "%s.resp.bin", offsets[i]);
        want = recorded(resp);
        got = replay(f, req);
        expect_like(want, got, offset_values);
        rmq_cmd_free(want);
        rmq_cmd_free(got);
    }

    want = recorded("202-get-topic-stats-info.resp.bin");
    got = replay(f, "202-get-topic-stats-info.req.bin");
    expect_like(want, got, NULL);
    for (int q = 0; q < 4; q++) {
        char key[128];
        snprintf(key, sizeof key,
                 "{\"brokerName\":\"broker-rec\",\"queueId\":%d,\"topic\":\"RecTopic\"}:{"
                 "\"lastUpdateTimestamp\":",
                 q);
        assert_true(bcm_body_contains(want, key));
        assert_true(bcm_body_contains(got, key));
    }
    assert_true(bcm_body_contains(got, "\"maxOffset\":4,\"minOffset\":0}"));
    rmq_cmd_free(want);
    rmq_cmd_free(got);

    /* commit-log offset 0 holds the first message stored: the user-props send */
    want = recorded("33-view-message-by-id.resp.bin");
    got = replay(f, "33-view-message-by-id.req.bin");
    expect_like(want, got, NULL);
    expect_same_records(want, got, 1);
    rmq_cmd_free(want);
    rmq_cmd_free(got);
}

static void proof_topic_sends_replay(void **state)
{
    fixture *f = *state;
    static const char *const values[] = {"queueId", "MSG_REGION", "TRACE_ON", NULL};
    const char *sends[] = {"310-send-message-v2", "310-send-message-v2.rocketmq"};
    for (size_t i = 0; i < 2; i++) {
        char req[128], resp[128];
        snprintf(req, sizeof req, "%s.req.bin", sends[i]);
        snprintf(resp, sizeof resp, "%s.resp.bin", sends[i]);
        rmq_cmd *want = recorded(resp), *got = replay(f, req);
        expect_like(want, got, values);
        rmq_cmd_free(want);
        rmq_cmd_free(got);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test_setup_teardown(message_path_replays_like_java, setup, teardown),
        cmocka_unit_test_setup_teardown(proof_topic_sends_replay, setup, teardown),
    };
    struct CMUnitTest sel[sizeof all / sizeof all[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (rmq_test_name_selected(argc > 1 ? argv[1] : NULL, all[i].name))
            sel[n++] = all[i];
    return _cmocka_run_group_tests("store_vector_replay", sel, n, NULL, NULL);
}
