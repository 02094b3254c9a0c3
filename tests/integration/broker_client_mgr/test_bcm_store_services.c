/* test_bcm_store_services.c — broker-client-mgr as a message store sees it:
 * every entry of the "broker.meta" service and the "broker.topic_deleted"
 * event (through the storeprobe fixture plugin), QUERY_CONSUMER_OFFSET and
 * GET_CONSUME_STATS answered from a "store.queues" service, the 309 relay
 * carrying the stored record, and the storage stubs yielding to a store's
 * registrations whatever the conf.d order. Real daemon, ephemeral ports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bcm_test_daemon.h"

typedef struct fixture {
    rmq_test_daemon d;
    int port;
    int ns_port;
} fixture;

/* namesrv + broker-client-mgr + storeprobe; the probe's conf file sorts
 * before or after broker-client-mgr's as `probe_first` says. */
static int start_args(fixture *f, const char *probe_settings, bool probe_first,
                      const char *broker_name, const char *const *args)
{
    const char *servers[] = {"namesrv", "broker", NULL};
    f->ns_port = rmq_tc_free_port();
    char bs[512];
    snprintf(bs, sizeof bs,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"%s\"; "
             "topics = \"ProofTopic:4;T1:4;OldTopic:2;DiskTopic:2;RecTopic:4\";",
             f->ns_port, broker_name);
    if (f->ns_port <= 0 || rmq_td_init(&f->d, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(&f->d, f->ns_port, "info", bs) != 0)
        return -1;
    char text[2048];
    snprintf(text, sizeof text,
             "plugin = {\n  name = \"storeprobe\";\n  path = \"%s/storeprobe.so\";\n"
             "  server = \"broker\";\n  enabled = true;\n  settings = {\n%s\n  };\n};\n",
             RMQ_TEST_PLUGIN_DIR, probe_settings ? probe_settings : "");
    if (rmq_td_write_conf(&f->d, probe_first ? "10-storeprobe.conf" : "90-storeprobe.conf", text) !=
            0 ||
        rmq_td_start(&f->d, args) != 0)
        return -1;
    f->port = rmq_td_port(&f->d, "broker");
    return f->port > 0 ? 0 : -1;
}

static int start_named(fixture *f, const char *probe_settings, bool probe_first,
                       const char *broker_name)
{
    return start_args(f, probe_settings, probe_first, broker_name, NULL);
}

static int start(fixture *f, const char *probe_settings, bool probe_first)
{
    return start_named(f, probe_settings, probe_first, "broker-a");
}

static int setup_plain(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    return f ? start(f, NULL, false) : -1;
}

static int setup_store(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    return f ? start(f,
                     "exportStore = true; takeStorageCodes = true; oldMinOffset = 5;\n"
                     "queueTable = \"ProofTopic/0/25/1795946128994;ProofTopic/1/25/1795946128996;"
                     "ProofTopic/2/25/1795946128998;ProofTopic/3/25/1795946128992;T1/0/7/"
                     "1700000000123\";",
                     true)
             : -1;
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

/* Code 7201 with op and arguments as key,value pairs. */
static rmq_cmd *meta(fixture *f, const char *op, ...)
{
    const char *kv[32] = {"op", op};
    size_t n = 2;
    va_list ap;
    va_start(ap, op);
    const char *k;
    while (n < 30 && (k = va_arg(ap, const char *))) {
        kv[n++] = k;
        kv[n++] = va_arg(ap, const char *);
    }
    va_end(ap);
    kv[n] = NULL;
    rmq_cmd *r = bcm_call(f->port, 7201, kv, NULL);
    assert_non_null(r);
    return r;
}

static void assert_ext(const rmq_cmd *r, const char *k, const char *want)
{
    const char *v = rmq_cmd_ext_get(r, k);
    if (!v || strcmp(v, want) != 0)
        fail_msg("ext %s = %s, want %s", k, v ? v : "(absent)", want);
}

static void test_broker_config_names_this_broker(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = meta(f, "config", NULL);
    assert_int_equal(r->code, 0);
    assert_ext(r, "brokerName", "broker-a");
    assert_ext(r, "clusterName", "DefaultCluster");
    assert_ext(r, "brokerIP1", "127.0.0.1");
    char port[16];
    snprintf(port, sizeof port, "%d", f->port);
    assert_ext(r, "listenPort", port);
    assert_ext(r, "brokerPermission", "6");
    assert_ext(r, "autoCreateTopicEnable", "1");
    rmq_cmd_free(r);
}

static bool namesrv_routes(fixture *f, const char *topic)
{
    const char *kv[] = {"topic", topic, NULL};
    rmq_cmd *r = bcm_call(f->ns_port, 105, kv, NULL);
    bool ok = r && r->code == 0;
    rmq_cmd_free(r);
    return ok;
}

static bool file_contains(const char *path, const char *needle)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return false;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    return strstr(buf, needle) != NULL;
}

/* createTopicInSendMessageMethod: inherits TBW102 (perm 7 → 6, queues =
 * min(asked, 8)), persisted (topics.journal) and registered at once. */
static void test_topic_created_in_send_is_persisted_and_registered(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = meta(f, "topic_get", "topic", "AutoT", NULL);
    assert_int_equal(r->code, 1);
    rmq_cmd_free(r);
    r = meta(f, "create_in_send", "topic", "AutoT", "defaultTopic", "TBW102", "queues", "4", NULL);
    assert_int_equal(r->code, 0);
    assert_ext(r, "topicName", "AutoT");
    assert_ext(r, "readQueueNums", "4");
    assert_ext(r, "writeQueueNums", "4");
    assert_ext(r, "perm", "6");
    rmq_cmd_free(r);
    r = meta(f, "create_in_send", "topic", "AutoBig", "defaultTopic", "TBW102", "queues", "64",
             NULL);
    assert_ext(r, "writeQueueNums", "8");
    rmq_cmd_free(r);
    /* no inherit bit on the template: cannot be created */
    r = meta(f, "create_in_send", "topic", "NoT", "defaultTopic", "SELF_TEST_TOPIC", "queues", "4",
             NULL);
    assert_int_equal(r->code, 1);
    rmq_cmd_free(r);
    r = meta(f, "topic_get", "topic", "AutoT", NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    /* durable before the answer: in the journal (topics.json gets it at
     * the next compaction or stop) */
    char path[600];
    snprintf(path, sizeof path, "%s/broker-client-mgr/topics.journal", f->d.state_dir);
    assert_true(file_contains(path, "AutoT"));
    uint64_t deadline = rmq_test_now_ms() + 10000;
    while (!namesrv_routes(f, "AutoT") && rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(50);
    assert_true(namesrv_routes(f, "AutoT"));
}

static void test_topic_created_in_send_back_and_listed(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = meta(f, "for_each", NULL);
    long long before = atoll(rmq_cmd_ext_get(r, "count"));
    assert_int_equal(before, atoll(rmq_cmd_ext_get(r, "seen")));
    rmq_cmd_free(r);
    r = meta(f, "create_back", "topic", "%DLQ%g1", "queues", "1", "perm", "2", NULL);
    assert_int_equal(r->code, 0);
    assert_ext(r, "writeQueueNums", "1");
    assert_ext(r, "perm", "2");
    rmq_cmd_free(r);
    r = meta(f, "for_each", NULL);
    assert_int_equal(atoll(rmq_cmd_ext_get(r, "count")), before + 1);
    rmq_cmd_free(r);
}

static void test_group_lookup_and_auto_creation(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = meta(f, "group_get", "group", "newGroup", "auto", "0", NULL);
    assert_int_equal(r->code, 1);
    rmq_cmd_free(r);
    r = meta(f, "group_get", "group", "newGroup", "auto", "1", NULL);
    assert_int_equal(r->code, 0);
    assert_ext(r, "retryMaxTimes", "16");
    assert_ext(r, "retryQueueNums", "1");
    assert_ext(r, "consumeEnable", "1");
    rmq_cmd_free(r);
    r = bcm_call(f->port, 201, NULL, NULL);
    assert_true(bcm_body_contains(r, "newGroup"));
    rmq_cmd_free(r);
}

static void test_consumer_subscription_and_channels(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = meta(f, "consumer_sub", "group", "cg", "topic", "T1", NULL);
    assert_int_equal(r->code, 1); /* no consumer yet */
    rmq_cmd_free(r);
    int fd = rmq_tc_connect(f->port);
    char hb[2048];
    rmq_cmd *req = rmq_tc_request(34, 5, NULL);
    bcm_consumer_heartbeat(hb, sizeof hb, "10.0.0.1@c1", "cg", "T1", true);
    rmq_cmd_set_body(req, hb, strlen(hb), NULL, NULL);
    rmq_cmd *resp = rmq_tc_call_response(fd, req, 5000);
    assert_non_null(resp);
    assert_int_equal(resp->code, 0);
    rmq_cmd_free(resp);
    rmq_cmd_free(req);
    r = meta(f, "consumer_sub", "group", "cg", "topic", "T1", NULL);
    assert_int_equal(r->code, 0);
    assert_ext(r, "hasSubscription", "1");
    assert_ext(r, "expressionType", "TAG");
    assert_ext(r, "subString", "*");
    assert_ext(r, "messageModel", "0");
    rmq_cmd_free(r);
    r = meta(f, "consumer_sub", "group", "cg", "topic", "Other", NULL);
    assert_int_equal(r->code, 0);
    assert_ext(r, "hasSubscription", "0");
    rmq_cmd_free(r);
    r = meta(f, "consumer_channels", "group", "cg", NULL);
    assert_ext(r, "count", "1");
    assert_ext(r, "clientId", "10.0.0.1@c1");
    rmq_cmd_free(r);
    close(fd);
}

static int producer_heartbeat(int port, const char *client_id)
{
    int fd = rmq_tc_connect(port);
    char body[512];
    snprintf(body, sizeof body,
             "{\"clientID\":\"%s\",\"consumerDataSet\":[],\"producerDataSet\":[{\"groupName\":"
             "\"PG\"},{\"groupName\":\"CLIENT_INNER_PRODUCER\"}]}",
             client_id);
    rmq_cmd *req = rmq_tc_request(34, 9, NULL);
    rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    rmq_cmd *resp = rmq_tc_call_response(fd, req, 5000);
    assert_non_null(resp);
    rmq_cmd_free(resp);
    rmq_cmd_free(req);
    return fd;
}

/* ProducerManager.getAvailableChannel: round robin over the group. */
static void test_producer_channel_round_robin(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = meta(f, "producer_channel", "group", "PG", NULL);
    assert_ext(r, "channel", "0");
    rmq_cmd_free(r);
    int a = producer_heartbeat(f->port, "10.0.0.2@p1");
    int b = producer_heartbeat(f->port, "10.0.0.3@p2");
    long long seen[4];
    for (int i = 0; i < 4; i++) {
        r = meta(f, "producer_channel", "group", "PG", NULL);
        seen[i] = atoll(rmq_cmd_ext_get(r, "channel"));
        rmq_cmd_free(r);
        assert_true(seen[i] != 0);
    }
    assert_true(seen[0] != seen[1]);
    assert_true(seen[0] == seen[2] && seen[1] == seen[3]);
    close(a);
    close(b);
}

static void test_offsets_commit_and_query(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = meta(f, "offset_query", "group", "og", "topic", "T1", "queueId", "2", NULL);
    assert_ext(r, "offset", "-1");
    rmq_cmd_free(r);
    r = meta(f, "offset_commit", "group", "og", "topic", "T1", "queueId", "2", "offset", "42",
             NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = meta(f, "offset_query", "group", "og", "topic", "T1", "queueId", "2", NULL);
    assert_ext(r, "offset", "42");
    rmq_cmd_free(r);
    const char *kv[] = {"consumerGroup", "og", "topic", "T1", "queueId", "2", NULL};
    r = bcm_call(f->port, 14, kv, NULL);
    assert_int_equal(r->code, 0);
    assert_ext(r, "offset", "42");
    rmq_cmd_free(r);
}

static void test_delete_topic_publishes_topic_deleted(void **state)
{
    fixture *f = *state;
    const char *kv[] = {"topic", "T1", NULL};
    rmq_cmd *r = bcm_call(f->port, 215, kv, NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = bcm_call(f->port, 7202, NULL, NULL);
    assert_true(bcm_body_contains(r, "T1\n"));
    rmq_cmd_free(r);
    r = meta(f, "topic_get", "topic", "T1", NULL);
    assert_int_equal(r->code, 1);
    rmq_cmd_free(r);
}

/* QUERY_CONSUMER_OFFSET (14) of group ng on topic/queue, answered
 * want_code; the answer (caller frees). */
static rmq_cmd *query_offset(fixture *f, const char *topic, const char *queue, int want_code)
{
    const char *kv[] = {"consumerGroup", "ng", "topic", topic, "queueId", queue, NULL};
    rmq_cmd *r = bcm_call(f->port, 14, kv, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, want_code);
    return r;
}

/* Without a store every queue is empty: 4.9.8 starts a new group at 0. */
static void test_query_offset_without_store_is_zero(void **state)
{
    rmq_cmd *r = query_offset(*state, "OldTopic", "0", 0);
    assert_ext(r, "offset", "0");
    rmq_cmd_free(r);
}

/* §10.2.12 with a store: min offset > 0 or first message in disk → 22. */
static void test_query_offset_follows_the_store(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = query_offset(f, "ProofTopic", "0", 0);
    assert_ext(r, "offset", "0");
    rmq_cmd_free(r);
    r = query_offset(f, "OldTopic", "0", 22);
    assert_string_equal(r->remark,
                        "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first");
    rmq_cmd_free(r);
    rmq_cmd_free(query_offset(f, "DiskTopic", "1", 22));
}

static void commit(fixture *f, const char *group, const char *topic, const char *q, const char *off)
{
    const char *kv[] = {"consumerGroup", group, "topic", topic, "queueId", q,
                        "commitOffset",  off,   NULL};
    rmq_cmd *r = bcm_call(f->port, 15, kv, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
}

/* Replay tests/vectors/<name>.req.bin and compare with .resp.bin: the same
 * head, every recorded offsetTable entry byte for byte and nothing else. */
static void replay_208(fixture *f, const char *name, size_t want_entries)
{
    char req_name[128], resp_name[128];
    snprintf(req_name, sizeof req_name, "%s.req.bin", name);
    snprintf(resp_name, sizeof resp_name, "%s.resp.bin", name);
    char why[256];
    rmq_cmd *want = rmq_tc_load_vector_cmd(resp_name, why, sizeof why);
    rmq_cmd *req = rmq_tc_load_vector_cmd(req_name, why, sizeof why);
    assert_non_null(want);
    assert_non_null(req);
    int fd = rmq_tc_connect(f->port);
    rmq_cmd *got = rmq_tc_call(fd, req, 5000);
    close(fd);
    assert_non_null(got);
    assert_true(rmq_tc_same_answer_head(want, got, why, sizeof why));
    /* every recorded entry, byte for byte, and nothing else */
    char *w = strndup((const char *)want->body, want->body_len);
    char *g = strndup((const char *)got->body, got->body_len);
    size_t entries = 0;
    for (char *p = strstr(w, "{\"brokerName\""); p; p = strstr(p + 1, "{\"brokerName\"")) {
        char *end = strchr(strchr(p, '}') + 1, '}');
        char one[512];
        snprintf(one, sizeof one, "%.*s", (int)(end - p + 1), p);
        if (!strstr(g, one))
            fail_msg("entry %s missing from %s", one, g);
        entries++;
    }
    size_t got_entries = 0;
    for (char *p = strstr(g, "{\"brokerName\""); p; p = strstr(p + 1, "{\"brokerName\""))
        got_entries++;
    assert_int_equal(entries, want_entries);
    assert_int_equal(got_entries, entries);
    assert_non_null(strstr(g, "\"consumeTps\":0.0"));
    free(w);
    free(g);
    rmq_cmd_free(want);
    rmq_cmd_free(req);
    rmq_cmd_free(got);
}

/* The recorded 208 answer (broker-a, ProofTopic 4 × 25 messages consumed,
 * an empty %RETRY% queue) comes back entry for entry; consumeTps aside. */
static void test_consume_stats_replays_the_recorded_answer(void **state)
{
    fixture *f = *state;
    for (int q = 0; q < 4; q++)
        commit(f, "proof_consumer_group", "ProofTopic", (const char[]){(char)('0' + q), 0}, "25");
    rmq_cmd *r = meta(f, "create_back", "topic", "%RETRY%proof_consumer_group", "queues", "1",
                      "perm", "6", NULL);
    rmq_cmd_free(r);
    commit(f, "proof_consumer_group", "%RETRY%proof_consumer_group", "0", "0");
    replay_208(f, "208-get-consume-stats", 5);
}

/* The recorded answer after a retry (broker-rec: RecTopic's four queues and
 * the group's %RETRY% queue, the figures of the recording). */
static void test_consume_stats_replays_the_recorded_answer_after_a_retry(void **state)
{
    (void)state;
    fixture f = {0};
    assert_int_equal(
        start_named(&f,
                    "exportStore = true;\n"
                    "queueTable = \"RecTopic/0/1/1796123532115;RecTopic/1/1/1796123532124;"
                    "RecTopic/2/1/1796123531985;RecTopic/3/4/1796123532095;"
                    "%RETRY%rec_consumer_group/0/1/1796123550080\";",
                    false, "broker-rec"),
        0);
    const char *g = "rec_consumer_group";
    commit(&f, g, "RecTopic", "0", "1");
    commit(&f, g, "RecTopic", "1", "1");
    commit(&f, g, "RecTopic", "2", "1");
    commit(&f, g, "RecTopic", "3", "4");
    rmq_cmd *r = meta(&f, "create_back", "topic", "%RETRY%rec_consumer_group", "queues", "1",
                      "perm", "6", NULL);
    rmq_cmd_free(r);
    commit(&f, g, "%RETRY%rec_consumer_group", "0", "1");
    replay_208(&f, "208-get-consume-stats.after-retry", 5);
    assert_int_equal(rmq_td_stop_reporting(&f.d), 0);
    rmq_td_cleanup(&f.d);
}

/* A topic named in the request: only its readable queues; the last
 * consumed message's store time. */
static void test_consume_stats_for_one_topic(void **state)
{
    fixture *f = *state;
    commit(f, "sg", "T1", "0", "7");
    const char *kv[] = {"consumerGroup", "sg", "topic", "T1", NULL};
    rmq_cmd *r = bcm_call(f->port, 208, kv, NULL);
    assert_int_equal(r->code, 0);
    assert_true(bcm_body_contains(
        r, "{\"brokerName\":\"broker-a\",\"queueId\":0,\"topic\":\"T1\"}:{\"brokerOffset\":7,"
           "\"consumerOffset\":7,\"lastTimestamp\":1700000000123}"));
    assert_true(bcm_body_contains(
        r, "{\"brokerName\":\"broker-a\",\"queueId\":3,\"topic\":\"T1\"}:{\"brokerOffset\":0,"
           "\"consumerOffset\":0,\"lastTimestamp\":0}"));
    rmq_cmd_free(r);
}

/* The stubs are fallbacks: the probe (loaded first) keeps 10 and 30; codes
 * it does not take stay with the stubs. */
static void test_store_registrations_win_over_the_stubs(void **state)
{
    fixture *f = *state;
    const char *kv[] = {"topic", "T1", "queueId", "0", NULL};
    rmq_cmd *r = bcm_call(f->port, 10, kv, NULL);
    assert_int_equal(r->code, 0);
    assert_string_equal(r->remark, "answered by the probe store");
    rmq_cmd_free(r);
    r = bcm_call(f->port, 30, kv, NULL);
    assert_string_equal(r->remark, "answered by the probe store");
    rmq_cmd_free(r);
    r = bcm_call(f->port, 31, kv, NULL);
    assert_int_equal(r->code, 0);
    assert_ext(r, "offset", "0");
    rmq_cmd_free(r);
    r = bcm_call(f->port, 310, kv, NULL);
    assert_int_equal(r->code, 1);
    rmq_cmd_free(r);
}

/* Loaded after broker-client-mgr the probe wins too. */
static void test_store_loaded_last_also_wins(void **state)
{
    (void)state;
    fixture f = {0};
    assert_int_equal(start(&f, "takeStorageCodes = true;", false), 0);
    const char *kv[] = {"topic", "T1", "queueId", "0", NULL};
    rmq_cmd *r = bcm_call(f.port, 10, kv, NULL);
    assert_string_equal(r->remark, "answered by the probe store");
    rmq_cmd_free(r);
    assert_false(rmq_td_log_contains(&f.d, "replaces"));
    assert_int_equal(rmq_td_stop_reporting(&f.d), 0);
    rmq_td_cleanup(&f.d);
}

/* CONSUME_MESSAGE_DIRECTLY hands the client the stored record the
 * offsetMsgId names, as Java's selectOneMessageByOffset. */
static void test_consume_directly_relays_the_stored_record(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    char hb[2048];
    rmq_cmd *req = rmq_tc_request(34, 5, NULL);
    bcm_consumer_heartbeat(hb, sizeof hb, "10.0.0.9@dc", "dg", "ProofTopic", false);
    rmq_cmd_set_body(req, hb, strlen(hb), NULL, NULL);
    rmq_cmd *resp = rmq_tc_call_response(fd, req, 5000);
    assert_non_null(resp);
    rmq_cmd_free(resp);
    rmq_cmd_free(req);
    /* offset 0x1234 = 4660 */
    const char *kv[] = {"consumerGroup",
                        "dg",
                        "clientId",
                        "10.0.0.9@dc",
                        "msgId",
                        "7F00000100002A9F0000000000001234",
                        NULL};
    int admin = rmq_tc_connect(f->port);
    rmq_cmd *call = rmq_tc_request(309, 77, kv);
    rmq_cmd_set_body(call, "admin-body", 10, NULL, NULL);
    assert_int_equal(rmq_tc_send(admin, call), 0);
    rmq_cmd *relayed = NULL;
    uint64_t deadline = rmq_test_now_ms() + 5000;
    while (!relayed && rmq_test_now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 500);
        if (c && c->code == 309 && !(c->flag & 1))
            relayed = c;
        else
            rmq_cmd_free(c);
    }
    assert_non_null(relayed);
    assert_int_equal(relayed->body_len, strlen("STORED-RECORD-AT-4660"));
    assert_memory_equal(relayed->body, "STORED-RECORD-AT-4660", relayed->body_len);
    assert_string_equal(rmq_cmd_ext_get(relayed, "brokerName"), "broker-a");
    rmq_cmd *ans = rmq_cmd_new_response(relayed, 0, NULL);
    rmq_cmd_set_body(ans, "{\"order\":false}", 15, NULL, NULL);
    assert_int_equal(rmq_tc_send(fd, ans), 0);
    rmq_cmd_free(ans);
    rmq_cmd_free(relayed);
    rmq_cmd *back = rmq_tc_recv(admin, 5000);
    assert_non_null(back);
    assert_int_equal(back->code, 0);
    rmq_cmd_free(back);
    rmq_cmd_free(call);
    /* an offset the store does not have */
    const char *kv2[] = {"consumerGroup",
                         "dg",
                         "clientId",
                         "10.0.0.9@dc",
                         "msgId",
                         "7F00000100002A9F00000000000003E7",
                         NULL};
    rmq_cmd *missing = rmq_tc_request(309, 78, kv2);
    rmq_cmd *r = rmq_tc_call(admin, missing, 5000);
    rmq_cmd_free(missing);
    assert_non_null(r);
    assert_int_equal(r->code, 1);
    rmq_cmd_free(r);
    close(admin);
    close(fd);
}

/* On the VIP port (vip_listen) the stubs answer everything but PULL, which
 * gets Java's " request type 11 not supported" there. */
static void test_pull_stub_is_not_served_on_the_vip_port(void **state)
{
    (void)state;
    fixture f = {0};
    const char *args[] = {"-o", "servers.broker.vip_listen=127.0.0.1:0", NULL};
    assert_int_equal(start_args(&f, NULL, false, "broker-a", args), 0);
    int vip = rmq_td_port(&f.d, "broker.vip");
    assert_true(vip > 0);
    const char *pull[] = {
        "consumerGroup", "g", "topic",   "T1", "queueId",      "0", "queueOffset",          "0",
        "maxMsgNums",    "1", "sysFlag", "0",  "commitOffset", "0", "suspendTimeoutMillis", "0",
        "subVersion",    "0", NULL};
    rmq_cmd *r = bcm_call(vip, 11, pull, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 3);
    assert_string_equal(r->remark, " request type 11 not supported");
    rmq_cmd_free(r);
    r = bcm_call(f.port, 11, pull, NULL);
    assert_int_equal(r->code, 19);
    rmq_cmd_free(r);
    const char *off[] = {"topic", "T1", "queueId", "0", NULL};
    r = bcm_call(vip, 30, off, NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = meta(&f, "config", NULL); /* broker.meta answers on the main port */
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(rmq_td_stop_reporting(&f.d), 0);
    rmq_td_cleanup(&f.d);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_broker_config_names_this_broker, setup_plain,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_topic_created_in_send_is_persisted_and_registered,
                                        setup_plain, teardown),
        cmocka_unit_test_setup_teardown(test_topic_created_in_send_back_and_listed, setup_plain,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_group_lookup_and_auto_creation, setup_plain, teardown),
        cmocka_unit_test_setup_teardown(test_consumer_subscription_and_channels, setup_plain,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_producer_channel_round_robin, setup_plain, teardown),
        cmocka_unit_test_setup_teardown(test_offsets_commit_and_query, setup_plain, teardown),
        cmocka_unit_test_setup_teardown(test_delete_topic_publishes_topic_deleted, setup_plain,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_query_offset_without_store_is_zero, setup_plain,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_query_offset_follows_the_store, setup_store, teardown),
        cmocka_unit_test_setup_teardown(test_consume_stats_replays_the_recorded_answer, setup_store,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_consume_stats_for_one_topic, setup_store, teardown),
        cmocka_unit_test(test_consume_stats_replays_the_recorded_answer_after_a_retry),
        cmocka_unit_test_setup_teardown(test_store_registrations_win_over_the_stubs, setup_store,
                                        teardown),
        cmocka_unit_test(test_store_loaded_last_also_wins),
        cmocka_unit_test(test_pull_stub_is_not_served_on_the_vip_port),
        cmocka_unit_test_setup_teardown(test_consume_directly_relays_the_stored_record, setup_store,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
