/* test_corrupt_store.c — a store whose files were damaged (random bytes in
 * commit-log records, consume-queue entries, index header and slots, state
 * file and checkpoint; with and without the abort marker) opens or refuses
 * with a reason, never crashes or hangs, never writes outside its
 * directory, and every read on it stays in bounds (ASan/UBSan build). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "store_test_util.h"

static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

/* Flip `n` random bytes of `path` within its first `span` bytes. */
static void damage(const char *path, unsigned *seed, int n, off_t span)
{
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return;
    struct stat st;
    fstat(fd, &st);
    if (span > st.st_size)
        span = st.st_size;
    for (int i = 0; i < n && span > 0; i++) {
        off_t at = (off_t)(rnd(seed) % (unsigned)span);
        uint8_t b = (uint8_t)rnd(seed);
        if (pwrite(fd, &b, 1, at) != 1)
            break;
    }
    close(fd);
}

static void for_files(const char *dir, unsigned *seed, int n, off_t span)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char p[4300];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(p, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            for_files(p, seed, n, span);
        else
            damage(p, seed, n, span);
    }
    closedir(d);
}

static void build(const char *root, store_config *c)
{
    st_small_config(c, root);
    store_engine *e = NULL;
    char err[256];
    assert_int_equal(store_open(c, &e, err, sizeof err), 0);
    for (int i = 0; i < 400; i++) {
        st_msg s;
        char keys[32];
        snprintf(keys, sizeof keys, "k%d", i % 50);
        st_make(&s, i % 2 ? "A" : "B", i % 3, "t", keys, keys, 100 + (size_t)(i % 700), i);
        store_put_result r;
        assert_int_equal(store_put(e, &s.m, &r), 0);
    }
    store_close(e);
}

static void exercise(store_engine *e)
{
    const char *topics[] = {"A", "B"};
    for (int t = 0; t < 2; t++)
        for (int q = 0; q < 3; q++) {
            int64_t off = store_min_offset(e, topics[t], q);
            for (int k = 0; k < 50; k++) {
                store_get_result g;
                if (store_get_messages(e, topics[t], q, off, 32, NULL, NULL, NULL, &g) != 0)
                    break;
                free(g.data);
                if (g.next_begin_offset <= off)
                    break;
                off = g.next_begin_offset;
            }
            store_offset_by_time(e, topics[t], q, store_now_ms_for_tests());
            store_earliest_msg_store_time(e, topics[t], q);
            store_cq_entry en[8];
            size_t n = store_read_cq(e, topics[t], q, 0, en, 8);
            for (size_t i = 0; i < n; i++) {
                uint8_t *rec;
                size_t len;
                if (store_read_record(e, en[i].phys_offset, &rec, &len) == 0)
                    free(rec);
            }
            store_query_result qr;
            if (store_query_by_key(e, topics[t], "k7", 64, 0, INT64_MAX, &qr) == 0)
                free(qr.data);
        }
    st_msg s;
    st_make(&s, "A", 0, "t", "k1", NULL, 100, 1);
    store_put_result r;
    store_put(e, &s.m, &r);
}

static void test_damaged_stores_never_crash(void **state)
{
    (void)state;
    char *base = st_tmpdir();
    char pristine[4200];
    snprintf(pristine, sizeof pristine, "%s/pristine", base);
    store_config c;
    build(pristine, &c);
    unsigned seed =
        getenv("STORE_CORRUPT_SEED") ? (unsigned)atoi(getenv("STORE_CORRUPT_SEED")) : 12345;
    int rounds = getenv("STORE_CORRUPT_ROUNDS") ? atoi(getenv("STORE_CORRUPT_ROUNDS")) : 24;
    int opened = 0;
    for (int round = 0; round < rounds; round++) {
        char root[4200], cmd[9000];
        snprintf(root, sizeof root, "%s/r%d", base, round);
        snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", pristine, root);
        assert_int_equal(system(cmd), 0);
        char p[4300];
        int what = round % 6;
        if (what == 0 || what == 5) { /* records near the end of the log */
            snprintf(p, sizeof p, "%s/commitlog", root);
            for_files(p, &seed, 6, 65536);
        }
        if (what == 1 || what == 5) {
            snprintf(p, sizeof p, "%s/consumequeue", root);
            for_files(p, &seed, 8, 3000);
        }
        if (what == 2 || what == 5) {
            snprintf(p, sizeof p, "%s/index", root);
            for_files(p, &seed, 40, 40 + 4000);
        }
        if (what == 3 || what == 5) {
            snprintf(p, sizeof p, "%s/rmqhost_store_state", root);
            damage(p, &seed, 4, 140);
            snprintf(p, sizeof p, "%s/checkpoint", root);
            damage(p, &seed, 4, 24);
        }
        if (round % 2) {
            snprintf(p, sizeof p, "%s/abort", root);
            int fd = open(p, O_CREAT | O_WRONLY, 0644);
            close(fd);
        }
        store_config rc = c;
        rc.root_dir = root;
        store_engine *e = NULL;
        char err[256];
        if (store_open(&rc, &e, err, sizeof err) == 0) {
            opened++;
            exercise(e);
            store_close(e);
        } else {
            assert_true(err[0] != 0); /* a reason */
        }
        st_rmrf(root);
    }
    assert_true(opened > 0);
    /* nothing was created outside the test directory's stores */
    DIR *d = opendir(base);
    struct dirent *de;
    int entries = 0;
    while ((de = readdir(d)) != NULL)
        entries += de->d_name[0] != '.';
    closedir(d);
    assert_int_equal(entries, 1);
    st_rmrf(base);
    free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_damaged_stores_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
