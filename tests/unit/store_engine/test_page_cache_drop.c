/* test_page_cache_drop.c — commitLogPageCacheKeep: commit-log bytes that
 * are flushed and more than the window behind leave the page cache (mincore
 * of the segment file says so) while every message still reads back intact
 * from the file, before and after a reopen; with the window at 0 nothing is
 * dropped by the store. Also: SYNC_FLUSH group commit still completes every
 * waiter of a burst (the flusher gathers arrivals before it syncs), and the
 * pages just past a consume queue's end are faulted in ahead of the
 * appender. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "store_test_util.h"

#define SEG (1024 * 1024)
#define N_MSGS 12000 /* ~12 MiB of 1 KiB messages: 12 segments */

static store_engine *open_keep(const char *root, int64_t keep, store_flush_type ft)
{
    store_config c;
    st_small_config(&c, root);
    c.commitlog_file_size = SEG;
    c.page_cache_keep_bytes = keep;
    c.flush_type = ft;
    c.flush_interval_ms = 10;
    return st_open(&c);
}

/* resident 4 KiB pages of the first commit-log segment (page cache) */
static long resident_pages(const char *root)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/commitlog/%020d", root, 0);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    void *m = mmap(NULL, SEG, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    assert_true(m != MAP_FAILED);
    unsigned char vec[SEG / 4096];
    assert_int_equal(mincore(m, SEG, vec), 0);
    munmap(m, SEG);
    long n = 0;
    for (size_t i = 0; i < sizeof vec; i++)
        n += vec[i] & 1;
    return n;
}

static void test_flushed_log_leaves_page_cache(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_keep(root, 2 * SEG, STORE_ASYNC_FLUSH);
    st_put_seq(e, "Drop", N_MSGS, 1000);
    /* the housekeeper drops behind the flushed end: poll with a deadline */
    int64_t deadline = st_mono_ms() + 20000;
    long res;
    while ((res = resident_pages(root)) > 0 && st_mono_ms() < deadline) {
        struct timespec ts = {0, 20 * 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(res, 0);
    st_read_seq(e, "Drop", N_MSGS, 1000); /* faults the dropped part back in from the file */
    store_close(e);
    e = open_keep(root, 2 * SEG, STORE_ASYNC_FLUSH);
    st_read_seq(e, "Drop", N_MSGS, 1000);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void test_keep_zero_drops_nothing(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_keep(root, 0, STORE_ASYNC_FLUSH);
    st_put_seq(e, "Drop", N_MSGS, 1000);
    /* give the housekeeper time to act if it (wrongly) would; the page
     * cache may still evict under memory pressure, so only "some stay" */
    struct timespec ts = {0, 300 * 1000000};
    nanosleep(&ts, NULL);
    assert_true(resident_pages(root) > 0);
    st_read_seq(e, "Drop", N_MSGS, 1000);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void test_sync_burst_completes(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_keep(root, 2 * SEG, STORE_SYNC_FLUSH);
    st_flush_count b = ST_FLUSH_COUNT_INIT;
    st_msg m;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 64; i++) {
            st_make(&m, "Sync", 0, NULL, NULL, NULL, 500, i);
            store_put_result r;
            assert_int_equal(store_put(e, &m.m, &r), 0);
            assert_int_equal(r.status, STORE_PUT_OK);
            assert_int_equal(store_wait_flush(e, r.end_offset, st_on_flushed, &b), 0);
        }
    }
    assert_int_equal(st_flush_wait(&b, 20 * 64), 20 * 64);
    assert_int_equal(b.ok, 20 * 64);
    store_close(e);
    st_rmrf(root);
    free(root);
}

#define PF_ENTRIES 150

static void test_queue_pages_faulted_ahead(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_keep(root, 2 * SEG, STORE_ASYNC_FLUSH);
    st_msg m;
    for (int i = 0; i < PF_ENTRIES; i++) {
        st_make(&m, "Pf", 0, NULL, NULL, NULL, 100, i);
        store_put_result r;
        assert_int_equal(store_put(e, &m.m, &r), 0);
        assert_int_equal(r.status, STORE_PUT_OK);
    }
    /* 150 entries use most of the first page; the next one (entries
     * 205..408) is not written yet but should become resident. A queue is
     * faulted in ahead by what it holds (at least half a page, at most 1024
     * entries): a tiny queue must not cost 20 KiB of resident pages
     * (100,000 topics), nor its second page with its first entry. */
    char path[4096];
    snprintf(path, sizeof path, "%s/consumequeue/Pf/0/%020d", root, 0);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    void *map = mmap(NULL, 120000, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    assert_true(map != MAP_FAILED);
    unsigned char vec[(120000 + 4095) / 4096];
    int64_t deadline = st_mono_ms() + 20000;
    bool all = false;
    while (!all && st_mono_ms() < deadline) {
        assert_int_equal(mincore(map, 120000, vec), 0);
        all = (vec[1] & 1) != 0;
        if (!all) {
            struct timespec ts = {0, 10 * 1000000};
            nanosleep(&ts, NULL);
        }
    }
    assert_true(all);
    for (int p = 3; p <= 4; p++)
        assert_false(vec[p] & 1);
    munmap(map, 120000);
    /* and they still read as no entries (zeros): the queue end is unchanged */
    assert_int_equal(store_max_offset(e, "Pf", 0), PF_ENTRIES);
    store_close(e);
    e = open_keep(root, 2 * SEG, STORE_ASYNC_FLUSH);
    assert_int_equal(store_max_offset(e, "Pf", 0), PF_ENTRIES);
    store_close(e);
    st_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flushed_log_leaves_page_cache),
        cmocka_unit_test(test_keep_zero_drops_nothing),
        cmocka_unit_test(test_sync_burst_completes),
        cmocka_unit_test(test_queue_pages_faulted_ahead),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
