/* test_store_features.c — the store's message features end to end over raw
 * frames: a delayed message stays invisible until its level elapses; a
 * CONSUMER_SEND_MSG_BACK copy comes back in %RETRY% after its level and goes
 * to %DLQ% after maxReconsumeTimes (the recorded 36 frame answers as Java's);
 * a transaction commits, rolls back, and is resolved by check-back when the
 * producer never ends it; reply messages reach the requester; runtime info,
 * offset reset and topic deletion. Short levels and intervals keep it fast;
 * every wait polls a condition with a deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "store_test_client.h"

#define WAIT_MS 15000

typedef struct fixture {
    rmq_test_daemon d;
    int port;
} fixture;

static int setup_store(void **state, const char *store_extra)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    int ns = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char store_conf[512];
    snprintf(store_conf, sizeof store_conf,
             "mappedFileSizeCommitLog = 1048576; messageDelayLevel = \"1s 2s 1s\";"
             " transactionTimeOut = 300; transactionCheckInterval = 300;"
             " transactionCheckMax = 5; %s",
             store_extra);
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-f\"; brokerIP1 = "
             "\"127.0.0.1\"; topics = \"T:4;DT:1;TT:1;DelT:2;RMQ_SYS_TRANS_HALF_TOPIC:1;"
             "RMQ_SYS_TRANS_OP_HALF_TOPIC:1\";", /* the tests pull the system queues */
             ns);
    if (ns <= 0 || rmq_td_init(&f->d, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(&f->d, ns, "info", bcm) != 0 ||
        rmq_td_add_plugin(&f->d, "store", "store", "broker", store_conf) != 0 ||
        rmq_td_start(&f->d, NULL) != 0)
        return -1;
    f->port = rmq_td_port(&f->d, "broker");
    return f->port > 0 ? 0 : -1;
}

static int setup(void **state)
{
    return setup_store(state, "");
}

/* 28's put-latency window closes every second instead of every minute */
static int setup_short_window(void **state)
{
    return setup_store(state, "putStatsWindowMillis = 1000;");
}

/* Sends and pulls on the store's executors (Java's threading), with queue
 * capacities 28 must echo. */
static int setup_executors(void **state)
{
    return setup_store(state, "sendMessageInline = false; pullMessageInline = false;"
                              " sendThreadPoolQueueCapacity = 77; pullThreadPoolQueueCapacity = 88;"
                              " queryThreadPoolQueueCapacity = 99;");
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f) {
        assert_int_equal(rmq_td_stop_reporting(&f->d), 0);
        rmq_td_cleanup(&f->d);
        free(f);
    }
    return 0;
}

/* ---- raw frames ---- */

static int next_opaque = 100;

static rmq_cmd *call(int fd, rmq_cmd *req)
{
    rmq_cmd *r = rmq_tc_call_response(fd, req, 5000);
    rmq_cmd_free(req);
    return r;
}

/* The header SEND_MESSAGE (10) and SEND_REPLY_MESSAGE (324) share; a NULL
 * field takes the default given here, maxReconsumeTimes is sent only when set. */
typedef struct send_fields {
    const char *group, *topic, *queue, *sys_flag, *born, *props, *reconsume, *max_reconsume;
} send_fields;

static rmq_cmd *send_request(int code, const send_fields *s)
{
    const char *kv[] = {"producerGroup",
                        s->group ? s->group : "PG",
                        "topic",
                        s->topic,
                        "defaultTopic",
                        "TBW102",
                        "defaultTopicQueueNums",
                        "4",
                        "queueId",
                        s->queue ? s->queue : "0",
                        "sysFlag",
                        s->sys_flag ? s->sys_flag : "0",
                        "bornTimestamp",
                        s->born ? s->born : "1700000000000",
                        "flag",
                        "0",
                        "properties",
                        s->props ? s->props : "",
                        "reconsumeTimes",
                        s->reconsume ? s->reconsume : "0",
                        "unitMode",
                        "false",
                        s->max_reconsume ? "maxReconsumeTimes" : NULL,
                        s->max_reconsume,
                        NULL};
    return rmq_tc_request(code, next_opaque++, kv);
}

/* SEND_MESSAGE (10) with named header fields. */
/* bornTimestamp of send_msg: now unless set (half messages older than
 * fileReservedTime are discarded unchecked). */
static long long send_born_ms;

static rmq_cmd *send_msg(int fd, const char *topic, int queue, const char *props, const char *body,
                         int sys_flag, const char *group)
{
    char q[16], sf[16], born[32];
    snprintf(q, sizeof q, "%d", queue);
    snprintf(sf, sizeof sf, "%d", sys_flag);
    snprintf(born, sizeof born, "%lld", send_born_ms ? send_born_ms : (long long)time(NULL) * 1000);
    rmq_cmd *req = send_request(10, &(send_fields){.group = group,
                                                   .topic = topic,
                                                   .queue = q,
                                                   .sys_flag = sf,
                                                   .born = born,
                                                   .props = props});
    rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    return call(fd, req);
}

static bool wait_max_offset(int port, const char *topic, int queue, long long want)
{
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (rmq_test_now_ms() < deadline) {
        if (st_max_offset(port, topic, queue) >= want)
            return true;
        rmq_test_pause_ms(50);
    }
    return false;
}

/* A PULL of up to `max` messages of topic/queue from `off` by `group`
 * (inline "*", no suspension) on a fresh connection; the answer. */
static rmq_cmd *pull_as(int port, const char *group, const char *topic, int queue, long long off,
                        int max)
{
    char q[16], o[32], m[16];
    snprintf(q, sizeof q, "%d", queue);
    snprintf(o, sizeof o, "%lld", off);
    snprintf(m, sizeof m, "%d", max);
    const char *kv[] = {"consumerGroup",
                        group,
                        "topic",
                        topic,
                        "queueId",
                        q,
                        "queueOffset",
                        o,
                        "maxMsgNums",
                        m,
                        "sysFlag",
                        "4",
                        "commitOffset",
                        "0",
                        "suspendTimeoutMillis",
                        "0",
                        "subscription",
                        "*",
                        "subVersion",
                        "0",
                        "expressionType",
                        "TAG",
                        NULL};
    return bcm_call(port, 11, kv, NULL);
}

/* The record at queue offset `off` (PULL without suspension); caller frees
 * *frame, the record points into it. */
static bool pull_one(int port, const char *topic, int queue, long long off, rmq_cmd **frame,
                     stored_record *r)
{
    rmq_cmd *c = pull_as(port, "probe_group", topic, queue, off, 1);
    *frame = c;
    if (!c || c->code != 0 || !c->body_len) {
        print_message("pull %s/%d@%lld: code %d remark %s\n", topic, queue, off, c ? c->code : -1,
                      c && c->remark ? c->remark : "");
        return false;
    }
    return stored_record_decode(c->body, c->body_len, true, r) == STORED_RECORD_OK;
}

static void assert_prop(const stored_record *r, const char *name, const char *want)
{
    char *v = st_prop(r, name);
    if (!v || strcmp(v, want) != 0)
        fail_msg("property %s = %s, want %s", name, v ? v : "(absent)", want);
    free(v);
}

/* Commit-log offset of an offsetMsgId (its last 16 hex digits). */
static long long id_offset(const char *id)
{
    return id && strlen(id) >= 16 ? strtoll(id + strlen(id) - 16, NULL, 16) : -1;
}

/* ---- delay ---- */

static void test_delayed_message_is_invisible_until_its_level_elapses(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *r = send_msg(fd, "DT", 0, "DELAY\0012\002TAGS\001tagD", "later", 0, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_ext_ll(r, "queueId"), 0);
    rmq_cmd_free(r);
    /* stored in the schedule topic's queue of level 2, not in DT yet */
    assert_int_equal(st_max_offset(f->port, "DT", 0), 0);
    assert_true(st_max_offset(f->port, "SCHEDULE_TOPIC_XXXX", 1) >= 1);
    assert_true(wait_max_offset(f->port, "DT", 0, 1));
    rmq_cmd *frame;
    stored_record rec;
    assert_true(pull_one(f->port, "DT", 0, 0, &frame, &rec));
    assert_int_equal(rec.body_len, 5);
    assert_memory_equal(rec.body, "later", 5);
    assert_prop(&rec, "REAL_TOPIC", "DT");
    assert_prop(&rec, "DELAY", "2");
    assert_prop(&rec, "TAGS", "tagD");
    rmq_cmd_free(frame);
    /* the level's progress reaches config/delayOffset.json */
    char path[600];
    snprintf(path, sizeof path, "%s/store/config/delayOffset.json", f->d.state_dir);
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    bool seen = false;
    while (!seen && rmq_test_now_ms() < deadline) {
        FILE *fp = fopen(path, "r");
        char buf[512] = "";
        if (fp) {
            size_t n = fread(buf, 1, sizeof buf - 1, fp);
            buf[n] = 0;
            fclose(fp);
        }
        seen = strstr(buf, "2:1") != NULL;
        if (!seen)
            rmq_test_pause_ms(100);
    }
    assert_true(seen);
    /* a DELAY that is not a number is refused */
    r = send_msg(fd, "DT", 0, "DELAY\001soon", "x", 0, NULL);
    assert_int_equal(r->code, 1);
    rmq_cmd_free(r);
    close(fd);
}

/* ---- retry and DLQ ---- */

static rmq_cmd *send_back(int fd, long long offset, const char *group, int delay_level,
                          const char *max_times)
{
    char o[32], d[16];
    snprintf(o, sizeof o, "%lld", offset);
    snprintf(d, sizeof d, "%d", delay_level);
    const char *kv[] = {
        "offset",      o,   "group",    group,   "delayLevel",        d,         "originMsgId", "X",
        "originTopic", "T", "unitMode", "false", "maxReconsumeTimes", max_times, NULL};
    rmq_cmd *req = rmq_tc_request(36, next_opaque++, kv);
    return call(fd, req);
}

static void test_send_back_retries_after_the_level_then_dead_letters(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *r = send_msg(fd, "T", 2, "TAGS\001tagR\002KEYS\001k1", "retry-me", 0, NULL);
    assert_int_equal(r->code, 0);
    long long phys = id_offset(rmq_cmd_ext_get(r, "msgId"));
    rmq_cmd_free(r);
    /* the recorded Java request with our offset and group answers as Java's */
    char why[256];
    rmq_cmd *want = rmq_tc_load_vector_cmd("36-consumer-send-msg-back.resp.bin", why, sizeof why);
    rmq_cmd *req = rmq_tc_load_vector_cmd("36-consumer-send-msg-back.req.bin", why, sizeof why);
    assert_non_null(want);
    assert_non_null(req);
    char o[32];
    snprintf(o, sizeof o, "%lld", phys);
    rmq_cmd_ext_set(req, "offset", o);
    rmq_cmd_ext_set(req, "group", "g1");
    rmq_cmd *got = rmq_tc_call(fd, req, 5000);
    assert_non_null(got);
    if (!rmq_tc_same_answer_head(want, got, why, sizeof why))
        fail_msg("36: %s", why);
    rmq_cmd_free(got);
    rmq_cmd_free(req);
    rmq_cmd_free(want);
    /* level 3 + reconsumeTimes 0 = 3 (1 s here): %RETRY%g1 exists, empty until then */
    assert_true(wait_max_offset(f->port, "%RETRY%g1", 0, 1));
    rmq_cmd *frame;
    stored_record rec;
    assert_true(pull_one(f->port, "%RETRY%g1", 0, 0, &frame, &rec));
    assert_int_equal(rec.reconsume_times, 1);
    assert_memory_equal(rec.body, "retry-me", 8);
    assert_prop(&rec, "RETRY_TOPIC", "T");
    assert_prop(&rec, "TAGS", "tagR");
    assert_prop(&rec, "KEYS", "k1");
    assert_prop(&rec, "DELAY", "3");
    char *origin = st_prop(&rec, "ORIGIN_MESSAGE_ID");
    assert_non_null(origin);
    assert_int_equal(id_offset(origin), phys);
    free(origin);
    long long retry_phys = rec.phys_offset;
    rmq_cmd_free(frame);
    /* reconsumeTimes 1 >= maxReconsumeTimes 1: straight to %DLQ%g1, no delay */
    r = send_back(fd, retry_phys, "g1", 0, "1");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(st_max_offset(f->port, "%DLQ%g1", 0), 1);
    assert_true(pull_one(f->port, "%DLQ%g1", 0, 0, &frame, &rec));
    assert_int_equal(rec.reconsume_times, 2);
    assert_prop(&rec, "RETRY_TOPIC", "T");
    rmq_cmd_free(frame);
    /* delayLevel < 0: dead letter at once */
    r = send_back(fd, phys, "g2", -1, "16");
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(st_max_offset(f->port, "%DLQ%g2", 0), 1);
    /* an offset with no message */
    r = send_back(fd, 987654321, "g1", 0, "16");
    assert_int_equal(r->code, 1);
    assert_string_equal(r->remark, "look message by offset failed, 987654321");
    rmq_cmd_free(r);
    close(fd);
}

/* §10.5.6: a client fallback send to %RETRY% past maxReconsumeTimes lands in the DLQ. */
static void test_retry_topic_send_past_max_goes_to_dlq(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *req = send_request(10, &(send_fields){.group = "CLIENT_INNER_PRODUCER",
                                                   .topic = "%RETRY%g3",
                                                   .props = "RETRY_TOPIC\001T",
                                                   .reconsume = "3",
                                                   .max_reconsume = "3"});
    req->version = 409;
    rmq_cmd_set_body(req, "fb", 2, NULL, NULL);
    rmq_cmd *r = call(fd, req);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(st_max_offset(f->port, "%DLQ%g3", 0), 1);
    assert_int_equal(st_max_offset(f->port, "%RETRY%g3", 0), 0);
    close(fd);
}

/* ---- transactions ---- */

static int producer_connection(int port, const char *client_id)
{
    int fd = rmq_tc_connect(port);
    char body[512];
    snprintf(body, sizeof body,
             "{\"clientID\":\"%s\",\"consumerDataSet\":[],\"producerDataSet\":[{\"groupName\":"
             "\"PG\"},{\"groupName\":\"CLIENT_INNER_PRODUCER\"}]}",
             client_id);
    rmq_cmd *req = rmq_tc_request(34, next_opaque++, NULL);
    rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    rmq_cmd *r = call(fd, req);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    return fd;
}

static rmq_cmd *send_half(int fd, const char *body, long long *phys, long long *qoff)
{
    rmq_cmd *r =
        send_msg(fd, "TT", 0, "TRAN_MSG\001true\002PGROUP\001PG\002UNIQ_KEY\001U1", body, 4, "PG");
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    *phys = id_offset(rmq_cmd_ext_get(r, "msgId"));
    *qoff = st_ext_ll(r, "queueOffset");
    return r;
}

static rmq_cmd *end_tx(int fd, long long phys, long long qoff, int what, const char *group,
                       bool oneway)
{
    char p[32], q[32], w[8];
    snprintf(p, sizeof p, "%lld", phys);
    snprintf(q, sizeof q, "%lld", qoff);
    snprintf(w, sizeof w, "%d", what);
    const char *kv[] = {"producerGroup",
                        group,
                        "tranStateTableOffset",
                        q,
                        "commitLogOffset",
                        p,
                        "commitOrRollback",
                        w,
                        "fromTransactionCheck",
                        "false",
                        "msgId",
                        "U1",
                        NULL};
    rmq_cmd *req = rmq_tc_request(37, next_opaque++, kv);
    if (oneway) {
        req->flag |= 2;
        rmq_tc_send(fd, req);
        rmq_cmd_free(req);
        return NULL;
    }
    return call(fd, req);
}

static void test_transaction_commit_and_rollback(void **state)
{
    fixture *f = *state;
    int fd = producer_connection(f->port, "10.0.0.5@tx");
    long long phys, qoff;
    rmq_cmd_free(send_half(fd, "tx-commit", &phys, &qoff));
    assert_int_equal(st_max_offset(f->port, "TT", 0), 0); /* half: invisible */
    rmq_cmd *r = end_tx(fd, phys, qoff, 8, "OTHER", false);
    assert_int_equal(r->code, 1);
    assert_string_equal(r->remark, "The producer group wrong");
    rmq_cmd_free(r);
    r = end_tx(fd, phys, qoff + 1, 8, "PG", false);
    assert_string_equal(r->remark, "The transaction state table offset wrong");
    rmq_cmd_free(r);
    r = end_tx(fd, phys, qoff, 8, "PG", false);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(st_max_offset(f->port, "TT", 0), 1);
    rmq_cmd *frame;
    stored_record rec;
    assert_true(pull_one(f->port, "TT", 0, 0, &frame, &rec));
    assert_memory_equal(rec.body, "tx-commit", 9);
    assert_int_equal(rec.sys_flag & 0xC, 8);
    assert_int_equal(rec.prepared_tx_offset, phys);
    assert_prop(&rec, "TRAN_MSG", "true");
    rmq_cmd_free(frame);
    /* rollback: nothing reaches TT */
    rmq_cmd_free(send_half(fd, "tx-rollback", &phys, &qoff));
    r = end_tx(fd, phys, qoff, 12, "PG", false);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = end_tx(fd, 999999999, 0, 8, "PG", false);
    assert_string_equal(r->remark, "Find prepared transaction message failed");
    rmq_cmd_free(r);
    assert_int_equal(st_max_offset(f->port, "TT", 0), 1);
    close(fd);
}

/* The producer never ends it: the broker asks (39, oneway) and the answer
 * (37 oneway, fromTransactionCheck) commits it. */
static void test_transaction_resolved_by_check_back(void **state)
{
    fixture *f = *state;
    int fd = producer_connection(f->port, "10.0.0.6@tx");
    long long phys, qoff;
    rmq_cmd_free(send_half(fd, "tx-check", &phys, &qoff));
    rmq_cmd *check = NULL;
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (!check && rmq_test_now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 500);
        if (c && c->code == 39 && (c->flag & 2))
            check = c;
        else
            rmq_cmd_free(c);
    }
    assert_non_null(check);
    stored_record rec;
    assert_int_equal(stored_record_decode(check->body, check->body_len, false, &rec),
                     STORED_RECORD_OK);
    assert_int_equal(rec.topic_len, 2);
    assert_memory_equal(rec.topic, "TT", 2);
    assert_memory_equal(rec.body, "tx-check", 8);
    assert_string_equal(rmq_cmd_ext_get(check, "msgId"), "U1");
    assert_string_equal(rmq_cmd_ext_get(check, "transactionId"), "U1");
    long long cphys = st_ext_ll(check, "commitLogOffset");
    long long cq = st_ext_ll(check, "tranStateTableOffset");
    assert_true(cphys > phys);
    rmq_cmd_free(check);
    long long before = st_max_offset(f->port, "TT", 0);
    end_tx(fd, cphys, cq, 8, "PG", true);
    assert_true(wait_max_offset(f->port, "TT", 0, before + 1));
    /* resolved: no further check for it arrives */
    close(fd);
}

/* A producer that never answers: after transactionCheckMax (5) checks the
 * half message goes to TRANS_CHECK_MAX_TIME_TOPIC and is asked about no
 * more; a rollback leaves its op record (tag d, body = the half offset). */
static void test_transaction_discarded_after_max_checks(void **state)
{
    fixture *f = *state;
    int fd = producer_connection(f->port, "10.0.0.7@tx");
    long long phys, qoff;
    rmq_cmd_free(send_half(fd, "tx-rb", &phys, &qoff));
    rmq_cmd *r = end_tx(fd, phys, qoff, 12, "PG", false);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_true(wait_max_offset(f->port, "RMQ_SYS_TRANS_OP_HALF_TOPIC", 0, 1));
    rmq_cmd *frame;
    stored_record rec;
    assert_true(pull_one(f->port, "RMQ_SYS_TRANS_OP_HALF_TOPIC", 0, 0, &frame, &rec));
    assert_prop(&rec, "TAGS", "d");
    char want[32];
    int wl = snprintf(want, sizeof want, "%lld", qoff);
    assert_int_equal(rec.body_len, wl);
    assert_memory_equal(rec.body, want, (size_t)wl);
    rmq_cmd_free(frame);

    rmq_cmd_free(send_half(fd, "tx-ignored", &phys, &qoff));
    int checks = 0;
    uint64_t deadline = rmq_test_now_ms() + 4 * WAIT_MS;
    while (st_max_offset(f->port, "TRANS_CHECK_MAX_TIME_TOPIC", 0) < 1 &&
           rmq_test_now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 200);
        if (c && c->code == 39) {
            checks++;
            stored_record cr;
            assert_int_equal(stored_record_decode(c->body, c->body_len, false, &cr),
                             STORED_RECORD_OK);
            char n[8];
            snprintf(n, sizeof n, "%d", checks);
            assert_prop(&cr, "TRANSACTION_CHECK_TIMES", n);
        }
        rmq_cmd_free(c);
    }
    assert_int_equal(checks, 5);
    assert_true(pull_one(f->port, "TRANS_CHECK_MAX_TIME_TOPIC", 0, 0, &frame, &rec));
    assert_memory_equal(rec.body, "tx-ignored", 10);
    assert_prop(&rec, "TRANSACTION_CHECK_TIMES", "5");
    assert_prop(&rec, "REAL_TOPIC", "TT");
    rmq_cmd_free(frame);
    /* a discard writes no op record, and the message is never asked about again */
    assert_int_equal(st_max_offset(f->port, "RMQ_SYS_TRANS_OP_HALF_TOPIC", 0), 1);
    /* the half queue holds the original and its 5 re-appended copies */
    assert_int_equal(st_max_offset(f->port, "RMQ_SYS_TRANS_HALF_TOPIC", 0), 2 + 5);
    rmq_cmd *c = rmq_tc_recv(fd, 1000);
    assert_true(c == NULL || c->code != 39);
    rmq_cmd_free(c);
    close(fd);
}

/* A half message born before fileReservedTime (72 h) is discarded unchecked,
 * with the check count needDiscard had set (1). */
static void test_transaction_older_than_file_reserved_time_is_discarded(void **state)
{
    fixture *f = *state;
    int fd = producer_connection(f->port, "10.0.0.8@tx");
    long long phys, qoff;
    send_born_ms = (long long)time(NULL) * 1000 - 73LL * 3600 * 1000;
    rmq_cmd_free(send_half(fd, "tx-old", &phys, &qoff));
    send_born_ms = 0;
    assert_true(wait_max_offset(f->port, "TRANS_CHECK_MAX_TIME_TOPIC", 0, 1));
    rmq_cmd *frame;
    stored_record rec;
    assert_true(pull_one(f->port, "TRANS_CHECK_MAX_TIME_TOPIC", 0, 0, &frame, &rec));
    assert_memory_equal(rec.body, "tx-old", 6);
    assert_prop(&rec, "TRANSACTION_CHECK_TIMES", "1");
    rmq_cmd_free(frame);
    assert_int_equal(st_max_offset(f->port, "RMQ_SYS_TRANS_HALF_TOPIC", 0),
                     1); /* never re-appended */
    rmq_cmd *c = rmq_tc_recv(fd, 500);
    assert_true(c == NULL || c->code != 39);
    rmq_cmd_free(c);
    close(fd);
}

/* CHECK_IMMUNITY_TIME_IN_SECONDS: inside it the half message is not checked
 * but re-appended each round marked with TRAN_PREPARED_QUEUE_OFFSET, and
 * each re-append counts (needDiscard runs first): after transactionCheckMax
 * rounds it is discarded without a single CHECK_TRANSACTION_STATE. */
static void test_transaction_immunity_property(void **state)
{
    fixture *f = *state;
    int fd = producer_connection(f->port, "10.0.0.9@tx");
    rmq_cmd *r = send_msg(fd, "TT", 0,
                          "TRAN_MSG\001true\002PGROUP\001PG\002UNIQ_KEY\001U1\002"
                          "CHECK_IMMUNITY_TIME_IN_SECONDS\001600",
                          "tx-immune", 4, "PG");
    assert_int_equal(r->code, 0);
    long long qoff = st_ext_ll(r, "queueOffset");
    rmq_cmd_free(r);
    int checks = 0;
    uint64_t deadline = rmq_test_now_ms() + 4 * WAIT_MS;
    while (st_max_offset(f->port, "TRANS_CHECK_MAX_TIME_TOPIC", 0) < 1 &&
           rmq_test_now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 200);
        checks += c && c->code == 39;
        rmq_cmd_free(c);
    }
    assert_int_equal(checks, 0);
    char want[32];
    snprintf(want, sizeof want, "%lld", qoff);
    rmq_cmd *frame;
    stored_record rec;
    assert_true(pull_one(f->port, "RMQ_SYS_TRANS_HALF_TOPIC", 0, qoff + 1, &frame, &rec));
    assert_prop(&rec, "TRAN_PREPARED_QUEUE_OFFSET", want);
    assert_prop(&rec, "TRANSACTION_CHECK_TIMES", "1");
    rmq_cmd_free(frame);
    assert_true(pull_one(f->port, "TRANS_CHECK_MAX_TIME_TOPIC", 0, 0, &frame, &rec));
    assert_memory_equal(rec.body, "tx-immune", 9);
    assert_prop(&rec, "TRAN_PREPARED_QUEUE_OFFSET", want);
    assert_prop(&rec, "TRANSACTION_CHECK_TIMES", "5");
    rmq_cmd_free(frame);
    close(fd);
}

/* ---- replies ---- */

static void test_reply_is_pushed_to_the_requester_and_stored(void **state)
{
    fixture *f = *state;
    int requester = producer_connection(f->port, "10.0.0.7@req");
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *req = send_request(
        324, &(send_fields){.group = "RG",
                            .topic = "DefaultCluster_REPLY_TOPIC",
                            .props = "REPLY_TO_CLIENT\00110.0.0.7@req\002CORRELATION_ID\001c1"});
    rmq_cmd_set_body(req, "the-reply", 9, NULL, NULL);
    assert_int_equal(rmq_tc_send(fd, req), 0);
    int opaque = req->opaque;
    rmq_cmd_free(req);
    rmq_cmd *push = rmq_tc_recv(requester, 5000);
    while (push && push->code != 326) {
        rmq_cmd_free(push);
        push = rmq_tc_recv(requester, 5000);
    }
    assert_non_null(push);
    assert_int_equal(push->body_len, 9);
    assert_string_equal(rmq_cmd_ext_get(push, "topic"), "DefaultCluster_REPLY_TOPIC");
    assert_non_null(strstr(rmq_cmd_ext_get(push, "properties"), "PUSH_REPLY_TIME"));
    rmq_cmd *ans = rmq_cmd_new_response(push, 0, NULL);
    rmq_tc_send(requester, ans);
    rmq_cmd_free(ans);
    rmq_cmd_free(push);
    rmq_cmd *r = rmq_tc_recv(fd, 5000);
    assert_non_null(r);
    assert_int_equal(r->opaque, opaque);
    assert_int_equal(r->code, 0);
    assert_true(strlen(rmq_cmd_ext_get(r, "msgId")) >= 32); /* stored: the offsetMsgId */
    assert_non_null(rmq_cmd_ext_get(r, "MSG_REGION"));
    rmq_cmd_free(r);
    /* without REPLY_TO_CLIENT */
    req = send_request(
        324, &(send_fields){.group = "RG", .topic = "DefaultCluster_REPLY_TOPIC", .born = "1"});
    rmq_cmd_set_body(req, "x", 1, NULL, NULL);
    r = call(fd, req);
    assert_int_equal(r->code, 1);
    assert_string_equal(r->remark, "reply message properties[REPLY_TO_CLIENT] is null");
    rmq_cmd_free(r);
    close(fd);
    close(requester);
}

/* ---- admin ---- */

/* The 28 body's table as JSON (caller decrefs), NULL on failure. */
static json_t *runtime_table(int port)
{
    rmq_cmd *r = bcm_call(port, 28, NULL, NULL);
    if (!r || r->code != 0) {
        rmq_cmd_free(r);
        return NULL;
    }
    json_t *root = json_loadb((const char *)r->body, r->body_len, 0, NULL);
    rmq_cmd_free(r);
    json_t *t = json_incref(json_object_get(root, "table"));
    json_decref(root);
    return t;
}

static const char *tbl(json_t *t, const char *k)
{
    const char *v = json_string_value(json_object_get(t, k));
    return v ? v : "";
}

static void test_runtime_info_has_the_brokerstatus_figures(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    for (int i = 0; i < 3; i++)
        rmq_cmd_free(send_msg(fd, "T", 0, NULL, "xyz", 0, NULL));
    close(fd);
    assert_true(wait_max_offset(f->port, "T", 0, 3));
    rmq_cmd *p = pull_as(f->port, "rg", "T", 0, 0, 32);
    assert_int_equal(p->code, 0);
    rmq_cmd_free(p);
    json_t *t = runtime_table(f->port);
    assert_non_null(t);
    assert_string_equal(tbl(t, "brokerVersionDesc"), "V4_9_8");
    assert_string_equal(tbl(t, "putMessageTimesTotal"), "3");
    assert_string_equal(tbl(t, "msgPutTotalTodayNow"), "3");
    assert_string_equal(tbl(t, "msgGetTotalTodayNow"), "3"); /* messages, not pulls */
    assert_string_equal(tbl(t, "getMessageTimesTotalFound"), "1");
    assert_true(atof(tbl(t, "putMessageAverageSize")) > 3.0);
    assert_non_null(strchr(tbl(t, "putMessageAverageSize"), '.')); /* a Java double */
    assert_true(atoll(tbl(t, "earliestMessageTimeStamp")) > 1700000000000LL);
    assert_string_equal(tbl(t, "remainTransientStoreBufferNumbs"), "2147483647");
    assert_string_equal(tbl(t, "EndTransactionQueueSize"), "0");
    assert_string_equal(tbl(t, "EndTransactionThreadPoolQueueCapacity"), "100000");
    assert_string_equal(tbl(t, "putMessageFailedTimes"), "0");
    assert_string_equal(tbl(t, "putLatency99"), "0.00"); /* no window closed yet */
    assert_string_equal(tbl(t, "putLatency999"), "0.00");
    assert_true(strlen(tbl(t, "getMessageEntireTimeMax")) > 0); /* ms: often "0" */
    assert_true(strlen(tbl(t, "remainHowManyDataToFlush")) > 0);
    assert_true(strncmp(tbl(t, "commitLogDirCapacity"), "Total : ", 8) == 0);
    bool per_path = false;
    const char *k;
    json_t *v;
    json_object_foreach(t, k, v) per_path |= strncmp(k, "commitLogDiskRatio_/", 20) == 0;
    assert_true(per_path);
    json_decref(t);
    /* the 10-second rates appear once ten samples exist, and show the traffic */
    uint64_t deadline = rmq_test_now_ms() + 4 * WAIT_MS;
    double put10 = 0, got10 = 0;
    long long next = 3;
    while (rmq_test_now_ms() < deadline && (put10 <= 0 || got10 <= 0)) {
        /* keep traffic inside the 10 s window until it has enough samples */
        fd = rmq_tc_connect(f->port);
        rmq_cmd_free(send_msg(fd, "T", 0, NULL, "more", 0, NULL));
        close(fd);
        assert_true(wait_max_offset(f->port, "T", 0, next + 1));
        p = pull_as(f->port, "rg", "T", 0, next++, 32);
        rmq_cmd_free(p);
        t = runtime_table(f->port);
        assert_non_null(t);
        put10 = atof(tbl(t, "putTps"));
        got10 = atof(tbl(t, "getTransferedTps"));
        json_decref(t);
        if (put10 <= 0 || got10 <= 0)
            rmq_test_pause_ms(500);
    }
    assert_true(put10 > 0);
    assert_true(got10 > 0);
}

/* putMessageDistributeTime: Java's 13 "[name]:count " buckets in order; the
 * sum of the counts, or -1 when the text is not in that form. */
static long long distribution_sum(const char *text)
{
    static const char *const names[] = {"[<=0ms]",     "[0~10ms]",    "[10~50ms]",  "[50~100ms]",
                                        "[100~200ms]", "[200~500ms]", "[500ms~1s]", "[1~2s]",
                                        "[2~3s]",      "[3~4s]",      "[4~5s]",     "[5~10s]",
                                        "[10s~]"};
    long long sum = 0;
    const char *p = text;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t l = strlen(names[i]);
        if (strncmp(p, names[i], l) != 0 || p[l] != ':')
            return -1;
        char *end;
        sum += strtoll(p + l + 1, &end, 10);
        if (end == p + l + 1 || *end != ' ')
            return -1;
        p = end + 1;
    }
    return *p ? -1 : sum;
}

/* StoreStatsService's put latency: every put lands in one bucket of the
 * current window; 28 shows the last closed one (Java's
 * lastPutMessageDistributeTime), "null" before the first closed. The window
 * is 1 s here (putStatsWindowMillis): one put lands in exactly one window. */
static long long last_window_sum(int port, json_t **table)
{
    json_t *t = runtime_table(port);
    assert_non_null(t);
    const char *text = tbl(t, "putMessageDistributeTime");
    long long sum = strcmp(text, "null") == 0 ? 0 : distribution_sum(text);
    if (sum < 0)
        fail_msg("putMessageDistributeTime = \"%s\"", text);
    if (table)
        *table = t;
    else
        json_decref(t);
    return sum;
}

static void test_runtime_info_put_latency_distribution(void **state)
{
    fixture *f = *state;
    assert_int_equal(last_window_sum(f->port, NULL), 0);
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *r = send_msg(fd, "T", 1, NULL, "latency", 0, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    close(fd);
    /* the window holding the put closes within ~2 s */
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    json_t *t = NULL;
    long long sum = 0;
    while (rmq_test_now_ms() < deadline) {
        json_decref(t);
        sum = last_window_sum(f->port, &t);
        if (sum)
            break;
        rmq_test_pause_ms(50);
    }
    assert_int_equal(sum, 1);
    char *end;
    long long max = strtoll(tbl(t, "putMessageEntireTimeMax"), &end, 10);
    assert_true(*end == 0 && max >= 0);
    /* putLatency99 of one put: Java's "%.2f" of the interpolated bucket */
    const char *p99 = tbl(t, "putLatency99");
    double v = strtod(p99, &end);
    assert_true(*end == 0 && v >= 0 && strchr(p99, '.') && strlen(strchr(p99, '.')) == 3);
    assert_string_equal(tbl(t, "putMessageFailedTimes"), "0");
    json_decref(t);
    /* the next window holds no put: back to 0 */
    deadline = rmq_test_now_ms() + WAIT_MS;
    while (rmq_test_now_ms() < deadline && (sum = last_window_sum(f->port, NULL)) != 0)
        rmq_test_pause_ms(50);
    assert_int_equal(sum, 0);
}

/* A 28 figure that must be a whole number >= 0; its value. */
static long long table_count(json_t *t, const char *k)
{
    const char *v = json_string_value(json_object_get(t, k));
    if (!v || !*v)
        fail_msg("28 lacks %s", k);
    char *end;
    long long n = strtoll(v, &end, 10);
    if (*end || n < 0)
        fail_msg("28 %s = \"%s\"", k, v);
    return n;
}

/* With sendMessageInline / pullMessageInline = false the send, pull and
 * query codes queue on the store's executors, whose figures 28 reports under
 * Java's names (read from the host, SDK 1.6). How much waits at a given
 * moment is timing; what is certain is the format, the capacities, and an
 * empty queue (0, 0) once every request has been answered. */
static void test_runtime_info_reports_the_executor_queues(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    for (int i = 0; i < 5; i++) {
        rmq_cmd *r = send_msg(fd, "T", 0, NULL, "queued", 0, NULL);
        assert_non_null(r);
        assert_int_equal(r->code, 0);
        rmq_cmd_free(r);
    }
    close(fd);
    rmq_cmd *p = pull_as(f->port, "rg", "T", 0, 0, 32);
    assert_int_equal(p->code, 0);
    rmq_cmd_free(p);
    json_t *t = runtime_table(f->port);
    assert_non_null(t);
    static const char *const pools[] = {"send", "pull", "query"};
    static const long long capacity[] = {77, 88, 99};
    for (size_t i = 0; i < 3; i++) {
        char k[64];
        snprintf(k, sizeof k, "%sThreadPoolQueueCapacity", pools[i]);
        assert_int_equal(table_count(t, k), capacity[i]);
        snprintf(k, sizeof k, "%sThreadPoolQueueSize", pools[i]);
        assert_int_equal(table_count(t, k), 0);
        snprintf(k, sizeof k, "%sThreadPoolQueueHeadWaitTimeMills", pools[i]);
        assert_int_equal(table_count(t, k), 0);
    }
    json_decref(t);
}

/* GET_CONSUME_STATS (208) consumeTps: the group's pulled messages per second. */
static void test_consume_stats_tps_follows_pulls(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    for (int i = 0; i < 5; i++)
        rmq_cmd_free(send_msg(fd, "T", 0, NULL, "tps", 0, NULL));
    close(fd);
    assert_true(wait_max_offset(f->port, "T", 0, 5));
    const char *kv[] = {"consumerGroup", "tpsg", "topic", "T", NULL};
    rmq_cmd *r = bcm_call(f->port, 208, kv, NULL);
    assert_int_equal(r->code, 0);
    assert_true(bcm_body_contains(r, "{\"consumeTps\":0.0,"));
    rmq_cmd_free(r);
    rmq_cmd *p = pull_as(f->port, "tpsg", "T", 0, 0, 32);
    assert_int_equal(p->code, 0);
    rmq_cmd_free(p);
    double tps = 0;
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (tps <= 0 && rmq_test_now_ms() < deadline) {
        r = bcm_call(f->port, 208, kv, NULL);
        assert_int_equal(r->code, 0);
        /* fastjson's map keys are objects: not JSON, read the number by hand */
        char *body = strndup((const char *)r->body, r->body_len);
        const char *at = body ? strstr(body, "\"consumeTps\":") : NULL;
        tps = at ? atof(at + 13) : 0;
        free(body);
        rmq_cmd_free(r);
        if (tps <= 0)
            rmq_test_pause_ms(200);
    }
    assert_true(tps > 0);
    assert_true(tps <= 5.0); /* 5 messages over at least one second */
}

static void test_reset_offset_by_time_pushes_220_to_the_consumers(void **state)
{
    fixture *f = *state;
    const char *kv[] = {"topic", "T", "group", "rg", "timestamp", "0", "isForce", "true", NULL};
    rmq_cmd *r = bcm_call(f->port, 222, kv, NULL);
    assert_int_equal(r->code, 1);
    assert_string_equal(r->remark, "THe consumer group <rg> not exist");
    rmq_cmd_free(r);
    int fd = rmq_tc_connect(f->port);
    for (int q = 0; q < 4; q++) {
        char qs[4];
        snprintf(qs, sizeof qs, "%d", q);
        const char *u[] = {"consumerGroup", "rg", "topic", "T", "queueId", qs,
                           "commitOffset",  "5",  NULL};
        rmq_cmd_free(call(fd, rmq_tc_request(15, next_opaque++, u)));
    }
    r = bcm_call(f->port, 222, kv, NULL);
    assert_int_equal(r->code, 206); /* CONSUMER_NOT_ONLINE */
    assert_non_null(strstr(r->remark, "Consumer not online, so can not reset offset, Group: rg"));
    rmq_cmd_free(r);
    char hb[2048];
    rmq_cmd *req = rmq_tc_request(34, next_opaque++, NULL);
    bcm_consumer_heartbeat(hb, sizeof hb, "10.0.0.8@rc", "rg", "T", true);
    rmq_cmd_set_body(req, hb, strlen(hb), NULL, NULL);
    rmq_cmd_free(call(fd, req));
    r = bcm_call(f->port, 222, kv, NULL);
    assert_int_equal(r->code, 0);
    assert_true(
        bcm_body_contains(r, "{\"brokerName\":\"broker-f\",\"queueId\":0,\"topic\":\"T\"}:0"));
    rmq_cmd_free(r);
    rmq_cmd *push = NULL;
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (!push && rmq_test_now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 500);
        if (c && c->code == 220)
            push = c;
        else
            rmq_cmd_free(c);
    }
    assert_non_null(push);
    assert_string_equal(rmq_cmd_ext_get(push, "group"), "rg");
    assert_true(bcm_body_contains(push, "\"offsetTable\":{"));
    rmq_cmd_free(push);
    close(fd);
}

static void test_deleted_topic_loses_its_consume_queues(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    rmq_cmd_free(send_msg(fd, "DelT", 1, NULL, "gone", 0, NULL));
    close(fd);
    assert_int_equal(st_max_offset(f->port, "DelT", 1), 1);
    const char *kv[] = {"topic", "DelT", NULL};
    rmq_cmd *r = bcm_call(f->port, 215, kv, NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (st_max_offset(f->port, "DelT", 1) != 0 && rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(50);
    assert_int_equal(st_max_offset(f->port, "DelT", 1), 0);
    assert_true(rmq_td_log_contains(&f->d, "topic DelT deleted: consume queues removed"));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_delayed_message_is_invisible_until_its_level_elapses),
        T(test_send_back_retries_after_the_level_then_dead_letters),
        T(test_retry_topic_send_past_max_goes_to_dlq),
        T(test_transaction_commit_and_rollback),
        T(test_transaction_resolved_by_check_back),
        T(test_transaction_discarded_after_max_checks),
        T(test_transaction_older_than_file_reserved_time_is_discarded),
        T(test_transaction_immunity_property),
        T(test_reply_is_pushed_to_the_requester_and_stored),
        T(test_runtime_info_has_the_brokerstatus_figures),
        cmocka_unit_test_setup_teardown(test_runtime_info_put_latency_distribution,
                                        setup_short_window, teardown),
        cmocka_unit_test_setup_teardown(test_runtime_info_reports_the_executor_queues,
                                        setup_executors, teardown),
        T(test_consume_stats_tps_follows_pulls),
        T(test_reset_offset_by_time_pushes_220_to_the_consumers),
        T(test_deleted_topic_loses_its_consume_queues),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
