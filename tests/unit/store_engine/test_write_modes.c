/* test_write_modes.c — the two ways records reach the commit log (copied
 * into the mapping, or encoded into a buffer and pwritten): both give the
 * same readable store across segment rolls and flush types, a store written
 * one way reopens and grows the other way, and a failed pwrite refuses the
 * put without publishing any part of it (queue end, log end and index stay
 * where they were) until the store recovers; SYNC_FLUSH puts left staged for
 * the flusher (readable at once, written by the group's flush). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "store_test_util.h"

static store_engine *open_mode(const char *root, int write_mode, store_flush_type ft)
{
    store_config c;
    st_small_config(&c, root);
    c.commitlog_write = write_mode;
    c.flush_type = ft;
    c.sync_flush_timeout_ms = 5000;
    return st_open(&c);
}

static size_t body_len_of(int i)
{
    return (size_t)(100 + (i * 37) % 1900);
}

/* n messages from `from` on, queue 0 of "W", singles and batches of 3 */
static void put_range(store_engine *e, int from, int n)
{
    for (int i = from; i < from + n;) {
        if (i % 7 == 0 && i + 3 <= from + n) {
            st_msg s[3];
            store_msg m[3];
            for (int k = 0; k < 3; k++) {
                char uniq[32];
                snprintf(uniq, sizeof uniq, "U%06d", i + k);
                st_make(&s[k], "W", 0, "t", NULL, uniq, body_len_of(i + k), i + k);
                m[k] = s[k].m;
            }
            int64_t phys[3];
            store_put_result r;
            assert_int_equal(store_put_batch(e, m, 3, phys, &r), 0);
            assert_int_equal(r.status, STORE_PUT_OK);
            assert_int_equal(r.queue_offset, i);
            i += 3;
        } else {
            st_msg s;
            char uniq[32];
            snprintf(uniq, sizeof uniq, "U%06d", i);
            st_make(&s, "W", 0, "t", NULL, uniq, body_len_of(i), i);
            store_put_result r;
            assert_int_equal(store_put(e, &s.m, &r), 0);
            assert_int_equal(r.status, STORE_PUT_OK);
            assert_int_equal(r.queue_offset, i);
            i++;
        }
    }
}

/* every message 0..n-1 readable with its own body and UNIQ_KEY */
static void check_all(store_engine *e, int n)
{
    assert_int_equal(store_max_offset(e, "W", 0), n);
    int64_t off = 0;
    while (off < n) {
        store_get_result g;
        assert_int_equal(store_get_messages(e, "W", 0, off, 32, NULL, NULL, NULL, &g), 0);
        assert_int_equal(g.status, STORE_GET_FOUND);
        size_t at = 0;
        for (int k = 0; k < g.msg_count; k++, off++) {
            stored_record r;
            assert_int_equal(stored_record_decode(g.data + at, g.len - at, true, &r), 0);
            assert_int_equal(r.queue_offset, off);
            assert_int_equal(r.body_len, (int32_t)body_len_of((int)off));
            st_msg want;
            st_make(&want, "W", 0, "t", NULL, NULL, body_len_of((int)off), (int)off);
            assert_memory_equal(r.body, want.body, (size_t)r.body_len);
            char uniq[32];
            int ul = snprintf(uniq, sizeof uniq, "UNIQ_KEY\001U%06d", (int)off);
            assert_non_null(memmem(r.props, r.props_len, uniq, (size_t)ul));
            at += (size_t)r.total_size;
        }
        assert_int_equal(at, g.len);
        free(g.data);
    }
}

static void wait_durable(store_engine *e)
{
    store_runtime_stats rs;
    store_runtime_stats_get(e, &rs);
    st_flush_count w = ST_FLUSH_COUNT_INIT;
    assert_int_equal(store_wait_flush(e, rs.commitlog_max_offset, st_on_flushed, &w), 0);
    assert_int_equal(st_flush_wait(&w, 1), 1);
    assert_int_equal(w.ok, 1);
    store_runtime_stats_get(e, &rs);
    assert_true(rs.flushed_offset >= rs.commitlog_max_offset);
}

/* 64 KiB segments: 300 messages of 100..2000 bytes roll a dozen times */
static void roundtrip(int first, int second, store_flush_type ft)
{
    char *root = st_tmpdir();
    store_engine *e = open_mode(root, first, ft);
    put_range(e, 0, 300);
    if (ft == STORE_SYNC_FLUSH)
        wait_durable(e);
    check_all(e, 300);
    store_close(e);
    e = open_mode(root, second, ft);
    check_all(e, 300);
    put_range(e, 300, 150);
    if (ft == STORE_SYNC_FLUSH)
        wait_durable(e);
    check_all(e, 450);
    store_close(e);
    e = open_mode(root, first, ft);
    check_all(e, 450);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void test_pwrite_then_mmap_sync(void **state)
{
    (void)state;
    roundtrip(STORE_CL_WRITE_PWRITE, STORE_CL_WRITE_MMAP, STORE_SYNC_FLUSH);
}

static void test_mmap_then_pwrite_async(void **state)
{
    (void)state;
    roundtrip(STORE_CL_WRITE_MMAP, STORE_CL_WRITE_PWRITE, STORE_ASYNC_FLUSH);
}

static void test_auto_is_pwrite_under_sync(void **state)
{
    (void)state;
    roundtrip(STORE_CL_WRITE_AUTO, STORE_CL_WRITE_AUTO, STORE_SYNC_FLUSH);
}

static void test_failed_write_publishes_nothing(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_mode(root, STORE_CL_WRITE_PWRITE, STORE_SYNC_FLUSH);
    put_range(e, 0, 20);
    store_runtime_stats before;
    store_runtime_stats_get(e, &before);

    store_test_inject_write_error(e, EIO);
    st_msg s;
    st_make(&s, "W", 0, "t", "lostkey", NULL, 500, 99);
    store_put_result r;
    assert_int_equal(store_put(e, &s.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_SERVICE_NOT_AVAILABLE);
    store_runtime_stats after;
    store_runtime_stats_get(e, &after);
    assert_false(after.writeable);
    assert_int_equal(after.commitlog_max_offset, before.commitlog_max_offset);
    assert_int_equal(store_max_offset(e, "W", 0), 20);
    store_query_result q;
    assert_int_equal(store_query_by_key(e, "W", "lostkey", 32, 0, INT64_MAX, &q), 0);
    assert_int_equal(q.count, 0);
    free(q.data);
    /* refused while the store is not writeable, reads still served */
    assert_int_equal(store_put(e, &s.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_SERVICE_NOT_AVAILABLE);
    check_all(e, 20);

    /* the fault clears: the re-check resumes writes where the log ended */
    store_test_inject_write_error(e, 0);
    store_test_recheck_disk(e);
    store_runtime_stats_get(e, &after);
    assert_true(after.writeable);
    put_range(e, 20, 30);
    wait_durable(e);
    check_all(e, 50);
    store_close(e);
    e = open_mode(root, STORE_CL_WRITE_PWRITE, STORE_SYNC_FLUSH);
    check_all(e, 50);
    store_close(e);
    st_rmrf(root);
    free(root);
}

/* SYNC_FLUSH puts whose caller waits for the flush stay staged until the
 * flusher writes the group: readers see them at once, the flush covers
 * them, and a write that fails at flush time fails the flush (not the
 * acknowledged put), keeps the records and writes them once the disk is back */
static void test_deferred_writes(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_mode(root, STORE_CL_WRITE_PWRITE, STORE_SYNC_FLUSH);
    for (int i = 0; i < 40; i++) {
        st_msg s;
        char uniq[32];
        snprintf(uniq, sizeof uniq, "U%06d", i);
        st_make(&s, "W", 0, "t", NULL, uniq, body_len_of(i), i);
        s.m.defer_write = true;
        store_put_result r;
        assert_int_equal(store_put(e, &s.m, &r), 0);
        assert_int_equal(r.status, STORE_PUT_OK);
    }
    check_all(e, 40); /* a reader writes what is staged before reading it */
    wait_durable(e);

    store_test_inject_write_error(e, EIO);
    st_msg s;
    st_make(&s, "W", 0, "t", NULL, "U000040", body_len_of(40), 40);
    s.m.defer_write = true;
    store_put_result r;
    assert_int_equal(store_put(e, &s.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_OK); /* staged: its answer waits for the flush */
    st_flush_count w = ST_FLUSH_COUNT_INIT;
    assert_int_equal(store_wait_flush(e, r.end_offset, st_on_flushed, &w), 0);
    assert_int_equal(st_flush_wait(&w, 1), 1);
    assert_int_equal(w.ok, 0); /* the send would be answered FLUSH_DISK_TIMEOUT */
    store_runtime_stats rs;
    store_runtime_stats_get(e, &rs);
    assert_false(rs.writeable);
    assert_true(rs.flushed_offset < r.end_offset);
    st_make(&s, "W", 0, "t", NULL, NULL, 10, 41);
    assert_int_equal(store_put(e, &s.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_SERVICE_NOT_AVAILABLE);

    store_test_inject_write_error(e, 0);
    store_test_recheck_disk(e);
    store_runtime_stats_get(e, &rs);
    assert_true(rs.writeable);
    wait_durable(e); /* the kept record is written and synced now */
    check_all(e, 41);
    put_range(e, 41, 9);
    check_all(e, 50);
    store_close(e);
    e = open_mode(root, STORE_CL_WRITE_MMAP, STORE_ASYNC_FLUSH);
    check_all(e, 50);
    store_close(e);
    st_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pwrite_then_mmap_sync),
        cmocka_unit_test(test_mmap_then_pwrite_async),
        cmocka_unit_test(test_auto_is_pwrite_under_sync),
        cmocka_unit_test(test_failed_write_publishes_nothing),
        cmocka_unit_test(test_deferred_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
