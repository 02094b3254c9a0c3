/* test_java_layout.c — proves the on-disk layout is Java 4.9.8's (§10.15) by
 * re-reading a written and cleanly closed store with an independent reader
 * written from the spec alone (no engine or codec code): segment names and
 * exact sizes, record fields at their byte offsets, blank records
 * (0xCBD43194, size = bytes left) where a record did not fit, zeros after
 * the last record; consume-queue entries (offset, TOTALSIZE, tagsCode) per
 * queue with zeros after the last; the index file's size, name, header and
 * slot chains; the 4096-byte checkpoint; no abort, `lock` holding "lock". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <zlib.h>

#include "store_test_util.h"

#define CL_SIZE 65536
#define CQ_SIZE 120000
#define SLOTS 1000
#define ENTRIES 4000

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint64_t be64(const uint8_t *p)
{
    return ((uint64_t)be32(p) << 32) | be32(p + 4);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    struct stat st;
    fstat(fd, &st);
    uint8_t *b = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, b + got, (size_t)st.st_size - got);
        assert_true(n > 0);
        got += (size_t)n;
    }
    close(fd);
    *len = got;
    return b;
}

typedef struct rec_info {
    int64_t phys;
    int32_t size;
    int32_t qid;
    int64_t qoff;
    int64_t store_ts;
    char topic[32];
    char tags[32];
    char keys[64];
    char uniq[64];
} rec_info;

static rec_info recs[4000];
static int nrec;

/* value of name in a properties string (last wins, empty dropped) */
static void prop(const uint8_t *p, size_t len, const char *name, char *out, size_t cap)
{
    out[0] = 0;
    size_t i = 0, nl = strlen(name);
    while (i < len) {
        size_t j = i;
        while (j < len && p[j] != 2)
            j++;
        size_t k = i;
        while (k < j && p[k] != 1)
            k++;
        if (k < j && k > i && k + 1 < j && k - i == nl && memcmp(p + i, name, nl) == 0) {
            size_t vl = j - k - 1 < cap - 1 ? j - k - 1 : cap - 1;
            memcpy(out, p + k + 1, vl);
            out[vl] = 0;
        }
        i = j + 1;
    }
}

static int32_t jhash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++)
        h = h * 31u + (uint8_t)*s;
    return (int32_t)h;
}

static void read_commitlog(const char *root, int64_t *end_out, int64_t *last_ts)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/commitlog", root);
    int64_t off = 0;
    nrec = 0;
    for (;;) {
        char p[4300];
        snprintf(p, sizeof p, "%s/%020lld", dir, (long long)off);
        struct stat st;
        if (stat(p, &st) != 0)
            break;
        assert_int_equal(st.st_size, CL_SIZE);
        size_t len;
        uint8_t *b = slurp(p, &len);
        size_t pos = 0;
        bool ended = false;
        while (pos + 8 <= len) {
            uint32_t size = be32(b + pos), magic = be32(b + pos + 4);
            if (magic == 0xCBD43194u) {
                assert_int_equal(size, len - pos);
                pos = len;
                break;
            }
            if (magic != 0xDAA320A7u) {
                /* the end: zeros to the end of the file */
                for (size_t i = pos; i < len; i++)
                    assert_int_equal(b[i], 0);
                ended = true;
                break;
            }
            const uint8_t *r = b + pos;
            rec_info *ri = &recs[nrec++];
            ri->phys = off + (int64_t)pos;
            ri->size = (int32_t)size;
            ri->qid = (int32_t)be32(r + 12);
            ri->qoff = (int64_t)be64(r + 20);
            assert_int_equal(be64(r + 28), (uint64_t)ri->phys);
            uint32_t sysflag = be32(r + 36);
            size_t bl = (sysflag & 0x10) ? 20 : 8, sl = (sysflag & 0x20) ? 20 : 8;
            size_t q = 48 + bl;
            ri->store_ts = (int64_t)be64(r + q);
            q += 8 + sl + 4 + 8;
            uint32_t body_len = be32(r + q);
            q += 4;
            uint32_t crc = (uint32_t)crc32(0, r + q, body_len) & 0x7FFFFFFF;
            assert_int_equal(be32(r + 8), body_len ? crc : 0);
            q += body_len;
            uint8_t tl = r[q];
            assert_true(tl < sizeof ri->topic);
            memcpy(ri->topic, r + q + 1, tl);
            ri->topic[tl] = 0;
            q += 1 + tl;
            uint16_t pl = (uint16_t)((r[q] << 8) | r[q + 1]);
            q += 2;
            prop(r + q, pl, "TAGS", ri->tags, sizeof ri->tags);
            prop(r + q, pl, "KEYS", ri->keys, sizeof ri->keys);
            prop(r + q, pl, "UNIQ_KEY", ri->uniq, sizeof ri->uniq);
            q += pl;
            assert_int_equal(q, size); /* TOTALSIZE = 91 + B + T + P (+12s) */
            *last_ts = ri->store_ts;
            pos += size;
        }
        free(b);
        if (ended) {
            *end_out = off + (int64_t)pos;
            off += CL_SIZE;
            break;
        }
        off += CL_SIZE;
    }
    /* nothing after the last segment */
    char p[4300];
    snprintf(p, sizeof p, "%s/%020lld", dir, (long long)off);
    struct stat st;
    assert_int_not_equal(stat(p, &st), 0);
}

static void read_queue(const char *root, const char *topic, int qid)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/consumequeue/%s/%d", root, topic, qid);
    int64_t idx = 0;
    bool ended = false;
    for (int64_t off = 0; !ended; off += CQ_SIZE) {
        char p[4300];
        snprintf(p, sizeof p, "%s/%020lld", dir, (long long)off);
        size_t len;
        struct stat st;
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_size, CQ_SIZE);
        uint8_t *b = slurp(p, &len);
        for (size_t pos = 0; pos + 20 <= len; pos += 20) {
            int64_t phys = (int64_t)be64(b + pos);
            int32_t size = (int32_t)be32(b + pos + 8);
            int64_t tags = (int64_t)be64(b + pos + 12);
            if (size == 0 && phys == 0) {
                for (size_t i = pos; i < len; i++)
                    assert_int_equal(b[i], 0);
                ended = true;
                break;
            }
            int found = -1;
            for (int i = 0; i < nrec; i++)
                if (recs[i].phys == phys)
                    found = i;
            assert_true(found >= 0);
            assert_int_equal(recs[found].size, size);
            assert_int_equal(recs[found].qid, qid);
            assert_string_equal(recs[found].topic, topic);
            assert_int_equal(recs[found].qoff, idx);
            assert_int_equal(tags, recs[found].tags[0] ? jhash(recs[found].tags) : 0);
            idx++;
        }
        free(b);
    }
    int expected = 0;
    for (int i = 0; i < nrec; i++)
        expected += recs[i].qid == qid && strcmp(recs[i].topic, topic) == 0;
    assert_int_equal(idx, expected);
}

static bool index_has(const uint8_t *b, const char *key, int64_t phys)
{
    int32_t h = jhash(key);
    int32_t kh = h == INT32_MIN ? 0 : (h < 0 ? -h : h);
    uint32_t slot = (uint32_t)kh % SLOTS;
    int32_t pos = (int32_t)be32(b + 40 + slot * 4);
    int64_t begin_ts = (int64_t)be64(b);
    while (pos > 0) {
        const uint8_t *en = b + 40 + SLOTS * 4 + (size_t)pos * 20;
        if ((int32_t)be32(en) == kh && (int64_t)be64(en + 4) == phys) {
            (void)begin_ts;
            return true;
        }
        pos = (int32_t)be32(en + 16);
    }
    return false;
}

static void test_store_reads_back_in_java_layout(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_config c;
    st_small_config(&c, root);
    store_engine *e = NULL;
    char err[256];
    assert_int_equal(store_open(&c, &e, err, sizeof err), 0);
    int nkeys = 0;
    for (int i = 0; i < 700; i++) {
        st_msg s;
        char keys[64], uniq[64];
        snprintf(keys, sizeof keys, "a%d b%d", i, i % 7);
        snprintf(uniq, sizeof uniq, "U%06d", i);
        st_make(&s, i % 3 ? "Orders" : "Bills", i % 5, i % 4 ? "TagA" : NULL, keys, uniq,
                (size_t)(50 + (i * 131) % 1900), i);
        store_put_result r;
        assert_int_equal(store_put(e, &s.m, &r), 0);
        assert_int_equal(r.status, STORE_PUT_OK);
        nkeys += 3;
    }
    st_msg b[4];
    store_msg bm[4];
    for (int i = 0; i < 4; i++) {
        st_make(&b[i], "Orders", 9, "TagB", NULL, NULL, 400, i);
        bm[i] = b[i].m;
    }
    store_put_result r;
    assert_int_equal(store_put_batch(e, bm, 4, NULL, &r), 0);
    store_close(e);

    int64_t end = 0, last_ts = 0;
    read_commitlog(root, &end, &last_ts);
    assert_int_equal(nrec, 704);
    assert_true(end > 3 * CL_SIZE);
    for (int q = 0; q < 5; q++) {
        read_queue(root, "Orders", q);
        read_queue(root, "Bills", q);
    }
    read_queue(root, "Orders", 9);
    /* index: one file, Java's size and 17-digit time name, every key found */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/index", root);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    int files = 0;
    char name[64] = "";
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.') {
            files++;
            snprintf(name, sizeof name, "%.60s", de->d_name);
        }
    closedir(d);
    assert_int_equal(files, 1);
    assert_int_equal(strlen(name), 17);
    assert_int_equal(strspn(name, "0123456789"), 17);
    char p[4300];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    size_t len;
    uint8_t *ib = slurp(p, &len);
    assert_int_equal(len, 40 + SLOTS * 4 + ENTRIES * 20);
    assert_int_equal(be32(ib + 36), nkeys + 1);               /* indexCount starts at 1 */
    assert_int_equal((int64_t)be64(ib + 24), recs[699].phys); /* endPhyOffset */
    assert_int_equal((int64_t)be64(ib + 16), 0);              /* beginPhyOffset */
    for (int i = 0; i < 700; i++) {
        char key[160];
        const char *topic = i % 3 ? "Orders" : "Bills";
        snprintf(key, sizeof key, "%s#%s", topic, recs[i].uniq);
        assert_true(index_has(ib, key, recs[i].phys));
        snprintf(key, sizeof key, "%s#a%d", topic, i);
        assert_true(index_has(ib, key, recs[i].phys));
    }
    free(ib);
    /* checkpoint, abort, lock */
    snprintf(p, sizeof p, "%s/checkpoint", root);
    uint8_t *cp = slurp(p, &len);
    assert_int_equal(len, 4096);
    assert_int_equal((int64_t)be64(cp), last_ts);
    assert_int_equal((int64_t)be64(cp + 8), last_ts);
    for (size_t i = 24; i < 4096; i++)
        assert_int_equal(cp[i], 0);
    free(cp);
    snprintf(p, sizeof p, "%s/abort", root);
    assert_int_not_equal(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/lock", root);
    uint8_t *lk = slurp(p, &len);
    assert_int_equal(len, 4);
    assert_memory_equal(lk, "lock", 4);
    free(lk);
    st_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_reads_back_in_java_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
