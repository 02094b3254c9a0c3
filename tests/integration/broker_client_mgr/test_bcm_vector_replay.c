/* test_bcm_vector_replay.c — the broker client-management frames recorded
 * from a Java 4.9.8 broker (tests/vectors 14-, 15-, 34-, 35-, 38-, 203-)
 * replayed against broker-client-mgr in a real daemon. Each answer must match
 * the recorded one in code, flag, opaque, serialization, remark, ext fields
 * (presence of the extFields object too) and JSON body content; only
 * subVersion timestamps and client ports may differ. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bcm_test_daemon.h"

typedef bcm_pair fixture;

static rmq_cmd *load_cmd(const char *name)
{
    size_t len = 0;
    unsigned char *buf = rmq_tc_load_vector(name, &len);
    if (!buf)
        fail_msg("vector %s missing", name);
    char err[256];
    rmq_cmd *c = rmq_cmd_decode(buf, len, err, sizeof err);
    free(buf);
    if (!c)
        fail_msg("vector %s undecodable: %s", name, err);
    return c;
}

/* Values that depend on the recording session, not on the protocol. */
static bool same_json(const char *key, json_t *want, json_t *got)
{
    if (key && strcmp(key, "subVersion") == 0)
        return json_is_integer(want) && json_is_integer(got);
    if (key && strcmp(key, "clientAddr") == 0) {
        const char *w = json_string_value(want), *g = json_string_value(got);
        const char *wc = w ? strrchr(w, ':') : NULL, *gc = g ? strrchr(g, ':') : NULL;
        return wc && gc && wc - w == gc - g && strncmp(w, g, (size_t)(wc - w)) == 0 &&
               atoi(gc + 1) > 0;
    }
    if (json_typeof(want) != json_typeof(got))
        return false;
    if (json_is_object(want)) {
        if (json_object_size(want) != json_object_size(got))
            return false;
        const char *k;
        json_t *v;
        json_object_foreach(want, k, v)
        {
            if (!same_json(k, v, json_object_get(got, k)))
                return false;
        }
        return true;
    }
    if (json_is_array(want)) {
        if (json_array_size(want) != json_array_size(got))
            return false;
        for (size_t i = 0; i < json_array_size(want); i++)
            if (!same_json(NULL, json_array_get(want, i), json_array_get(got, i)))
                return false;
        return true;
    }
    return json_equal(want, got);
}

static void assert_same_answer(const char *name, const rmq_cmd *want, const rmq_cmd *got)
{
    if (!got)
        fail_msg("%s: no answer", name);
    if (want->code != got->code)
        fail_msg("%s: code %d, recorded %d (%s)", name, got->code, want->code,
                 got->remark ? got->remark : "");
    assert_int_equal(got->flag, want->flag);
    assert_int_equal(got->opaque, want->opaque);
    assert_int_equal(got->serialize_type, want->serialize_type);
    if ((want->remark == NULL) != (got->remark == NULL) ||
        (want->remark && strcmp(want->remark, got->remark) != 0))
        fail_msg("%s: remark '%s', recorded '%s'", name, got->remark ? got->remark : "(none)",
                 want->remark ? want->remark : "(none)");
    if (want->has_ext != got->has_ext)
        fail_msg("%s: extFields %s, recorded %s", name, got->has_ext ? "present" : "absent",
                 want->has_ext ? "present" : "absent");
    assert_int_equal(got->ext_count, want->ext_count);
    for (uint32_t i = 0; i < want->ext_count; i++) {
        const char *v = rmq_cmd_ext_get(got, want->ext[i].key);
        if (!v || !want->ext[i].value || strcmp(v, want->ext[i].value) != 0)
            fail_msg("%s: ext %s = %s, recorded %s", name, want->ext[i].key, v ? v : "(none)",
                     want->ext[i].value ? want->ext[i].value : "(null)");
    }
    if ((want->body_len == 0) != (got->body_len == 0))
        fail_msg("%s: body length %u, recorded %u", name, got->body_len, want->body_len);
    if (!want->body_len)
        return;
    json_t *w = json_loadb((const char *)want->body, want->body_len, 0, NULL);
    json_t *g = json_loadb((const char *)got->body, got->body_len, 0, NULL);
    bool same = w && g && same_json(NULL, w, g);
    if (!same)
        fail_msg("%s: body %.*s, recorded %.*s", name, (int)got->body_len, (const char *)got->body,
                 (int)want->body_len, (const char *)want->body);
    json_decref(w);
    json_decref(g);
}

/* Send a recorded request as it is on the wire; the answer with its opaque
 * (NOTIFY frames the broker sends first are skipped), NULL after 5 s. */
static rmq_cmd *replay(int fd, const char *request)
{
    size_t len = 0;
    unsigned char *buf = rmq_tc_load_vector(request, &len);
    if (!buf)
        fail_msg("vector %s missing", request);
    rmq_cmd *req = load_cmd(request);
    int opaque = req->opaque;
    rmq_cmd_free(req);
    int rc = rmq_tc_send_raw(fd, buf, len);
    free(buf);
    assert_int_equal(rc, 0);
    uint64_t deadline = rmq_test_now_ms() + 5000;
    while (rmq_test_now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 500);
        if (c && (c->flag & 1) && c->opaque == opaque)
            return c;
        rmq_cmd_free(c);
    }
    return NULL;
}

static void replay_step(int fd, const char *request, const char *response)
{
    rmq_cmd *want = load_cmd(response);
    rmq_cmd *got = replay(fd, request);
    assert_same_answer(response, want, got);
    rmq_cmd_free(want);
    rmq_cmd_free(got);
}

static int setup(void **state)
{
    /* the recording broker: broker-a with ProofTopic */
    return bcm_pair_setup(state, "brokerName = \"broker-a\"; topics = \"ProofTopic:4\";");
}

static int64_t stored_offset(int port, const char *group, const char *topic, const char *queue)
{
    const char *kv[] = {"consumerGroup", group, "topic", topic, "queueId", queue, NULL};
    rmq_cmd *r = bcm_call(port, 14, kv, NULL);
    const char *v = r && r->code == 0 ? rmq_cmd_ext_get(r, "offset") : NULL;
    int64_t off = v ? atoll(v) : -1;
    rmq_cmd_free(r);
    return off;
}

static void test_consumer_session_answers_match_java(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    replay_step(fd, "34-heart-beat.consumer.req.bin", "34-heart-beat.consumer.resp.bin");
    replay_step(fd, "38-get-consumer-list-by-group.req.bin",
                "38-get-consumer-list-by-group.resp.bin");
    replay_step(fd, "14-query-consumer-offset.req.bin", "14-query-consumer-offset.resp.bin");

    /* the admin's view of the connection, asked from another connection */
    int admin = rmq_tc_connect(f->port);
    assert_true(admin >= 0);
    replay_step(admin, "203-get-consumer-connection-list.req.bin",
                "203-get-consumer-connection-list.resp.bin");
    close(admin);

    replay_step(fd, "35-unregister-client.consumer.req.bin",
                "35-unregister-client.consumer.resp.bin");
    close(fd);
}

static void test_update_offset_oneway_stores_silently_and_request_answers_empty_header(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    size_t len = 0;
    unsigned char *buf = rmq_tc_load_vector("15-update-consumer-offset.oneway.bin", &len);
    assert_non_null(buf);
    assert_int_equal(rmq_tc_send_raw(fd, buf, len), 0);
    free(buf);
    /* a oneway request is never answered... */
    rmq_cmd *none = rmq_tc_recv(fd, 300);
    assert_null(none);
    /* ...but stored (commitOffset 25 of the recording) */
    assert_int_equal(stored_offset(f->port, "proof_consumer_group", "ProofTopic", "0"), 25);

    replay_step(fd, "15-update-consumer-offset.req.bin", "15-update-consumer-offset.resp.bin");
    assert_int_equal(stored_offset(f->port, "proof_raw_group", "ProofTopic", "0"), 7);
    close(fd);
}

static void test_producer_session_answers_match_java(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    replay_step(fd, "34-heart-beat.producer.req.bin", "34-heart-beat.producer.resp.bin");
    replay_step(fd, "35-unregister-client.producer.req.bin",
                "35-unregister-client.producer.resp.bin");
    close(fd);
}

static void test_binary_header_heartbeat_answers_in_binary_as_java(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    replay_step(fd, "34-heart-beat.consumer.rocketmq.req.bin",
                "34-heart-beat.consumer.rocketmq.resp.bin");
    close(fd);
}

/* GET_CONSUME_STATS without a store and without committed offsets: the
 * recorded answer's head, an empty table (the figures need a store:
 * test_bcm_store_services replays the recorded body against one). */
static void test_consume_stats_without_a_store_is_an_empty_table(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    rmq_cmd *got = replay(fd, "208-get-consume-stats.req.bin");
    assert_non_null(got);
    rmq_cmd *want = load_cmd("208-get-consume-stats.resp.bin");
    char why[256];
    if (!rmq_tc_same_answer_head(want, got, why, sizeof why))
        fail_msg("%s", why);
    rmq_cmd_free(want);
    assert_int_equal(got->body_len, strlen("{\"consumeTps\":0.0,\"offsetTable\":{}}"));
    assert_memory_equal(got->body, "{\"consumeTps\":0.0,\"offsetTable\":{}}", got->body_len);
    rmq_cmd_free(got);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_consumer_session_answers_match_java, setup,
                                        bcm_pair_teardown),
        cmocka_unit_test_setup_teardown(
            test_update_offset_oneway_stores_silently_and_request_answers_empty_header, setup,
            bcm_pair_teardown),
        cmocka_unit_test_setup_teardown(test_producer_session_answers_match_java, setup,
                                        bcm_pair_teardown),
        cmocka_unit_test_setup_teardown(test_binary_header_heartbeat_answers_in_binary_as_java,
                                        setup, bcm_pair_teardown),
        cmocka_unit_test_setup_teardown(test_consume_stats_without_a_store_is_an_empty_table, setup,
                                        bcm_pair_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
