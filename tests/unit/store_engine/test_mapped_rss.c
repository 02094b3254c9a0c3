/* test_mapped_rss.c — the store's file mappings leave the process's RSS
 * when they are not in use (issue 21 §2: 100,000 topics x 4 queues within
 * 256 MB): flushed commit log more than commitLogMappedKeep behind the
 * flushed end, and the pages of a consume-queue file idle for a whole
 * sweep pass. The pages stay in the page cache and every message still
 * reads back intact; with the keep at 0 the log stays mapped. Measured as
 * the Rss that /proc/self/smaps reports for the store's own mappings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <time.h>

#include "store_test_util.h"

#define SEG (1024 * 1024)
#define LOG_MSGS 12000 /* ~12 MiB of 1 KiB messages: 12 segments */
#define TOPICS 200

/* kB resident in this process's mappings whose file path contains needle;
 * *maps counts those mappings */
static long mapped_rss_kb(const char *needle, int *maps)
{
    FILE *fp = fopen("/proc/self/smaps", "r");
    assert_non_null(fp);
    char line[8192];
    bool in = false;
    long kb = 0;
    int n = 0;
    while (fgets(line, sizeof line, fp)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = strstr(line, needle) != NULL;
            n += in;
            continue;
        }
        long v;
        if (in && sscanf(line, "Rss: %ld kB", &v) == 1)
            kb += v;
    }
    fclose(fp);
    if (maps)
        *maps = n;
    return kb;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static store_engine *open_log(const char *root, int64_t mapped_keep)
{
    store_config c;
    st_small_config(&c, root);
    c.commitlog_file_size = SEG;
    c.page_cache_keep_bytes = 0; /* nothing leaves the page cache: only the mapping */
    c.mapped_keep_bytes = mapped_keep;
    c.flush_interval_ms = 10;
    return st_open(&c);
}

static void first_segment(const char *root, char *out, size_t cap)
{
    snprintf(out, cap, "%s/commitlog/%020d", root, 0);
}

static void flushed_log_leaves_the_rss(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_log(root, 2 * SEG);
    char seg0[4200];
    first_segment(root, seg0, sizeof seg0);
    st_put_seq(e, "Unmap", LOG_MSGS, 1000);
    /* the housekeeper unmaps behind the flushed end: poll with a deadline */
    int maps = 0;
    int64_t deadline = st_mono_ms() + 20000;
    long kb;
    while ((kb = mapped_rss_kb(seg0, &maps)) > 0 && st_mono_ms() < deadline)
        pause_ms(20);
    fprintf(stderr, "first segment: %ld kB resident, %d mapping(s)\n", kb, maps);
    assert_int_equal(maps, 1); /* still mapped */
    assert_int_equal(kb, 0);
    st_read_seq(e, "Unmap", LOG_MSGS, 1000); /* maps the pages again from the page cache */
    assert_true(mapped_rss_kb(seg0, NULL) > 0);
    store_close(e);
    e = open_log(root, 2 * SEG);
    st_read_seq(e, "Unmap", LOG_MSGS, 1000);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void keep_zero_leaves_the_log_mapped(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_log(root, 0);
    char seg0[4200];
    first_segment(root, seg0, sizeof seg0);
    st_put_seq(e, "Unmap", LOG_MSGS, 1000);
    pause_ms(300); /* time for the housekeeper to act if it (wrongly) would */
    long kb = mapped_rss_kb(seg0, NULL);
    fprintf(stderr, "first segment with keep 0: %ld kB resident\n", kb);
    assert_true(kb >= SEG / 1024 / 2);
    st_read_seq(e, "Unmap", LOG_MSGS, 1000);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void read_queues(store_engine *e)
{
    for (int t = 0; t < TOPICS; t++) {
        char topic[32];
        snprintf(topic, sizeof topic, "Idle%d", t);
        assert_int_equal(store_max_offset(e, topic, t % 4), 1);
        store_get_result r;
        assert_int_equal(store_get_messages(e, topic, t % 4, 0, 32, NULL, NULL, NULL, &r), 0);
        assert_int_equal(r.msg_count, 1);
        stored_record rec;
        assert_int_equal(stored_record_decode(r.data, r.len, true, &rec), STORED_RECORD_OK);
        assert_int_equal(rec.queue_id, t % 4);
        assert_int_equal(rec.body_len, 40 + t % 7);
        assert_memory_equal(rec.topic, topic, strlen(topic));
        free(r.data);
    }
}

/* one-message queues (the 100,000-topic shape): once idle for a pass their
 * files keep their mappings but no resident page */
static void idle_queue_files_leave_the_rss(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_config c;
    st_small_config(&c, root);
    store_engine *e = st_open(&c);
    st_msg m;
    for (int t = 0; t < TOPICS; t++) {
        char topic[32];
        snprintf(topic, sizeof topic, "Idle%d", t);
        st_make(&m, topic, t % 4, "T", NULL, NULL, (size_t)(40 + t % 7), t);
        store_put_result r;
        assert_int_equal(store_put(e, &m.m, &r), 0);
        assert_int_equal(r.status, STORE_PUT_OK);
    }
    char needle[4200];
    snprintf(needle, sizeof needle, "%s/consumequeue/", root);
    int maps = 0;
    long kb = mapped_rss_kb(needle, &maps);
    fprintf(stderr, "%d queue files mapped, %ld kB resident after the puts\n", maps, kb);
    assert_int_equal(maps, TOPICS);
    assert_true(kb >= TOPICS * 4); /* each wrote its first page */
    int64_t deadline = st_mono_ms() + 30000;
    while ((kb = mapped_rss_kb(needle, &maps)) > 0 && st_mono_ms() < deadline)
        pause_ms(50);
    fprintf(stderr, "%d queue files mapped, %ld kB resident once idle\n", maps, kb);
    assert_int_equal(maps, TOPICS);
    assert_int_equal(kb, 0);
    read_queues(e); /* the entries read back from the page cache */
    assert_true(mapped_rss_kb(needle, NULL) >= TOPICS * 4);
    store_close(e);
    e = st_open(&c);
    read_queues(e);
    store_close(e);
    st_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flushed_log_leaves_the_rss),
        cmocka_unit_test(keep_zero_leaves_the_log_mapped),
        cmocka_unit_test(idle_queue_files_leave_the_rss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
