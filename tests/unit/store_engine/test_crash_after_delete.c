/* test_crash_after_delete.c — kill -9 right after DELETE_TOPIC removed the
 * queue holding the newest entry (issue 21 §2). A child process fills a few
 * topics (the last message goes to the last topic), deletes topics, tells
 * the parent, which kills it with SIGKILL at once (no periodic state write
 * needs to have run). The store is then opened with queues loaded on use:
 * recovery must have loaded no queue to find how far the queues reach (the
 * state file's record is checked against its deleted queue's absence), every
 * message of the surviving topics must be at its queue offset, the deleted
 * topics must stay deleted (no entry re-dispatched from the commit log), and
 * the next put must continue each queue. Scenarios: the newest topic
 * deleted; several deleted in a row; deleted then re-created by a send;
 * re-created and deleted again; the only topic deleted; the first and the
 * fourth with SYNC_FLUSH (the commit log written through pwrite). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <signal.h>
#include <sys/wait.h>

#include "store_test_util.h"

#define TOPICS 6
#define QUEUES 4
#define PER_QUEUE 30

typedef enum { SC_NEWEST, SC_SEVERAL, SC_RECREATE, SC_REDELETE, SC_ONLY } scenario;

/* one put as the child saw it; topic -1 ends the stream */
typedef struct put_rec {
    int32_t topic, qid, gen; /* gen 1: sent after the topic was re-created */
    int32_t pad;
    int64_t qoff, phys, size;
} put_rec;

static void topic_name(char *out, size_t cap, int t)
{
    snprintf(out, cap, "Del%d", t);
}

static int ntopics(scenario sc)
{
    return sc == SC_ONLY ? 1 : TOPICS;
}

/* which topics the scenario deletes (after its re-creation, if any) */
static bool deleted_at_end(scenario sc, int t)
{
    int last = ntopics(sc) - 1;
    switch (sc) {
    case SC_SEVERAL: return t == last || t == 0 || t == 2;
    case SC_RECREATE: return false; /* deleted, then back with gen-1 messages only */
    default: return t == last;
    }
}

static void child_put(store_engine *e, int fd, int t, int32_t q, int gen, int seed)
{
    char topic[32];
    topic_name(topic, sizeof topic, t);
    st_msg m;
    st_make(&m, topic, q, "TagA", NULL, NULL, 80 + (size_t)(seed % 120), seed);
    store_put_result r;
    if (store_put(e, &m.m, &r) != 0 || r.status != STORE_PUT_OK)
        _exit(4);
    put_rec pr = {t, q, gen, 0, r.queue_offset, r.phys_offset, r.end_offset - r.phys_offset};
    if (write(fd, &pr, sizeof pr) != sizeof pr)
        _exit(5);
}

static void child_delete(store_engine *e, int t)
{
    char topic[32];
    topic_name(topic, sizeof topic, t);
    if (store_delete_topic(e, topic) != 0)
        _exit(6);
}

static void child(const char *root, scenario sc, store_flush_type flush, int fd)
{
    store_config c;
    st_small_config(&c, root);
    c.flush_type = flush; /* SYNC_FLUSH: the log written with pwrite */
    store_engine *e = NULL;
    char err[256];
    if (store_open(&c, &e, err, sizeof err) != 0)
        _exit(3);
    int nt = ntopics(sc), n = nt * QUEUES * PER_QUEUE;
    for (int i = 0; i < n; i++) /* the last one goes to topic nt - 1 */
        child_put(e, fd, i % nt, (i / nt) % QUEUES, 0, i);
    int last = nt - 1;
    child_delete(e, last);
    if (sc == SC_SEVERAL) {
        child_delete(e, 0);
        child_delete(e, 2);
    }
    if (sc == SC_RECREATE || sc == SC_REDELETE)
        for (int i = 0; i < 3; i++)
            child_put(e, fd, last, 1, 1, n + i);
    if (sc == SC_REDELETE)
        child_delete(e, last);
    put_rec end = {-1, 0, 0, 0, 0, 0, 0};
    if (write(fd, &end, sizeof end) != sizeof end)
        _exit(7);
    for (;;)
        pause(); /* killed here, the store open */
}

static void run(scenario sc, store_flush_type flush)
{
    char *root = st_tmpdir();
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child(root, sc, flush, fds[1]);
    }
    close(fds[1]);
    size_t cap = 4096, n = 0;
    put_rec *puts = calloc(cap, sizeof *puts);
    bool ended = false;
    put_rec pr;
    while (!ended && read(fds[0], &pr, sizeof pr) == sizeof pr) {
        if (pr.topic < 0)
            ended = true;
        else if (n < cap)
            puts[n++] = pr;
    }
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    close(fds[0]);
    assert_true(ended);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

    int nt = ntopics(sc);
    store_config c;
    st_small_config(&c, root);
    c.flush_type = flush;
    c.cq_load = STORE_CQ_LOAD_ON_USE;
    store_engine *e = st_open(&c);
    /* (a) the lazy path: recovery loaded no topic to find the queues'
     * reach (a re-created topic's own record is checked by loading that
     * topic); every surviving topic is still waiting on disk */
    size_t on_disk = 0;
    for (int t = 0; t < nt; t++)
        on_disk += !deleted_at_end(sc, t);
    size_t loaded_by_check = sc == SC_RECREATE ? 1 : 0;
    assert_int_equal(store_queues_pending_topics(e), on_disk - loaded_by_check);
    /* (b) every message of a surviving topic at its queue offset */
    int64_t count[TOPICS][QUEUES] = {{0}};
    for (size_t i = 0; i < n; i++) {
        const put_rec *p = &puts[i];
        /* a re-created topic holds only what was sent after */
        bool gone = deleted_at_end(sc, p->topic) ||
                    ((sc == SC_RECREATE) && p->topic == nt - 1 && p->gen == 0);
        if (gone)
            continue;
        char topic[32];
        topic_name(topic, sizeof topic, p->topic);
        store_cq_entry en;
        assert_int_equal(store_read_cq(e, topic, p->qid, p->qoff, &en, 1), 1);
        assert_int_equal(en.phys_offset, p->phys);
        assert_int_equal(en.size, p->size);
        count[p->topic][p->qid]++;
    }
    for (int t = 0; t < nt; t++) {
        char topic[32];
        topic_name(topic, sizeof topic, t);
        for (int32_t q = 0; q < QUEUES; q++) {
            /* (c) a deleted topic (or queue never re-created) has nothing */
            assert_int_equal(store_max_offset(e, topic, q), count[t][q]);
            assert_int_equal(store_queue_exists(e, topic, q), count[t][q] > 0);
            if (count[t][q] == 0)
                continue;
            assert_int_equal(store_min_offset(e, topic, q), 0);
            store_get_result g;
            assert_int_equal(store_get_messages(e, topic, q, 0, 4, NULL, NULL, NULL, &g), 0);
            assert_int_equal(g.status, STORE_GET_FOUND);
            assert_int_equal(g.msg_count, count[t][q] < 4 ? count[t][q] : 4);
            free(g.data);
        }
    }
    /* the next put continues each surviving queue (and starts a deleted
     * one again at 0) */
    for (int t = 0; t < nt; t++) {
        char topic[32];
        topic_name(topic, sizeof topic, t);
        st_msg m;
        st_make(&m, topic, 3, "TagA", NULL, NULL, 90, 7000 + t);
        store_put_result r;
        assert_int_equal(store_put(e, &m.m, &r), 0);
        assert_int_equal(r.status, STORE_PUT_OK);
        assert_int_equal(r.queue_offset, count[t][3]);
    }
    store_close(e);
    free(puts);
    st_rmrf(root);
    free(root);
}

static void test_newest_topic_deleted(void **state)
{
    (void)state;
    run(SC_NEWEST, STORE_ASYNC_FLUSH);
}

static void test_several_deleted_in_a_row(void **state)
{
    (void)state;
    run(SC_SEVERAL, STORE_ASYNC_FLUSH);
}

static void test_deleted_then_recreated(void **state)
{
    (void)state;
    run(SC_RECREATE, STORE_ASYNC_FLUSH);
}

static void test_recreated_and_deleted_again(void **state)
{
    (void)state;
    run(SC_REDELETE, STORE_ASYNC_FLUSH);
}

static void test_only_topic_deleted(void **state)
{
    (void)state;
    run(SC_ONLY, STORE_ASYNC_FLUSH);
}

static void test_newest_topic_deleted_sync_flush(void **state)
{
    (void)state;
    run(SC_NEWEST, STORE_SYNC_FLUSH);
    run(SC_REDELETE, STORE_SYNC_FLUSH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_newest_topic_deleted),
        cmocka_unit_test(test_several_deleted_in_a_row),
        cmocka_unit_test(test_deleted_then_recreated),
        cmocka_unit_test(test_recreated_and_deleted_again),
        cmocka_unit_test(test_only_topic_deleted),
        cmocka_unit_test(test_newest_topic_deleted_sync_flush),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
