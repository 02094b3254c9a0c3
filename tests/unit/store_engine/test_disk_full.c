/* test_disk_full.c — the store on a real, small file system (a tmpfs this
 * test mounts; root only, else skipped with exit 77) filled to the last
 * byte by a filler file, freed, and filled again (issue 21 §1):
 *  - puts are refused with SERVICE_NOT_AVAILABLE before anything of them is
 *    written (no write ever lands in a hole of a mapping: a hole the disk
 *    cannot fill is SIGBUS, which killed the daemon), reads keep working;
 *  - the store resumes by itself once a whole next segment fits, and NOT
 *    when only a little space came back (the old 1 MiB probe did);
 *  - SYNC_FLUSH: the disk fills while sends wait for their group commit:
 *    every waiter gets one answer and every "flushed" one is readable;
 *  - a failed sync: its waiters are never confirmed, even by a later
 *    successful sync; puts are refused until syncs work again;
 *  - every acknowledged message is readable after each step and after a
 *    restart. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "store_test_util.h"

#define SEG (1024 * 1024)
#define BODY 1000

static char g_mnt[256];

/* One acknowledged message: where it is and the seed of its body. */
typedef struct acked {
    int32_t qid;
    int64_t qoff;
    int seed;
} acked;

typedef struct ack_list {
    acked *v;
    size_t n, cap;
} ack_list;

static void ack_add(ack_list *l, int32_t qid, int64_t qoff, int seed)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 1024;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        assert_non_null(l->v);
    }
    l->v[l->n++] = (acked){qid, qoff, seed};
}

static void disk_config(store_config *c, const char *root)
{
    store_config_defaults(c);
    c->root_dir = root;
    c->commitlog_file_size = SEG;
    c->cq_file_size = 120000;
    c->max_hash_slot_num = 1000;
    c->max_index_num = 4000;
    c->flush_interval_ms = 20;
    c->clean_interval_ms = 0;        /* no retention: nothing acknowledged goes away */
    c->disk_check_interval_ms = 100; /* the housekeeper's own re-check (resume by itself) */
    c->page_cache_keep_bytes = 0;
}

static void make_msg(st_msg *s, int seed)
{
    char uniq[32], keys[32];
    snprintf(uniq, sizeof uniq, "U%08d", seed);
    snprintf(keys, sizeof keys, "K%d", seed);
    st_make(s, "D", seed % 4, "t", keys, uniq, BODY, seed);
}

/* Every acknowledged message: found at its queue offset with its body. */
static void check_all_readable(store_engine *e, const ack_list *l)
{
    st_msg want;
    for (size_t i = 0; i < l->n; i++) {
        store_get_result g;
        assert_int_equal(
            store_get_messages(e, "D", l->v[i].qid, l->v[i].qoff, 1, NULL, NULL, NULL, &g), 0);
        if (g.status != STORE_GET_FOUND || g.msg_count != 1)
            fail_msg("acknowledged message %zu (queue %d offset %lld) not readable: %s", i,
                     l->v[i].qid, (long long)l->v[i].qoff, store_get_status_name(g.status));
        stored_record r;
        assert_int_equal(stored_record_decode(g.data, g.len, true, &r), STORED_RECORD_OK);
        make_msg(&want, l->v[i].seed);
        assert_int_equal(r.body_len, BODY);
        assert_memory_equal(r.body, want.body, BODY);
        assert_int_equal(r.queue_offset, l->v[i].qoff);
        free(g.data);
    }
}

/* One put; acknowledged ones are recorded. The status. */
static store_put_status put_one(store_engine *e, ack_list *l, int seed)
{
    st_msg s;
    make_msg(&s, seed);
    store_put_result r;
    assert_int_equal(store_put(e, &s.m, &r), 0);
    if (r.status == STORE_PUT_OK)
        ack_add(l, s.m.queue_id, r.queue_offset, seed);
    return r.status;
}

/* Put until refused (at most `max` puts): the first refusal must be one of
 * Java's disk answers, and the store must stay refusing. */
static int put_until_refused(store_engine *e, ack_list *l, int *seed, int max)
{
    int ok = 0;
    store_put_status st = STORE_PUT_OK;
    for (int i = 0; i < max && st == STORE_PUT_OK; i++) {
        st = put_one(e, l, (*seed)++);
        ok += st == STORE_PUT_OK;
    }
    if (st == STORE_PUT_OK)
        fail_msg("%d puts on a full disk were all accepted", max);
    assert_true(st == STORE_PUT_SERVICE_NOT_AVAILABLE || st == STORE_PUT_CREATE_MAPPED_FILE_FAILED);
    for (int i = 0; i < 20; i++)
        assert_int_equal(put_one(e, l, (*seed)++), STORE_PUT_SERVICE_NOT_AVAILABLE);
    return ok;
}

/* Write `path` until the file system has not one byte left. A store open
 * meanwhile may give blocks back after the filler saw ENOSPC (a segment it
 * failed to allocate is removed), so fill again until none are free. */
static void fill_to_last_byte(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    static char buf[1024 * 1024];
    memset(buf, 0x5a, sizeof buf);
    struct statvfs sv;
    for (int pass = 0; pass < 100; pass++) {
        for (size_t chunk = sizeof buf; chunk >= 1; chunk /= 16) {
            ssize_t w;
            while ((w = write(fd, buf, chunk)) > 0)
                ; /* a short write is followed by ENOSPC */
            assert_int_equal(w, -1);
            assert_int_equal(errno, ENOSPC);
        }
        assert_int_equal(statvfs(g_mnt, &sv), 0);
        if (sv.f_bavail == 0)
            break;
        usleep(10000);
    }
    close(fd);
    assert_int_equal(sv.f_bavail, 0);
}

/* Leave `bytes` free: the filler shrinks from its end. */
static void free_bytes(const char *path, off_t bytes)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size > bytes ? st.st_size - bytes : 0), 0);
}

static bool writeable(store_engine *e)
{
    store_runtime_stats rs;
    store_runtime_stats_get(e, &rs);
    return rs.writeable;
}

/* The housekeeper's own re-check (every 100 ms) lets puts in again: wait
 * for it (generously: the answer, not the time, is what is checked). */
static void wait_resumed(store_engine *e)
{
    int64_t deadline = st_mono_ms() + 30000;
    while (!writeable(e) && st_mono_ms() < deadline)
        usleep(20000);
    if (!writeable(e))
        fail_msg("the store did not resume by itself within 30 s after space came back");
}

static void test_fill_free_fill_restart(void **state)
{
    (void)state;
    char root[300], filler[300];
    snprintf(root, sizeof root, "%s/store", g_mnt);
    snprintf(filler, sizeof filler, "%s/filler", g_mnt);
    unlink(filler); /* left by a failed test before */
    store_config c;
    disk_config(&c, root);
    store_engine *e = st_open(&c);
    ack_list l = {0};
    int seed = 0;
    for (int i = 0; i < 300; i++)
        assert_int_equal(put_one(e, &l, seed++), STORE_PUT_OK);

    /* full: refused before anything is written through a mapping */
    fill_to_last_byte(filler);
    put_until_refused(e, &l, &seed, 200000);
    assert_false(writeable(e));
    check_all_readable(e, &l); /* pulls keep being served */
    int64_t before = store_max_offset(e, "D", 0);
    store_test_recheck_disk(e);
    assert_int_equal(put_one(e, &l, seed++), STORE_PUT_SERVICE_NOT_AVAILABLE);
    assert_int_equal(store_max_offset(e, "D", 0), before);

    /* a little space back (a probe file fits, the next segment does not):
     * still refused */
    free_bytes(filler, SEG / 2);
    store_test_recheck_disk(e);
    assert_false(writeable(e));
    assert_int_equal(put_one(e, &l, seed++), STORE_PUT_SERVICE_NOT_AVAILABLE);

    /* freed: puts resume by themselves */
    assert_int_equal(unlink(filler), 0);
    wait_resumed(e);
    for (int i = 0; i < 2000; i++)
        assert_int_equal(put_one(e, &l, seed++), STORE_PUT_OK);
    check_all_readable(e, &l);

    /* full again */
    fill_to_last_byte(filler);
    put_until_refused(e, &l, &seed, 200000);
    check_all_readable(e, &l);

    /* restart on the full disk: everything acknowledged is there */
    store_close(e);
    e = st_open(&c);
    check_all_readable(e, &l);
    for (int i = 0; i < 50; i++)
        put_one(e, &l, seed++); /* may be taken or refused: never a fault */
    check_all_readable(e, &l);
    store_close(e);

    /* and once more after freeing the disk */
    assert_int_equal(unlink(filler), 0);
    e = st_open(&c);
    check_all_readable(e, &l);
    for (int i = 0; i < 100; i++)
        assert_int_equal(put_one(e, &l, seed++), STORE_PUT_OK);
    check_all_readable(e, &l);
    store_close(e);
    st_rmrf(root);
    free(l.v);
}

/* ---- SYNC_FLUSH: the disk fills while group commits wait ---- */

typedef struct sync_waiter {
    int seed;
    int32_t qid;
    int64_t qoff;
    int answers;
    bool ok;
} sync_waiter;

static pthread_mutex_t g_wmu = PTHREAD_MUTEX_INITIALIZER;
static int g_answered;

static void on_sync_done(void *ud, bool ok)
{
    sync_waiter *w = ud;
    pthread_mutex_lock(&g_wmu);
    w->answers++;
    w->ok = ok;
    g_answered++;
    pthread_mutex_unlock(&g_wmu);
}

typedef struct sync_run {
    store_engine *e;
    sync_waiter *w;
    int max, waited;
    int seed0;
    int refused;
} sync_run;

/* Puts (their bytes left for the flusher's write, as a SYNC_FLUSH send
 * does), each waiting for its group commit, until the store refuses. */
static void *sync_putter(void *arg)
{
    sync_run *r = arg;
    for (int i = 0; i < r->max && r->refused < 20; i++) {
        st_msg s;
        make_msg(&s, r->seed0 + i);
        s.m.defer_write = true;
        store_put_result pr;
        if (store_put(r->e, &s.m, &pr) != 0 || pr.status != STORE_PUT_OK) {
            r->refused++;
            continue;
        }
        sync_waiter *w = &r->w[r->waited++];
        w->seed = r->seed0 + i;
        w->qid = s.m.queue_id;
        w->qoff = pr.queue_offset;
        if (store_wait_flush(r->e, pr.end_offset, on_sync_done, w) != 0)
            on_sync_done(w, false);
    }
    return NULL;
}

static void collect_sync(sync_run *r, ack_list *l)
{
    int64_t deadline = st_mono_ms() + 30000;
    for (;;) {
        pthread_mutex_lock(&g_wmu);
        int n = g_answered;
        pthread_mutex_unlock(&g_wmu);
        if (n >= r->waited || st_mono_ms() > deadline)
            break;
        usleep(10000);
    }
    pthread_mutex_lock(&g_wmu);
    for (int i = 0; i < r->waited; i++) {
        if (r->w[i].answers != 1)
            fail_msg("waiter %d answered %d times", i, r->w[i].answers);
        if (r->w[i].ok)
            ack_add(l, r->w[i].qid, r->w[i].qoff, r->w[i].seed);
    }
    g_answered = 0;
    pthread_mutex_unlock(&g_wmu);
}

static void test_sync_flush_group_when_disk_fills(void **state)
{
    (void)state;
    char root[300], filler[300];
    snprintf(root, sizeof root, "%s/sstore", g_mnt);
    snprintf(filler, sizeof filler, "%s/filler", g_mnt);
    unlink(filler); /* left by a failed test before */
    store_config c;
    disk_config(&c, root);
    c.flush_type = STORE_SYNC_FLUSH; /* write-through: pwrite + fdatasync */
    store_engine *e = st_open(&c);
    ack_list l = {0};
    enum { MAX = 60000 };
    sync_run r = {.e = e, .w = calloc(MAX, sizeof(sync_waiter)), .max = MAX, .seed0 = 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, sync_putter, &r), 0);
    /* some groups confirmed first: on a loaded machine the filler could
     * otherwise take the disk before the putter's first put */
    for (int64_t until = st_mono_ms() + 30000;;) {
        pthread_mutex_lock(&g_wmu);
        int answered = g_answered;
        pthread_mutex_unlock(&g_wmu);
        if (answered >= 16 || st_mono_ms() > until)
            break;
        usleep(1000);
    }
    fill_to_last_byte(filler); /* while the putter's groups wait */
    pthread_join(t, NULL);
    if (r.refused < 20)
        fail_msg("%d SYNC_FLUSH puts on a full disk were all accepted", r.waited);
    collect_sync(&r, &l);
    assert_true(l.n > 0);
    check_all_readable(e, &l);
    assert_false(writeable(e));

    /* freed: the store resumes and groups are confirmed again */
    assert_int_equal(unlink(filler), 0);
    wait_resumed(e);
    sync_run r2 = {.e = e, .w = calloc(500, sizeof(sync_waiter)), .max = 500, .seed0 = MAX};
    sync_putter(&r2);
    assert_int_equal(r2.refused, 0);
    collect_sync(&r2, &l);
    for (int i = 0; i < r2.waited; i++)
        assert_true(r2.w[i].ok);
    check_all_readable(e, &l);
    store_close(e);
    e = st_open(&c);
    check_all_readable(e, &l);
    store_close(e);
    st_rmrf(root);
    free(r.w);
    free(r2.w);
    free(l.v);
}

/* ---- a failed sync is never confirmed ---- */

static void test_failed_sync_not_confirmed(void **state)
{
    (void)state;
    char root[300], filler[300];
    snprintf(root, sizeof root, "%s/fstore", g_mnt);
    snprintf(filler, sizeof filler, "%s/filler", g_mnt);
    unlink(filler); /* left by a failed test before: a full disk is not this test's case */
    store_config c;
    disk_config(&c, root);
    c.flush_type = STORE_SYNC_FLUSH;
    store_engine *e = st_open(&c);
    st_msg s;
    make_msg(&s, 1);
    s.m.defer_write = true;
    store_put_result pr;
    store_test_inject_sync_error(e, EIO);
    assert_int_equal(store_put(e, &s.m, &pr), 0);
    assert_int_equal(pr.status, STORE_PUT_OK);
    int64_t first_end = pr.end_offset;
    st_flush_count w1 = ST_FLUSH_COUNT_INIT;
    assert_int_equal(store_wait_flush(e, first_end, st_on_flushed, &w1), 0);
    assert_int_equal(st_flush_wait(&w1, 1), 1);
    assert_int_equal(w1.ok, 0); /* FLUSH_DISK_TIMEOUT to the sender */
    /* refused until syncs work again */
    assert_int_equal(store_put(e, &s.m, &pr), 0);
    assert_int_equal(pr.status, STORE_PUT_SERVICE_NOT_AVAILABLE);
    store_test_inject_sync_error(e, 0);
    wait_resumed(e);
    /* the failed range stays unconfirmed although syncs succeed again */
    assert_int_equal(store_max_offset(e, "D", 1), 1);
    store_put_result pr2;
    make_msg(&s, 5);
    s.m.defer_write = true;
    assert_int_equal(store_put(e, &s.m, &pr2), 0);
    assert_int_equal(pr2.status, STORE_PUT_OK);
    st_flush_count w3 = ST_FLUSH_COUNT_INIT;
    assert_int_equal(store_wait_flush(e, pr2.end_offset, st_on_flushed, &w3), 0);
    assert_int_equal(st_flush_wait(&w3, 1), 1);
    assert_int_equal(w3.ok, 1);
    /* a late waiter of the first put's end: not confirmed */
    st_flush_count w2 = ST_FLUSH_COUNT_INIT;
    assert_int_equal(store_wait_flush(e, first_end, st_on_flushed, &w2), 0);
    assert_int_equal(st_flush_wait(&w2, 1), 1);
    assert_int_equal(w2.ok, 0);
    store_close(e);
    st_rmrf(root);
}

int main(void)
{
    if (geteuid() != 0) {
        printf("test_disk_full: skipped: mounting a small tmpfs needs root\n");
        return 77;
    }
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(g_mnt, sizeof g_mnt, "%s/store-disk-XXXXXX", base);
    if (!mkdtemp(g_mnt)) {
        printf("test_disk_full: cannot create a mount point: %s\n", strerror(errno));
        return 1;
    }
    /* 24 MiB: 1 MiB segments, the next segment plus 8 MiB headroom to resume */
    if (mount("tmpfs", g_mnt, "tmpfs", 0, "size=24m,mode=0755") != 0) {
        printf("test_disk_full: skipped: mount -t tmpfs: %s\n", strerror(errno));
        rmdir(g_mnt);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_free_fill_restart),
        cmocka_unit_test(test_sync_flush_group_when_disk_fills),
        cmocka_unit_test(test_failed_sync_not_confirmed),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    umount2(g_mnt, MNT_DETACH);
    rmdir(g_mnt);
    return rc;
}
