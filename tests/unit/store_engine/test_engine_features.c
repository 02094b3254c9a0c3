/* test_engine_features.c — SYNC_FLUSH group commit (every waiter completes
 * after one flush covers it; an unreachable end times out with false), the
 * key index (exact match, ascending offsets, max count, time window),
 * search by time and store times, the in-disk rule, the queue listing and
 * topic deletion, retention (segments deleted, min offsets corrected), and
 * disk faults (puts refused, reads served, writes resume by themselves). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#include "store_test_util.h"

typedef struct producer {
    store_engine *e;
    st_flush_count *w;
    int id, n;
} producer;

static void *produce(void *arg)
{
    producer *p = arg;
    for (int i = 0; i < p->n; i++) {
        st_msg s;
        st_make(&s, "S", p->id, "T", NULL, NULL, 200, i);
        store_put_result r;
        if (store_put(p->e, &s.m, &r) != 0 || r.status != STORE_PUT_OK)
            abort();
        if (store_wait_flush(p->e, r.end_offset, st_on_flushed, p->w) != 0)
            abort();
    }
    return NULL;
}

static void test_sync_group_commit(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_config c;
    st_small_config(&c, root);
    c.flush_type = STORE_SYNC_FLUSH;
    c.sync_flush_timeout_ms = 2000; /* long enough under sanitizers */
    store_engine *e = st_open(&c);
    st_flush_count w = ST_FLUSH_COUNT_INIT;
    pthread_t th[4];
    producer p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = (producer){e, &w, i, 250};
        pthread_create(&th[i], NULL, produce, &p[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(st_flush_wait(&w, 1000), 1000);
    assert_int_equal(w.ok, 1000);
    store_runtime_stats rs;
    store_runtime_stats_get(e, &rs);
    assert_true(rs.flushed_offset >= rs.commitlog_max_offset);
    /* an end never reached: done(false) after the timeout */
    st_flush_count w2 = ST_FLUSH_COUNT_INIT;
    assert_int_equal(store_wait_flush(e, rs.commitlog_max_offset + 1000000, st_on_flushed, &w2), 0);
    assert_int_equal(st_flush_wait(&w2, 1), 1);
    assert_int_equal(w2.ok, 0);
    /* already durable: done at once on this thread */
    st_flush_count w3 = ST_FLUSH_COUNT_INIT;
    assert_int_equal(store_wait_flush(e, 1, st_on_flushed, &w3), 0);
    assert_int_equal(w3.ok, 1);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void test_index_query(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_config c;
    st_small_config(&c, root);
    store_engine *e = st_open(&c);
    int64_t first_ts = 0;
    for (int i = 0; i < 100; i++) {
        st_msg s;
        char keys[64], uniq[64];
        snprintf(keys, sizeof keys, "order-%d common%s", i % 10, i == 7 ? " seven" : "");
        snprintf(uniq, sizeof uniq, "UNIQ%04d", i);
        st_make(&s, i % 2 ? "QA" : "QB", 0, "t", keys, uniq, 100, i);
        store_put_result r;
        assert_int_equal(store_put(e, &s.m, &r), 0);
        if (i == 0)
            first_ts = r.store_ts;
    }
    store_query_result q;
    int64_t now = store_now_ms_for_tests();
    assert_int_equal(store_query_by_key(e, "QA", "order-3", 64, 0, now + 1000, &q), 0);
    assert_int_equal(q.count, 10); /* 3, 13, ..., 93: all odd -> QA */
    size_t pos = 0;
    int64_t prev = -1;
    for (int i = 0; i < q.count; i++) {
        stored_record d;
        assert_int_equal(stored_record_decode(q.data + pos, q.len - pos, true, &d),
                         STORED_RECORD_OK);
        assert_true(d.phys_offset > prev);
        prev = d.phys_offset;
        assert_memory_equal(d.topic, "QA", 2);
        pos += (size_t)d.total_size;
    }
    assert_true(q.index_last_update_timestamp >= first_ts);
    free(q.data);
    assert_int_equal(store_query_by_key(e, "QB", "order-3", 64, 0, now + 1000, &q), 0);
    assert_int_equal(q.count, 0);
    assert_null(q.data);
    assert_int_equal(store_query_by_key(e, "QA", "UNIQ0007", 64, 0, now + 1000, &q), 0);
    assert_int_equal(q.count, 1);
    free(q.data);
    assert_int_equal(store_query_by_key(e, "QA", "seven", 64, 0, now + 1000, &q), 0);
    assert_int_equal(q.count, 1);
    free(q.data);
    assert_int_equal(store_query_by_key(e, "QA", "common", 3, 0, now + 1000, &q), 0);
    assert_int_equal(q.count, 3);
    free(q.data);
    assert_int_equal(store_query_by_key(e, "QA", "common", 1000, 0, now + 1000, &q), 0);
    assert_int_equal(q.count, 50 > 64 ? 64 : 50);
    free(q.data);
    /* a time window before everything */
    assert_int_equal(store_query_by_key(e, "QA", "common", 64, 0, first_ts - 5000, &q), 0);
    assert_int_equal(q.count, 0);
    /* prefix of a key is not the key */
    assert_int_equal(store_query_by_key(e, "QA", "order-", 64, 0, now + 1000, &q), 0);
    assert_int_equal(q.count, 0);
    store_close(e);
    /* and after reopening */
    e = st_open(&c);
    assert_int_equal(store_query_by_key(e, "QA", "order-3", 64, 0, now + 1000, &q), 0);
    assert_int_equal(q.count, 10);
    free(q.data);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static bool count_queue(void *ud, const char *topic, int32_t qid, int64_t min, int64_t max)
{
    (void)qid;
    (void)min;
    int *n = ud;
    if (strcmp(topic, "L") == 0 && max == 3)
        (*n)++;
    return true;
}

static void test_times_listing_delete(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_config c;
    st_small_config(&c, root);
    c.access_message_in_memory_max_ratio = 0; /* everything behind the end is "in disk" */
    store_engine *e = st_open(&c);
    assert_int_equal(store_offset_by_time(e, "W", 0, 12345), 0);
    assert_int_equal(store_earliest_msg_store_time(e, "W", 0), -1);
    int64_t ts[30];
    for (int i = 0; i < 30; i++) {
        st_msg s;
        st_make(&s, "W", 0, NULL, NULL, NULL, 10, i);
        store_put_result r;
        assert_int_equal(store_put(e, &s.m, &r), 0);
        ts[i] = r.store_ts;
        if (i % 10 == 9) { /* three groups with distinct store times */
            int64_t t0 = store_now_ms_for_tests();
            while (store_now_ms_for_tests() < t0 + 20)
                ;
        }
    }
    assert_int_equal(store_message_store_time(e, "W", 0, 5), ts[5]);
    assert_int_equal(store_message_store_time(e, "W", 0, 30), -1);
    assert_int_equal(store_earliest_msg_store_time(e, "W", 0), ts[0]);
    assert_int_equal(store_offset_by_time(e, "W", 0, ts[0] - 100000), 0);
    assert_int_equal(store_offset_by_time(e, "W", 0, ts[29] + 100000), 29);
    int64_t o = store_offset_by_time(e, "W", 0, ts[10]);
    assert_int_equal(ts[o], ts[10]);
    assert_true(o >= 0 && o < 30);
    assert_true(store_check_in_disk_by_consume_offset(e, "W", 0, 0));
    assert_false(store_check_in_disk_by_consume_offset(e, "W", 0, 99));
    for (int q = 0; q < 4; q++)
        for (int i = 0; i < 3; i++) {
            st_msg s;
            st_make(&s, "L", q, NULL, NULL, NULL, 10, i);
            store_put_result r;
            assert_int_equal(store_put(e, &s.m, &r), 0);
        }
    int n = 0;
    store_for_each_queue(e, count_queue, &n);
    assert_int_equal(n, 4);
    assert_int_equal(store_delete_topic(e, "L"), 0);
    n = 0;
    store_for_each_queue(e, count_queue, &n);
    assert_int_equal(n, 0);
    char p[4200];
    snprintf(p, sizeof p, "%s/consumequeue/L", root);
    struct stat st;
    assert_int_not_equal(stat(p, &st), 0);
    assert_int_equal(store_max_offset(e, "L", 0), 0);
    assert_int_equal(store_max_offset(e, "W", 0), 30);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void test_retention(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_config c;
    st_small_config(&c, root);
    c.file_reserved_hours = 0;
    c.cq_file_size = 2000; /* 100 entries per file */
    store_engine *e = st_open(&c);
    for (int i = 0; i < 400; i++) {
        st_msg s;
        st_make(&s, "X", 0, NULL, "k", NULL, 600, i);
        store_put_result r;
        assert_int_equal(store_put(e, &s.m, &r), 0);
    }
    store_runtime_stats rs;
    store_runtime_stats_get(e, &rs);
    assert_int_equal(rs.commitlog_min_offset, 0);
    int64_t max = rs.commitlog_max_offset;
    store_clean_expired(e, true);
    store_runtime_stats_get(e, &rs);
    /* everything but the last segment went (at most 10 per run) */
    assert_true(rs.commitlog_min_offset > 0);
    assert_int_equal(rs.commitlog_min_offset % 65536, 0);
    int64_t min = store_min_offset(e, "X", 0);
    assert_true(min > 0);
    store_cq_entry en;
    assert_int_equal(store_read_cq(e, "X", 0, min, &en, 1), 1);
    assert_true(en.phys_offset >= rs.commitlog_min_offset);
    assert_int_equal(store_read_cq(e, "X", 0, min - 1, &en, 1), 1);
    assert_true(en.phys_offset < rs.commitlog_min_offset);
    store_get_result g;
    assert_int_equal(store_get_messages(e, "X", 0, 0, 32, NULL, NULL, NULL, &g), 0);
    assert_int_equal(g.status, STORE_GET_OFFSET_TOO_SMALL);
    assert_int_equal(g.next_begin_offset, min);
    assert_int_equal(store_get_messages(e, "X", 0, min, 32, NULL, NULL, NULL, &g), 0);
    assert_int_equal(g.status, STORE_GET_FOUND);
    free(g.data);
    uint8_t *rec;
    size_t len;
    assert_int_equal(store_read_record(e, 0, &rec, &len), -ENOENT);
    char p[4200];
    snprintf(p, sizeof p, "%s/commitlog/%020d", root, 0);
    assert_int_not_equal(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/consumequeue/X/0/%020d", root, 0);
    assert_int_not_equal(access(p, F_OK), 0);
    store_close(e);
    /* the minimums survive a reopen (correctMinOffset at start) */
    e = st_open(&c);
    store_runtime_stats_get(e, &rs);
    assert_int_equal(rs.commitlog_max_offset, max);
    assert_int_equal(store_min_offset(e, "X", 0), min);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void test_periodic_retention_at_delete_hour(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_config c;
    st_small_config(&c, root);
    c.file_reserved_hours = 0;
    c.clean_interval_ms = 20;
    /* every hour is a deleteWhen hour */
    c.delete_when = "00;01;02;03;04;05;06;07;08;09;10;11;12;13;14;15;16;17;18;19;20;21;22;23";
    store_engine *e = st_open(&c);
    for (int i = 0; i < 300; i++) {
        st_msg s;
        st_make(&s, "P", 0, NULL, NULL, NULL, 600, i);
        store_put_result r;
        assert_int_equal(store_put(e, &s.m, &r), 0);
    }
    store_runtime_stats rs;
    int64_t deadline = st_mono_ms() + 20000;
    do {
        store_runtime_stats_get(e, &rs);
        if (rs.commitlog_min_offset > 0)
            break;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    } while (st_mono_ms() < deadline);
    assert_true(rs.commitlog_min_offset > 0);
    assert_true(store_min_offset(e, "P", 0) > 0);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void test_disk_fault(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_config c;
    st_small_config(&c, root);
    store_engine *e = st_open(&c);
    st_msg s;
    st_make(&s, "F", 0, NULL, NULL, NULL, 1000, 0);
    store_put_result r;
    assert_int_equal(store_put(e, &s.m, &r), 0);
    store_test_inject_file_error(e, ENOSPC);
    int refused = 0, ok = 1;
    for (int i = 0; i < 200; i++) {
        assert_int_equal(store_put(e, &s.m, &r), 0);
        if (r.status == STORE_PUT_OK)
            ok++;
        else
            refused++;
    }
    assert_true(refused > 0);
    assert_true(r.status == STORE_PUT_SERVICE_NOT_AVAILABLE);
    store_runtime_stats rs;
    store_runtime_stats_get(e, &rs);
    assert_false(rs.writeable);
    /* reads keep working */
    assert_int_equal(store_max_offset(e, "F", 0), ok);
    store_get_result g;
    assert_int_equal(store_get_messages(e, "F", 0, 0, 4, NULL, NULL, NULL, &g), 0);
    assert_int_equal(g.status, STORE_GET_FOUND);
    free(g.data);
    /* the fault clears: writes resume on the next re-check */
    store_test_inject_file_error(e, 0);
    store_test_recheck_disk(e);
    store_runtime_stats_get(e, &rs);
    assert_true(rs.writeable);
    assert_int_equal(store_put(e, &s.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_OK);
    assert_int_equal(r.queue_offset, ok);
    store_close(e);
    /* disk usage above the warning ratio: refused until it falls */
    c.disk_warning_ratio = 0;
    e = st_open(&c);
    store_test_recheck_disk(e);
    assert_int_equal(store_put(e, &s.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_SERVICE_NOT_AVAILABLE);
    assert_int_equal(store_max_offset(e, "F", 0), ok + 1);
    store_close(e);
    st_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync_group_commit),
        cmocka_unit_test(test_index_query),
        cmocka_unit_test(test_times_listing_delete),
        cmocka_unit_test(test_retention),
        cmocka_unit_test(test_periodic_retention_at_delete_hour),
        cmocka_unit_test(test_disk_fault),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
