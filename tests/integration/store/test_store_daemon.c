/* test_store_daemon.c — the store plugin in a real rmqhostd (namesrv,
 * broker-client-mgr, filter, store) over raw frames: SEND 310/10/320 with
 * the stored form and the answer's header, every refused send and nothing
 * stored, PULL codes and nextBeginOffset, long polling answered by a send
 * long before the hold expires, TAG and SQL92 filtering, QUERY/VIEW, the
 * offset and statistics codes, and a restart that keeps messages and the
 * offset committed by a pull. Ephemeral ports; the daemon always stops. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_test_client.h"

typedef st_fixture fixture;

static void expect_send_ok(const rmq_cmd *r, long long queue, long long offset)
{
    assert_non_null(r);
    if (r->code != 0)
        fprintf(stderr, "send answered %d: %s\n", r->code, r->remark ? r->remark : "");
    assert_int_equal(r->code, 0);
    assert_null(r->remark);
    assert_string_equal(rmq_cmd_ext_get(r, "MSG_REGION"), "DefaultRegion");
    assert_string_equal(rmq_cmd_ext_get(r, "TRACE_ON"), "true");
    assert_int_equal(strlen(rmq_cmd_ext_get(r, "msgId")), 32);
    assert_int_equal(st_ext_ll(r, "queueId"), queue);
    assert_int_equal(st_ext_ll(r, "queueOffset"), offset);
}

/* A PULL answered without messages: its code, remark and nextBeginOffset. */
static void expect_pull_miss(int fd, int opaque, const st_pull_args *pa, int code,
                             const char *remark, long long next_begin)
{
    rmq_cmd *r = st_pull(fd, opaque, pa);
    assert_non_null(r);
    assert_int_equal(r->code, code);
    assert_string_equal(r->remark, remark);
    assert_int_equal(st_ext_ll(r, "nextBeginOffset"), next_begin);
    rmq_cmd_free(r);
}

static void send_then_pull_and_view(void **state)
{
    fixture *f = *state;
    rmq_cmd *r =
        st_send(f->fd, 1, "TopicA", 1,
                "KEYS\001k1 k2\002WAIT\001true\002TAGS\001TagA\002color\001red", "hello", NULL);
    expect_send_ok(r, 1, 0);
    char msg_id[64];
    snprintf(msg_id, sizeof msg_id, "%s", rmq_cmd_ext_get(r, "msgId"));
    rmq_cmd_free(r);
    r = st_send(f->fd, 2, "TopicA", 1, "TAGS\001TagB", "world", NULL);
    expect_send_ok(r, 1, 1);
    rmq_cmd_free(r);
    assert_int_equal(st_max_offset(f->port, "TopicA", 1), 2);

    st_pull_args pa = {.topic = "TopicA", .queue = 1, .offset = 0};
    r = st_pull(f->fd, 3, &pa);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(r->remark, "FOUND");
    assert_int_equal(st_ext_ll(r, "nextBeginOffset"), 2);
    assert_int_equal(st_ext_ll(r, "minOffset"), 0);
    assert_int_equal(st_ext_ll(r, "maxOffset"), 2);
    assert_int_equal(st_ext_ll(r, "suggestWhichBrokerId"), 0);
    stored_record rec[4];
    assert_int_equal(st_records(r, rec, 4), 2);
    assert_int_equal(rec[0].body_len, 5);
    assert_memory_equal(rec[0].body, "hello", 5);
    assert_int_equal(rec[0].topic_len, 6);
    assert_int_equal(rec[0].queue_offset, 0);
    assert_int_equal(rec[1].queue_offset, 1);
    assert_int_equal(rec[0].store_ip_len, 4);
    assert_int_equal(rec[0].born_ip[0], 127);
    char *v = st_prop(&rec[0], "CLUSTER");
    assert_string_equal(v, "TestCluster");
    free(v);
    assert_null(st_prop(&rec[0], "WAIT")); /* stripped from plain messages */
    v = st_prop(&rec[0], "color");
    assert_string_equal(v, "red");
    free(v);
    v = st_prop(&rec[0], "KEYS");
    assert_string_equal(v, "k1 k2");
    free(v);
    long long phys = rec[0].phys_offset;
    rmq_cmd_free(r);

    /* the msgId is STOREHOST + commit-log offset */
    char want[64];
    snprintf(want, sizeof want, "7F000001%08X%016llX", (unsigned)rmq_td_port(&f->d, "broker"),
             phys);
    assert_string_equal(msg_id, want);

    char off[32];
    snprintf(off, sizeof off, "%lld", phys);
    const char *kv[] = {"offset", off, NULL};
    r = bcm_call(f->port, 33, kv, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_records(r, rec, 4), 1);
    assert_memory_equal(rec[0].body, "hello", 5);
    rmq_cmd_free(r);
    const char *bad[] = {"offset", "99999999", NULL};
    r = bcm_call(f->port, 33, bad, NULL);
    assert_int_equal(r->code, 1);
    assert_string_equal(r->remark, "can not find message by the offset, 99999999");
    rmq_cmd_free(r);
}

static void refused_sends_store_nothing(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = st_send(f->fd, 1, "TopicR", 0, NULL, "x", NULL);
    expect_send_ok(r, 0, 0);
    rmq_cmd_free(r);
    static const struct {
        const char *topic;
        int queue;
        const char *k, *v;
        int code;
        const char *remark_start;
    } cases[] = {
        {"", 0, NULL, NULL, 1, "The specified topic is blank."},
        {"Bad Topic", 0, NULL, NULL, 1, "The specified topic contains illegal characters"},
        {"SCHEDULE_TOPIC_XXXX", 0, NULL, NULL, 16,
         "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden."},
        {"TopicR", 4, NULL, NULL, 1,
         "request queueId[4] is illegal, TopicConfig [topicName=TopicR, readQueueNums=4, "
         "writeQueueNums=4, perm=RW-"},
        {"TopicR", 0, "e", "x1", 1, "java.lang.NumberFormatException: For input string: \"x1\""},
        {"TopicR", 0, "g", "", 1, "java.lang.NumberFormatException: For input string: \"\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *extra[] = {cases[i].k, cases[i].v, NULL};
        r = st_send(f->fd, (int)i + 2, cases[i].topic, cases[i].queue, NULL, "x",
                    cases[i].k ? extra : NULL);
        assert_non_null(r);
        assert_int_equal(r->code, cases[i].code);
        assert_non_null(r->remark);
        if (strncmp(r->remark, cases[i].remark_start, strlen(cases[i].remark_start)) != 0)
            fail_msg("case %zu: remark '%s'", i, r->remark);
        assert_null(rmq_cmd_ext_get(r, "msgId"));
        rmq_cmd_free(r);
    }
    /* a body over maxMessageSize is MESSAGE_ILLEGAL (13) */
    char *big = malloc(4194305 + 1);
    memset(big, 'b', 4194305);
    big[4194305] = 0;
    r = st_send(f->fd, 50, "TopicR", 0, NULL, big, NULL);
    free(big);
    assert_non_null(r);
    assert_int_equal(r->code, 13);
    assert_string_equal(r->remark,
                        "the message is illegal, maybe msg body or properties length not "
                        "matched. msg body length limit 4194304B, msg properties "
                        "length limit 32KB.");
    assert_string_equal(rmq_cmd_ext_get(r, "MSG_REGION"), "DefaultRegion");
    rmq_cmd_free(r);
    /* properties longer than 32767 bytes: MESSAGE_ILLEGAL, nothing stored */
    char *props = malloc(33000);
    memcpy(props, "big\001", 4);
    memset(props + 4, 'p', 33000 - 5);
    props[33000 - 1] = 0;
    r = st_send(f->fd, 51, "TopicR", 0, props, "x", NULL);
    free(props);
    assert_non_null(r);
    assert_int_equal(r->code, 13);
    rmq_cmd_free(r);
    for (int q = 0; q < 4; q++)
        assert_int_equal(st_max_offset(f->port, "TopicR", q), q == 0 ? 1 : 0);

    /* malformed property segments are dropped as Java's parser drops them */
    r = st_send(f->fd, 52, "TopicR", 1, "\001noname\002novalue\001\002junk\002TAGS\001T1", "y",
                NULL);
    expect_send_ok(r, 1, 0);
    rmq_cmd_free(r);
    st_pull_args pa = {.topic = "TopicR", .queue = 1, .offset = 0};
    r = st_pull(f->fd, 53, &pa);
    stored_record rec[2];
    assert_int_equal(st_records(r, rec, 2), 1);
    char want[64];
    snprintf(want, sizeof want, "TAGS\001T1\002CLUSTER\001TestCluster");
    assert_int_equal(rec[0].props_len, strlen(want));
    assert_memory_equal(rec[0].props, want, strlen(want));
    rmq_cmd_free(r);
}

static int admin_code(int fd, int code, const char *const *kv)
{
    rmq_cmd *req = rmq_tc_request(code, 900 + code, kv);
    rmq_cmd *r = rmq_tc_call_response(fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    int got = r->code;
    rmq_cmd_free(r);
    return got;
}

static int send_code(int fd, int opaque, const char *topic, int queue)
{
    rmq_cmd *r = st_send(fd, opaque, topic, queue, NULL, "c", NULL);
    assert_non_null(r);
    int got = r->code;
    rmq_cmd_free(r);
    return got;
}

/* A send to a queue past the topic's queues is refused with the config the
 * broker used in the remark (4.9.8 checks no topic perm on a send). */
static void expect_config_in_refusal(int fd, int opaque, const char *topic, const char *config)
{
    rmq_cmd *r = st_send(fd, opaque, topic, 9, NULL, "c", NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 1);
    assert_non_null(r->remark);
    if (!strstr(r->remark, config))
        fail_msg("remark '%s' lacks '%s'", r->remark, config);
    rmq_cmd_free(r);
}

/* The topic config a SEND checks is the current one: an update (17) with new
 * queue numbers or perm, a delete (215) and the auto-creation that follows
 * are each seen by the very next send. */
static void topic_changes_seen_by_next_send(void **state)
{
    fixture *f = *state;
    assert_int_equal(send_code(f->fd, 1, "TopicC", 0), 0); /* auto-created from TBW102 */
    expect_config_in_refusal(f->fd, 2, "TopicC", "readQueueNums=4, writeQueueNums=4, perm=RW-");
    const char *wide[] = {
        "topic", "TopicC",          "readQueueNums", "8", "writeQueueNums", "8", "perm",
        "6",     "topicFilterType", "SINGLE_TAG",    NULL};
    assert_int_equal(admin_code(f->fd, 17, wide), 0);
    assert_int_equal(send_code(f->fd, 3, "TopicC", 6), 0);
    expect_config_in_refusal(f->fd, 4, "TopicC", "readQueueNums=8, writeQueueNums=8, perm=RW-");
    const char *narrow[] = {
        "topic", "TopicC",          "readQueueNums", "8", "writeQueueNums", "2", "perm",
        "4",     "topicFilterType", "SINGLE_TAG",    NULL};
    assert_int_equal(admin_code(f->fd, 17, narrow), 0);
    expect_config_in_refusal(f->fd, 5, "TopicC", "readQueueNums=8, writeQueueNums=2, perm=R--");
    const char *del[] = {"topic", "TopicC", NULL};
    assert_int_equal(admin_code(f->fd, 215, del), 0);
    /* created again from TBW102 by the next send */
    expect_config_in_refusal(f->fd, 6, "TopicC", "readQueueNums=4, writeQueueNums=4, perm=RW-");
    assert_int_equal(send_code(f->fd, 7, "TopicC", 6), 1);
    assert_int_equal(send_code(f->fd, 8, "TopicC", 3), 0);
}

static rmq_cmd *send_batch(int fd, const char *topic, const void *body, size_t len)
{
    const char *kv[] = {"a", "PG",
                        "b", topic,
                        "c", "TBW102",
                        "d", "4",
                        "e", "2",
                        "f", "0",
                        "g", "1700000000000",
                        "h", "0",
                        "i", "WAIT\001true",
                        "j", "0",
                        "k", "false",
                        "m", "true",
                        NULL};
    rmq_cmd *req = rmq_tc_request(320, 7, kv);
    rmq_cmd_set_body(req, body, len, NULL, NULL);
    rmq_cmd *r = rmq_tc_call_response(fd, req, 5000);
    rmq_cmd_free(req);
    return r;
}

static size_t batch_record(uint8_t *out, int flag, const char *body, const char *props)
{
    size_t b = strlen(body), p = strlen(props), n = 0;
    uint32_t total = (uint32_t)(22 + b + p);
    uint32_t hdr[5] = {total, 0, 0, (uint32_t)flag, (uint32_t)b};
    for (int i = 0; i < 5; i++) {
        stored_put_be32(out + n, hdr[i]);
        n += 4;
    }
    memcpy(out + n, body, b);
    n += b;
    out[n++] = (uint8_t)(p >> 8);
    out[n++] = (uint8_t)p;
    memcpy(out + n, props, p);
    return n + p;
}

static void batch_send_and_malformed_batch(void **state)
{
    fixture *f = *state;
    uint8_t body[1024];
    size_t n = 0;
    n += batch_record(body + n, 0, "m0", "KEYS\001BATCH-0\002TAGS\001TagB");
    n += batch_record(body + n, 5, "m1", "TAGS\001TagB");
    n += batch_record(body + n, 0, "m2", "");
    rmq_cmd *r = send_batch(f->fd, "TopicB", body, n);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_ext_ll(r, "queueId"), 2);
    assert_int_equal(st_ext_ll(r, "queueOffset"), 0);
    const char *ids = rmq_cmd_ext_get(r, "msgId");
    assert_int_equal(strlen(ids), 3 * 32 + 2);
    assert_int_equal(ids[32], ',');
    rmq_cmd_free(r);

    /* truncated: Java's encoder throws, nothing is stored */
    r = send_batch(f->fd, "TopicB", body, n - 3);
    assert_non_null(r);
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->remark, "BufferUnderflowException"));
    rmq_cmd_free(r);
    assert_int_equal(st_max_offset(f->port, "TopicB", 2), 3);

    st_pull_args pa = {.topic = "TopicB", .queue = 2, .offset = 0};
    r = st_pull(f->fd, 8, &pa);
    stored_record rec[4];
    assert_int_equal(st_records(r, rec, 4), 3);
    assert_int_equal(rec[1].flag, 5);
    assert_int_equal(rec[2].queue_offset, 2);
    assert_int_equal(rec[0].store_ts, rec[2].store_ts);
    char *v = st_prop(&rec[0], "KEYS");
    assert_string_equal(v, "BATCH-0");
    free(v);
    v = st_prop(&rec[1], "CLUSTER");
    assert_string_equal(v, "TestCluster");
    free(v);
    v = st_prop(&rec[2], "WAIT"); /* the batch-level properties are kept */
    assert_string_equal(v, "true");
    free(v);
    rmq_cmd_free(r);
}

static void pull_codes_and_offsets(void **state)
{
    fixture *f = *state;
    st_pull_args pa = {.topic = "TopicP", .queue = 0, .offset = 0};
    rmq_cmd *r = st_send(f->fd, 1, "TopicP", 0, NULL, "p", NULL);
    expect_send_ok(r, 0, 0);
    rmq_cmd_free(r);
    /* offset == max: 19 OFFSET_OVERFLOW_ONE; > max: 21 with the max (4.9.8
     * has no min == 0 branch); empty queue at 3: 21 → 0 */
    pa.offset = 1;
    expect_pull_miss(f->fd, 2, &pa, 19, "OFFSET_OVERFLOW_ONE", 1);
    pa.offset = 7;
    expect_pull_miss(f->fd, 3, &pa, 21, "OFFSET_OVERFLOW_BADLY", 1);
    pa.queue = 3;
    pa.offset = 3;
    expect_pull_miss(f->fd, 4, &pa, 21, "NO_MESSAGE_IN_QUEUE", 0);
    pa.offset = 0;
    r = st_pull(f->fd, 5, &pa);
    assert_int_equal(r->code, 19);
    rmq_cmd_free(r);
    /* checks before the lookup */
    pa.queue = 9;
    r = st_pull(f->fd, 6, &pa);
    assert_int_equal(r->code, 1);
    assert_true(strncmp(r->remark,
                        "queueId[9] is illegal, topic:[TopicP] topicConfig.readQueueNums:[4] "
                        "consumer:[/127.0.0.1:",
                        88) == 0);
    assert_null(rmq_cmd_ext_get(r, "nextBeginOffset"));
    rmq_cmd_free(r);
    pa.queue = 0;
    pa.topic = "NoSuchTopic";
    r = st_pull(f->fd, 7, &pa);
    assert_int_equal(r->code, 17);
    assert_string_equal(r->remark, "topic[NoSuchTopic] not exist, apply first please! \nSee "
                                   "http://rocketmq.apache.org/docs/faq/ for further details.");
    rmq_cmd_free(r);
    /* without the subscription bit the group must have sent HEART_BEAT */
    pa.topic = "TopicP";
    pa.sys_flag = 2;
    r = st_pull(f->fd, 8, &pa);
    assert_int_equal(r->code, 24);
    assert_true(strncmp(r->remark, "the consumer's group info not exist", 35) == 0);
    rmq_cmd_free(r);
    /* SQL92 inline with an empty expression: 23 */
    pa.sys_flag = 4;
    pa.expr_type = "SQL92";
    pa.sub = "";
    r = st_pull(f->fd, 9, &pa);
    assert_int_equal(r->code, 23);
    rmq_cmd_free(r);
    /* a bad number in the FastCodesHeader */
    rmq_cmd *req = st_pull_request(10, &(st_pull_args){.topic = "TopicP"});
    rmq_cmd_ext_set(req, "queueOffset", "1x");
    r = rmq_tc_call_response(f->fd, req, 5000);
    rmq_cmd_free(req);
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->remark, "For input string: \"1x\""));
    rmq_cmd_free(r);
}

static void long_poll_woken_by_send(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = st_send(f->fd, 1, "TopicL", 0, NULL, "first", NULL);
    expect_send_ok(r, 0, 0);
    rmq_cmd_free(r);
    int pfd = rmq_tc_connect(f->port);
    st_pull_args pa = {
        .topic = "TopicL", .queue = 0, .offset = 1, .sys_flag = 4 | 2, .suspend_ms = 15000};
    rmq_cmd *req = st_pull_request(77, &pa);
    assert_int_equal(rmq_tc_send(pfd, req), 0);
    rmq_cmd_free(req);
    /* held: no answer for a while */
    rmq_cmd *early = rmq_tc_recv(pfd, 400);
    assert_null(early);
    uint64_t t0 = rmq_test_now_ms();
    r = st_send(f->fd, 2, "TopicL", 0, NULL, "second", NULL);
    expect_send_ok(r, 0, 1);
    rmq_cmd_free(r);
    rmq_cmd *ans = rmq_tc_recv(pfd, 10000);
    uint64_t waited = rmq_test_now_ms() - t0;
    assert_non_null(ans);
    assert_int_equal(ans->opaque, 77);
    assert_int_equal(ans->code, 0);
    assert_int_equal(st_ext_ll(ans, "nextBeginOffset"), 2);
    stored_record rec[2];
    assert_int_equal(st_records(ans, rec, 2), 1);
    assert_memory_equal(rec[0].body, "second", 6);
    assert_true(waited < 10000); /* long before the 15 s hold */
    rmq_cmd_free(ans);

    /* a held pull whose hold ends answers 19 with the same nextBeginOffset */
    pa.offset = 2;
    pa.suspend_ms = 300;
    req = st_pull_request(78, &pa);
    assert_int_equal(rmq_tc_send(pfd, req), 0);
    rmq_cmd_free(req);
    ans = rmq_tc_recv(pfd, 10000);
    assert_non_null(ans);
    assert_int_equal(ans->code, 19);
    assert_int_equal(st_ext_ll(ans, "nextBeginOffset"), 2);
    rmq_cmd_free(ans);

    /* a tag-filtered hold is not woken by a message of another tag */
    pa.sub = "TagX";
    pa.suspend_ms = 15000;
    req = st_pull_request(79, &pa);
    assert_int_equal(rmq_tc_send(pfd, req), 0);
    rmq_cmd_free(req);
    assert_null(rmq_tc_recv(pfd, 300));
    r = st_send(f->fd, 3, "TopicL", 0, "TAGS\001TagY", "y", NULL);
    rmq_cmd_free(r);
    assert_null(rmq_tc_recv(pfd, 500));
    r = st_send(f->fd, 4, "TopicL", 0, "TAGS\001TagX", "x", NULL);
    rmq_cmd_free(r);
    ans = rmq_tc_recv(pfd, 10000);
    assert_non_null(ans);
    assert_int_equal(ans->code, 0);
    assert_int_equal(st_records(ans, rec, 2), 1);
    assert_memory_equal(rec[0].body, "x", 1);
    assert_int_equal(st_ext_ll(ans, "nextBeginOffset"), 4);
    rmq_cmd_free(ans);
    close(pfd);
}

static void tag_and_sql92_filtering(void **state)
{
    fixture *f = *state;
    const char *props[] = {"TAGS\001TagA\002a\0011", "TAGS\001TagB\002a\0017",
                           "TAGS\001TagA\002a\0019", "a\00110"};
    for (int i = 0; i < 4; i++) {
        rmq_cmd *r = st_send(f->fd, i + 1, "TopicF", 0, props[i], "m", NULL);
        expect_send_ok(r, 0, i);
        rmq_cmd_free(r);
    }
    st_pull_args pa = {.topic = "TopicF", .queue = 0, .offset = 0, .sub = "TagA || TagC"};
    rmq_cmd *r = st_pull(f->fd, 10, &pa);
    stored_record rec[4];
    assert_int_equal(r->code, 0);
    assert_int_equal(st_records(r, rec, 4), 2);
    assert_int_equal(rec[0].queue_offset, 0);
    assert_int_equal(rec[1].queue_offset, 2);
    assert_int_equal(st_ext_ll(r, "nextBeginOffset"), 4); /* filtered entries are skipped */
    rmq_cmd_free(r);
    pa.sub = "TagZ";
    expect_pull_miss(f->fd, 11, &pa, 20, "NO_MATCHED_MESSAGE", 4);
    pa.expr_type = "SQL92";
    pa.sub = "a > 5";
    r = st_pull(f->fd, 12, &pa);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_records(r, rec, 4), 3);
    assert_int_equal(rec[0].queue_offset, 1);
    assert_int_equal(rec[2].queue_offset, 3);
    rmq_cmd_free(r);
    pa.sub = "TAGS = 'TagA' AND a < 5";
    r = st_pull(f->fd, 13, &pa);
    assert_int_equal(st_records(r, rec, 4), 1);
    assert_int_equal(rec[0].queue_offset, 0);
    rmq_cmd_free(r);
}

static void query_offsets_and_stats(void **state)
{
    fixture *f = *state;
    rmq_cmd *r =
        st_send(f->fd, 1, "TopicQ", 3, "KEYS\001order-1 order-2\002UNIQ_KEY\001U1", "q1", NULL);
    expect_send_ok(r, 3, 0);
    rmq_cmd_free(r);
    r = st_send(f->fd, 2, "TopicQ", 3, "KEYS\001order-2", "q2", NULL);
    rmq_cmd_free(r);

    const char *qk[] = {"topic",          "TopicQ", "key",          "order-2",       "maxNum", "32",
                        "beginTimestamp", "0",      "endTimestamp", "9999999999999", NULL};
    r = bcm_call(f->port, 12, qk, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    stored_record rec[4];
    assert_int_equal(st_records(r, rec, 4), 2);
    assert_true(rec[0].phys_offset < rec[1].phys_offset);
    assert_true(st_ext_ll(r, "indexLastUpdatePhyoffset") >= rec[1].phys_offset);
    rmq_cmd_free(r);
    const char *qu[] = {"topic",
                        "TopicQ",
                        "key",
                        "U1",
                        "maxNum",
                        "1",
                        "beginTimestamp",
                        "0",
                        "endTimestamp",
                        "9999999999999",
                        "_UNIQUE_KEY_QUERY",
                        "true",
                        NULL};
    r = bcm_call(f->port, 12, qu, NULL);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_records(r, rec, 4), 1);
    rmq_cmd_free(r);
    const char *qn[] = {"topic",          "TopicQ", "key",          "nope",          "maxNum", "32",
                        "beginTimestamp", "0",      "endTimestamp", "9999999999999", NULL};
    r = bcm_call(f->port, 12, qn, NULL);
    assert_int_equal(r->code, 22);
    assert_string_equal(r->remark, "can not find message, maybe time range not correct");
    assert_non_null(rmq_cmd_ext_get(r, "indexLastUpdateTimestamp"));
    rmq_cmd_free(r);

    const char *tq[] = {"topic", "TopicQ", "queueId", "3", NULL};
    r = bcm_call(f->port, 31, tq, NULL);
    assert_int_equal(st_ext_ll(r, "offset"), 0);
    rmq_cmd_free(r);
    r = bcm_call(f->port, 32, tq, NULL);
    long long t0 = st_ext_ll(r, "timestamp");
    assert_true(t0 > 1600000000000LL);
    rmq_cmd_free(r);
    char ts[32];
    snprintf(ts, sizeof ts, "%lld", t0);
    const char *so[] = {"topic", "TopicQ", "queueId", "3", "timestamp", ts, NULL};
    r = bcm_call(f->port, 29, so, NULL);
    assert_int_equal(r->code, 0);
    assert_true(st_ext_ll(r, "offset") == 0 || st_ext_ll(r, "offset") == 1);
    rmq_cmd_free(r);
    const char *eq[] = {"topic", "Empty", "queueId", "0", NULL};
    r = bcm_call(f->port, 32, eq, NULL);
    assert_int_equal(st_ext_ll(r, "timestamp"), -1);
    rmq_cmd_free(r);

    const char *st[] = {"topic", "TopicQ", NULL};
    r = bcm_call(f->port, 202, st, NULL);
    assert_int_equal(r->code, 0);
    assert_true(bcm_body_contains(r, "{\"offsetTable\":{{\"brokerName\":\"broker-t\",\"queueId\":0,"
                                     "\"topic\":\"TopicQ\"}:{\"lastUpdateTimestamp\":0,"
                                     "\"maxOffset\":0,\"minOffset\":0}"));
    assert_true(
        bcm_body_contains(r, "\"queueId\":3,\"topic\":\"TopicQ\"}:{\"lastUpdateTimestamp\":"));
    assert_true(bcm_body_contains(r, "\"maxOffset\":2,\"minOffset\":0}"));
    rmq_cmd_free(r);
    const char *st2[] = {"topic", "Missing", NULL};
    r = bcm_call(f->port, 202, st2, NULL);
    assert_int_equal(r->code, 17);
    assert_string_equal(r->remark, "topic[Missing] not exist");
    rmq_cmd_free(r);

    const char *cq[] = {"topic", "TopicQ", "queueId", "3", "index", "0", "count", "5", NULL};
    r = bcm_call(f->port, 321, cq, NULL);
    assert_int_equal(r->code, 0);
    assert_true(bcm_body_contains(r, "\"maxQueueIndex\":2,\"minQueueIndex\":0,\"queueData\":[{"));
    rmq_cmd_free(r);
    const char *cq2[] = {"topic", "TopicQ", "queueId", "3", "index", "9", "count", "5", NULL};
    r = bcm_call(f->port, 321, cq2, NULL);
    assert_string_equal(r->remark, "Index 9 of 3@TopicQ is not exist!");
    rmq_cmd_free(r);
}

static void restart_keeps_messages_and_offsets(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 5; i++) {
        rmq_cmd *r = st_send(f->fd, i + 1, "TopicK", 0, "TAGS\001T", "persist", NULL);
        expect_send_ok(r, 0, i);
        rmq_cmd_free(r);
    }
    /* a pull with the commit bit stores the offset in broker-client-mgr */
    st_pull_args pa = {.group = "CGK",
                       .topic = "TopicK",
                       .queue = 0,
                       .offset = 0,
                       .sys_flag = 4 | 1,
                       .commit_offset = 3};
    rmq_cmd *r = st_pull(f->fd, 9, &pa);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    close(f->fd);
    f->fd = -1;
    assert_int_equal(rmq_td_stop(&f->d), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    f->port = rmq_td_port(&f->d, "broker");
    f->fd = rmq_tc_connect(f->port);
    assert_int_equal(st_max_offset(f->port, "TopicK", 0), 5);
    pa.sys_flag = 4;
    r = st_pull(f->fd, 10, &pa);
    stored_record rec[8];
    assert_int_equal(st_records(r, rec, 8), 5);
    assert_memory_equal(rec[4].body, "persist", 7);
    rmq_cmd_free(r);
    const char *kv[] = {"consumerGroup", "CGK", "topic", "TopicK", "queueId", "0", NULL};
    r = bcm_call(f->port, 14, kv, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_ext_ll(r, "offset"), 3);
    rmq_cmd_free(r);
    /* and new messages continue the queue */
    r = st_send(f->fd, 11, "TopicK", 0, NULL, "after", NULL);
    expect_send_ok(r, 0, 5);
    rmq_cmd_free(r);
}

static void reload_then_shutdown_answers_held_pulls(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = st_send(f->fd, 1, "TopicH", 0, NULL, "kept", NULL);
    expect_send_ok(r, 0, 0);
    rmq_cmd_free(r);
    /* a reload hands the store over to the new generation (the load test is
     * tests/integration/store_reload) */
    int status = -1;
    const char *out = rmq_td_ctl_output(&f->d, &status, "reload", "store", NULL);
    assert_non_null(out);
    assert_non_null(strstr(out, "store reloaded: generation 1 -> 2"));
    assert_int_equal(status, 0);
    r = st_send(f->fd, 2, "TopicH", 0, NULL, "still", NULL);
    expect_send_ok(r, 0, 1);
    rmq_cmd_free(r);
    /* a pull held at shutdown is answered (19) before the daemon exits 0 */
    st_pull_args pa = {
        .topic = "TopicH", .queue = 0, .offset = 2, .sys_flag = 4 | 2, .suspend_ms = 30000};
    rmq_cmd *req = st_pull_request(3, &pa);
    assert_int_equal(rmq_tc_send(f->fd, req), 0);
    rmq_cmd_free(req);
    assert_null(rmq_tc_recv(f->fd, 300));
    uint64_t t0 = rmq_test_now_ms();
    assert_int_equal(rmq_td_stop(&f->d), 0);
    rmq_cmd *ans = rmq_tc_recv(f->fd, 5000);
    assert_non_null(ans);
    assert_int_equal(ans->code, 19);
    assert_int_equal(st_ext_ll(ans, "nextBeginOffset"), 2);
    rmq_cmd_free(ans);
    assert_true(rmq_test_now_ms() - t0 < 25000);
    /* restart for the teardown's clean stop */
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
}

/* Own daemon: the filter plugin with enablePropertyFilter = false. */
static void sql92_pull_refused_without_property_filter(void **state)
{
    (void)state;
    rmq_test_daemon d;
    int ns = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char bcm[256];
    snprintf(bcm, sizeof bcm, "namesrvAddr = \"127.0.0.1:%d\"; brokerIP1 = \"127.0.0.1\";", ns);
    assert_int_equal(rmq_td_init(&d, servers, NULL), 0);
    assert_int_equal(bcm_configure_namesrv_and_broker(&d, ns, "info", bcm), 0);
    assert_int_equal(
        rmq_td_add_plugin(&d, "filter", "filter", "broker", "enablePropertyFilter = false;"), 0);
    assert_int_equal(
        rmq_td_add_plugin(&d, "store", "store", "broker", "mappedFileSizeCommitLog = 1048576;"), 0);
    assert_int_equal(rmq_td_start(&d, NULL), 0);
    int fd = rmq_tc_connect(rmq_td_port(&d, "broker"));
    rmq_cmd *r = st_send(fd, 1, "TopicS", 0, "a\0017", "m", NULL);
    expect_send_ok(r, 0, 0);
    rmq_cmd_free(r);
    st_pull_args pa = {.topic = "TopicS", .expr_type = "SQL92", .sub = "a > 5"};
    r = st_pull(fd, 2, &pa);
    assert_non_null(r);
    assert_int_equal(r->code, 1);
    assert_string_equal(r->remark,
                        "The broker does not support consumer to filter message by SQL92");
    rmq_cmd_free(r);
    /* TAG pulls are not concerned */
    pa.expr_type = "TAG";
    pa.sub = "*";
    r = st_pull(fd, 3, &pa);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    close(fd);
    assert_int_equal(rmq_td_stop_reporting(&d), 0);
    rmq_td_cleanup(&d);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test_setup_teardown(send_then_pull_and_view, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(refused_sends_store_nothing, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(topic_changes_seen_by_next_send, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(batch_send_and_malformed_batch, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(pull_codes_and_offsets, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(long_poll_woken_by_send, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(tag_and_sql92_filtering, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(query_offsets_and_stats, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(restart_keeps_messages_and_offsets, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(reload_then_shutdown_answers_held_pulls, st_setup,
                                        st_teardown),
        cmocka_unit_test(sql92_pull_refused_without_property_filter),
    };
    struct CMUnitTest sel[sizeof all / sizeof all[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (rmq_test_name_selected(argc > 1 ? argv[1] : NULL, all[i].name))
            sel[n++] = all[i];
    return _cmocka_run_group_tests("store_daemon", sel, n, NULL, NULL);
}
