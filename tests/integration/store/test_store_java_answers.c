/* test_store_java_answers.c — raw frames against a real rmqhostd, checked
 * against what Java 4.9.8 answers (issue 21 §3): header numbers Java does
 * not require at decode (the NullPointerException comes where it unboxes
 * them), PULL past the max, the placeholder remark `not set any response
 * code` of answers that only set SUCCESS, the topic-name remarks, answers
 * made from an exception (no MSG_REGION/TRACE_ON), QUERY_MESSAGE without a
 * match and CONSUMER_SEND_MSG_BACK with a malformed offset. Each answer's
 * code, remark and ext fields are compared exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_test_client.h"

typedef st_fixture fixture;

#define NPE "java.lang.NullPointerException"
#define UNSET "not set any response code"

static int next_opaque = 1000;

/* RMQ_ANSWERS_JAVA_PORT=<port> runs the same frames against a Java broker
 * already listening there (brokerClusterName TestCluster, brokerName
 * broker-t, a fresh store; see the README): the expectations are Java's, so
 * they must hold there too, except that Java's exception remarks add the
 * stack frame rmqhost leaves out (docs/compat.md). */
static int java_port(void)
{
    const char *p = getenv("RMQ_ANSWERS_JAVA_PORT");
    return p && *p ? atoi(p) : 0;
}

static int ja_setup(void **state)
{
    if (!java_port())
        return st_setup(state);
    st_fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->port = java_port();
    f->fd = rmq_tc_connect(f->port);
    *state = f;
    if (f->fd < 0)
        fprintf(stderr, "cannot connect to the Java broker on port %d\n", f->port);
    return f->fd >= 0 ? 0 : -1;
}

static int ja_teardown(void **state)
{
    if (!java_port())
        return st_teardown(state);
    st_fixture *f = *state;
    close(f->fd);
    free(f);
    return 0;
}

/* remark equals `want`; from a Java broker, the exception part of `want`
 * (before the ", <frame>" rmqhost sends for some) followed by the JDK's
 * detail (": ...", e.g. Java 17's helpful NullPointerException text) or by
 * ", <frame>" (the frame's line depends on the JDK) */
static void expect_exception_remark(const char *got, const char *want)
{
    assert_non_null(got);
    if (java_port()) {
        const char *frame = strstr(want, ", ");
        size_t n = frame ? (size_t)(frame - want) : strlen(want);
        if (strncmp(got, want, n) == 0 &&
            (strncmp(got + n, ", ", 2) == 0 || strncmp(got + n, ": ", 2) == 0))
            return;
    }
    assert_string_equal(got, want);
}

/* Request `code` with exactly the ext fields kv (NULL-terminated pairs). */
static rmq_cmd *call_kv(int fd, int code, const char *const *kv, const void *body, size_t blen)
{
    rmq_cmd *req = rmq_tc_request(code, next_opaque++, kv);
    assert_non_null(req);
    if (body)
        rmq_cmd_set_body(req, body, blen, NULL, NULL);
    rmq_cmd *r = rmq_tc_call_response(fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    return r;
}

/* An answer Java builds from an exception: SYSTEM_ERROR, the remark, and
 * none of the send answer's ext fields. Frees r. */
static void expect_exception(rmq_cmd *r, const char *remark)
{
    assert_int_equal(r->code, 1);
    expect_exception_remark(r->remark, remark);
    assert_null(rmq_cmd_ext_get(r, "MSG_REGION"));
    assert_null(rmq_cmd_ext_get(r, "TRACE_ON"));
    rmq_cmd_free(r);
}

static void expect_remark(rmq_cmd *r, int code, const char *remark)
{
    assert_int_equal(r->code, code);
    if (!remark) {
        assert_null(r->remark);
    } else {
        assert_non_null(r->remark);
        assert_string_equal(r->remark, remark);
    }
}

/* A V2 send (310/320) to `topic` queue `q` with the header fields a..m
 * except those named in `drop` (a string of letters), plus extra pairs. */
static rmq_cmd *send_v2(int fd, int code, const char *topic, const char *q, const char *props,
                        const char *drop, const void *body, size_t blen)
{
    const char *all[][2] = {{"a", "PG"},
                            {"b", topic},
                            {"c", "TBW102"},
                            {"d", "4"},
                            {"e", q},
                            {"f", "0"},
                            {"g", "1700000000000"},
                            {"h", "0"},
                            {"i", props ? props : ""},
                            {"j", "0"},
                            {"k", "false"},
                            {"m", code == 320 ? "true" : "false"}};
    const char *kv[2 * 12 + 1];
    size_t n = 0;
    for (size_t i = 0; i < 12; i++) {
        if (drop && strchr(drop, all[i][0][0]))
            continue;
        kv[n++] = all[i][0];
        kv[n++] = all[i][1];
    }
    kv[n] = NULL;
    return call_kv(fd, code, kv, body, blen);
}

/* SEND_MESSAGE (10), field names spelled out, without defaultTopicQueueNums. */
static rmq_cmd *send_v1_without_defq(int fd, const char *topic)
{
    const char *kv[] = {"producerGroup",
                        "PG",
                        "topic",
                        topic,
                        "defaultTopic",
                        "TBW102",
                        "queueId",
                        "0",
                        "sysFlag",
                        "0",
                        "bornTimestamp",
                        "1700000000000",
                        "flag",
                        "0",
                        "properties",
                        "",
                        NULL};
    return call_kv(fd, 10, kv, "v1", 2);
}

static void expect_stored(rmq_cmd *r)
{
    assert_int_equal(r->code, 0);
    assert_non_null(rmq_cmd_ext_get(r, "msgId"));
    assert_string_equal(rmq_cmd_ext_get(r, "MSG_REGION"), "DefaultRegion");
    rmq_cmd_free(r);
}

/* Sends without `d`: stored when the topic exists (Java reads it only to
 * create a topic); an absent topic throws where it is created. Other
 * numbers are unboxed later than the checks that come before them. */
static void send_numbers_are_required_where_java_unboxes_them(void **state)
{
    fixture *f = *state;
    expect_stored(send_v2(f->fd, 310, "TopicD", "0", NULL, NULL, "x", 1));
    expect_stored(send_v2(f->fd, 310, "TopicD", "0", NULL, "d", "x", 1));
    expect_stored(send_v1_without_defq(f->fd, "TopicD"));
    expect_exception(send_v2(f->fd, 310, "TopicDNew", "0", NULL, "d", "x", 1), NPE);
    expect_exception(send_v1_without_defq(f->fd, "TopicDNew1"), NPE);
    /* queueId, sysFlag, flag, bornTimestamp */
    expect_exception(send_v2(f->fd, 310, "TopicD", "0", NULL, "e", "x", 1), NPE);
    expect_exception(send_v2(f->fd, 310, "TopicD", "0", NULL, "f", "x", 1), NPE);
    expect_exception(send_v2(f->fd, 310, "TopicD", "0", NULL, "h", "x", 1), NPE);
    expect_exception(send_v2(f->fd, 310, "TopicD", "0", NULL, "g", "x", 1), NPE);
    /* the topic check comes first: a send answer, with its ext fields */
    rmq_cmd *r = send_v2(f->fd, 310, "SCHEDULE_TOPIC_XXXX", "0", NULL, "e", "x", 1);
    expect_remark(r, 16, "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden.");
    assert_string_equal(rmq_cmd_ext_get(r, "MSG_REGION"), "DefaultRegion");
    rmq_cmd_free(r);
    /* a reply (325) without d to a known topic gets to its push */
    r = send_v2(f->fd, 325, "TopicD", "0", "REPLY_TO_CLIENT\001nobody", "d", "x", 1);
    expect_remark(r, 1, "push reply message fail, channel of <nobody> not found.");
    assert_string_equal(rmq_cmd_ext_get(r, "MSG_REGION"), "DefaultRegion");
    rmq_cmd_free(r);
    /* the reply runs the send path's msgCheck: its refusals are send answers */
    r = send_v2(f->fd, 325, "SCHEDULE_TOPIC_XXXX", "0", "REPLY_TO_CLIENT\001nobody", NULL, "x", 1);
    expect_remark(r, 16, "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden.");
    assert_string_equal(rmq_cmd_ext_get(r, "TRACE_ON"), "true");
    rmq_cmd_free(r);
    expect_exception(send_v2(f->fd, 325, "TopicD", "0", "REPLY_TO_CLIENT\001nobody", "g", "x", 1),
                     NPE);
}

/* Pulls: subVersion is read only by a SQL92 or heartbeat subscription. */
static void pull_numbers_are_required_where_java_unboxes_them(void **state)
{
    fixture *f = *state;
    expect_stored(send_v2(f->fd, 310, "TopicPV", "0", NULL, NULL, "x", 1));
    for (int i = 0; i < 500 && st_max_offset(f->port, "TopicPV", 0) < 1; i++)
        usleep(10000); /* the consume queue is dispatched behind the append */
    const char *kv[] = {"consumerGroup",
                        "CGPV",
                        "topic",
                        "TopicPV",
                        "queueId",
                        "0",
                        "queueOffset",
                        "0",
                        "maxMsgNums",
                        "32",
                        "sysFlag",
                        "4",
                        "commitOffset",
                        "0",
                        "suspendTimeoutMillis",
                        "0",
                        "subscription",
                        "*",
                        "expressionType",
                        "TAG",
                        NULL};
    rmq_cmd *r = call_kv(f->fd, 11, kv, NULL, 0);
    expect_remark(r, 0, "FOUND");
    assert_string_equal(rmq_cmd_ext_get(r, "nextBeginOffset"), "1");
    rmq_cmd_free(r);
    /* an SQL92 subscription reads subVersion inside the try whose catch
     * answers 23 */
    const char *sql[] = {"consumerGroup",
                         "CGPV",
                         "topic",
                         "TopicPV",
                         "queueId",
                         "0",
                         "queueOffset",
                         "0",
                         "maxMsgNums",
                         "32",
                         "sysFlag",
                         "4",
                         "commitOffset",
                         "0",
                         "suspendTimeoutMillis",
                         "0",
                         "subscription",
                         "a > 1",
                         "expressionType",
                         "SQL92",
                         NULL};
    r = call_kv(f->fd, 11, sql, NULL, 0);
    expect_remark(r, 23, "parse the consumer's subscription failed");
    rmq_cmd_free(r);
    /* the suspend bit unboxes suspendTimeoutMillis */
    const char *susp[] = {"consumerGroup", "CGPV", "topic",        "TopicPV", "queueId", "0",
                          "queueOffset",   "0",    "maxMsgNums",   "32",      "sysFlag", "6",
                          "commitOffset",  "0",    "subscription", "*",       NULL};
    expect_exception(call_kv(f->fd, 11, susp, NULL, 0), NPE);
    /* without consumerGroup / topic / queueId / queueOffset: thrown */
    static const char *const drops[] = {"consumerGroup", "topic",      "queueId",
                                        "queueOffset",   "maxMsgNums", "sysFlag"};
    for (size_t d = 0; d < sizeof drops / sizeof drops[0]; d++) {
        const char *k2[21];
        size_t n = 0;
        for (size_t i = 0; kv[i]; i += 2)
            if (strcmp(kv[i], drops[d]) != 0) {
                k2[n++] = kv[i];
                k2[n++] = kv[i + 1];
            }
        k2[n] = NULL;
        expect_exception(call_kv(f->fd, 11, k2, NULL, 0), NPE);
    }
}

static rmq_cmd *pull_at(int fd, long long offset, int sys_flag, long long suspend)
{
    st_pull_args pa = {.group = "CGMAX",
                       .topic = "TopicMax",
                       .offset = offset,
                       .sys_flag = sys_flag,
                       .suspend_ms = suspend,
                       .commit_offset = 3};
    rmq_cmd *r = st_pull(fd, next_opaque++, &pa);
    assert_non_null(r);
    return r;
}

/* 4.9.8: nextBeginOffset of OFFSET_OVERFLOW_BADLY is the max, min 0 or not */
static void pull_past_the_max_moves_to_the_max(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 7; i++)
        expect_stored(send_v2(f->fd, 310, "TopicMax", "0", NULL, NULL, "m", 1));
    for (int i = 0; i < 500 && st_max_offset(f->port, "TopicMax", 0) < 7; i++)
        usleep(10000);
    const int flags[] = {4, 4 | 2, 4 | 1};
    for (size_t i = 0; i < 3; i++) {
        rmq_cmd *r = pull_at(f->fd, 9, flags[i], flags[i] & 2 ? 3000 : 0);
        expect_remark(r, 21, "OFFSET_OVERFLOW_BADLY");
        assert_string_equal(rmq_cmd_ext_get(r, "nextBeginOffset"), "7");
        assert_string_equal(rmq_cmd_ext_get(r, "minOffset"), "0");
        assert_string_equal(rmq_cmd_ext_get(r, "maxOffset"), "7");
        rmq_cmd_free(r);
    }
}

static void create_topic(int fd, const char *topic, const char *write_queues, int code,
                         const char *remark)
{
    const char *kv[] = {"topic",
                        topic,
                        "defaultTopic",
                        "TBW102",
                        "readQueueNums",
                        "4",
                        "writeQueueNums",
                        write_queues,
                        "perm",
                        "6",
                        "topicFilterType",
                        "SINGLE_TAG",
                        "topicSysFlag",
                        "0",
                        "order",
                        "false",
                        NULL};
    rmq_cmd *r = call_kv(fd, 17, kv, NULL, 0);
    expect_remark(r, code, remark);
    rmq_cmd_free(r);
}

/* TopicValidator's texts; SUCCESS keeps createResponseCommand's remark */
static void create_topic_answers(void **state)
{
    fixture *f = *state;
    create_topic(f->fd, "TopicNew", "4", 0, UNSET);
    create_topic(f->fd, "Bad Topic", "4", 1,
                 "The specified topic contains illegal characters, allowing only "
                 "^[%|a-zA-Z0-9_-]+$");
    create_topic(f->fd, "TestCluster", "4", 1,
                 "The topic[TestCluster] is conflict with system topic.");
    create_topic(f->fd, "broker-t", "4", 1, "The topic[broker-t] is conflict with system topic.");
    create_topic(f->fd, "rmq_sys_x", "4", 1, "The topic[rmq_sys_x] is conflict with system topic.");
    create_topic(f->fd, "TBW102", "4", 1, "The topic[TBW102] is conflict with system topic.");
    create_topic(f->fd, "TestCluster_REPLY_TOPIC", "4", 1,
                 "The topic[TestCluster_REPLY_TOPIC] is conflict with system topic.");
    /* checkFields wants a TopicFilterType name; the queue numbers and perm
     * are unboxed after the topic checks */
    const char *no_ft[] = {"topic", "TopicF", "readQueueNums", "4", "writeQueueNums", "4", "perm",
                           "6",     NULL};
    expect_exception(call_kv(f->fd, 17, no_ft, NULL, 0),
                     "org.apache.rocketmq.remoting.exception.RemotingCommandException: "
                     "topicFilterType = [null] value invalid");
    const char *no_rq[] = {"topic", "TopicF",          "writeQueueNums", "4", "perm",
                           "6",     "topicFilterType", "SINGLE_TAG",     NULL};
    expect_exception(call_kv(f->fd, 17, no_rq, NULL, 0), NPE);
    const char *bad_no_rq[] = {"topic",           "Bad Topic", "perm", "6",
                               "topicFilterType", "MULTI_TAG", NULL};
    rmq_cmd *r = call_kv(f->fd, 17, bad_no_rq, NULL, 0);
    expect_remark(r, 1,
                  "The specified topic contains illegal characters, allowing only "
                  "^[%|a-zA-Z0-9_-]+$");
    rmq_cmd_free(r);
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Exceptions out of the send path are the dispatcher's answers: no ext fields */
static void exception_answers_carry_no_ext_fields(void **state)
{
    fixture *f = *state;
    expect_stored(send_v2(f->fd, 310, "TopicEx", "0", NULL, NULL, "x", 1));
    expect_exception(send_v2(f->fd, 310, "TopicEx", "0", "DELAY\001x", NULL, "x", 1),
                     "java.lang.NumberFormatException: For input string: \"x\", "
                     "java.lang.NumberFormatException.forInputString(NumberFormatException.java:"
                     "65)");
    /* a batch: garbage, truncated, a bad DELAY */
    expect_exception(send_v2(f->fd, 320, "TopicEx", "0", NULL, NULL, "garbage!", 8),
                     "java.nio.BufferUnderflowException, "
                     "java.nio.Buffer.nextGetIndex(Buffer.java:506)");
    uint8_t rec[40] = {0};
    put_be32(rec, 60); /* totalSize claims more than the body holds */
    put_be32(rec + 4, 0);
    put_be32(rec + 16, 30); /* bodyLen */
    rmq_cmd *r = send_v2(f->fd, 320, "TopicEx", "0", NULL, NULL, rec, sizeof rec);
    assert_int_equal(r->code, 1);
    assert_non_null(r->remark);
    assert_true(strncmp(r->remark, "java.", 5) == 0);
    assert_null(rmq_cmd_ext_get(r, "MSG_REGION"));
    assert_null(rmq_cmd_ext_get(r, "TRACE_ON"));
    rmq_cmd_free(r);
    expect_exception(send_v2(f->fd, 320, "TopicEx", "0", "DELAY\001y", NULL, rec, sizeof rec),
                     "java.lang.NumberFormatException: For input string: \"y\", "
                     "java.lang.NumberFormatException.forInputString(NumberFormatException.java:"
                     "65)");
    /* a topic without write queues: randomQueueId divides by zero */
    create_topic(f->fd, "TopicW0", "0", 0, UNSET);
    expect_exception(send_v2(f->fd, 310, "TopicW0", "-1", NULL, NULL, "x", 1),
                     "java.lang.ArithmeticException: / by zero");
    assert_int_equal(st_max_offset(f->port, "TopicEx", 0), 1);
}

static rmq_cmd *query(int fd, const char *topic, const char *key, const char *begin,
                      const char *end)
{
    const char *kv[] = {"topic",          topic, "key",          key, "maxNum", "32",
                        "beginTimestamp", begin, "endTimestamp", end, NULL};
    return call_kv(fd, 12, kv, NULL, 0);
}

/* indexLastUpdate* come from a lookup that found offsets only */
static void query_without_a_match_has_no_index_time(void **state)
{
    fixture *f = *state;
    expect_stored(send_v2(f->fd, 310, "TopicQ", "0", "KEYS\001K1", NULL, "q", 1));
    expect_stored(send_v2(f->fd, 310, "TopicQ2", "0", "KEYS\001K2", NULL, "q", 1));
    rmq_cmd *r = NULL;
    for (int i = 0; i < 500; i++) { /* the index is built behind the append */
        rmq_cmd_free(r);
        r = query(f->fd, "TopicQ", "K1", "0", "9999999999999");
        if (r->code == 0)
            break;
        usleep(10000);
    }
    assert_int_equal(r->code, 0);
    assert_true(st_ext_ll(r, "indexLastUpdateTimestamp") > 0);
    rmq_cmd_free(r);
    const char *misses[][4] = {{"TopicQ", "nokey", "0", "9999999999999"},
                               {"TopicQ", "K1", "9999999999000", "9999999999999"},
                               {"TopicQ", "K2", "0", "9999999999999"}};
    for (size_t i = 0; i < 3; i++) {
        r = query(f->fd, misses[i][0], misses[i][1], misses[i][2], misses[i][3]);
        expect_remark(r, 22, "can not find message, maybe time range not correct");
        assert_string_equal(rmq_cmd_ext_get(r, "indexLastUpdateTimestamp"), "0");
        assert_string_equal(rmq_cmd_ext_get(r, "indexLastUpdatePhyoffset"), "0");
        rmq_cmd_free(r);
    }
    /* no topic: Java's index key is "null#K1", found nowhere */
    const char *no_topic[] = {"key", "K1",           "maxNum",        "32", "beginTimestamp",
                              "0",   "endTimestamp", "9999999999999", NULL};
    r = call_kv(f->fd, 12, no_topic, NULL, 0);
    expect_remark(r, 22, "can not find message, maybe time range not correct");
    rmq_cmd_free(r);
    /* maxNum is unboxed unless _UNIQUE_KEY_QUERY replaced it first */
    const char *no_max[] = {"topic", "TopicQ",       "key",           "K1", "beginTimestamp",
                            "0",     "endTimestamp", "9999999999999", NULL};
    expect_exception(call_kv(f->fd, 12, no_max, NULL, 0), NPE);
    const char *unique[] = {"topic",
                            "TopicQ",
                            "key",
                            "K1",
                            "beginTimestamp",
                            "0",
                            "endTimestamp",
                            "9999999999999",
                            "_UNIQUE_KEY_QUERY",
                            "true",
                            NULL};
    r = call_kv(f->fd, 12, unique, NULL, 0);
    expect_remark(r, 0, NULL);
    rmq_cmd_free(r);
}

/* offset = x: the reflection decode leaves it null; lookMessageByOffset throws */
static void send_back_with_a_malformed_offset(void **state)
{
    fixture *f = *state;
    const char *kv[] = {"offset", "x", "group", "CGSB", "delayLevel", "0", NULL};
    expect_exception(call_kv(f->fd, 36, kv, NULL, 0), NPE);
    const char *kv2[] = {"offset", "0", "delayLevel", "0", NULL};
    expect_exception(call_kv(f->fd, 36, kv2, NULL, 0), NPE);
    /* Long.parseLong takes no blank: null, then the NPE */
    const char *kv3[] = {"offset", " 5", "group", "CGSB", "delayLevel", "0", NULL};
    expect_exception(call_kv(f->fd, 36, kv3, NULL, 0), NPE);
}

static long long id_offset(const char *id)
{
    return id && strlen(id) >= 16 ? strtoll(id + strlen(id) - 16, NULL, 16) : -1;
}

static rmq_cmd *end_tx(int fd, long long phys, long long qoff, const char *what)
{
    char p[32], q[32];
    snprintf(p, sizeof p, "%lld", phys);
    snprintf(q, sizeof q, "%lld", qoff);
    const char *kv[] = {"producerGroup",
                        "PG",
                        "tranStateTableOffset",
                        q,
                        "commitLogOffset",
                        p,
                        "commitOrRollback",
                        what,
                        "fromTransactionCheck",
                        "false",
                        "msgId",
                        "U1",
                        NULL};
    return call_kv(fd, 37, kv, NULL, 0);
}

/* Answers whose processors set only SUCCESS keep the placeholder remark:
 * END_TRANSACTION rollback (a commit's answer clears it), QUERY_CONSUME_QUEUE */
static void success_answers_with_the_placeholder_remark(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 2; i++) {
        rmq_cmd *r = send_v2(f->fd, 310, "TopicTx", "0",
                             "TRAN_MSG\001true\002PGROUP\001PG\002UNIQ_KEY\001U1", NULL, "t", 1);
        assert_int_equal(r->code, 0);
        long long phys = id_offset(rmq_cmd_ext_get(r, "msgId"));
        long long qoff = st_ext_ll(r, "queueOffset");
        rmq_cmd_free(r);
        r = end_tx(f->fd, phys, qoff, i == 0 ? "12" : "8");
        expect_remark(r, 0, i == 0 ? UNSET : NULL);
        rmq_cmd_free(r);
    }
    for (int i = 0; i < 500 && st_max_offset(f->port, "TopicTx", 0) < 1; i++)
        usleep(10000);
    const char *kv[] = {"topic", "TopicTx", "queueId", "0", "index", "0", "count", "1", NULL};
    rmq_cmd *r = call_kv(f->fd, 321, kv, NULL, 0);
    expect_remark(r, 0, UNSET);
    assert_true(r->body_len > 0);
    rmq_cmd_free(r);
    /* no consume queue at all: refused; an index past the end: SUCCESS */
    const char *none[] = {"topic", "NoSuchTopic", "queueId", "0", "index", "0", "count", "1", NULL};
    r = call_kv(f->fd, 321, none, NULL, 0);
    expect_remark(r, 1, "0@NoSuchTopic is not exist!");
    rmq_cmd_free(r);
    const char *past[] = {"topic", "TopicTx", "queueId", "0", "index", "5", "count", "1", NULL};
    r = call_kv(f->fd, 321, past, NULL, 0);
    expect_remark(r, 0, "Index 5 of 0@TopicTx is not exist!");
    assert_int_equal(r->body_len, 0);
    rmq_cmd_free(r);
}

/* END_TRANSACTION's header (reflection decode): checkFields unboxes
 * commitOrRollback; commitLogOffset finds the half message; a missing
 * producerGroup only fails the group comparison; tranStateTableOffset is
 * unboxed by that check */
static void end_transaction_numbers_where_java_unboxes_them(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = send_v2(f->fd, 310, "TopicTx2", "0",
                         "TRAN_MSG\001true\002PGROUP\001PG\002UNIQ_KEY\001U1", NULL, "t", 1);
    assert_int_equal(r->code, 0);
    char phys[32], qoff[32];
    snprintf(phys, sizeof phys, "%lld", id_offset(rmq_cmd_ext_get(r, "msgId")));
    snprintf(qoff, sizeof qoff, "%lld", st_ext_ll(r, "queueOffset"));
    rmq_cmd_free(r);
    const char *no_cor[] = {"producerGroup",
                            "PG",
                            "tranStateTableOffset",
                            qoff,
                            "commitLogOffset",
                            phys,
                            "msgId",
                            "U1",
                            NULL};
    expect_exception(call_kv(f->fd, 37, no_cor, NULL, 0), NPE);
    const char *no_clo[] = {"producerGroup",
                            "PG",
                            "tranStateTableOffset",
                            qoff,
                            "commitOrRollback",
                            "12",
                            "msgId",
                            "U1",
                            NULL};
    expect_exception(call_kv(f->fd, 37, no_clo, NULL, 0), NPE);
    const char *no_group[] = {"tranStateTableOffset",
                              qoff,
                              "commitLogOffset",
                              phys,
                              "commitOrRollback",
                              "12",
                              "msgId",
                              "U1",
                              NULL};
    r = call_kv(f->fd, 37, no_group, NULL, 0);
    expect_remark(r, 1, "The producer group wrong");
    rmq_cmd_free(r);
    const char *no_tsto[] = {
        "producerGroup", "PG", "commitLogOffset", phys, "commitOrRollback", "12", NULL};
    expect_exception(call_kv(f->fd, 37, no_tsto, NULL, 0), NPE);
    /* without msgId (never read) the rollback is done */
    const char *no_id[] = {"producerGroup",
                           "PG",
                           "tranStateTableOffset",
                           qoff,
                           "commitLogOffset",
                           phys,
                           "commitOrRollback",
                           "12",
                           NULL};
    r = call_kv(f->fd, 37, no_id, NULL, 0);
    expect_remark(r, 0, UNSET);
    rmq_cmd_free(r);
}

/* INVOKE_BROKER_TO_RESET_OFFSET (222): Broker2Client.resetOffset sets SUCCESS
 * on createResponseCommand's command and never clears its remark */
static void reset_offset_success_keeps_the_placeholder_remark(void **state)
{
    fixture *f = *state;
    create_topic(f->fd, "TopicRO", "4", 0, UNSET);
    for (int q = 0; q < 4; q++) {
        char qs[8];
        snprintf(qs, sizeof qs, "%d", q);
        const char *kv[] = {"consumerGroup", "CGRO", "topic", "TopicRO", "queueId", qs,
                            "commitOffset",  "0",    NULL};
        rmq_cmd *r = call_kv(f->fd, 15, kv, NULL, 0);
        assert_int_equal(r->code, 0);
        rmq_cmd_free(r);
    }
    const char *hb =
        "{\"clientID\":\"127.0.0.1@ro\",\"consumerDataSet\":[{\"consumeFromWhere\":"
        "\"CONSUME_FROM_LAST_OFFSET\",\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":"
        "\"CGRO\",\"messageModel\":\"CLUSTERING\",\"subscriptionDataSet\":[{"
        "\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"TAG\",\"subString\":"
        "\"*\",\"subVersion\":1,\"tagsSet\":[],\"topic\":\"TopicRO\"}],\"unitMode\":false}],"
        "\"producerDataSet\":[]}";
    rmq_cmd *r = call_kv(f->fd, 34, NULL, hb, strlen(hb));
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    const char *kv[] = {"topic", "TopicRO", "group", "CGRO", "timestamp",
                        "-1",    "isForce", "true",  NULL};
    /* the broker pushes RESET_CONSUMER_CLIENT_OFFSET to this connection first */
    r = call_kv(f->fd, 222, kv, NULL, 0);
    expect_remark(r, 0, UNSET);
    assert_true(r->body_len > 0);
    rmq_cmd_free(r);
    /* timestamp and isForce are primitives (0/false when absent); a null
     * group is looked up as "TopicRO@null"; a null topic throws */
    const char *no_group[] = {"topic", "TopicRO", NULL};
    r = call_kv(f->fd, 222, no_group, NULL, 0);
    expect_remark(r, 1, "THe consumer group <null> not exist");
    rmq_cmd_free(r);
    const char *no_ts[] = {"topic", "TopicRO", "group", "CGRO", NULL};
    r = call_kv(f->fd, 222, no_ts, NULL, 0);
    expect_remark(r, 0, UNSET);
    rmq_cmd_free(r);
    const char *no_topic[] = {"group", "CGRO", "timestamp", "-1", NULL};
    expect_exception(call_kv(f->fd, 222, no_topic, NULL, 0), NPE);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test_setup_teardown(send_numbers_are_required_where_java_unboxes_them, ja_setup,
                                        ja_teardown),
        cmocka_unit_test_setup_teardown(pull_numbers_are_required_where_java_unboxes_them, ja_setup,
                                        ja_teardown),
        cmocka_unit_test_setup_teardown(pull_past_the_max_moves_to_the_max, ja_setup, ja_teardown),
        cmocka_unit_test_setup_teardown(create_topic_answers, ja_setup, ja_teardown),
        cmocka_unit_test_setup_teardown(exception_answers_carry_no_ext_fields, ja_setup,
                                        ja_teardown),
        cmocka_unit_test_setup_teardown(query_without_a_match_has_no_index_time, ja_setup,
                                        ja_teardown),
        cmocka_unit_test_setup_teardown(send_back_with_a_malformed_offset, ja_setup, ja_teardown),
        cmocka_unit_test_setup_teardown(success_answers_with_the_placeholder_remark, ja_setup,
                                        ja_teardown),
        cmocka_unit_test_setup_teardown(reset_offset_success_keeps_the_placeholder_remark, ja_setup,
                                        ja_teardown),
        cmocka_unit_test_setup_teardown(end_transaction_numbers_where_java_unboxes_them, ja_setup,
                                        ja_teardown),
    };
    struct CMUnitTest sel[sizeof all / sizeof all[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (rmq_test_name_selected(argc > 1 ? argv[1] : NULL, all[i].name))
            sel[n++] = all[i];
    return _cmocka_run_group_tests("store_java_answers", sel, n, NULL, NULL);
}
