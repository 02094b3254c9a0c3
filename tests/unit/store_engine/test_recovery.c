/* test_recovery.c — crash recovery. A forked child writes with SYNC_FLUSH and
 * reports every acknowledged record through a pipe; it is killed with
 * SIGKILL mid-stream; the reopened store must hold every acknowledged record
 * exactly once and intact (queue entry, record, CRC, body, index key), and
 * accept new writes after them. Also: a torn record after the end is zeroed
 * and queue entries pointing at it are cut; lost consume queues are rebuilt
 * from the log; a clean stop reopens without scanning (the state file); the
 * Java checkpoint path works without the state file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <zlib.h>

#include "store_test_util.h"

typedef struct logbuf {
    char text[16384];
} logbuf;

static void capture(void *ud, int level, const char *msg)
{
    (void)level;
    logbuf *b = ud;
    size_t l = strlen(b->text);
    snprintf(b->text + l, sizeof b->text - l, "%s\n", msg);
}

static void cfg_for(store_config *c, const char *root, logbuf *lb)
{
    st_small_config(c, root);
    c->flush_type = STORE_SYNC_FLUSH;
    c->log = capture;
    c->log_ud = lb;
}

static void make_msg(st_msg *s, int i)
{
    char uniq[32];
    snprintf(uniq, sizeof uniq, "K%07d", i);
    st_make(s, "K", i % 4, "tag", NULL, uniq, 100 + (size_t)(i * 37) % 900, i);
}

static void child_writer(const char *root, int fd)
{
    store_config c;
    logbuf lb = {{0}};
    cfg_for(&c, root, &lb);
    c.log = NULL;
    store_engine *e = NULL;
    char err[256];
    if (store_open(&c, &e, err, sizeof err) != 0)
        _exit(3);
    for (int i = 0;; i++) {
        st_msg s;
        make_msg(&s, i);
        store_put_result r;
        if (store_put(e, &s.m, &r) != 0 || r.status != STORE_PUT_OK)
            _exit(4);
        st_flush_count w = ST_FLUSH_COUNT_INIT;
        if (store_wait_flush(e, r.end_offset, st_on_flushed, &w) != 0)
            _exit(5);
        if (st_flush_wait(&w, 1) != 1 || w.ok != 1)
            _exit(6);
        if (write(fd, &i, sizeof i) != sizeof i)
            _exit(7);
    }
}

static void check_record(store_engine *e, int i)
{
    st_msg s;
    make_msg(&s, i);
    store_cq_entry en;
    assert_int_equal(store_read_cq(e, "K", i % 4, i / 4, &en, 1), 1);
    uint8_t *rec;
    size_t len;
    assert_int_equal(store_read_record(e, en.phys_offset, &rec, &len), 0);
    assert_int_equal(len, (size_t)en.size);
    stored_record d;
    assert_int_equal(stored_record_decode(rec, len, true, &d), STORED_RECORD_OK);
    assert_int_equal(d.queue_offset, i / 4);
    assert_int_equal(d.queue_id, i % 4);
    assert_int_equal(d.phys_offset, en.phys_offset);
    assert_int_equal((size_t)d.body_len, s.m.body_len);
    assert_memory_equal(d.body, s.body, s.m.body_len);
    assert_int_equal(d.props_len, s.m.props_len);
    assert_memory_equal(d.props, s.props, s.m.props_len);
    free(rec);
}

/* every entry of every queue decodes, in order, no record twice */
static void check_queues_consistent(store_engine *e)
{
    for (int q = 0; q < 4; q++) {
        int64_t max = store_max_offset(e, "K", q), prev = -1;
        for (int64_t k = 0; k < max; k++) {
            store_cq_entry en;
            assert_int_equal(store_read_cq(e, "K", q, k, &en, 1), 1);
            assert_true(en.phys_offset > prev);
            prev = en.phys_offset;
            uint8_t *rec;
            size_t len;
            assert_int_equal(store_read_record(e, en.phys_offset, &rec, &len), 0);
            stored_record d;
            assert_int_equal(stored_record_decode(rec, len, true, &d), STORED_RECORD_OK);
            assert_int_equal(d.queue_offset, k);
            free(rec);
        }
    }
}

static void test_kill9_during_sync_writes(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    for (int round = 0; round < 3; round++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            child_writer(root, fds[1]);
        }
        close(fds[1]);
        int last = -1, n = 0, v;
        while (n < 1500 && read(fds[0], &v, sizeof v) == sizeof v) {
            last = v;
            n++;
        }
        kill(pid, SIGKILL);
        int st;
        waitpid(pid, &st, 0);
        assert_true(WIFSIGNALED(st));
        while (read(fds[0], &v, sizeof v) == sizeof v)
            last = v;
        close(fds[0]);
        assert_true(last >= 1499);

        store_config c;
        logbuf lb = {{0}};
        cfg_for(&c, root, &lb);
        store_engine *e = st_open(&c);
        assert_non_null(strstr(lb.text, "after a crash"));
        if (getenv("STORE_TEST_VERBOSE"))
            fprintf(stderr, "round %d: last ack %d\n%s", round, last, lb.text);
        int total = 0;
        for (int q = 0; q < 4; q++)
            total += (int)store_max_offset(e, "K", q);
        /* at least every acknowledged one; more if the kill came between
         * the write and the ack */
        assert_true(total >= last + 1);
        for (int i = 0; i <= last; i++)
            check_record(e, i);
        check_queues_consistent(e);
        char key[32];
        snprintf(key, sizeof key, "K%07d", last);
        store_query_result qr;
        assert_int_equal(store_query_by_key(e, "K", key, 64, 0, INT64_MAX, &qr), 0);
        assert_int_equal(qr.count, 1);
        free(qr.data);
        /* writes continue right after */
        st_msg s;
        make_msg(&s, total);
        store_put_result r;
        assert_int_equal(store_put(e, &s.m, &r), 0);
        assert_int_equal(r.status, STORE_PUT_OK);
        assert_int_equal(r.queue_offset, total / 4);
        store_close(e);
        /* each round starts from an empty store (message i has queue offset i / 4) */
        st_rmrf(root);
        assert_int_equal(mkdir(root, 0755), 0);
    }
    st_rmrf(root);
    free(root);
}

static int64_t fill(store_engine *e, int n)
{
    for (int i = 0; i < n; i++) {
        st_msg s;
        make_msg(&s, i);
        store_put_result r;
        assert_int_equal(store_put(e, &s.m, &r), 0);
        assert_int_equal(r.status, STORE_PUT_OK);
    }
    store_runtime_stats rs;
    store_runtime_stats_get(e, &rs);
    return rs.commitlog_max_offset;
}

static void touch(const char *root, const char *name)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", root, name);
    int fd = open(p, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0);
    close(fd);
}

/* As after a reboot: the state file's boot id no longer matches, so only
 * its durable offset may be used (layout in store_recovery.c). */
static void forget_boot(const char *root)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/rmqhost_store_state", root);
    int fd = open(p, O_RDWR);
    assert_true(fd >= 0);
    uint8_t b[140];
    assert_int_equal(pread(fd, b, sizeof b, 0), (ssize_t)sizeof b);
    memset(b + 80, 'x', 40);
    stored_put_be32(b + 136, (uint32_t)crc32(0, b, 136));
    assert_int_equal(pwrite(fd, b, sizeof b, 0), (ssize_t)sizeof b);
    close(fd);
}

static void test_torn_tail_is_cut(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_config c;
    logbuf lb = {{0}};
    cfg_for(&c, root, &lb);
    store_engine *e = st_open(&c);
    int64_t end = fill(e, 203);
    int64_t max1 = store_max_offset(e, "K", 3);
    store_close(e);
    /* forge a crash: a record whose body CRC is wrong right at the end, and
     * a consume-queue entry pointing at it */
    st_msg s;
    make_msg(&s, 203);
    uint8_t ip[4] = {1, 2, 3, 4};
    stored_record r = {.queue_id = 3,
                       .queue_offset = max1,
                       .phys_offset = end,
                       .born_ip = ip,
                       .born_ip_len = 4,
                       .store_ip = ip,
                       .store_ip_len = 4,
                       .body = (const uint8_t *)s.body,
                       .body_len = (int32_t)s.m.body_len,
                       .topic = "K",
                       .topic_len = 1,
                       .body_crc = 12345};
    uint8_t buf[2048];
    size_t n = stored_record_encode(&r, false, buf, sizeof buf);
    assert_true(n > 0);
    char p[4200];
    snprintf(p, sizeof p, "%s/commitlog/%020lld", root, (long long)(end / 65536 * 65536));
    int fd = open(p, O_WRONLY);
    assert_true(fd >= 0);
    if (end % 65536 + (int64_t)n <= 65536)
        assert_int_equal(pwrite(fd, buf, n, end % 65536), (ssize_t)n);
    close(fd);
    snprintf(p, sizeof p, "%s/consumequeue/K/3/%020d", root, 0);
    fd = open(p, O_WRONLY);
    assert_true(fd >= 0);
    uint8_t ent[20];
    stored_put_be64(ent, (uint64_t)end);
    stored_put_be32(ent + 8, (uint32_t)n);
    stored_put_be64(ent + 12, 7);
    assert_int_equal(pwrite(fd, ent, 20, max1 * 20), 20);
    close(fd);
    touch(root, "abort");
    forget_boot(root);
    e = st_open(&c);
    if (getenv("STORE_TEST_VERBOSE"))
        fprintf(stderr, "%s", lb.text);
    assert_non_null(strstr(lb.text, "after a crash, state durable offset"));
    assert_int_equal(store_max_offset(e, "K", 3), max1);
    store_runtime_stats rs;
    store_runtime_stats_get(e, &rs);
    assert_int_equal(rs.commitlog_max_offset, end);
    uint8_t *rec;
    size_t len;
    assert_int_equal(store_read_record(e, end, &rec, &len), -ENOENT);
    store_put_result pr;
    make_msg(&s, 203);
    assert_int_equal(store_put(e, &s.m, &pr), 0);
    assert_int_equal(pr.queue_offset, max1);
    assert_int_equal(pr.phys_offset, end);
    check_record(e, 203);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void test_lost_queues_are_rebuilt_and_clean_start_skips_scan(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_config c;
    logbuf lb = {{0}};
    cfg_for(&c, root, &lb);
    store_engine *e = st_open(&c);
    fill(e, 400);
    store_close(e);
    /* a clean stop: reopened from the state file, no record re-read */
    lb.text[0] = 0;
    e = st_open(&c);
    assert_non_null(strstr(lb.text, "clean-stop state"));
    assert_non_null(strstr(lb.text, " 0 records scanned"));
    store_close(e);
    /* consume queues lost: rebuilt from the commit log */
    char p[4200];
    snprintf(p, sizeof p, "%s/consumequeue", root);
    st_rmrf(p);
    lb.text[0] = 0;
    e = st_open(&c);
    assert_null(strstr(lb.text, "clean-stop state"));
    for (int q = 0; q < 4; q++)
        assert_int_equal(store_max_offset(e, "K", q), 100);
    for (int i = 0; i < 400; i++)
        check_record(e, i);
    store_close(e);
    /* no state file, abort present: Java's checkpoint rule */
    snprintf(p, sizeof p, "%s/rmqhost_store_state", root);
    assert_int_equal(unlink(p), 0);
    touch(root, "abort");
    lb.text[0] = 0;
    e = st_open(&c);
    assert_non_null(strstr(lb.text, "abnormal (checkpoint)"));
    for (int i = 0; i < 400; i++)
        check_record(e, i);
    check_queues_consistent(e);
    store_close(e);
    /* no state file, clean: Java's normal rule (last three segments) */
    assert_int_equal(unlink(p), 0);
    lb.text[0] = 0;
    e = st_open(&c);
    assert_non_null(strstr(lb.text, "normal (third-to-last segment)"));
    check_queues_consistent(e);
    fill(e, 4); /* K%0000000.. again: queue offsets continue */
    assert_int_equal(store_max_offset(e, "K", 0), 101);
    store_close(e);
    st_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill9_during_sync_writes),
        cmocka_unit_test(test_torn_tail_is_cut),
        cmocka_unit_test(test_lost_queues_are_rebuilt_and_clean_start_skips_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
