/* test_lazy_queues.c — consume queues loaded on first use answer exactly as
 * queues loaded at start. The same stopped store is copied twice; one copy
 * is opened with every queue loaded before store_open returns
 * (STORE_CQ_LOAD_AT_START, as Java), the other with queues loaded only when
 * something names them (STORE_CQ_LOAD_ON_USE, no background pass); every
 * queue's max / min offset, pull (bytes and statuses), offset by time,
 * store times and raw entries must be equal, and the next put must get the
 * same queue offset. Stores: after a clean stop; after a forged unclean stop
 * with torn consume-queue tails (an entry past the recovered log end, a
 * half-written entry) and a torn commit-log record; after kill -9 of a
 * SYNC_FLUSH writer (every acknowledged message readable in the lazy copy).
 * Also: retention run while a queue is still on disk only deletes that
 * queue's expired files when it is loaded, and the background pass loads
 * (and so cleans) queues nothing touches. And a clean stop after topics
 * were created, sent to and deleted (the last message's topic among them)
 * while queues were still loading is accepted: the next start loads no
 * queue and re-dispatches nothing (deleted topics stay empty). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "store_test_util.h"

#define TOPICS 12
#define QUEUES 4

static void topic_name(char *out, size_t cap, int t)
{
    snprintf(out, cap, "Lazy%d", t);
}

static store_engine *open_mode(const char *root, int mode, store_flush_type flush)
{
    store_config c;
    st_small_config(&c, root);
    c.flush_type = flush;
    c.cq_load = mode;
    return st_open(&c);
}

/* message i goes to topic i % TOPICS, queue (i / TOPICS) % QUEUES */
static void put_msg(store_engine *e, int i, store_put_result *r)
{
    char topic[32];
    topic_name(topic, sizeof topic, i % TOPICS);
    st_msg m;
    char key[32];
    snprintf(key, sizeof key, "L%07d", i);
    st_make(&m, topic, (i / TOPICS) % QUEUES, i % 3 ? "TagA" : "TagB", NULL, key,
            60 + (size_t)(i * 13) % 300, i);
    assert_int_equal(store_put(e, &m.m, r), 0);
    assert_int_equal(r->status, STORE_PUT_OK);
}

static void copy_tree(const char *from, const char *to)
{
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", from, to);
    assert_int_equal(system(cmd), 0);
}

static char *sibling(const char *root, const char *suffix)
{
    char *p = malloc(4200);
    snprintf(p, 4200, "%s%s", root, suffix);
    return p;
}

/* Everything a client can ask of one queue, compared between two stores. */
static void same_queue(store_engine *a, store_engine *b, const char *topic, int32_t qid,
                       const int64_t *times, size_t ntimes)
{
    /* a pull first: it must load the queue itself */
    store_get_result g0a, g0b;
    assert_int_equal(store_get_messages(a, topic, qid, 0, 8, NULL, NULL, NULL, &g0a), 0);
    assert_int_equal(store_get_messages(b, topic, qid, 0, 8, NULL, NULL, NULL, &g0b), 0);
    assert_int_equal(g0b.status, g0a.status);
    assert_int_equal(g0b.max_offset, g0a.max_offset);
    assert_int_equal(g0b.len, g0a.len);
    free(g0a.data);
    free(g0b.data);
    int64_t max = store_max_offset(a, topic, qid);
    assert_int_equal(store_max_offset(b, topic, qid), max);
    assert_int_equal(store_min_offset(b, topic, qid), store_min_offset(a, topic, qid));
    assert_int_equal(store_queue_exists(b, topic, qid), store_queue_exists(a, topic, qid));
    assert_int_equal(store_earliest_msg_store_time(b, topic, qid),
                     store_earliest_msg_store_time(a, topic, qid));
    for (size_t i = 0; i < ntimes; i++)
        assert_int_equal(store_offset_by_time(b, topic, qid, times[i]),
                         store_offset_by_time(a, topic, qid, times[i]));
    for (int64_t off = -1; off <= max + 2; off += (max > 40 ? 7 : 1)) {
        assert_int_equal(store_message_store_time(b, topic, qid, off),
                         store_message_store_time(a, topic, qid, off));
        store_get_result ga, gb;
        assert_int_equal(store_get_messages(a, topic, qid, off, 8, NULL, NULL, NULL, &ga), 0);
        assert_int_equal(store_get_messages(b, topic, qid, off, 8, NULL, NULL, NULL, &gb), 0);
        assert_int_equal(gb.status, ga.status);
        assert_int_equal(gb.next_begin_offset, ga.next_begin_offset);
        assert_int_equal(gb.min_offset, ga.min_offset);
        assert_int_equal(gb.max_offset, ga.max_offset);
        assert_int_equal(gb.msg_count, ga.msg_count);
        assert_int_equal(gb.len, ga.len);
        if (ga.len)
            assert_memory_equal(gb.data, ga.data, ga.len);
        free(ga.data);
        free(gb.data);
        store_cq_entry ea[4], eb[4];
        size_t na = store_read_cq(a, topic, qid, off, ea, 4);
        assert_int_equal(store_read_cq(b, topic, qid, off, eb, 4), na);
        for (size_t k = 0; k < na; k++) {
            assert_int_equal(eb[k].phys_offset, ea[k].phys_offset);
            assert_int_equal(eb[k].size, ea[k].size);
            assert_int_equal(eb[k].tags_code, ea[k].tags_code);
        }
    }
}

/* Opens root's two copies, the lazy one first (so recovery runs before any
 * question), compares every queue, then puts the same message into each
 * queue of both: same queue offsets. */
static void compare_copies(const char *root, store_flush_type flush, const int64_t *times,
                           size_t ntimes, size_t min_pending)
{
    char *eager_dir = sibling(root, ".eager"), *lazy_dir = sibling(root, ".lazy");
    copy_tree(root, eager_dir);
    copy_tree(root, lazy_dir);
    store_engine *b = open_mode(lazy_dir, STORE_CQ_LOAD_ON_USE, flush);
    store_engine *a = open_mode(eager_dir, STORE_CQ_LOAD_AT_START, flush);
    assert_int_equal(store_queues_pending_topics(a), 0);
    /* recovery loads the topic it checks and those of the records it
     * re-dispatches; the others wait for a question */
    assert_true(store_queues_pending_topics(b) >= min_pending);
    store_runtime_stats sa, sb;
    store_runtime_stats_get(a, &sa);
    store_runtime_stats_get(b, &sb);
    assert_int_equal(sb.commitlog_max_offset, sa.commitlog_max_offset);
    assert_int_equal(sb.commitlog_min_offset, sa.commitlog_min_offset);
    for (int t = 0; t < TOPICS; t++) {
        char topic[32];
        topic_name(topic, sizeof topic, t);
        for (int32_t q = 0; q <= QUEUES; q++) /* QUEUES: a queue that does not exist */
            same_queue(a, b, topic, q, times, ntimes);
    }
    same_queue(a, b, "NoSuchTopic", 0, times, ntimes);
    assert_int_equal(store_queues_pending_topics(b), 0);
    for (int t = 0; t < TOPICS; t++)
        for (int q = 0; q < QUEUES; q++) {
            int i = 5000000 + q * TOPICS + t;
            store_put_result ra, rb;
            put_msg(a, i, &ra);
            put_msg(b, i, &rb);
            assert_int_equal(rb.queue_offset, ra.queue_offset);
            assert_int_equal(rb.phys_offset, ra.phys_offset);
        }
    store_close(a);
    store_close(b);
    st_rmrf(eager_dir);
    st_rmrf(lazy_dir);
    free(eager_dir);
    free(lazy_dir);
}

/* n messages, a store-time step every `step` messages; times[] gets
 * probe times around those steps */
static int64_t fill(store_engine *e, int from, int n, int step, int64_t *times, size_t *nt)
{
    store_put_result r = {0};
    for (int i = from; i < from + n; i++) {
        if (i % step == 0) {
            usleep(3000);
            if (times && *nt < 16) {
                times[(*nt)++] = store_now_ms_for_tests() - 1;
                times[(*nt)++] = store_now_ms_for_tests() + 1;
            }
        }
        put_msg(e, i, &r);
    }
    return r.end_offset;
}

static void test_clean_stop_lazy_equals_eager(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_mode(root, STORE_CQ_LOAD_AT_START, STORE_ASYNC_FLUSH);
    int64_t times[20] = {0};
    size_t nt = 0;
    fill(e, 0, 900, 150, times, &nt);
    times[nt++] = 0;
    times[nt++] = INT64_MAX / 2;
    store_close(e);
    compare_copies(root, STORE_ASYNC_FLUSH, times, nt, TOPICS - 1);
    st_rmrf(root);
    free(root);
}

static void write_at(const char *path, const void *b, size_t n, off_t at)
{
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, b, n, at), (ssize_t)n);
    close(fd);
}

/* With torn_record, a torn record also follows the log end: the state
 * file's offsets then do not start a record and recovery scans from the
 * checkpoint (every queue gets loaded); without, it starts at the state
 * file's written offset and the queues with torn tails are loaded (and cut)
 * only when asked. */
static void unclean_stop_torn_queue_tails(bool torn_record)
{
    char *root = st_tmpdir();
    store_engine *e = open_mode(root, STORE_CQ_LOAD_AT_START, STORE_SYNC_FLUSH);
    int64_t times[20] = {0};
    size_t nt = 0;
    int64_t end = fill(e, 0, 600, 200, times, &nt);
    char t3[32], t5[32];
    topic_name(t3, sizeof t3, 3);
    topic_name(t5, sizeof t5, 5);
    int64_t max3 = store_max_offset(e, t3, 1), max5 = store_max_offset(e, t5, 2);
    store_close(e);
    char p[4200];
    /* a torn record at the log end (what a crash mid-write leaves) */
    uint8_t junk[300];
    memset(junk, 0x5a, sizeof junk);
    snprintf(p, sizeof p, "%s/commitlog/%020lld", root, (long long)(end / 65536 * 65536));
    if (torn_record && end % 65536 + (int64_t)sizeof junk <= 65536)
        write_at(p, junk, sizeof junk, end % 65536);
    /* Lazy3/1: a whole entry naming bytes past the log end (its record
     * never made it); Lazy5/2: half an entry */
    uint8_t ent[20];
    stored_put_be64(ent, (uint64_t)end);
    stored_put_be32(ent + 8, 200);
    stored_put_be64(ent + 12, 7);
    snprintf(p, sizeof p, "%s/consumequeue/%s/1/%020d", root, t3, 0);
    write_at(p, ent, sizeof ent, max3 * 20);
    snprintf(p, sizeof p, "%s/consumequeue/%s/2/%020d", root, t5, 0);
    write_at(p, ent, 8, max5 * 20);
    snprintf(p, sizeof p, "%s/abort", root);
    int fd = open(p, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
    compare_copies(root, STORE_SYNC_FLUSH, times, nt, torn_record ? 0 : TOPICS - 1);
    /* and what the lazy copy answers is the truth, not only the eager one's */
    e = open_mode(root, STORE_CQ_LOAD_ON_USE, STORE_SYNC_FLUSH);
    assert_int_equal(store_max_offset(e, t3, 1), max3);
    assert_int_equal(store_max_offset(e, t5, 2), max5);
    store_put_result r;
    put_msg(e, 3 + TOPICS * 1, &r); /* Lazy3, queue 1 */
    assert_int_equal(r.queue_offset, max3);
    assert_int_equal(r.phys_offset, end);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void test_unclean_stop_torn_queue_tails(void **state)
{
    (void)state;
    unclean_stop_torn_queue_tails(false);
}

static void test_unclean_stop_torn_queue_and_log_tails(void **state)
{
    (void)state;
    unclean_stop_torn_queue_tails(true);
}

static void child_writer(const char *root, int fd)
{
    store_config c;
    st_small_config(&c, root);
    c.flush_type = STORE_SYNC_FLUSH;
    store_engine *e = NULL;
    char err[256];
    if (store_open(&c, &e, err, sizeof err) != 0)
        _exit(3);
    for (int i = 0;; i++) {
        char topic[32];
        topic_name(topic, sizeof topic, i % TOPICS);
        st_msg m;
        st_make(&m, topic, (i / TOPICS) % QUEUES, "TagA", NULL, NULL, 100 + (size_t)(i % 50), i);
        store_put_result r;
        if (store_put(e, &m.m, &r) != 0 || r.status != STORE_PUT_OK)
            _exit(4);
        st_flush_count w = ST_FLUSH_COUNT_INIT;
        if (store_wait_flush(e, r.end_offset, st_on_flushed, &w) != 0 ||
            st_flush_wait(&w, 1) != 1 || w.ok != 1)
            _exit(5);
        int64_t ack[2] = {i, r.queue_offset};
        if (write(fd, ack, sizeof ack) != sizeof ack)
            _exit(6);
    }
}

static void test_kill9_lazy_equals_eager(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    for (int round = 0; round < 2; round++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            child_writer(root, fds[1]);
        }
        close(fds[1]);
        int64_t ack[2], last = -1;
        while (read(fds[0], ack, sizeof ack) == sizeof ack && ack[0] < 700 * (round + 1))
            last = ack[0];
        kill(pid, SIGKILL);
        int st;
        waitpid(pid, &st, 0);
        close(fds[0]);
        assert_true(last > 0);
        int64_t times[2] = {0, INT64_MAX / 2};
        compare_copies(root, STORE_SYNC_FLUSH, times, 2, 0);
        /* every acknowledged message, in a copy whose queues load on use */
        char *lazy_dir = sibling(root, ".check");
        copy_tree(root, lazy_dir);
        store_engine *e = open_mode(lazy_dir, STORE_CQ_LOAD_ON_USE, STORE_SYNC_FLUSH);
        int64_t seen[TOPICS][QUEUES] = {{0}};
        for (int64_t i = 0; i <= last; i++)
            seen[i % TOPICS][(i / TOPICS) % QUEUES]++;
        for (int t = 0; t < TOPICS; t++) {
            char topic[32];
            topic_name(topic, sizeof topic, t);
            for (int q = 0; q < QUEUES; q++)
                assert_true(store_max_offset(e, topic, q) >= seen[t][q]);
        }
        store_close(e);
        st_rmrf(lazy_dir);
        free(lazy_dir);
    }
    st_rmrf(root);
    free(root);
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

/* "Old" fills 10 queue files (16 entries each) over the first commit-log
 * segments; "New" fills many more segments. */
static void make_retention_store(const char *root)
{
    store_config c;
    st_small_config(&c, root);
    c.cq_file_size = 16 * 20;
    c.cq_load = STORE_CQ_LOAD_AT_START;
    store_engine *e = st_open(&c);
    st_msg m;
    store_put_result r;
    for (int i = 0; i < 160; i++) {
        st_make(&m, "Old", 0, "T", NULL, NULL, 900, i);
        assert_int_equal(store_put(e, &m.m, &r), 0);
    }
    for (int i = 0; i < 600; i++) {
        st_make(&m, "New", 0, "T", NULL, NULL, 900, i);
        assert_int_equal(store_put(e, &m.m, &r), 0);
    }
    store_close(e);
}

static store_engine *open_retention(const char *root, int mode)
{
    store_config c;
    st_small_config(&c, root);
    c.cq_file_size = 16 * 20;
    c.file_reserved_hours = 0;
    c.cq_load = mode;
    return st_open(&c);
}

static void expire_log(store_engine *e)
{
    for (int i = 0; i < 20; i++)
        store_clean_expired(e, true); /* a few files per run */
}

static void test_retention_deletes_files_of_untouched_queues(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    make_retention_store(root);
    char old_dir[4200];
    snprintf(old_dir, sizeof old_dir, "%s/consumequeue/Old/0", root);
    assert_int_equal(count_files(old_dir), 10);

    /* on use: retention runs while Old is on disk only; loading it later
     * drops its expired files (all but the last) and corrects its min */
    char *copy = sibling(root, ".onuse");
    copy_tree(root, copy);
    char copy_old[4300];
    snprintf(copy_old, sizeof copy_old, "%s/consumequeue/Old/0", copy);
    store_engine *e = open_retention(copy, STORE_CQ_LOAD_ON_USE);
    store_put_result r;
    st_msg m;
    st_make(&m, "New", 0, "T", NULL, NULL, 900, 1);
    assert_int_equal(store_put(e, &m.m, &r), 0); /* New is loaded, Old is not */
    assert_int_equal(store_queues_pending_topics(e), 1);
    expire_log(e);
    store_runtime_stats rs;
    store_runtime_stats_get(e, &rs);
    assert_true(rs.commitlog_min_offset > 160 * 900); /* Old's records are gone */
    assert_int_equal(count_files(copy_old), 10);      /* still on disk only */
    /* loaded now: every entry names deleted log, the last file stays */
    assert_int_equal(store_min_offset(e, "Old", 0), 160);
    assert_int_equal(count_files(copy_old), 1);
    assert_int_equal(store_max_offset(e, "Old", 0), 160);
    store_close(e);
    st_rmrf(copy);
    free(copy);

    /* lazy: nothing names Old; the background pass loads it, and retention
     * (before or after) deletes its expired files */
    e = open_retention(root, STORE_CQ_LOAD_LAZY);
    expire_log(e);
    int64_t deadline = st_mono_ms() + 60000;
    while (store_queues_pending_topics(e) > 0 && st_mono_ms() < deadline)
        usleep(10000);
    assert_int_equal(store_queues_pending_topics(e), 0);
    expire_log(e);
    assert_int_equal(count_files(old_dir), 1);
    store_close(e);
    e = open_retention(root, STORE_CQ_LOAD_AT_START);
    assert_int_equal(store_min_offset(e, "Old", 0), 160);
    assert_int_equal(store_max_offset(e, "Old", 0), 160);
    store_close(e);
    st_rmrf(root);
    free(root);
}

/* Many threads naming topics still on disk only at once, with the
 * background pass, puts, pulls and topic deletions: every queue ends with
 * exactly its messages (none lost, none twice), deleted topics with none. */
#define CTOPICS 48
#define CTHREADS 4

typedef struct conc {
    store_engine *e;
    int id;
    _Atomic int64_t puts[CTOPICS][2];
} conc;

static void *conc_worker(void *arg)
{
    conc *c = arg;
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < CTOPICS; k++) {
            int t = (k * 7 + c->id * 13 + round) % CTOPICS;
            char topic[32];
            snprintf(topic, sizeof topic, "Conc%d", t);
            if (t % 8 == 7) { /* deleted by thread 0, named by the others */
                if (c->id == 0)
                    store_delete_topic(c->e, topic);
                else
                    (void)store_max_offset(c->e, topic, 0);
                continue;
            }
            int32_t q = (int32_t)((t + round) % 2);
            store_get_result g;
            assert_int_equal(store_get_messages(c->e, topic, q, 0, 4, NULL, NULL, NULL, &g), 0);
            assert_true(g.max_offset >= 5); /* never an empty queue on the way */
            free(g.data);
            st_msg m;
            st_make(&m, topic, q, "T", NULL, NULL, 80, t);
            store_put_result r;
            assert_int_equal(store_put(c->e, &m.m, &r), 0);
            assert_int_equal(r.status, STORE_PUT_OK);
            assert_true(r.queue_offset >= 5);
            atomic_fetch_add(&c->puts[t][q], 1);
        }
    return NULL;
}

static void test_concurrent_first_use(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_mode(root, STORE_CQ_LOAD_AT_START, STORE_ASYNC_FLUSH);
    for (int t = 0; t < CTOPICS; t++)
        for (int q = 0; q < 2; q++)
            for (int i = 0; i < 5; i++) {
                char topic[32];
                snprintf(topic, sizeof topic, "Conc%d", t);
                st_msg m;
                st_make(&m, topic, q, "T", NULL, NULL, 80, i);
                store_put_result r;
                assert_int_equal(store_put(e, &m.m, &r), 0);
            }
    store_close(e);
    /* on use: no background pass, so the threads are the first to name
     * every topic (a second round with it below) */
    e = open_mode(root, STORE_CQ_LOAD_ON_USE, STORE_ASYNC_FLUSH);
    static conc cs[CTHREADS];
    pthread_t th[CTHREADS];
    for (int i = 0; i < CTHREADS; i++) {
        memset(&cs[i], 0, sizeof cs[i]);
        cs[i].e = e;
        cs[i].id = i;
        assert_int_equal(pthread_create(&th[i], NULL, conc_worker, &cs[i]), 0);
    }
    for (int i = 0; i < CTHREADS; i++)
        pthread_join(th[i], NULL);
    for (int t = 0; t < CTOPICS; t++) {
        char topic[32];
        snprintf(topic, sizeof topic, "Conc%d", t);
        for (int q = 0; q < 2; q++) {
            int64_t want = 5;
            for (int i = 0; i < CTHREADS; i++)
                want += atomic_load(&cs[i].puts[t][q]);
            assert_int_equal(store_max_offset(e, topic, q), t % 8 == 7 ? 0 : want);
        }
    }
    assert_int_equal(store_queues_pending_topics(e), 0); /* every topic was named */
    store_close(e);
    /* with the background pass racing the threads */
    e = open_mode(root, STORE_CQ_LOAD_LAZY, STORE_ASYNC_FLUSH);
    int64_t before[CTOPICS][2];
    for (int t = 0; t < CTOPICS; t++)
        for (int q = 0; q < 2; q++) {
            before[t][q] = 5;
            for (int i = 0; i < CTHREADS; i++)
                before[t][q] += atomic_load(&cs[i].puts[t][q]);
        }
    for (int i = 0; i < CTHREADS; i++) {
        memset(&cs[i], 0, sizeof cs[i]);
        cs[i].e = e;
        cs[i].id = i;
        assert_int_equal(pthread_create(&th[i], NULL, conc_worker, &cs[i]), 0);
    }
    for (int i = 0; i < CTHREADS; i++)
        pthread_join(th[i], NULL);
    int64_t deadline = st_mono_ms() + 60000;
    while (store_queues_pending_topics(e) > 0 && st_mono_ms() < deadline)
        usleep(10000);
    assert_int_equal(store_queues_pending_topics(e), 0);
    for (int t = 0; t < CTOPICS; t++) {
        char topic[32];
        snprintf(topic, sizeof topic, "Conc%d", t);
        for (int q = 0; q < 2 && t % 8 != 7; q++) {
            int64_t want = before[t][q];
            for (int i = 0; i < CTHREADS; i++)
                want += atomic_load(&cs[i].puts[t][q]);
            assert_int_equal(store_max_offset(e, topic, q), want);
        }
    }
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void put_to(store_engine *e, const char *topic, int32_t q, int i)
{
    st_msg m;
    st_make(&m, topic, q, "T", NULL, NULL, 90, i);
    store_put_result r;
    assert_int_equal(store_put(e, &m.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_OK);
}

/* Opened on use after a clean stop: accepted (no record scanned, at most
 * the checked record's topic loaded) iff `pending` topics still wait; the
 * fallback loads every queue. */
static void assert_clean_start(const char *root, size_t pending)
{
    store_engine *e = open_mode(root, STORE_CQ_LOAD_ON_USE, STORE_ASYNC_FLUSH);
    assert_int_equal(store_queues_pending_topics(e), pending);
    assert_int_equal(store_max_offset(e, "AdminB", 0), 0); /* deleted: not rebuilt */
    assert_int_equal(store_max_offset(e, "AdminC", 1), 0);
    assert_int_equal(store_max_offset(e, "AdminA", 2), 30);
    store_close(e);
}

static void test_clean_stop_after_topic_admin(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_mode(root, STORE_CQ_LOAD_AT_START, STORE_ASYNC_FLUSH);
    fill(e, 0, 300, 1000, NULL, NULL);
    store_close(e);
    /* with the background pass: new topics sent to, an old one too, then
     * the topic of the last message and an old one deleted */
    e = open_mode(root, STORE_CQ_LOAD_LAZY, STORE_ASYNC_FLUSH);
    for (int i = 0; i < 30; i++) {
        put_to(e, "AdminA", 2, i);
        put_to(e, "AdminC", 1, i);
        put_to(e, "Lazy4", 0, i);
        put_to(e, "AdminB", 0, i);
    }
    store_delete_topic(e, "AdminC");
    store_delete_topic(e, "AdminB"); /* holds the last message */
    store_delete_topic(e, "Lazy2");
    store_close(e);
    /* the same files after a crash on the same boot: the deleted queue is
     * trusted too (still absent), no queue is loaded and AdminB's last
     * records are not re-dispatched (test_crash_after_delete.c: real
     * kill -9) */
    char *crashed = sibling(root, ".crashed");
    copy_tree(root, crashed);
    char p[4200];
    snprintf(p, sizeof p, "%s/abort", crashed);
    int fd = open(p, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
    e = open_mode(crashed, STORE_CQ_LOAD_ON_USE, STORE_ASYNC_FLUSH);
    assert_int_equal(store_queues_pending_topics(e), TOPICS);
    assert_int_equal(store_max_offset(e, "AdminB", 0), 0);
    assert_int_equal(store_max_offset(e, "AdminA", 2), 30);
    store_close(e);
    st_rmrf(crashed);
    /* consumequeue/ lost after the clean stop: not accepted, rebuilt */
    copy_tree(root, crashed);
    snprintf(p, sizeof p, "%s/consumequeue", crashed);
    st_rmrf(p);
    e = open_mode(crashed, STORE_CQ_LOAD_ON_USE, STORE_ASYNC_FLUSH);
    assert_int_equal(store_max_offset(e, "AdminA", 2), 30);
    assert_int_equal(store_max_offset(e, "Lazy0", 0), 7);
    store_close(e);
    st_rmrf(crashed);
    free(crashed);
    /* Lazy0..11 without Lazy2, and AdminA: none loaded (the record the
     * state names is AdminB's, whose queue is gone) */
    assert_clean_start(root, TOPICS);
    /* and again: the start that accepted it keeps it for the next stop */
    assert_clean_start(root, TOPICS);
    /* every queue loaded at start: accepted too (nothing re-dispatched);
     * it keeps naming AdminB's record (a lower one of a living queue would
     * let a crash start re-dispatch AdminB's last records), so the next
     * start loads no topic either */
    e = open_mode(root, STORE_CQ_LOAD_AT_START, STORE_ASYNC_FLUSH);
    assert_int_equal(store_max_offset(e, "AdminB", 0), 0);
    int64_t lazy4 = 30;
    for (int i = 0; i < 300; i++)
        lazy4 += i % TOPICS == 4 && (i / TOPICS) % QUEUES == 0;
    assert_int_equal(store_max_offset(e, "Lazy4", 0), lazy4);
    store_close(e);
    assert_clean_start(root, TOPICS);
    st_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_stop_lazy_equals_eager),
        cmocka_unit_test(test_unclean_stop_torn_queue_tails),
        cmocka_unit_test(test_unclean_stop_torn_queue_and_log_tails),
        cmocka_unit_test(test_kill9_lazy_equals_eager),
        cmocka_unit_test(test_retention_deletes_files_of_untouched_queues),
        cmocka_unit_test(test_concurrent_first_use),
        cmocka_unit_test(test_clean_stop_after_topic_admin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
