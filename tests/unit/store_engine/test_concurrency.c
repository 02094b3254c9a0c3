/* test_concurrency.c — writers, readers, key queries, retention and topic
 * deletion running at once on small segments: every record a reader gets
 * decodes with a valid CRC and carries the queue offset it was asked for,
 * queue offsets of each writer's queue are dense, nothing crashes (run under
 * ASan/UBSan in the test build). Again with SYNC_FLUSH write-through puts
 * left staged, so readers write them out first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>

#include "store_test_util.h"

#define WRITERS 3
#define PER_WRITER 3000

typedef struct ctx {
    store_engine *e;
    atomic_int writers_left;
    atomic_int errors;
    int id;
    bool defer; /* write-through puts left staged for the flusher or a reader */
} ctx;

typedef struct targ {
    ctx *c;
    int id;
} targ;

static void *writer(void *p)
{
    targ *t = p;
    for (int i = 0; i < PER_WRITER; i++) {
        st_msg s;
        char key[32];
        snprintf(key, sizeof key, "w%d-%d", t->id, i);
        st_make(&s, "C", t->id, "T", key, NULL, 200 + (size_t)(i % 300), i);
        s.m.defer_write = t->c->defer;
        store_put_result r;
        if (store_put(t->c->e, &s.m, &r) != 0 || r.status != STORE_PUT_OK || r.queue_offset != i)
            atomic_fetch_add(&t->c->errors, 1);
        if (i % 500 == 0) { /* a throw-away topic created and deleted meanwhile */
            st_make(&s, "Tmp", 0, NULL, NULL, NULL, 10, i);
            store_put(t->c->e, &s.m, &r);
        }
    }
    atomic_fetch_sub(&t->c->writers_left, 1);
    return NULL;
}

static void *reader(void *p)
{
    targ *t = p;
    int64_t off[WRITERS] = {0};
    while (atomic_load(&t->c->writers_left) > 0) {
        for (int q = 0; q < WRITERS; q++) {
            store_get_result g;
            if (store_get_messages(t->c->e, "C", q, off[q], 16, NULL, NULL, NULL, &g) != 0) {
                atomic_fetch_add(&t->c->errors, 1);
                continue;
            }
            if (g.status == STORE_GET_FOUND) {
                size_t pos = 0;
                int64_t expect = off[q];
                while (pos < g.len) {
                    stored_record d;
                    if (stored_record_decode(g.data + pos, g.len - pos, true, &d) !=
                            STORED_RECORD_OK ||
                        d.queue_offset != expect || d.queue_id != q)
                        atomic_fetch_add(&t->c->errors, 1);
                    expect = d.queue_offset + 1;
                    pos += (size_t)d.total_size;
                }
                off[q] = g.next_begin_offset;
            } else if (g.status == STORE_GET_OFFSET_TOO_SMALL) {
                off[q] = g.next_begin_offset; /* retention moved the minimum */
            }
            free(g.data);
        }
        store_query_result qr;
        char key[32];
        snprintf(key, sizeof key, "w%d-%d", t->id % WRITERS, 10);
        if (store_query_by_key(t->c->e, "C", key, 4, 0, INT64_MAX, &qr) == 0)
            free(qr.data);
        store_cq_entry en[4];
        store_read_cq(t->c->e, "C", 0, 0, en, 4);
        store_offset_by_time(t->c->e, "C", 1, store_now_ms_for_tests());
    }
    return NULL;
}

static void *janitor(void *p)
{
    targ *t = p;
    while (atomic_load(&t->c->writers_left) > 0) {
        store_clean_expired(t->c->e, true);
        store_delete_topic(t->c->e, "Tmp");
        store_runtime_stats rs;
        store_runtime_stats_get(t->c->e, &rs);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void everything_at_once(bool write_through)
{
    char *root = st_tmpdir();
    store_config cfg;
    st_small_config(&cfg, root);
    cfg.file_reserved_hours = 0;
    cfg.cq_file_size = 4000;
    cfg.max_index_num = 2000; /* several index files */
    if (write_through) {
        cfg.flush_type = STORE_SYNC_FLUSH;
        cfg.commitlog_write = STORE_CL_WRITE_PWRITE;
    }
    ctx c = {.writers_left = WRITERS, .defer = write_through};
    char err[256];
    assert_int_equal(store_open(&cfg, &c.e, err, sizeof err), 0);
    pthread_t th[WRITERS + 3];
    targ a[WRITERS + 3];
    for (int i = 0; i < WRITERS + 3; i++) {
        a[i] = (targ){&c, i};
        void *(*fn)(void *) = i < WRITERS ? writer : i < WRITERS + 2 ? reader : janitor;
        pthread_create(&th[i], NULL, fn, &a[i]);
    }
    for (int i = 0; i < WRITERS + 3; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&c.errors), 0);
    for (int q = 0; q < WRITERS; q++)
        assert_int_equal(store_max_offset(c.e, "C", q), PER_WRITER);
    store_close(c.e);
    /* and it reopens with the same ends */
    assert_int_equal(store_open(&cfg, &c.e, err, sizeof err), 0);
    for (int q = 0; q < WRITERS; q++)
        assert_int_equal(store_max_offset(c.e, "C", q), PER_WRITER);
    store_close(c.e);
    st_rmrf(root);
    free(root);
}

static void test_everything_at_once(void **state)
{
    (void)state;
    everything_at_once(false);
}

/* readers take records the writers left staged (they write them first) */
static void test_everything_at_once_write_through(void **state)
{
    (void)state;
    everything_at_once(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_everything_at_once),
        cmocka_unit_test(test_everything_at_once_write_through),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
