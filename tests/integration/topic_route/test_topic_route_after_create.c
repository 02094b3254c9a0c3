/* test_topic_route_after_create.c — right after the answer to the request
 * that created a topic, GET_ROUTEINFO_BY_TOPIC (105) at the NameServer finds
 * it (what a Go/Java consumer does after its producer's SEND_OK): for topics
 * auto-created by sends on several connections at once, for retry topics
 * created by consumer heartbeats, for UPDATE_AND_CREATE_TOPIC (17), and with
 * a second NameServer configured that is unreachable or never answers (the
 * creations are answered all the same, the route is at the live one). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_test_client.h"

#define CONNS 4
#define PER_CONN 50 /* 200 auto-created topics */
#define ADMIN_TOPICS 200
#define GROUPS 30

typedef struct fixture {
    rmq_test_daemon d;
    int port;    /* broker */
    int ns_port; /* the NameServer in the daemon */
    int hang_fd; /* a listener that never reads: a hanging NameServer */
} fixture;

typedef enum second_ns { NO_SECOND, DEAD_SECOND, HANGING_SECOND } second_ns;

/* A loopback listener that accepts connections (in its backlog) and never
 * reads them; its port, or -1. */
static int hanging_listener(int *fd_out)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *fd_out = fd;
    return ntohs(sa.sin_port);
}

/* The daemon of store_test_client, with namesrvAddr naming its NameServer
 * and, when `dead_ns`, a free port nobody listens on after it. */
static int start(void **state, second_ns second)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->d.pid = -1;
    f->hang_fd = -1;
    *state = f;
    int ns = rmq_tc_free_port();
    int other = second == DEAD_SECOND      ? rmq_tc_free_port()
                : second == HANGING_SECOND ? hanging_listener(&f->hang_fd)
                                           : 0;
    if (ns <= 0 || other < 0 || (second != NO_SECOND && other == 0))
        return -1;
    char dead_addr[64] = "";
    if (second != NO_SECOND)
        snprintf(dead_addr, sizeof dead_addr, ";127.0.0.1:%d", other);
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d%s\"; brokerName = \"broker-t\"; "
             "brokerClusterName = \"TestCluster\"; brokerIP1 = \"127.0.0.1\";",
             ns, dead_addr);
    const char *servers[] = {"namesrv", "broker", NULL};
    if (rmq_td_init(&f->d, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(&f->d, ns, "info", bcm) != 0 ||
        rmq_td_add_plugin(&f->d, "filter", "filter", "broker", NULL) != 0 ||
        rmq_td_add_plugin(&f->d, "store", "store", "broker",
                          "mappedFileSizeCommitLog = 1048576;") != 0 ||
        rmq_td_start(&f->d, NULL) != 0)
        return -1;
    f->port = rmq_td_port(&f->d, "broker");
    f->ns_port = ns;
    return f->port > 0 ? 0 : -1;
}

static int setup(void **state)
{
    return start(state, NO_SECOND);
}

static int setup_dead_ns(void **state)
{
    return start(state, DEAD_SECOND);
}

static int setup_hanging_ns(void **state)
{
    return start(state, HANGING_SECOND);
}

static int teardown(void **state)
{
    fixture *f = *state;
    int st = f->d.pid > 0 ? rmq_td_stop_reporting(&f->d) : 0;
    rmq_td_cleanup(&f->d);
    if (f->hang_fd >= 0)
        close(f->hang_fd);
    free(f);
    return st == 0 ? 0 : -1;
}

/* GET_ROUTEINFO_BY_TOPIC on `ns_fd`: true when the route names this broker
 * (else the answer is printed). */
static bool routed(int ns_fd, int opaque, const char *topic)
{
    const char *kv[] = {"topic", topic, NULL};
    rmq_cmd *req = rmq_tc_request(105, opaque, kv);
    rmq_cmd *resp = req ? rmq_tc_call(ns_fd, req, 10000) : NULL;
    rmq_cmd_free(req);
    bool ok = resp && resp->code == 0 && bcm_body_contains(resp, "broker-t") &&
              bcm_body_contains(resp, "127.0.0.1");
    if (!ok)
        fprintf(stderr, "route of %s right after its creation: %d %s\n", topic,
                resp ? resp->code : -1, resp && resp->remark ? resp->remark : "(no answer)");
    rmq_cmd_free(resp);
    return ok;
}

typedef struct sender {
    const fixture *f;
    int conn;
    int sent, found; /* SEND_OKs, and routes found right after them */
} sender;

/* One new topic after another on its own connections; the route is asked
 * for after each SEND_OK, before the next send. */
static void *send_new_topics(void *p)
{
    sender *s = p;
    int fd = rmq_tc_connect(s->f->port);
    int ns_fd = rmq_tc_connect(s->f->ns_port);
    for (int i = 0; fd >= 0 && ns_fd >= 0 && i < PER_CONN; i++) {
        char topic[64];
        snprintf(topic, sizeof topic, "RouteNow-c%d-%d", s->conn, i);
        /* not st_send's 5 s: creations run one at a time on the store's
         * slow worker, and with a hanging NameServer the first ones each
         * wait out the cap */
        rmq_cmd *req = st_send_request(i + 1, topic, 0, NULL, "hello", NULL);
        rmq_cmd *resp = req ? rmq_tc_call_response(fd, req, 30000) : NULL;
        rmq_cmd_free(req);
        bool ok = resp && resp->code == 0;
        if (!ok)
            fprintf(stderr, "send to new topic %s: %d %s\n", topic, resp ? resp->code : -1,
                    resp && resp->remark ? resp->remark : "(no answer)");
        rmq_cmd_free(resp);
        if (!ok)
            break;
        s->sent++;
        if (routed(ns_fd, i + 1, topic))
            s->found++;
    }
    if (fd >= 0)
        close(fd);
    if (ns_fd >= 0)
        close(ns_fd);
    return NULL;
}

static void sends_to_new_topics(const fixture *f)
{
    sender s[CONNS];
    pthread_t th[CONNS];
    for (int c = 0; c < CONNS; c++) {
        s[c] = (sender){.f = f, .conn = c};
        assert_int_equal(pthread_create(&th[c], NULL, send_new_topics, &s[c]), 0);
    }
    int sent = 0, found = 0;
    for (int c = 0; c < CONNS; c++) {
        pthread_join(th[c], NULL);
        sent += s[c].sent;
        found += s[c].found;
    }
    assert_int_equal(sent, CONNS * PER_CONN);
    assert_int_equal(found, CONNS * PER_CONN);
}

static void a_sent_topic_is_routed_when_its_send_is_answered(void **state)
{
    sends_to_new_topics(*state);
}

static void admin_created_topic_is_routed_when_answered(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    int ns_fd = rmq_tc_connect(f->ns_port);
    assert_true(fd >= 0 && ns_fd >= 0);
    int found = 0;
    for (int i = 0; i < ADMIN_TOPICS; i++) {
        char topic[64];
        snprintf(topic, sizeof topic, "RouteAdmin-%d", i);
        const char *kv[] = {"topic",
                            topic,
                            "defaultTopic",
                            "TBW102",
                            "readQueueNums",
                            "4",
                            "writeQueueNums",
                            "4",
                            "perm",
                            "6",
                            "topicSysFlag",
                            "0",
                            "topicFilterType",
                            "SINGLE_TAG",
                            NULL};
        rmq_cmd *req = rmq_tc_request(17, i + 1, kv);
        rmq_cmd *resp = rmq_tc_call(fd, req, 10000);
        rmq_cmd_free(req);
        assert_non_null(resp);
        assert_int_equal(resp->code, 0);
        rmq_cmd_free(resp);
        if (routed(ns_fd, i + 1, topic))
            found++;
    }
    close(fd);
    close(ns_fd);
    assert_int_equal(found, ADMIN_TOPICS);
}

static void retry_topic_is_routed_when_the_heartbeat_is_answered(void **state)
{
    fixture *f = *state;
    int fd = rmq_tc_connect(f->port);
    int ns_fd = rmq_tc_connect(f->ns_port);
    assert_true(fd >= 0 && ns_fd >= 0);
    int found = 0;
    for (int i = 0; i < GROUPS; i++) {
        char group[64], retry[80], body[2048];
        snprintf(group, sizeof group, "RouteGroup-%d", i);
        snprintf(retry, sizeof retry, "%%RETRY%%%s", group);
        bcm_consumer_heartbeat(body, sizeof body, "127.0.0.1@route", group, "TBW102", true);
        rmq_cmd *req = rmq_tc_request(34, i + 1, NULL);
        rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
        rmq_cmd *resp = rmq_tc_call_response(fd, req, 10000);
        rmq_cmd_free(req);
        assert_non_null(resp);
        assert_int_equal(resp->code, 0);
        rmq_cmd_free(resp);
        if (routed(ns_fd, i + 1, retry))
            found++;
    }
    close(fd);
    close(ns_fd);
    assert_int_equal(found, GROUPS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_sent_topic_is_routed_when_its_send_is_answered, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(admin_created_topic_is_routed_when_answered, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(retry_topic_is_routed_when_the_heartbeat_is_answered, setup,
                                        teardown),
        /* the dead one fails at once (refused), then is left out */
        cmocka_unit_test_setup_teardown(a_sent_topic_is_routed_when_its_send_is_answered,
                                        setup_dead_ns, teardown),
        /* the hanging one holds up the creations made during its first
         * round (each answered after min(registerBrokerTimeoutMills, 3 s)),
         * then is left out */
        cmocka_unit_test_setup_teardown(a_sent_topic_is_routed_when_its_send_is_answered,
                                        setup_hanging_ns, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
