/* store_test_util.h — helpers shared by the store engine tests: a fresh
 * temporary store directory, a small-file configuration, opening a store, a
 * message builder, the completion count of store_wait_flush, recorded frame
 * bodies and a recursive directory removal. Header-only (each test is one
 * file); include it after cmocka.h (the helpers assert). */
#ifndef STORE_TEST_UTIL_H
#define STORE_TEST_UTIL_H

#include <dirent.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store_engine.h"
#include "stored_record.h"

static int st_rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static inline void st_rmrf(const char *dir)
{
    nftw(dir, st_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static inline char *st_tmpdir(void)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *d = malloc(4096);
    snprintf(d, 4096, "%s/store-test-XXXXXX", base);
    if (!mkdtemp(d))
        abort();
    return d;
}

/* 64 KiB commit-log segments, 6000-entry queues, a small index */
static inline void st_small_config(store_config *c, const char *root)
{
    store_config_defaults(c);
    c->root_dir = root;
    c->commitlog_file_size = 65536;
    c->cq_file_size = 120000;
    c->max_hash_slot_num = 1000;
    c->max_index_num = 4000;
    c->flush_interval_ms = 50;
}

/* store_open of c, failing the test with the engine's reason. */
static inline store_engine *st_open(store_config *c)
{
    store_engine *e = NULL;
    char err[256];
    if (store_open(c, &e, err, sizeof err) != 0)
        fail_msg("store_open: %s", err);
    return e;
}

static inline int64_t st_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The done(ud, ok) calls of store_wait_flush counted: pass st_on_flushed
 * with a st_flush_count (ST_FLUSH_COUNT_INIT) as ud. The callback may run
 * on the flusher thread, hence the lock. */
typedef struct st_flush_count {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, ok;
} st_flush_count;
#define ST_FLUSH_COUNT_INIT                                                                        \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0                                  \
    }

static inline void st_on_flushed(void *ud, bool ok)
{
    st_flush_count *w = ud;
    pthread_mutex_lock(&w->mu);
    w->done++;
    w->ok += ok;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Wait until `n` calls came (at most 30 s); the calls counted. Reading
 * w->ok afterwards is safe once all the awaited calls came. */
static inline int st_flush_wait(st_flush_count *w, int n)
{
    int64_t deadline = st_mono_ms() + 30000;
    pthread_mutex_lock(&w->mu);
    while (w->done < n && st_mono_ms() < deadline) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    }
    int done = w->done;
    pthread_mutex_unlock(&w->mu);
    return done;
}

/* The body of a recorded response frame of tests/vectors: length prefix,
 * header-length field, header, then the body. Caller frees. */
static inline uint8_t *st_vector_body(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", RMQ_VECTORS_DIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t buf[65536];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 8);
    size_t hl = stored_be32(buf + 4) & 0xFFFFFF;
    assert_true(8 + hl <= n);
    *len = n - 8 - hl;
    uint8_t *body = malloc(*len);
    memcpy(body, buf + 8 + hl, *len);
    return body;
}

typedef struct st_msg {
    store_msg m;
    char props[512];
    char body[2048];
} st_msg;

static inline int32_t st_java_hash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++)
        h = h * 31u + (uint8_t)*s;
    return (int32_t)h;
}

/* A message of `body_len` bytes with TAGS, KEYS and UNIQ_KEY properties. */
static inline void st_make(st_msg *s, const char *topic, int32_t qid, const char *tag,
                           const char *keys, const char *uniq, size_t body_len, int seed)
{
    memset(s, 0, sizeof *s);
    size_t pl = 0;
    if (keys)
        pl += (size_t)snprintf(s->props + pl, sizeof s->props - pl, "KEYS\001%s\002", keys);
    if (uniq)
        pl += (size_t)snprintf(s->props + pl, sizeof s->props - pl, "UNIQ_KEY\001%s\002", uniq);
    if (tag)
        pl += (size_t)snprintf(s->props + pl, sizeof s->props - pl, "TAGS\001%s\002", tag);
    if (pl)
        pl--; /* no trailing separator */
    if (body_len > sizeof s->body)
        body_len = sizeof s->body;
    for (size_t i = 0; i < body_len; i++)
        s->body[i] = (char)('a' + (seed + i) % 26);
    s->m.topic = topic;
    s->m.queue_id = qid;
    s->m.born_ts = 1700000000000LL + seed;
    s->m.born_host.ip_len = 4;
    s->m.born_host.ip[0] = 127;
    s->m.born_host.ip[3] = 1;
    s->m.born_host.port = 40000;
    s->m.store_host.ip_len = 4;
    s->m.store_host.ip[0] = 10;
    s->m.store_host.ip[3] = 2;
    s->m.store_host.port = 10911;
    s->m.body = s->body;
    s->m.body_len = body_len;
    s->m.props = s->props;
    s->m.props_len = pl;
    s->m.tags_code = tag ? st_java_hash(tag) : 0;
}

/* n messages of body_len bytes (st_make seeds 0..n-1, tag "T") into queue
 * 0 of topic, each stored OK. */
static inline void st_put_seq(store_engine *e, const char *topic, int n, size_t body_len)
{
    st_msg m;
    for (int i = 0; i < n; i++) {
        st_make(&m, topic, 0, "T", NULL, NULL, body_len, i);
        store_put_result r;
        assert_int_equal(store_put(e, &m.m, &r), 0);
        assert_int_equal(r.status, STORE_PUT_OK);
    }
}

/* The n messages of st_put_seq read back from queue 0 of topic, 32 at a
 * time: each in order with its own body. */
static inline void st_read_seq(store_engine *e, const char *topic, int n, size_t body_len)
{
    int64_t off = 0;
    while (off < n) {
        store_get_result g;
        assert_int_equal(store_get_messages(e, topic, 0, off, 32, NULL, NULL, NULL, &g), 0);
        assert_int_equal(g.status, STORE_GET_FOUND);
        size_t pos = 0;
        for (int i = 0; i < g.msg_count; i++) {
            stored_record d;
            assert_int_equal(stored_record_decode(g.data + pos, g.len - pos, true, &d),
                             STORED_RECORD_OK);
            assert_int_equal(d.queue_offset, off + i);
            st_msg want;
            st_make(&want, topic, 0, "T", NULL, NULL, body_len, (int)(off + i));
            assert_int_equal(d.body_len, (int32_t)body_len);
            assert_memory_equal(d.body, want.body, body_len);
            pos += (size_t)d.total_size;
        }
        off = g.next_begin_offset;
        free(g.data);
    }
}

static inline int64_t store_now_ms_for_tests(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
