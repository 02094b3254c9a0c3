/* test_cq_mapping_cap.c — consume-queue files are mapped on first use and
 * the least recently used unmapped past max_mapped_cq_files: with 100,000
 * topics x 4 queues every file mapped would pass the kernel's
 * vm.max_map_count (65530) and keep their pages in the RSS. Messages of
 * every queue read back correctly whether their file was unmapped or not,
 * before and after a reopen (which maps nothing up front). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store_test_util.h"

#define TOPICS 200
#define CAP 16

/* Mappings of this store's consume-queue files in this process. */
static int mapped_queue_files(const char *root)
{
    FILE *fp = fopen("/proc/self/maps", "r");
    assert_non_null(fp);
    char needle[4200], line[8192];
    snprintf(needle, sizeof needle, "%s/consumequeue/", root);
    int n = 0;
    while (fgets(line, sizeof line, fp))
        n += strstr(line, needle) != NULL;
    fclose(fp);
    return n;
}

static store_engine *open_capped(const char *root)
{
    store_config c;
    st_small_config(&c, root);
    c.max_mapped_cq_files = CAP;
    return st_open(&c);
}

/* The housekeeper trims within its 10 ms loop: wait for it. */
static int settled_mappings(const char *root)
{
    int64_t deadline = st_mono_ms() + 10000;
    int n = mapped_queue_files(root);
    while (n > CAP && st_mono_ms() < deadline) {
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
        n = mapped_queue_files(root);
    }
    return n;
}

static void read_back_all(store_engine *e)
{
    for (int t = 0; t < TOPICS; t++) {
        char topic[32];
        snprintf(topic, sizeof topic, "Cap%d", t);
        assert_int_equal(store_max_offset(e, topic, t % 4), 2);
        store_get_result r;
        assert_int_equal(store_get_messages(e, topic, t % 4, 0, 32, NULL, NULL, NULL, &r), 0);
        assert_int_equal(r.msg_count, 2);
        stored_record rec;
        assert_int_equal(stored_record_decode(r.data, r.len, true, &rec), STORED_RECORD_OK);
        assert_int_equal(rec.queue_id, t % 4);
        assert_int_equal(rec.body_len, 40 + t % 7);
        assert_memory_equal(rec.topic, topic, strlen(topic));
        free(r.data);
    }
}

static void queue_files_mapped_stay_under_the_cap(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_capped(root);
    st_msg m;
    for (int round = 0; round < 2; round++)
        for (int t = 0; t < TOPICS; t++) {
            char topic[32];
            snprintf(topic, sizeof topic, "Cap%d", t);
            st_make(&m, topic, t % 4, "T", NULL, NULL, (size_t)(40 + t % 7), t);
            store_put_result r;
            assert_int_equal(store_put(e, &m.m, &r), 0);
            assert_int_equal(r.status, STORE_PUT_OK);
        }
    int n = settled_mappings(root);
    fprintf(stderr, "%d queue files, %d mapped after the puts\n", TOPICS, n);
    assert_true(n <= CAP);
    read_back_all(e); /* maps the cold ones again */
    assert_true(settled_mappings(root) <= CAP);
    store_close(e);
    e = open_capped(root);
    assert_int_equal(mapped_queue_files(root), 0); /* nothing mapped up front */
    read_back_all(e);
    assert_true(settled_mappings(root) <= CAP);
    store_close(e);
    st_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queue_files_mapped_stay_under_the_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
