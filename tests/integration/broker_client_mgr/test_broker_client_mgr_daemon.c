/* broker-client-mgr in a real daemon: registration to NameServers (the
 * namesrv plugin on a second server of the same daemon), client tables over
 * raw frames, notifications, expiry, offsets across a restart, storage codes
 * without a store. Every test starts its own daemons and stops them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bcm_test_daemon.h"

#define WAIT_MS 15000

/* A raw listener standing in for the NameServer: its connections, and the
 * next REGISTER_BROKER arriving on any of them. */
typedef struct fake_ns {
    int lfd, port;
    int conns[8];
    int nconns;
} fake_ns;
static void fake_ns_close(fake_ns *n);

typedef struct fixture {
    rmq_test_daemon d;  /* namesrv + broker (or broker only) */
    rmq_test_daemon ns; /* a separate NameServer daemon when needed */
    bool has_ns;
    fake_ns fake; /* a raw NameServer listener when has_fake, closed by teardown */
    bool has_fake;
} fixture;

static int teardown(void **state)
{
    fixture *f = *state;
    rmq_td_cleanup(&f->d);
    if (f->has_ns)
        rmq_td_cleanup(&f->ns);
    if (f->has_fake)
        fake_ns_close(&f->fake);
    free(f);
    return 0;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    return f ? 0 : -1;
}

/* Send on a client connection and return the response; server-initiated
 * requests arriving first (NOTIFY_CONSUMER_IDS_CHANGED is sent before the
 * heartbeat's answer, as Java does) are counted in *notifies. */
static rmq_cmd *call_fd_seen(int fd, int code, const char *const *kv, const char *body,
                             int *notifies)
{
    static int opaque = 1000;
    int op = opaque++;
    rmq_cmd *req = rmq_tc_request(code, op, kv);
    if (body)
        rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    int rc = rmq_tc_send(fd, req);
    rmq_cmd_free(req);
    if (rc != 0)
        return NULL;
    uint64_t deadline = rmq_test_now_ms() + 5000;
    while (rmq_test_now_ms() < deadline) {
        rmq_cmd *c = rmq_tc_recv(fd, 500);
        if (!c)
            continue;
        if ((c->flag & 1) && c->opaque == op)
            return c;
        if (c->code == 40 && notifies)
            (*notifies)++;
        rmq_cmd_free(c);
    }
    return NULL;
}

static rmq_cmd *call_fd(int fd, int code, const char *const *kv, const char *body)
{
    return call_fd_seen(fd, code, kv, body, NULL);
}

/* Poll GET_BROKER_CLUSTER_INFO until `needle` is (or is not) in it. */
static bool cluster_info_has(int ns_port, const char *needle, bool want)
{
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (rmq_test_now_ms() < deadline) {
        rmq_cmd *r = bcm_call(ns_port, 106, NULL, NULL);
        bool has = r && r->code == 0 && bcm_body_contains(r, needle);
        rmq_cmd_free(r);
        if (has == want)
            return true;
        rmq_test_pause_ms(50);
    }
    return false;
}

static bool route_has_broker(int ns_port, const char *topic, const char *broker)
{
    const char *kv[] = {"topic", topic, NULL};
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (rmq_test_now_ms() < deadline) {
        rmq_cmd *r = bcm_call(ns_port, 105, kv, NULL);
        bool has = r && r->code == 0 && bcm_body_contains(r, broker);
        rmq_cmd_free(r);
        if (has)
            return true;
        rmq_test_pause_ms(50);
    }
    return false;
}

/* The consumer ids GET_CONSUMER_LIST_BY_GROUP answers, as a JSON text, "" on error. */
static void consumer_list(int port, const char *group, char *out, size_t len)
{
    const char *kv[] = {"consumerGroup", group, NULL};
    rmq_cmd *r = bcm_call(port, 38, kv, NULL);
    out[0] = '\0';
    if (r && r->code == 0 && r->body)
        snprintf(out, len, "%.*s", (int)r->body_len, (const char *)r->body);
    rmq_cmd_free(r);
}

static bool wait_consumer_list(int port, const char *group, const char *want)
{
    char got[1024];
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (rmq_test_now_ms() < deadline) {
        consumer_list(port, group, got, sizeof got);
        if (strcmp(got, want) == 0)
            return true;
        rmq_test_pause_ms(20);
    }
    fprintf(stderr, "consumer list of %s: got '%s', want '%s'\n", group, got, want);
    return false;
}

/* One daemon: namesrv on a port chosen before start (the broker needs its
 * address in its settings), broker on an ephemeral port. namesrvAddr lists a
 * dead NameServer first. */
static void start_both(fixture *f, int *ns_port, int *broker_port, const char *extra_settings)
{
    int live = rmq_tc_free_port(), dead = rmq_tc_free_port();
    assert_true(live > 0 && dead > 0);
    const char *servers[] = {"namesrv", "broker", NULL};
    assert_int_equal(rmq_td_init(&f->d, servers, NULL), 0);
    char settings[2048];
    snprintf(settings, sizeof settings,
             "brokerName = \"broker-it\"; brokerClusterName = \"ItCluster\";\n"
             "namesrvAddr = \"127.0.0.1:%d;127.0.0.1:%d\"; registerBrokerTimeoutMills = 2000;\n"
             "topics = \"ItTopic:4\";\n%s",
             dead, live, extra_settings ? extra_settings : "");
    assert_int_equal(bcm_start_namesrv_and_broker(&f->d, live, "debug", settings), 0);
    *ns_port = rmq_td_port(&f->d, "namesrv");
    *broker_port = rmq_td_port(&f->d, "broker");
    assert_int_equal(*ns_port, live);
    assert_true(*broker_port > 0);
}

static void test_registers_with_live_nameserver_despite_a_dead_one(void **state)
{
    fixture *f = *state;
    int ns_port, broker_port;
    start_both(f, &ns_port, &broker_port, NULL);
    assert_true(cluster_info_has(ns_port, "\"broker-it\"", true));
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", broker_port);
    assert_true(cluster_info_has(ns_port, addr, true));
    assert_true(cluster_info_has(ns_port, "\"ItCluster\"", true));
    assert_true(route_has_broker(ns_port, "ItTopic", "broker-it"));
    assert_true(route_has_broker(ns_port, "TBW102", "broker-it"));
    assert_true(route_has_broker(ns_port, "ItCluster", "broker-it"));
}

static void test_heartbeats_notify_group_and_register_retry_topic(void **state)
{
    fixture *f = *state;
    int ns_port, broker_port;
    start_both(f, &ns_port, &broker_port, NULL);
    char hb[2048];
    int c1 = rmq_tc_connect(broker_port), c2 = rmq_tc_connect(broker_port);
    assert_true(c1 >= 0 && c2 >= 0);
    int seen = 0;
    rmq_cmd *r = call_fd_seen(
        c1, 34, NULL, bcm_consumer_heartbeat(hb, sizeof hb, "c1", "ItGroup", "ItTopic", false),
        &seen);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(seen, 1); /* a new connection notifies the whole group, itself included */
    /* the same heartbeat again changes nothing and notifies nobody */
    r = call_fd_seen(c1, 34, NULL,
                     bcm_consumer_heartbeat(hb, sizeof hb, "c1", "ItGroup", "ItTopic", false),
                     &seen);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_int_equal(seen, 1);
    assert_true(wait_consumer_list(broker_port, "ItGroup", "{\"consumerIdList\":[\"c1\"]}"));
    r = call_fd_seen(c2, 34, NULL,
                     bcm_consumer_heartbeat(hb, sizeof hb, "c2", "ItGroup", "ItTopic", false),
                     &seen);
    assert_int_equal(r->code, 0);
    assert_int_equal(seen, 2);
    rmq_cmd_free(r);
    assert_true(bcm_wait_notify(c1, "ItGroup", 5000));
    assert_true(wait_consumer_list(broker_port, "ItGroup", "{\"consumerIdList\":[\"c1\",\"c2\"]}"));
    close(c2);
    assert_true(bcm_wait_notify(c1, "ItGroup", 5000)); /* a closed connection notifies the rest */
    assert_true(wait_consumer_list(broker_port, "ItGroup", "{\"consumerIdList\":[\"c1\"]}"));
    /* the retry topic was created and registered with the NameServer */
    assert_true(route_has_broker(ns_port, "%RETRY%ItGroup", "broker-it"));
    const char *kv[] = {"consumerGroup", "ItGroup", NULL};
    r = bcm_call(broker_port, 203, kv, NULL);
    assert_int_equal(r->code, 0);
    assert_true(bcm_body_contains(r, "\"clientId\":\"c1\""));
    assert_true(bcm_body_contains(r, "\"messageModel\":\"CLUSTERING\""));
    rmq_cmd_free(r);
    const char *unreg[] = {"clientID", "c1", "consumerGroup", "ItGroup", NULL};
    r = call_fd(c1, 35, unreg, NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    r = bcm_call(broker_port, 38, kv, NULL);
    assert_int_equal(r->code, 1);
    assert_string_equal(r->remark, "no consumer for this group, ItGroup");
    rmq_cmd_free(r);
    close(c1);
}

/* Half-open socket: the client's connection stays open but sends nothing
 * after its heartbeat; the broker's scan removes it after
 * channelExpiredTimeout and closes the connection (protocol.md §5.13).
 * The consumer is not looked for in between: on a loaded machine the 300 ms
 * expiry can pass before any look, so the daemon's own expiry line is what
 * shows the consumer was registered and then expired. */
static void test_half_open_client_silent_past_channel_expired_timeout_is_removed(void **state)
{
    fixture *f = *state;
    int ns_port, broker_port;
    start_both(f, &ns_port, &broker_port,
               "channelExpiredTimeout = 300; clientHousekeepingInterval = 100;");
    char hb[2048];
    int c = rmq_tc_connect(broker_port);
    rmq_cmd *r = call_fd(
        c, 34, NULL, bcm_consumer_heartbeat(hb, sizeof hb, "quiet", "ExpGroup", "ItTopic", false));
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    /* the test never closes c: only the broker's expiry can end it */
    assert_true(rmq_tc_wait_closed(c, WAIT_MS));
    close(c);
    /* logged before the close, so present once the close is seen */
    assert_true(rmq_td_log_contains(&f->d, "expired (no heartbeat for 300 ms), closing"));
    char got[256];
    consumer_list(broker_port, "ExpGroup", got, sizeof got);
    assert_string_equal(got, "");
}

/* compressedRegister = true: the deflated RegisterBrokerBody (protocol.md
 * §4.6) is decoded by the namesrv plugin and the broker's topics route. */
static void test_compressed_registration_puts_topics_in_nameserver_route(void **state)
{
    fixture *f = *state;
    int ns_port, broker_port;
    start_both(f, &ns_port, &broker_port, "compressedRegister = true;");
    assert_true(cluster_info_has(ns_port, "\"broker-it\"", true));
    assert_true(route_has_broker(ns_port, "ItTopic", "broker-it"));
    assert_true(route_has_broker(ns_port, "TBW102", "broker-it"));
    const char *kv[] = {"topic", "ItTopic", NULL};
    rmq_cmd *r = bcm_call(ns_port, 105, kv, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    char addr[64];
    snprintf(addr, sizeof addr, "\"127.0.0.1:%d\"", broker_port);
    assert_true(bcm_body_contains(r, addr));
    assert_true(bcm_body_contains(r, "\"readQueueNums\":4"));
    rmq_cmd_free(r);
}

/* What the broker puts on the wire with compressedRegister = true, seen by a
 * raw listener standing in for the NameServer: header compressed=true and a
 * zlib stream (first byte 0x78) instead of JSON. */
static void test_compressed_register_frame_is_flagged_and_deflated(void **state)
{
    fixture *f = *state;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(lfd, 4), 0);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
    const char *servers[] = {"broker", NULL};
    assert_int_equal(rmq_td_init(&f->d, servers, NULL), 0);
    char settings[256];
    snprintf(
        settings, sizeof settings,
        "brokerName = \"broker-zip\"; namesrvAddr = \"127.0.0.1:%d\"; compressedRegister = true;",
        ntohs(a.sin_port));
    assert_int_equal(
        rmq_td_add_plugin(&f->d, "broker-client-mgr", "broker-client-mgr", "broker", settings), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    struct pollfd pfd = {.fd = lfd, .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, WAIT_MS), 1);
    int conn = accept(lfd, NULL, NULL);
    assert_true(conn >= 0);
    rmq_cmd *reg = rmq_tc_recv(conn, WAIT_MS);
    assert_non_null(reg);
    assert_int_equal(reg->code, 103);
    assert_string_equal(rmq_cmd_ext_get(reg, "compressed"), "true");
    assert_string_equal(rmq_cmd_ext_get(reg, "brokerName"), "broker-zip");
    assert_true(reg->body_len > 2);
    assert_int_equal(reg->body[0], 0x78);
    rmq_cmd_free(reg);
    close(conn);
    close(lfd);
}

static void test_offsets_survive_a_restart(void **state)
{
    fixture *f = *state;
    int ns_port, broker_port;
    start_both(f, &ns_port, &broker_port, "flushConsumerOffsetInterval = 100;");
    const char *upd[] = {"consumerGroup", "OffGroup", "topic", "ItTopic", "queueId", "2",
                         "commitOffset",  "4242",     NULL};
    rmq_cmd *r = bcm_call(broker_port, 15, upd, NULL);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    const char *q[] = {"consumerGroup", "OffGroup", "topic", "ItTopic", "queueId", "2", NULL};
    r = bcm_call(broker_port, 14, q, NULL);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "offset"), "4242");
    rmq_cmd_free(r);
    /* never stored: 4.9.8 answers 0 for an empty queue */
    const char *q0[] = {"consumerGroup", "OffGroup", "topic", "ItTopic", "queueId", "3", NULL};
    r = bcm_call(broker_port, 14, q0, NULL);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "offset"), "0");
    rmq_cmd_free(r);
    assert_int_equal(rmq_td_stop(&f->d), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    broker_port = rmq_td_port(&f->d, "broker");
    r = bcm_call(broker_port, 14, q, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "offset"), "4242");
    rmq_cmd_free(r);
    r = bcm_call(broker_port, 43, NULL, NULL);
    assert_true(bcm_body_contains(r, "\"ItTopic@OffGroup\":{2:4242}"));
    rmq_cmd_free(r);
}

static void test_storage_codes_answer_politely_without_a_store(void **state)
{
    fixture *f = *state;
    int ns_port, broker_port;
    start_both(f, &ns_port, &broker_port, NULL);
    const char *pull[] = {"consumerGroup",
                          "G",
                          "topic",
                          "ItTopic",
                          "queueId",
                          "0",
                          "queueOffset",
                          "25",
                          "sysFlag",
                          "3",
                          "suspendTimeoutMillis",
                          "300",
                          "maxMsgNums",
                          "32",
                          "commitOffset",
                          "0",
                          "subVersion",
                          "0",
                          NULL};
    rmq_cmd *r = bcm_call(broker_port, 11, pull, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 19);
    assert_string_equal(rmq_cmd_ext_get(r, "nextBeginOffset"), "25");
    assert_string_equal(rmq_cmd_ext_get(r, "minOffset"), "0");
    rmq_cmd_free(r);
    const char *mx[] = {"topic", "ItTopic", "queueId", "0", NULL};
    r = bcm_call(broker_port, 30, mx, NULL);
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "offset"), "0");
    rmq_cmd_free(r);
    r = bcm_call(broker_port, 310, mx, "body");
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->remark, "stores no messages"));
    rmq_cmd_free(r);
}

static void test_unregister_at_shutdown_removes_broker_from_nameserver(void **state)
{
    fixture *f = *state;
    const char *ns_servers[] = {"namesrv", NULL};
    assert_int_equal(rmq_td_init(&f->ns, ns_servers, NULL), 0);
    f->has_ns = true;
    assert_int_equal(rmq_td_add_plugin(&f->ns, "namesrv", "namesrv", "namesrv", NULL), 0);
    assert_int_equal(rmq_td_start(&f->ns, NULL), 0);
    int ns_port = rmq_td_port(&f->ns, "namesrv");
    const char *b_servers[] = {"broker", NULL};
    assert_int_equal(rmq_td_init(&f->d, b_servers, NULL), 0);
    char settings[512];
    snprintf(settings, sizeof settings,
             "brokerName = \"broker-bye\"; namesrvAddr = \"127.0.0.1:%d\";", ns_port);
    assert_int_equal(
        rmq_td_add_plugin(&f->d, "broker-client-mgr", "broker-client-mgr", "broker", settings), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    assert_true(cluster_info_has(ns_port, "\"broker-bye\"", true));
    assert_int_equal(rmq_td_stop(&f->d), 0);
    assert_true(cluster_info_has(ns_port, "\"broker-bye\"", false));
}

/* A long-polling PULL (held by the broker up to suspendTimeoutMillis) is
 * answered at once when the daemon stops or the plugin is reloaded: the
 * host asks the plugin to quiesce before it waits for in-flight work. */
static int send_held_pull(int broker_port, int opaque)
{
    int fd = rmq_tc_connect(broker_port);
    const char *pull[] = {"consumerGroup",
                          "G",
                          "topic",
                          "ItTopic",
                          "queueId",
                          "0",
                          "queueOffset",
                          "7",
                          "sysFlag",
                          "3",
                          "suspendTimeoutMillis",
                          "25000",
                          "maxMsgNums",
                          "32",
                          "commitOffset",
                          "0",
                          "subVersion",
                          "0",
                          NULL};
    rmq_cmd *req = rmq_tc_request(11, opaque, pull);
    int rc = rmq_tc_send(fd, req);
    rmq_cmd_free(req);
    return rc == 0 ? fd : -1;
}

/* A daemon pair holding a PULL (opaque) for up to 30 s: its connection. */
static int start_with_held_pull(fixture *f, int opaque)
{
    int ns_port, broker_port;
    start_both(f, &ns_port, &broker_port, "pullSuspendMaxMillis = 30000;\n");
    int fd = send_held_pull(broker_port, opaque);
    assert_true(fd >= 0);
    /* Held: nothing comes back for a while. */
    assert_null(rmq_tc_recv(fd, 300));
    return fd;
}

/* The held PULL is answered PULL_NOT_FOUND (19) on fd. */
static void expect_pull_not_found(int fd, int opaque)
{
    rmq_cmd *r = rmq_tc_recv(fd, 10000);
    assert_non_null(r);
    assert_int_equal(r->opaque, opaque);
    assert_int_equal(r->code, 19);
    rmq_cmd_free(r);
}

static void test_held_pull_is_answered_at_once_when_the_daemon_stops(void **state)
{
    fixture *f = *state;
    int fd = start_with_held_pull(f, 77);
    uint64_t t0 = rmq_test_now_ms();
    kill(f->d.pid, SIGTERM);
    expect_pull_not_found(fd, 77);
    assert_int_equal(rmq_td_stop(&f->d), 0);
    /* Not held to its 25 s timeout (a bound, not a timing measurement). */
    assert_true(rmq_test_now_ms() - t0 < 20000);
    close(fd);
}

static void test_held_pull_is_answered_when_the_plugin_reloads(void **state)
{
    fixture *f = *state;
    int fd = start_with_held_pull(f, 78);
    char out[4096];
    const char *args[] = {"reload", "broker-client-mgr", NULL};
    assert_int_equal(rmq_td_ctl(&f->d, out, sizeof(out), args), 0);
    expect_pull_not_found(fd, 78);
    /* The client pulls again and the new generation holds it as before. */
    close(fd);
    fd = send_held_pull(rmq_td_port(&f->d, "broker"), 79);
    assert_null(rmq_tc_recv(fd, 300));
    close(fd);
}

/* How often `needle` is in the daemon log. */
static int log_count(const rmq_test_daemon *d, const char *needle)
{
    FILE *fp = fopen(d->log_path, "r");
    if (!fp)
        return -1;
    int n = 0;
    char line[2048];
    while (fgets(line, sizeof line, fp))
        n += strstr(line, needle) != NULL;
    fclose(fp);
    return n;
}

static bool topic_listed(int port, const char *topic)
{
    rmq_cmd *r = bcm_call(port, 21, NULL, NULL); /* GET_ALL_TOPIC_CONFIG */
    bool found = r && r->code == 0 && bcm_body_contains(r, topic);
    rmq_cmd_free(r);
    return found;
}

typedef struct reload_call {
    rmq_test_daemon *d;
    int status;
    const char *out;
} reload_call;

static void *run_reload(void *arg)
{
    reload_call *r = arg;
    r->out = rmq_td_ctl_output(r->d, &r->status, "reload", "broker-client-mgr", NULL);
    return NULL;
}

/* A reload while a created topic's topics.json write is pending (the FIFO
 * at topics.json.tmp holds its creator in the write, as store_crash's
 * regression test does): the topic must neither reach a generation that
 * answers its senders before the write nor be lost. The reload goes on once
 * the write is done, the new generation serves the topic, and its next
 * write keeps it in topics.json across a restart. */
static void test_reload_during_a_pending_topics_write_loses_nothing(void **state)
{
    fixture *f = *state;
    char dir[400], fifo[460];
    assert_int_equal(bcm_configure_pair(&f->d, "debug", ""), 0);
    snprintf(dir, sizeof dir, "%s/broker-client-mgr", f->d.state_dir);
    snprintf(fifo, sizeof fifo, "%s/topics.json.tmp", dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    /* no journal (a directory in its place): a creation then rewrites
     * topics.json, where the FIFO holds it */
    char journal[460];
    snprintf(journal, sizeof journal, "%s/topics.journal", dir);
    assert_int_equal(mkdir(journal, 0755), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    int port = rmq_td_port(&f->d, "broker");
    assert_true(port > 0);
    int inits = log_count(&f->d, ", files in ");
    assert_int_equal(inits, 1);

    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    const char *kv[] = {
        "topic", "HeldTopic",       "readQueueNums", "4", "writeQueueNums", "4", "perm",
        "6",     "topicFilterType", "SINGLE_TAG",    NULL};
    rmq_cmd *req = rmq_tc_request(17, 501, kv); /* UPDATE_AND_CREATE_TOPIC */
    assert_int_equal(rmq_tc_send(fd, req), 0);
    rmq_cmd_free(req);
    /* in the table: its creator goes on into the write and blocks there */
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (!topic_listed(port, "HeldTopic") && rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(5);
    assert_true(topic_listed(port, "HeldTopic"));

    reload_call rc = {.d = &f->d, .status = -1};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, run_reload, &rc), 0);
    /* the new generation has run init (the host then holds and drains) */
    deadline = rmq_test_now_ms() + WAIT_MS;
    while (log_count(&f->d, ", files in ") < 2 && rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(5);
    assert_int_equal(log_count(&f->d, ", files in "), 2);
    assert_null(rmq_tc_recv(fd, 200)); /* still in its write */

    /* Let the write through: the reader gets the old generation's text. The
     * FIFO cannot be fsynced, so that write fails (logged) and the tmp name
     * is removed: the new generation's writes go to a real file. */
    int rd = open(fifo, O_RDONLY);
    assert_true(rd >= 0);
    char text[8192];
    size_t got = 0;
    for (ssize_t r; got < sizeof text - 1 && (r = read(rd, text + got, sizeof text - 1 - got)) > 0;)
        got += (size_t)r;
    text[got] = 0;
    close(rd);
    assert_non_null(strstr(text, "\"HeldTopic\""));

    assert_int_equal(pthread_join(th, NULL), 0);
    assert_non_null(rc.out);
    if (rc.status != 0)
        fprintf(stderr, "reload: %s\n", rc.out);
    assert_int_equal(rc.status, 0);
    assert_non_null(strstr(rc.out, "reloaded"));
    rmq_cmd *resp = rmq_tc_recv(fd, WAIT_MS);
    assert_non_null(resp);
    assert_int_equal(resp->opaque, 501);
    assert_int_equal(resp->code, 0);
    rmq_cmd_free(resp);
    close(fd);

    /* the new generation serves it, and its own write holds it */
    assert_true(topic_listed(port, "HeldTopic"));
    const char *kv2[] = {
        "topic", "AfterTopic",      "readQueueNums", "4", "writeQueueNums", "4", "perm",
        "6",     "topicFilterType", "SINGLE_TAG",    NULL};
    resp = bcm_call(port, 17, kv2, NULL);
    assert_non_null(resp);
    assert_int_equal(resp->code, 0);
    rmq_cmd_free(resp);
    assert_int_equal(rmq_td_stop(&f->d), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    port = rmq_td_port(&f->d, "broker");
    assert_true(topic_listed(port, "HeldTopic"));
    assert_true(topic_listed(port, "AfterTopic"));
}

/* Java's broker fast failure: HEART_BEATs that waited in their queue longer
 * than waitTimeMillsInHeartbeatQueue are answered SYSTEM_BUSY, the others
 * processed; every one is answered. 1 ms and one thread make the wait
 * certain for a burst of 2,000. */
static int heartbeat_burst(int broker_port, int n, int *busy, int *ok)
{
    int fd = rmq_tc_connect(broker_port);
    char body[2048];
    size_t cap = (size_t)n * 1024, len = 0;
    uint8_t *buf = malloc(cap);
    for (int i = 0; i < n; i++) {
        char id[64];
        snprintf(id, sizeof(id), "10.0.0.9@burst-%d", i % 50);
        bcm_consumer_heartbeat(body, sizeof(body), id, "BurstGroup", "ItTopic", false);
        rmq_cmd *req = rmq_tc_request(34, 1000 + i, NULL);
        rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
        len += rmq_cmd_encode(req, buf + len, cap - len);
        rmq_cmd_free(req);
    }
    int rc = rmq_tc_send_raw(fd, buf, len);
    free(buf);
    *busy = *ok = 0;
    for (int answers = 0; rc == 0 && answers < n;) {
        rmq_cmd *r = rmq_tc_recv(fd, 20000);
        if (!r)
            break;
        if (!(r->flag & 1)) { /* the broker's own NOTIFY_CONSUMER_IDS_CHANGED */
            rmq_cmd_free(r);
            continue;
        }
        answers++;
        static const char prefix[] = "[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for "
                                     "a while, period in queue: ";
        if (r->code == 2 && r->remark && strncmp(r->remark, prefix, sizeof(prefix) - 1) == 0 &&
            strstr(r->remark, "ms, size of queue: "))
            (*busy)++;
        else if (r->code == 0)
            (*ok)++;
        rmq_cmd_free(r);
    }
    close(fd);
    return rc;
}

static void test_heartbeats_waiting_too_long_get_timeout_clean_queue(void **state)
{
    fixture *f = *state;
    int ns_port, broker_port;
    start_both(f, &ns_port, &broker_port,
               "heartbeatThreadPoolNums = 1; waitTimeMillsInHeartbeatQueue = 1;\n");
    int busy, ok;
    assert_int_equal(heartbeat_burst(broker_port, 2000, &busy, &ok), 0);
    assert_int_equal(busy + ok, 2000); /* every one answered, busy or processed */
    assert_true(busy > 0);
}

static void test_fast_failure_can_be_switched_off(void **state)
{
    fixture *f = *state;
    int ns_port, broker_port;
    start_both(f, &ns_port, &broker_port,
               "heartbeatThreadPoolNums = 1; waitTimeMillsInHeartbeatQueue = 1;\n"
               "brokerFastFailureEnable = false;\n");
    int busy, ok;
    assert_int_equal(heartbeat_burst(broker_port, 2000, &busy, &ok), 0);
    assert_int_equal(busy, 0);
    assert_int_equal(ok, 2000);
}

/* ---- UPDATE_BROKER_CONFIG of settings Java reads per use ------------------ */

static void update_broker_config(int broker_port, const char *props)
{
    rmq_cmd *r = bcm_call(broker_port, 25, NULL, props);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
}

static char *broker_config_text(int broker_port)
{
    rmq_cmd *r = bcm_call(broker_port, 26, NULL, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    char *s = strndup((const char *)r->body, r->body_len);
    rmq_cmd_free(r);
    return s;
}

/* Java's BrokerFastFailure reads brokerFastFailureEnable and
 * waitTimeMillsInHeartbeatQueue on each pass: an update changes which
 * queued HEART_BEATs are refused at once, and a restart keeps it. */
static void test_fast_failure_settings_apply_at_once_and_persist(void **state)
{
    fixture *f = *state;
    int ns_port, broker_port, busy, ok;
    start_both(f, &ns_port, &broker_port,
               "heartbeatThreadPoolNums = 1; waitTimeMillsInHeartbeatQueue = 3600000;\n");
    assert_int_equal(heartbeat_burst(broker_port, 2000, &busy, &ok), 0);
    assert_int_equal(busy, 0); /* none waits an hour */
    update_broker_config(broker_port, "waitTimeMillsInHeartbeatQueue=1\n");
    assert_int_equal(heartbeat_burst(broker_port, 2000, &busy, &ok), 0);
    assert_int_equal(busy + ok, 2000);
    assert_true(busy > 0);
    update_broker_config(broker_port, "brokerFastFailureEnable=false\n");
    assert_int_equal(heartbeat_burst(broker_port, 2000, &busy, &ok), 0);
    assert_int_equal(busy, 0);
    assert_int_equal(ok, 2000);
    /* persisted: the next start has both */
    assert_int_equal(rmq_td_stop(&f->d), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    broker_port = rmq_td_port(&f->d, "broker");
    char *cfg = broker_config_text(broker_port);
    assert_non_null(strstr(cfg, "brokerFastFailureEnable=false\n"));
    assert_non_null(strstr(cfg, "waitTimeMillsInHeartbeatQueue=1\n"));
    free(cfg);
    assert_int_equal(heartbeat_burst(broker_port, 2000, &busy, &ok), 0);
    assert_int_equal(busy, 0);
    update_broker_config(broker_port, "brokerFastFailureEnable=true\n");
    assert_int_equal(heartbeat_burst(broker_port, 2000, &busy, &ok), 0);
    assert_int_equal(busy + ok, 2000);
    assert_true(busy > 0); /* the persisted 1 ms wait */
}

static void fake_ns_open(fake_ns *n)
{
    memset(n, 0, sizeof *n);
    n->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(n->lfd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    assert_int_equal(bind(n->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(n->lfd, 8), 0);
    assert_int_equal(getsockname(n->lfd, (struct sockaddr *)&a, &alen), 0);
    n->port = ntohs(a.sin_port);
}

static void fake_ns_close(fake_ns *n)
{
    for (int i = 0; i < n->nconns; i++)
        close(n->conns[i]);
    n->nconns = 0;
    if (n->lfd > 0)
        close(n->lfd);
    n->lfd = -1;
}

/* The next REGISTER_BROKER within WAIT_MS (other requests are answered
 * SUCCESS), answered SUCCESS when `answer`; NULL when none came. */
static rmq_cmd *fake_ns_next_register(fake_ns *n, bool answer)
{
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (rmq_test_now_ms() < deadline) {
        struct pollfd p[9];
        p[0] = (struct pollfd){.fd = n->lfd, .events = POLLIN};
        for (int i = 0; i < n->nconns; i++)
            p[i + 1] = (struct pollfd){.fd = n->conns[i], .events = POLLIN};
        if (poll(p, (nfds_t)n->nconns + 1, 200) <= 0)
            continue;
        if ((p[0].revents & POLLIN) && n->nconns < 8) {
            int c = accept(n->lfd, NULL, NULL);
            if (c >= 0)
                n->conns[n->nconns++] = c;
        }
        for (int i = 0; i < n->nconns; i++) {
            if (!p[i + 1].revents)
                continue;
            rmq_cmd *req = rmq_tc_recv(n->conns[i], 2000);
            if (!req) { /* closed by the broker */
                close(n->conns[i]);
                n->conns[i] = n->conns[--n->nconns];
                break;
            }
            if (req->code != 103 || answer) {
                rmq_cmd *resp = rmq_cmd_new_response(req, 0, NULL);
                assert_int_equal(rmq_tc_send(n->conns[i], resp), 0);
                rmq_cmd_free(resp);
            }
            if (req->code == 103)
                return req;
            rmq_cmd_free(req);
            break;
        }
    }
    return NULL;
}

static void create_topic(int broker_port, const char *topic)
{
    const char *kv[] = {"topic",
                        topic,
                        "readQueueNums",
                        "4",
                        "writeQueueNums",
                        "4",
                        "perm",
                        "6",
                        "topicFilterType",
                        "SINGLE_TAG",
                        NULL};
    rmq_cmd *r = bcm_call(broker_port, 17, kv, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
}

/* Java reads compressedRegister and registerBrokerTimeoutMills at each
 * registration: after an update the next REGISTER_BROKER is compressed,
 * and one the NameServer leaves unanswered fails after the new timeout
 * (a full registration follows at once; with the old 10-minute timeout and
 * a 60 s period none could come within the wait). A restart keeps both. */
static void test_registration_settings_apply_at_once_and_persist(void **state)
{
    fixture *f = *state;
    fake_ns *n = &f->fake;
    fake_ns_open(n);
    f->has_fake = true;
    const char *servers[] = {"broker", NULL};
    assert_int_equal(rmq_td_init(&f->d, servers, NULL), 0);
    char settings[400];
    snprintf(settings, sizeof settings,
             "brokerName = \"broker-live\"; namesrvAddr = \"127.0.0.1:%d\";\n"
             "registerNameServerPeriod = 60000; registerBrokerTimeoutMills = 600000;\n"
             "unregisterBrokerTimeoutMills = 100;\n",
             n->port);
    assert_int_equal(
        rmq_td_add_plugin(&f->d, "broker-client-mgr", "broker-client-mgr", "broker", settings), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    int broker_port = rmq_td_port(&f->d, "broker");
    rmq_cmd *reg = fake_ns_next_register(n, true);
    assert_non_null(reg);
    assert_string_equal(rmq_cmd_ext_get(reg, "compressed"), "false");
    assert_int_equal(reg->body[0], '{');
    rmq_cmd_free(reg);

    update_broker_config(broker_port, "compressedRegister=true\nregisterBrokerTimeoutMills=300\n");
    create_topic(broker_port, "LiveTopic1"); /* an incremental registration, left unanswered */
    reg = fake_ns_next_register(n, false);
    assert_non_null(reg);
    assert_string_equal(rmq_cmd_ext_get(reg, "compressed"), "true");
    assert_true(reg->body_len > 2);
    assert_int_equal(reg->body[0], 0x78); /* zlib */
    rmq_cmd_free(reg);
    reg = fake_ns_next_register(n, true); /* the full round after the 300 ms timeout */
    assert_non_null(reg);
    assert_string_equal(rmq_cmd_ext_get(reg, "compressed"), "true");
    rmq_cmd_free(reg);

    /* persisted: the next start registers compressed, with the short timeout */
    assert_int_equal(rmq_td_stop(&f->d), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    broker_port = rmq_td_port(&f->d, "broker");
    char *cfg = broker_config_text(broker_port);
    assert_non_null(strstr(cfg, "compressedRegister=true\n"));
    assert_non_null(strstr(cfg, "registerBrokerTimeoutMills=300\n"));
    free(cfg);
    reg = fake_ns_next_register(n, true);
    assert_non_null(reg);
    assert_string_equal(rmq_cmd_ext_get(reg, "compressed"), "true");
    rmq_cmd_free(reg);
    create_topic(broker_port, "LiveTopic2");
    reg = fake_ns_next_register(n, false);
    assert_non_null(reg);
    rmq_cmd_free(reg);
    reg = fake_ns_next_register(n, true);
    assert_non_null(reg);
    rmq_cmd_free(reg);
}

/* A master registers with the NameServers again as soon as a slave first
 * reports on its HA port (a demoted former master's registrations, brokerId
 * 0 then 1 from one address, make the NameServer drop this master's entry:
 * README's failover runbook). The registrations of the start are let pass
 * until WAIT_MS of silence; the period is 60 s, so without the slave's
 * report no registration could come within the next WAIT_MS. */
static void test_master_registers_when_a_slave_first_reports(void **state)
{
    fixture *f = *state;
    fake_ns *n = &f->fake;
    fake_ns_open(n);
    f->has_fake = true;
    const char *servers[] = {"broker", NULL};
    assert_int_equal(rmq_td_init(&f->d, servers, NULL), 0);
    char settings[300], store[200];
    snprintf(settings, sizeof settings,
             "brokerName = \"broker-ha\"; namesrvAddr = \"127.0.0.1:%d\";\n"
             "registerNameServerPeriod = 60000;\n",
             n->port);
    int ha_port = rmq_tc_free_port();
    snprintf(store, sizeof store,
             "mappedFileSizeCommitLog = 1048576; brokerRole = \"ASYNC_MASTER\"; "
             "haListenPort = %d;",
             ha_port);
    assert_int_equal(
        rmq_td_add_plugin(&f->d, "broker-client-mgr", "broker-client-mgr", "broker", settings), 0);
    assert_int_equal(rmq_td_add_plugin(&f->d, "store", "store", "broker", store), 0);
    assert_int_equal(rmq_td_start(&f->d, NULL), 0);
    rmq_cmd *reg = fake_ns_next_register(n, true);
    assert_non_null(reg);
    rmq_cmd_free(reg);
    while ((reg = fake_ns_next_register(n, true)) != NULL) /* until WAIT_MS of silence */
        rmq_cmd_free(reg);

    /* a raw HA slave: connect, report offset 0 (8 bytes, big-endian) */
    int fd = rmq_tc_connect(ha_port);
    assert_true(fd >= 0);
    unsigned char report[8] = {0};
    assert_int_equal(write(fd, report, sizeof report), (ssize_t)sizeof report);
    reg = fake_ns_next_register(n, true);
    close(fd);
    assert_non_null(reg); /* none within WAIT_MS: the report did not make it register */
    assert_string_equal(rmq_cmd_ext_get(reg, "brokerId"), "0");
    assert_string_equal(rmq_cmd_ext_get(reg, "brokerName"), "broker-ha");
    rmq_cmd_free(reg);
}

/* argv[1]: a cmocka name pattern to run only those tests */
int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_master_registers_when_a_slave_first_reports, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_registers_with_live_nameserver_despite_a_dead_one,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_heartbeats_notify_group_and_register_retry_topic,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_half_open_client_silent_past_channel_expired_timeout_is_removed, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_compressed_registration_puts_topics_in_nameserver_route, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compressed_register_frame_is_flagged_and_deflated,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_offsets_survive_a_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_storage_codes_answer_politely_without_a_store, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_held_pull_is_answered_at_once_when_the_daemon_stops,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_held_pull_is_answered_when_the_plugin_reloads, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reload_during_a_pending_topics_write_loses_nothing,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_heartbeats_waiting_too_long_get_timeout_clean_queue,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_fast_failure_can_be_switched_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fast_failure_settings_apply_at_once_and_persist, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_registration_settings_apply_at_once_and_persist, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unregister_at_shutdown_removes_broker_from_nameserver,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
