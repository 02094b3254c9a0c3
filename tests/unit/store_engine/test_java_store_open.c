/* test_java_store_open.c — opens a store in the state a Java 4.9.8 broker
 * leaves it, built from records a real 4.9.8 broker wrote (the first five
 * records of the anchor broker's commit log, recorded in tests/vectors: the
 * VIEW record at offset 0 and the four PULL records at 226, 440, 654, 868):
 * one commit-log segment, the RecTopic/3 consume queue Java wrote (the
 * RecTopic/2 entry not yet dispatched, as Java's reput lag can leave it), no
 * index, no state file of ours. The engine must serve all five records
 * byte-exact, rebuild the missing queue entry and the index keys, continue
 * the queue offsets, and never rewrite Java's bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "store_test_util.h"

static void write_file(const char *path, const void *data, size_t len, size_t size)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)size), 0);
    assert_int_equal(pwrite(fd, data, len, 0), (ssize_t)len);
    close(fd);
}

static void test_open_a_java_written_store(void **state)
{
    (void)state;
    size_t vl, pl;
    uint8_t *view = st_vector_body("33-view-message-by-id.resp.bin", &vl);
    uint8_t *pull = st_vector_body("11-pull-message.found-4.resp.bin", &pl);
    assert_int_equal(vl, 226);
    uint8_t log[2048];
    memcpy(log, view, vl);
    memcpy(log + vl, pull, pl);
    size_t end = vl + pl;
    assert_int_equal(end, 0x43a);

    char *root = st_tmpdir();
    char p[4300];
    snprintf(p, sizeof p, "%s/commitlog", root);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/commitlog/%020d", root, 0);
    write_file(p, log, end, 65536);
    /* RecTopic/3 as the anchor broker wrote it (§10.15.3, verified) */
    uint8_t cq[80];
    int32_t tag_b = st_java_hash("TagB");
    for (int i = 0; i < 4; i++) {
        stored_put_be64(cq + i * 20, (uint64_t)(226 + 214 * i));
        stored_put_be32(cq + i * 20 + 8, 214);
        stored_put_be64(cq + i * 20 + 12, (uint64_t)(int64_t)tag_b);
    }
    snprintf(p, sizeof p, "%s/consumequeue/RecTopic/3", root);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
    assert_int_equal(system(cmd), 0);
    snprintf(p, sizeof p, "%s/consumequeue/RecTopic/3/%020d", root, 0);
    write_file(p, cq, sizeof cq, 120000);

    store_config c;
    st_small_config(&c, root);
    store_engine *e = NULL;
    char err[256];
    assert_int_equal(store_open(&c, &e, err, sizeof err), 0);
    assert_int_equal(store_max_offset(e, "RecTopic", 3), 4);
    assert_int_equal(store_max_offset(e, "RecTopic", 2), 1); /* rebuilt */
    store_get_result g;
    assert_int_equal(store_get_messages(e, "RecTopic", 3, 0, 32, NULL, NULL, NULL, &g), 0);
    assert_int_equal(g.status, STORE_GET_FOUND);
    assert_int_equal(g.msg_count, 4);
    assert_int_equal(g.len, pl);
    assert_memory_equal(g.data, pull, pl); /* byte-exact, as a Java broker serves them */
    free(g.data);
    assert_int_equal(store_get_messages(e, "RecTopic", 2, 0, 32, NULL, NULL, NULL, &g), 0);
    assert_int_equal(g.msg_count, 1);
    assert_memory_equal(g.data, view, vl);
    free(g.data);
    store_query_result q;
    assert_int_equal(store_query_by_key(e, "RecTopic", "KEY-A", 64, 0, INT64_MAX, &q), 0);
    assert_int_equal(q.count, 1);
    assert_memory_equal(q.data, view, vl);
    free(q.data);
    assert_int_equal(store_query_by_key(e, "RecTopic", "BATCH-2", 64, 0, INT64_MAX, &q), 0);
    assert_int_equal(q.count, 1);
    free(q.data);
    /* new messages continue the log and the queue */
    st_msg s;
    st_make(&s, "RecTopic", 3, "TagB", NULL, NULL, 20, 0);
    store_put_result r;
    assert_int_equal(store_put(e, &s.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_OK);
    assert_int_equal(r.phys_offset, (int64_t)end);
    assert_int_equal(r.queue_offset, 4);
    store_close(e);
    /* Java's bytes untouched */
    snprintf(p, sizeof p, "%s/commitlog/%020d", root, 0);
    int fd = open(p, O_RDONLY);
    uint8_t back[2048];
    assert_int_equal(pread(fd, back, end, 0), (ssize_t)end);
    close(fd);
    assert_memory_equal(back, log, end);
    free(view);
    free(pull);
    st_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_a_java_written_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
