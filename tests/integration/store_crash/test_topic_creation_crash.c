/* test_topic_creation_crash.c — kill -9 while several connections each
 * send to one new topic after another (auto-creation from TBW102, 4 queues),
 * with compactions of topics.journal into topics.json all along (a 4 KiB
 * topicsJournalCompactBytes): after the restart every acknowledged send's
 * topic exists and the message is pulled from its acknowledged queue and
 * offset. Two rounds on one state directory, then a clean stop must leave a
 * topics.json (what Java reads) holding every acknowledged topic. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "store_test_client.h"

#define CONNS 4
#define ROUNDS 2
#define ACKS_BEFORE_KILL 300 /* per round, over all connections */
#define MAX_ACKS 20000

typedef struct ack {
    char topic[64];
    int queue;
    long long offset;
} ack;

typedef struct run {
    rmq_test_daemon d;
    int port;
    int round;
    atomic_int acked; /* this round */
    pthread_mutex_t lock;
    ack *acks;
    size_t n_acks;
    pthread_t th[CONNS];
    int running;
} run;

typedef struct conn_arg {
    run *r;
    int conn;
} conn_arg;

/* One send at a time, each to a topic never used before, until the
 * connection dies. */
static void *conn_main(void *p)
{
    conn_arg *a = p;
    run *r = a->r;
    int fd = rmq_tc_connect(r->port);
    if (fd < 0)
        return NULL;
    for (int i = 0;; i++) {
        char topic[64];
        snprintf(topic, sizeof topic, "Crt-r%d-c%d-%d", r->round, a->conn, i);
        rmq_cmd *resp = st_send(fd, i + 1, topic, -1, NULL, topic, NULL);
        if (!resp)
            break;
        if (resp->code == 0) {
            pthread_mutex_lock(&r->lock);
            if (r->n_acks < MAX_ACKS) {
                ack *k = &r->acks[r->n_acks++];
                snprintf(k->topic, sizeof k->topic, "%s", topic);
                k->queue = (int)st_ext_ll(resp, "queueId");
                k->offset = st_ext_ll(resp, "queueOffset");
            }
            pthread_mutex_unlock(&r->lock);
            atomic_fetch_add(&r->acked, 1);
        }
        rmq_cmd_free(resp);
    }
    close(fd);
    return NULL;
}

static int setup(void **state)
{
    run *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->d.pid = -1;
    pthread_mutex_init(&r->lock, NULL);
    r->acks = calloc(MAX_ACKS, sizeof *r->acks);
    *state = r;
    return r->acks ? 0 : -1;
}

static int teardown(void **state)
{
    run *r = *state;
    if (r->d.pid > 0)
        kill(r->d.pid, SIGKILL);
    for (int c = 0; c < r->running; c++)
        pthread_join(r->th[c], NULL);
    rmq_td_cleanup(&r->d);
    free(r->acks);
    pthread_mutex_destroy(&r->lock);
    free(r);
    return 0;
}

static void start(run *r)
{
    assert_int_equal(rmq_td_start(&r->d, NULL), 0);
    r->port = rmq_td_port(&r->d, "broker");
    assert_true(r->port > 0);
}

/* Every acknowledged send: its topic answers a pull of its message. */
static void verify(run *r)
{
    int fd = rmq_tc_connect(r->port);
    assert_true(fd >= 0);
    for (size_t i = 0; i < r->n_acks; i++) {
        const ack *k = &r->acks[i];
        st_pull_args pa = {
            .group = "CrtCG", .topic = k->topic, .queue = k->queue, .offset = k->offset, .max = 1};
        rmq_cmd *resp = st_pull(fd, (int)i + 1, &pa);
        assert_non_null(resp);
        if (resp->code != 0)
            fprintf(stderr,
                    "acknowledged send to %s (queue %d, offset %lld): pull answered %d %s\n",
                    k->topic, k->queue, k->offset, resp->code, resp->remark ? resp->remark : "");
        assert_int_equal(resp->code, 0);
        stored_record rec;
        assert_int_equal(st_records(resp, &rec, 1), 1);
        assert_int_equal(rec.body_len, strlen(k->topic));
        assert_memory_equal(rec.body, k->topic, rec.body_len);
        rmq_cmd_free(resp);
    }
    close(fd);
    fprintf(stderr, "%zu acknowledged topics verified\n", r->n_acks);
}

static void acknowledged_topic_creations_survive_kill_9(void **state)
{
    run *r = *state;
    int ns = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-t\"; "
             "brokerClusterName = \"TestCluster\"; brokerIP1 = \"127.0.0.1\"; "
             "topicsJournalCompactBytes = 4096;",
             ns);
    assert_true(ns > 0);
    assert_int_equal(rmq_td_init(&r->d, servers, NULL), 0);
    assert_int_equal(bcm_configure_namesrv_and_broker(&r->d, ns, "info", bcm), 0);
    assert_int_equal(rmq_td_add_plugin(&r->d, "filter", "filter", "broker", NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&r->d, "store", "store", "broker",
                                       "mappedFileSizeCommitLog = 1048576; "
                                       "mappedFileSizeConsumeQueue = 6000; "
                                       "flushDiskType = \"ASYNC_FLUSH\";"),
                     0);
    for (r->round = 0; r->round < ROUNDS; r->round++) {
        start(r);
        if (r->round > 0)
            verify(r);
        atomic_store(&r->acked, 0);
        conn_arg args[CONNS];
        for (int c = 0; c < CONNS; c++) {
            args[c] = (conn_arg){.r = r, .conn = c};
            assert_int_equal(pthread_create(&r->th[c], NULL, conn_main, &args[c]), 0);
            r->running = c + 1;
        }
        uint64_t deadline = rmq_test_now_ms() + 120000;
        while (atomic_load(&r->acked) < ACKS_BEFORE_KILL && rmq_test_now_ms() < deadline)
            rmq_test_pause_ms(2);
        int acked = atomic_load(&r->acked);
        assert_int_equal(kill(r->d.pid, SIGKILL), 0);
        for (int c = 0; c < CONNS; c++)
            pthread_join(r->th[c], NULL);
        r->running = 0;
        assert_int_equal(rmq_td_stop(&r->d), 128 + SIGKILL);
        fprintf(stderr, "round %d: %d topics acknowledged when killed\n", r->round, acked);
        assert_true(acked >= ACKS_BEFORE_KILL);
    }
    start(r);
    verify(r);
    assert_int_equal(rmq_td_stop_reporting(&r->d), 0);
    /* the clean stop compacted: topics.json alone holds every topic */
    char path[400];
    snprintf(path, sizeof path, "%s/broker-client-mgr/topics.json", r->d.state_dir);
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    assert_non_null(root);
    json_t *table = json_object_get(root, "topicConfigTable");
    for (size_t i = 0; i < r->n_acks; i++) {
        json_t *t = json_object_get(table, r->acks[i].topic);
        if (!t)
            fprintf(stderr, "%s missing from topics.json\n", r->acks[i].topic);
        assert_non_null(t);
        assert_int_equal(json_integer_value(json_object_get(t, "writeQueueNums")), 4);
    }
    json_decref(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(acknowledged_topic_creations_survive_kill_9, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
