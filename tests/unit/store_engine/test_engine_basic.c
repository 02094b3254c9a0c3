/* test_engine_basic.c — the engine on small files: puts and batches get
 * consecutive queue offsets and the records read back byte-exact; segments
 * roll with a blank record and never split a record; getMessage statuses,
 * nextBeginOffset, batch limits and both filters; offsets and store times;
 * a clean close and reopen keep everything; the lock excludes a second
 * opener. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <errno.h>
#include <sys/stat.h>

#include "store_test_util.h"

static store_engine *open_small(const char *root)
{
    store_config c;
    st_small_config(&c, root);
    return st_open(&c);
}

static void put_n(store_engine *e, const char *topic, int32_t qid, int n, size_t body, int seed0)
{
    for (int i = 0; i < n; i++) {
        st_msg s;
        char uniq[64];
        snprintf(uniq, sizeof uniq, "U-%s-%d-%d", topic, qid, seed0 + i);
        st_make(&s, topic, qid, (i % 2) ? "TagB" : "TagA", "k1 k2", uniq, body, seed0 + i);
        store_put_result r;
        assert_int_equal(store_put(e, &s.m, &r), 0);
        assert_int_equal(r.status, STORE_PUT_OK);
    }
}

static void test_put_get_roundtrip_and_segments(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_small(root);
    int64_t last_end = 0;
    for (int i = 0; i < 300; i++) {
        st_msg s;
        st_make(&s, "T1", 1, "TagA", NULL, NULL, 300 + (size_t)i, i);
        store_put_result r;
        assert_int_equal(store_put(e, &s.m, &r), 0);
        assert_int_equal(r.status, STORE_PUT_OK);
        assert_int_equal(r.queue_offset, i);
        assert_true(r.phys_offset >= last_end);
        /* never across a segment boundary */
        assert_int_equal(r.phys_offset / 65536, (r.end_offset - 1) / 65536);
        last_end = r.end_offset;
        uint8_t *rec;
        size_t len;
        assert_int_equal(store_read_record(e, r.phys_offset, &rec, &len), 0);
        stored_record d;
        assert_int_equal(stored_record_decode(rec, len, true, &d), STORED_RECORD_OK);
        assert_int_equal(d.queue_offset, i);
        assert_int_equal(d.phys_offset, r.phys_offset);
        assert_int_equal(d.store_ts, r.store_ts);
        assert_int_equal(d.body_len, 300 + i);
        assert_memory_equal(d.body, s.body, d.body_len);
        free(rec);
    }
    assert_int_equal(store_max_offset(e, "T1", 1), 300);
    assert_int_equal(store_min_offset(e, "T1", 1), 0);
    assert_int_equal(store_max_offset(e, "T1", 2), 0);
    assert_int_equal(store_max_offset(e, "nope", 0), 0);
    /* the segments: 20-digit names, exact sizes, a blank at each end */
    for (int64_t seg = 0; seg * 65536 < last_end; seg++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/commitlog/%020lld", root, (long long)(seg * 65536));
        struct stat st;
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_size, 65536);
    }
    store_cq_entry en[400];
    assert_int_equal(store_read_cq(e, "T1", 1, 0, en, 400), 300);
    assert_int_equal(en[0].phys_offset, 0);
    assert_int_equal(en[0].tags_code, st_java_hash("TagA"));
    store_close(e);
    st_rmrf(root);
    free(root);
}

static bool only_tag_b(void *ud, int64_t tags)
{
    (void)ud;
    return tags == st_java_hash("TagB");
}

static bool reject_all(void *ud, const uint8_t *r, size_t n)
{
    (void)ud;
    (void)r;
    (void)n;
    return false;
}

static void test_get_messages_rules(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_small(root);
    store_get_result g;
    assert_int_equal(store_get_messages(e, "G", 0, 0, 32, NULL, NULL, NULL, &g), 0);
    assert_int_equal(g.status, STORE_GET_NO_MESSAGE_IN_QUEUE);
    assert_int_equal(g.next_begin_offset, 0);
    put_n(e, "G", 0, 40, 100, 0);
    assert_int_equal(store_get_messages(e, "G", 0, 0, 32, NULL, NULL, NULL, &g), 0);
    assert_int_equal(g.status, STORE_GET_FOUND);
    assert_int_equal(g.msg_count, 32);
    assert_int_equal(g.next_begin_offset, 32);
    assert_int_equal(g.max_offset, 40);
    /* the records are back to back, in queue order */
    size_t pos = 0;
    for (int i = 0; i < 32; i++) {
        stored_record d;
        assert_int_equal(stored_record_decode(g.data + pos, g.len - pos, true, &d),
                         STORED_RECORD_OK);
        assert_int_equal(d.queue_offset, i);
        pos += (size_t)d.total_size;
    }
    assert_int_equal(pos, g.len);
    free(g.data);
    assert_int_equal(store_get_messages(e, "G", 0, 40, 32, NULL, NULL, NULL, &g), 0);
    assert_int_equal(g.status, STORE_GET_OFFSET_OVERFLOW_ONE);
    assert_int_equal(g.next_begin_offset, 40);
    assert_int_equal(store_get_messages(e, "G", 0, 45, 32, NULL, NULL, NULL, &g), 0);
    assert_int_equal(g.status, STORE_GET_OFFSET_OVERFLOW_BADLY);
    assert_int_equal(g.next_begin_offset, 40); /* the max, even when min is 0 (4.9.8) */
    /* tag filter: every other one; nextBeginOffset covers the skipped */
    assert_int_equal(store_get_messages(e, "G", 0, 0, 5, only_tag_b, NULL, NULL, &g), 0);
    assert_int_equal(g.status, STORE_GET_FOUND);
    assert_int_equal(g.msg_count, 5);
    assert_int_equal(g.next_begin_offset, 10);
    free(g.data);
    assert_int_equal(store_get_messages(e, "G", 0, 0, 5, NULL, reject_all, NULL, &g), 0);
    assert_int_equal(g.status, STORE_GET_NO_MATCHED_MESSAGE);
    assert_int_equal(g.next_begin_offset, 40);
    /* the 256 KiB in-memory byte limit, but the first is always returned */
    put_n(e, "Big", 0, 10, 2000, 0);
    assert_int_equal(store_get_messages(e, "Big", 0, 0, 0, NULL, NULL, NULL, &g), 0);
    assert_int_equal(g.msg_count, 1);
    free(g.data);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void test_batch_and_transactions(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_small(root);
    st_msg s[5];
    store_msg m[5];
    for (int i = 0; i < 5; i++) {
        st_make(&s[i], "B", 3, "TagB", NULL, NULL, 50, i);
        m[i] = s[i].m;
    }
    int64_t phys[5];
    store_put_result r;
    put_n(e, "B", 3, 2, 10, 0);
    assert_int_equal(store_put_batch(e, m, 5, phys, &r), 0);
    assert_int_equal(r.status, STORE_PUT_OK);
    assert_int_equal(r.queue_offset, 2);
    assert_int_equal(r.phys_offset, phys[0]);
    for (int i = 1; i < 5; i++)
        assert_true(phys[i] > phys[i - 1]);
    assert_int_equal(store_max_offset(e, "B", 3), 7);
    store_cq_entry en[5];
    assert_int_equal(store_read_cq(e, "B", 3, 2, en, 5), 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(en[i].phys_offset, phys[i]);
        assert_int_equal(en[i].tags_code, st_java_hash("TagB"));
    }
    /* a PREPARED half message: queue offset 0, no consume-queue entry */
    st_msg h;
    st_make(&h, "B", 3, NULL, NULL, NULL, 10, 9);
    h.m.sys_flag = STORED_SYSFLAG_TX_PREPARED;
    assert_int_equal(store_put(e, &h.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_OK);
    assert_int_equal(r.queue_offset, 0);
    assert_int_equal(store_max_offset(e, "B", 3), 7);
    /* illegal inputs */
    st_msg bad;
    char longt[200];
    memset(longt, 'x', 150);
    longt[150] = 0;
    st_make(&bad, longt, 0, NULL, NULL, NULL, 10, 0);
    assert_int_equal(store_put(e, &bad.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_MESSAGE_ILLEGAL);
    const char *paths[] = {"a/b", "..", "."};
    for (int i = 0; i < 3; i++) { /* topics name directories */
        st_make(&bad, paths[i], 0, NULL, NULL, NULL, 10, 0);
        assert_int_equal(store_put(e, &bad.m, &r), 0);
        assert_int_equal(r.status, STORE_PUT_MESSAGE_ILLEGAL);
    }
    st_make(&bad, "B", -1, NULL, NULL, NULL, 10, 0);
    assert_int_equal(store_put(e, &bad.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_MESSAGE_ILLEGAL);
    st_make(&bad, "B", 0, NULL, NULL, NULL, 10, 0);
    bad.m.props_len = 40000;
    assert_int_equal(store_put(e, &bad.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_PROPERTIES_SIZE_EXCEEDED);
    st_make(&bad, "B", 0, NULL, NULL, NULL, 10, 0);
    bad.m.body_len = 70000; /* > segment size */
    static char big[70000];
    bad.m.body = big;
    assert_int_equal(store_put(e, &bad.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_MESSAGE_ILLEGAL);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void test_reopen_after_clean_close(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_small(root);
    put_n(e, "R", 0, 200, 500, 0);
    put_n(e, "R", 1, 50, 100, 0);
    store_config c;
    st_small_config(&c, root);
    store_engine *e2 = NULL;
    char err[256];
    assert_int_equal(store_open(&c, &e2, err, sizeof err), -EBUSY);
    c.commitlog_dir = "/tmp/a;/tmp/b";
    assert_int_equal(store_open(&c, &e2, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "not supported"));
    c.commitlog_dir = NULL;
    int64_t end = 0;
    store_runtime_stats rs;
    store_runtime_stats_get(e, &rs);
    end = rs.commitlog_max_offset;
    store_close(e);
    char p[4200];
    snprintf(p, sizeof p, "%s/abort", root);
    assert_int_not_equal(access(p, F_OK), 0);
    e = open_small(root);
    assert_int_equal(store_max_offset(e, "R", 0), 200);
    assert_int_equal(store_max_offset(e, "R", 1), 50);
    store_runtime_stats_get(e, &rs);
    assert_int_equal(rs.commitlog_max_offset, end);
    assert_int_equal(access(p, F_OK), 0);
    put_n(e, "R", 0, 10, 500, 1000);
    assert_int_equal(store_max_offset(e, "R", 0), 210);
    store_get_result g;
    assert_int_equal(store_get_messages(e, "R", 0, 195, 32, NULL, NULL, NULL, &g), 0);
    assert_int_equal(g.msg_count, 15);
    free(g.data);
    store_close(e);
    st_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_roundtrip_and_segments),
        cmocka_unit_test(test_get_messages_rules),
        cmocka_unit_test(test_batch_and_transactions),
        cmocka_unit_test(test_reopen_after_clean_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
