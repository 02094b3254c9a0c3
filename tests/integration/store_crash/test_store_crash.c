/* test_store_crash.c — kill -9 of a SYNC_FLUSH store under pipelined
 * SEND_MESSAGE_V2 load from several connections, restart on the same state
 * directory, and the proof: every acknowledged send is stored exactly once at
 * its acknowledged queue offset with its body, every queue is contiguous from
 * 0 and every record parses with a good CRC, and sends continue at the next
 * offsets. Three rounds on one directory; the same with ASYNC_FLUSH (a
 * process crash keeps the page cache). Ephemeral ports; the daemon is
 * stopped by the fixture's teardown when an assertion fails. */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_test_client.h"

#define TOPIC "CrashTopic"
#define QUEUES 4
#define CONNS 4
#define WINDOW 16
#define ROUNDS 3
#define ACKS_BEFORE_KILL 400 /* per round, over all connections */
#define MAX_ACKS 40000
#define KEY_MAX 48
#define BODY_MAX 4096

typedef struct ack {
    int queue;
    long long offset;
    char body[KEY_MAX]; /* the body's key (prefix_for) */
} ack;

typedef struct load {
    int port;
    atomic_int acked; /* this round */
    pthread_mutex_t lock;
    ack *acks; /* every round's acknowledged sends */
    size_t n_acks;
} load;

typedef struct conn_arg {
    load *l;
    int round;
    int conn;
} conn_arg;

/* Distinct bodies of varying length (up to ~3.6 KB, so the 1 MiB commit-log
 * segments roll during a round) so a torn record cannot pass for another:
 * "r<round>-c<conn>-n<seq>-" (the key) then a filler derived from seq. */
static void prefix_for(char *out, size_t cap, int round, int conn, int seq)
{
    snprintf(out, cap, "r%d-c%d-n%d-", round, conn, seq);
}

static size_t body_for(char *out, size_t cap, int round, int conn, int seq)
{
    prefix_for(out, cap, round, conn, seq);
    size_t at = strlen(out), pad = (size_t)(seq * 37 % 41) * 90;
    for (size_t i = 0; i < pad && at + 1 < cap; i++)
        out[at++] = (char)('a' + (seq + (int)i) % 26);
    out[at] = '\0';
    return at;
}

static rmq_cmd *send_request(int opaque, int queue, const char *body)
{
    char q[16];
    snprintf(q, sizeof q, "%d", queue);
    const char *kv[] = {"a", "PG",    "b", TOPIC,           "c", "TBW102", "d", "4", "e", q,
                        "f", "0",     "g", "1700000000000", "h", "0",      "i", "",  "j", "0",
                        "k", "false", "m", "false",         NULL};
    rmq_cmd *req = rmq_tc_request(310, opaque, kv);
    if (req)
        rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    return req;
}

/* Pipeline WINDOW sends, record each answer 0, until the connection dies. */
static void *conn_main(void *p)
{
    conn_arg *a = p;
    load *l = a->l;
    int fd = rmq_tc_connect(l->port);
    if (fd < 0)
        return NULL;
    int next = 0;
    bool dead = false;
    for (; next < WINDOW && !dead; next++) {
        char body[BODY_MAX];
        body_for(body, sizeof body, a->round, a->conn, next);
        rmq_cmd *req = send_request(next + 1, next % QUEUES, body);
        dead = !req || rmq_tc_send(fd, req) != 0;
        rmq_cmd_free(req);
    }
    while (!dead) {
        rmq_cmd *r = rmq_tc_recv(fd, 20000);
        if (!r)
            break;
        int seq = r->opaque - 1;
        if (r->code == 0 && seq >= 0 && seq < next) {
            pthread_mutex_lock(&l->lock);
            if (l->n_acks < MAX_ACKS) {
                ack *k = &l->acks[l->n_acks++];
                k->queue = (int)st_ext_ll(r, "queueId");
                k->offset = st_ext_ll(r, "queueOffset");
                prefix_for(k->body, sizeof k->body, a->round, a->conn, seq);
            }
            pthread_mutex_unlock(&l->lock);
            atomic_fetch_add(&l->acked, 1);
        }
        rmq_cmd_free(r);
        char body[BODY_MAX];
        body_for(body, sizeof body, a->round, a->conn, next);
        rmq_cmd *req = send_request(next + 1, next % QUEUES, body);
        next++;
        dead = !req || rmq_tc_send(fd, req) != 0;
        rmq_cmd_free(req);
    }
    close(fd);
    return NULL;
}

static int start_daemon(rmq_test_daemon *d)
{
    const char *args[] = {"-o", "servers.broker.vip_listen=127.0.0.1:0", NULL};
    if (rmq_td_start(d, args) != 0)
        return -1;
    return rmq_td_port(d, "broker");
}

typedef struct seen {
    char body[KEY_MAX]; /* the stored body's key, the body checked whole */
    int queue;
    long long offset;
} seen;

/* Pull queue q from 0 to its max: every record parses (CRC checked), has
 * offsets 0..max-1 in order, and nothing else is in the answers. Records are
 * appended to *all. Returns the queue's max offset. */
static long long pull_whole_queue(int port, int q, seen **all, size_t *n_all, size_t *cap)
{
    long long max = st_max_offset(port, TOPIC, q);
    assert_true(max >= 0);
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    long long at = 0;
    int opaque = 1;
    while (at < max) {
        st_pull_args pa = {.group = "CrashCG", .topic = TOPIC, .queue = q, .offset = at, .max = 32};
        rmq_cmd *r = st_pull(fd, opaque++, &pa);
        assert_non_null(r);
        if (r->code != 0)
            fprintf(stderr, "pull %s/%d@%lld answered %d %s\n", TOPIC, q, at, r->code,
                    r->remark ? r->remark : "");
        assert_int_equal(r->code, 0);
        size_t off = 0;
        long long got = 0;
        while (off < r->body_len) {
            stored_record rec;
            stored_record_rc rc =
                stored_record_decode(r->body + off, r->body_len - off, true, &rec);
            if (rc != STORED_RECORD_OK)
                fprintf(stderr, "record %lld of queue %d: %s\n", at + got, q,
                        stored_record_rc_name(rc));
            assert_int_equal(rc, STORED_RECORD_OK);
            assert_int_equal(rec.queue_id, q);
            assert_int_equal(rec.queue_offset, at + got);
            assert_memory_equal(rec.topic, TOPIC, strlen(TOPIC));
            assert_true(rec.body_len > 0 && rec.body_len < BODY_MAX);
            if (*n_all == *cap) {
                *cap = *cap ? *cap * 2 : 1024;
                *all = realloc(*all, *cap * sizeof **all);
                assert_non_null(*all);
            }
            seen *s = &(*all)[(*n_all)++];
            char head[KEY_MAX], want[BODY_MAX];
            snprintf(head, sizeof head, "%.*s", rec.body_len, (const char *)rec.body);
            int br, bc, bn;
            assert_int_equal(sscanf(head, "r%d-c%d-n%d-", &br, &bc, &bn), 3);
            size_t wl = body_for(want, sizeof want, br, bc, bn);
            assert_int_equal(rec.body_len, wl);
            assert_memory_equal(rec.body, want, wl);
            prefix_for(s->body, sizeof s->body, br, bc, bn);
            s->queue = q;
            s->offset = rec.queue_offset;
            off += (size_t)rec.total_size;
            got++;
        }
        assert_true(got > 0);
        assert_int_equal(st_ext_ll(r, "nextBeginOffset"), at + got);
        at += got;
        rmq_cmd_free(r);
    }
    close(fd);
    return max;
}

static int cmp_seen_body(const void *a, const void *b)
{
    return strcmp(((const seen *)a)->body, ((const seen *)b)->body);
}

static void verify_after_restart(load *l, int port, long long maxes[QUEUES])
{
    seen *all = NULL;
    size_t n_all = 0, cap = 0;
    for (int q = 0; q < QUEUES; q++)
        maxes[q] = pull_whole_queue(port, q, &all, &n_all, &cap);
    fprintf(stderr, "after restart: %zu records stored, %zu sends acknowledged\n", n_all,
            l->n_acks);
    qsort(all, n_all, sizeof *all, cmp_seen_body);
    /* no body is stored twice (each send was distinct) */
    for (size_t i = 1; i < n_all; i++) {
        if (strcmp(all[i - 1].body, all[i].body) == 0)
            fprintf(stderr, "body %s stored twice\n", all[i].body);
        assert_string_not_equal(all[i - 1].body, all[i].body);
    }
    /* every acknowledged send is there, at its acknowledged place */
    for (size_t i = 0; i < l->n_acks; i++) {
        seen key;
        snprintf(key.body, sizeof key.body, "%s", l->acks[i].body);
        seen *s = bsearch(&key, all, n_all, sizeof *all, cmp_seen_body);
        if (!s)
            fprintf(stderr, "acknowledged %s (queue %d offset %lld) lost\n", l->acks[i].body,
                    l->acks[i].queue, l->acks[i].offset);
        assert_non_null(s);
        assert_int_equal(s->queue, l->acks[i].queue);
        assert_int_equal(s->offset, l->acks[i].offset);
    }
    free(all);
}

/* What a failed assertion must not leave behind: the daemon and the load
 * threads (they use `l`, so it lives here rather than on the test's stack,
 * which a failed assertion unwinds). */
typedef struct crash_run {
    rmq_test_daemon d;
    load l;
    pthread_t th[CONNS];
    int running; /* load threads started and not joined */
} crash_run;

static int crash_setup(void **state)
{
    crash_run *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->d.pid = -1;
    pthread_mutex_init(&r->l.lock, NULL);
    r->l.acks = calloc(MAX_ACKS, sizeof *r->l.acks);
    if (!r->l.acks) {
        free(r);
        return -1;
    }
    *state = r;
    return 0;
}

/* After a pass this finds nothing left; after a failure it kills the daemon
 * (the load threads then see their connections die), joins the threads and
 * removes the directory unless RMQ_TEST_KEEP. */
static int crash_teardown(void **state)
{
    crash_run *r = *state;
    if (r->d.pid > 0)
        kill(r->d.pid, SIGKILL);
    for (int c = 0; c < r->running; c++)
        pthread_join(r->th[c], NULL);
    rmq_td_cleanup(&r->d);
    free(r->l.acks);
    pthread_mutex_destroy(&r->l.lock);
    free(r);
    return 0;
}

/* flush: "SYNC_FLUSH" or "ASYNC_FLUSH" (a process crash leaves the page
 * cache, so an acknowledged ASYNC_FLUSH send must survive kill -9 too). */
static void acknowledged_sends_survive_kill_9(crash_run *r, const char *flush)
{
    char settings[64], logged[64];
    snprintf(settings, sizeof settings, "flushDiskType = \"%s\";", flush);
    snprintf(logged, sizeof logged, ": %s, sends", flush);
    assert_int_equal(st_configure(&r->d, settings), 0);
    long long maxes[QUEUES];
    for (int round = 0; round < ROUNDS; round++) {
        r->l.port = start_daemon(&r->d);
        assert_true(r->l.port > 0);
        assert_true(rmq_td_log_contains(&r->d, logged));
        if (round > 0) {
            verify_after_restart(&r->l, r->l.port, maxes);
            /* the first send of each queue after the restart takes the next offset */
            int fd = rmq_tc_connect(r->l.port);
            for (int q = 0; q < QUEUES; q++) {
                char body[BODY_MAX];
                body_for(body, sizeof body, round, 99, q);
                rmq_cmd *resp = st_send(fd, q + 1, TOPIC, q, NULL, body, NULL);
                assert_non_null(resp);
                assert_int_equal(resp->code, 0);
                assert_int_equal(st_ext_ll(resp, "queueOffset"), maxes[q]);
                ack *k = &r->l.acks[r->l.n_acks++];
                k->queue = q;
                k->offset = maxes[q];
                prefix_for(k->body, sizeof k->body, round, 99, q);
                rmq_cmd_free(resp);
            }
            close(fd);
        }
        atomic_store(&r->l.acked, 0);
        conn_arg args[CONNS];
        for (int c = 0; c < CONNS; c++) {
            args[c] = (conn_arg){.l = &r->l, .round = round, .conn = c};
            assert_int_equal(pthread_create(&r->th[c], NULL, conn_main, &args[c]), 0);
            r->running = c + 1;
        }
        uint64_t deadline = rmq_test_now_ms() + 60000;
        while (atomic_load(&r->l.acked) < ACKS_BEFORE_KILL && rmq_test_now_ms() < deadline)
            rmq_test_pause_ms(2);
        int acked = atomic_load(&r->l.acked);
        assert_int_equal(kill(r->d.pid, SIGKILL), 0);
        for (int c = 0; c < CONNS; c++)
            pthread_join(r->th[c], NULL);
        r->running = 0;
        assert_int_equal(rmq_td_stop(&r->d), 128 + SIGKILL);
        fprintf(stderr, "round %d: %d acknowledged when killed, %d in all\n", round, acked,
                atomic_load(&r->l.acked));
        assert_true(acked >= ACKS_BEFORE_KILL);
    }
    /* the rounds crossed commit-log segment ends (1 MiB segments) */
    char cl[400];
    snprintf(cl, sizeof cl, "%s/store/commitlog", r->d.state_dir);
    DIR *dir = opendir(cl);
    assert_non_null(dir);
    int segments = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        segments += e->d_name[0] != '.';
    closedir(dir);
    fprintf(stderr, "%d commit-log segments\n", segments);
    assert_true(segments >= 2);
    /* the last kill too is recovered */
    r->l.port = start_daemon(&r->d);
    assert_true(r->l.port > 0);
    verify_after_restart(&r->l, r->l.port, maxes);
    assert_int_equal(rmq_td_stop_reporting(&r->d), 0);
    rmq_td_cleanup(&r->d);
}

static void acknowledged_sync_flush_sends_survive_kill_9(void **state)
{
    acknowledged_sends_survive_kill_9(*state, "SYNC_FLUSH");
}

static void acknowledged_async_flush_sends_survive_kill_9(void **state)
{
    acknowledged_sends_survive_kill_9(*state, "ASYNC_FLUSH");
}

/* The race behind this test's old flake, pinned: the first SEND of a new
 * topic creates it from TBW102 and writes topics.json before it is answered.
 * The write is held in open() by a FIFO where host's atomic write puts its
 * temporary file (topics.json.tmp), so the creator stays inside it. Sends of
 * the same topic on connections of the other IO thread (accepts alternate
 * between the two loops) must not be answered meanwhile: an acknowledged
 * message whose topic is not on disk is lost to kill -9 (after the restart
 * its PULL answered TOPIC_NOT_EXIST). Whatever was acknowledged before the
 * kill must be pullable after the restart. */
static void send_of_a_topic_being_written_is_not_acknowledged_before_it(void **state)
{
    crash_run *r = *state;
    assert_int_equal(st_configure(&r->d, "flushDiskType = \"ASYNC_FLUSH\";"), 0);
    char bcm_dir[400], fifo[460];
    snprintf(bcm_dir, sizeof bcm_dir, "%s/broker-client-mgr", r->d.state_dir);
    snprintf(fifo, sizeof fifo, "%s/topics.json.tmp", bcm_dir);
    assert_int_equal(mkdir(bcm_dir, 0755), 0);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    int port = start_daemon(&r->d);
    assert_true(port > 0);
    int fds[3];
    for (int i = 0; i < 3; i++) {
        fds[i] = rmq_tc_connect(port);
        assert_true(fds[i] >= 0);
    }
    char body[BODY_MAX];
    body_for(body, sizeof body, 0, 0, 0);
    rmq_cmd *req = send_request(1, 0, body);
    assert_int_equal(rmq_tc_send(fds[0], req), 0);
    rmq_cmd_free(req);
    uint64_t deadline = rmq_test_now_ms() + 20000;
    while (!rmq_td_log_contains(&r->d, "topic " TOPIC " created for a send") &&
           rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(5);
    assert_true(rmq_td_log_contains(&r->d, "topic " TOPIC " created for a send"));
    /* the creator is in the write (blocked until a reader opens the FIFO) */
    for (int i = 1; i < 3; i++) {
        body_for(body, sizeof body, 0, i, 0);
        req = send_request(1, 0, body);
        assert_int_equal(rmq_tc_send(fds[i], req), 0);
        rmq_cmd_free(req);
    }
    /* An answer would come in milliseconds; the daemon is killed after this
     * wait whatever it got, so the wait decides nothing on its own. */
    for (int i = 1; i < 3; i++) {
        rmq_cmd *resp = rmq_tc_recv(fds[i], 1500);
        if (resp && resp->code == 0) {
            ack *k = &r->l.acks[r->l.n_acks++];
            k->queue = (int)st_ext_ll(resp, "queueId");
            k->offset = st_ext_ll(resp, "queueOffset");
            prefix_for(k->body, sizeof k->body, 0, i, 0);
            fprintf(stderr, "acknowledged before topics.json was written: %s\n", k->body);
        }
        rmq_cmd_free(resp);
    }
    assert_int_equal(kill(r->d.pid, SIGKILL), 0);
    assert_int_equal(rmq_td_stop(&r->d), 128 + SIGKILL);
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    assert_int_equal(unlink(fifo), 0);
    port = start_daemon(&r->d);
    assert_true(port > 0);
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    for (size_t i = 0; i < r->l.n_acks; i++) {
        st_pull_args pa = {.group = "CrashCG",
                           .topic = TOPIC,
                           .queue = r->l.acks[i].queue,
                           .offset = r->l.acks[i].offset,
                           .max = 1};
        rmq_cmd *resp = st_pull(fd, (int)i + 1, &pa);
        assert_non_null(resp);
        if (resp->code != 0)
            fprintf(stderr, "pull of acknowledged %s answered %d %s\n", r->l.acks[i].body,
                    resp->code, resp->remark ? resp->remark : "");
        assert_int_equal(resp->code, 0);
        rmq_cmd_free(resp);
    }
    close(fd);
    assert_int_equal(rmq_td_stop_reporting(&r->d), 0);
    rmq_td_cleanup(&r->d);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest all[] = {
        cmocka_unit_test_setup_teardown(acknowledged_sync_flush_sends_survive_kill_9, crash_setup,
                                        crash_teardown),
        cmocka_unit_test_setup_teardown(acknowledged_async_flush_sends_survive_kill_9, crash_setup,
                                        crash_teardown),
        cmocka_unit_test_setup_teardown(send_of_a_topic_being_written_is_not_acknowledged_before_it,
                                        crash_setup, crash_teardown),
    };
    struct CMUnitTest sel[sizeof all / sizeof all[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (rmq_test_name_selected(argc > 1 ? argv[1] : NULL, all[i].name))
            sel[n++] = all[i];
    return _cmocka_run_group_tests("store_crash", sel, n, NULL, NULL);
}
