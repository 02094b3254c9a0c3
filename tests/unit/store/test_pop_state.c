/* test_pop_state.c — the POP state journal (pop_state.c alone): changes
 * written by pop_journal_flush come back after a reopen, an acknowledged
 * message stays gone, a torn last line (a crash mid-write) is dropped,
 * the reopen compacts the journal into a checkpoint of the live state. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "pop_state.h"

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* dir (a mkdtemp template) made, and s opened on it with nothing in it. */
static void open_fresh(pop_state *s, char *dir)
{
    assert_non_null(mkdtemp(dir));
    char err[256];
    pthread_mutex_init(&s->mu, NULL);
    assert_int_equal(pop_state_open(s, dir, err, sizeof err), 0);
}

/* s closed, and dir with its journal (dir/pop/pop.journal) removed. */
static void close_and_remove(pop_state *s, const char *dir)
{
    pop_state_close(s);
    pthread_mutex_destroy(&s->mu);
    char path[300];
    snprintf(path, sizeof path, "%s/pop/pop.journal", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/pop", dir);
    rmdir(path);
    rmdir(dir);
}

static void journal_replays_acks_and_drops_a_torn_line(void **state)
{
    (void)state;
    char dir[] = "/tmp/rmq-pop-state.XXXXXX";
    pop_state s;
    open_fresh(&s, dir);
    pop_journal_buf jb = {0};
    pop_queue *q = pop_queue_get(&s, "G", "T", 3);
    assert_non_null(q);
    assert_int_equal(q->next_offset, -1);
    q->next_offset = 5;
    pop_journal_next(&jb, q);
    for (int64_t o = 2; o < 5; o++) {
        /* 4 from an order POP: its flag survives (the revive keeps it in its queue) */
        pop_inflight e = {.offset = o,
                          .pop_time = 1000 + o,
                          .invisible = 60000,
                          .deliveries = 1,
                          .flags = o == 4 ? POP_INFLIGHT_ORDER : 0};
        assert_int_equal(pop_inflight_put(q, &e), 0);
        pop_journal_inflight(&jb, q, &e);
    }
    pop_inflight again = {.offset = 3, .pop_time = 2000, .invisible = 500, .deliveries = 2};
    assert_int_equal(pop_inflight_put(q, &again), 0);
    pop_journal_inflight(&jb, q, &again);
    pop_journal_ack(&jb, q, 2);
    pop_inflight_remove(q, 2);
    assert_int_equal(pop_journal_flush(&s, &jb), 0);
    assert_int_equal(pop_queue_commit_offset(q), 3);
    pop_state_close(&s);

    /* a crash in the middle of writing the ack of 4 */
    char path[300];
    snprintf(path, sizeof path, "%s/pop/pop.journal", dir);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("A G T 3 4", f);
    fclose(f);

    char err[256];
    assert_int_equal(pop_state_open(&s, dir, err, sizeof err), 0);
    pthread_mutex_lock(&s.mu);
    q = pop_queue_get(&s, "G", "T", 3);
    assert_int_equal(q->next_offset, 5);
    assert_int_equal(q->n, 2);
    assert_null(pop_inflight_find(q, 2));
    pop_inflight *e3 = pop_inflight_find(q, 3);
    assert_non_null(e3);
    assert_int_equal(e3->deliveries, 2);
    assert_int_equal(e3->pop_time, 2000);
    assert_int_equal(e3->invisible, 500);
    assert_int_equal(e3->flags, 0);
    pop_inflight *e4 = pop_inflight_find(q, 4);
    assert_non_null(e4);
    assert_int_equal(e4->flags, POP_INFLIGHT_ORDER);
    pthread_mutex_unlock(&s.mu);
    /* the reopen wrote a checkpoint: live state only, no ack lines */
    const char *text = read_all(path);
    assert_null(strstr(text, "A "));
    assert_non_null(strstr(text, "N G T 3 5\n"));
    assert_non_null(strstr(text, "I G T 3 3 2000 500 2\n"));
    assert_non_null(strstr(text, "I G T 3 4 1004 60000 1 1\n"));
    close_and_remove(&s, dir);
}

/* The attemptId of an order batch rides on the N line: a journal written
 * before it existed (N lines of four fields) still replays, the last N
 * line of a queue says its attemptId (none when absent), and the
 * checkpoint keeps it. */
static void attempt_id_replays_from_the_n_line(void **state)
{
    (void)state;
    char dir[] = "/tmp/rmq-pop-attempt.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[300], path[300];
    snprintf(sub, sizeof sub, "%s/pop", dir);
    snprintf(path, sizeof path, "%s/pop.journal", sub);
    assert_int_equal(mkdir(sub, 0755), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    /* an older journal (queue 0), then A taken over by B (queue 1), then a
     * batch without attemptId after A (queue 2) */
    fputs("N G T 0 4\nI G T 0 3 1000 60000 1 1\n"
          "N G T 1 2 A\nN G T 1 3 B\n"
          "N G T 2 2 A\nN G T 2 3\n",
          f);
    fclose(f);
    pop_state s;
    char err[256];
    pthread_mutex_init(&s.mu, NULL);
    assert_int_equal(pop_state_open(&s, dir, err, sizeof err), 0);
    pthread_mutex_lock(&s.mu);
    pop_queue *q0 = pop_queue_find(&s, "G", "T", 0);
    pop_queue *q1 = pop_queue_find(&s, "G", "T", 1);
    pop_queue *q2 = pop_queue_find(&s, "G", "T", 2);
    assert_non_null(q0);
    assert_non_null(q1);
    assert_non_null(q2);
    assert_int_equal(q0->next_offset, 4);
    assert_null(q0->attempt_id);
    assert_int_equal(q1->next_offset, 3);
    assert_string_equal(q1->attempt_id, "B");
    assert_int_equal(q2->next_offset, 3);
    assert_null(q2->attempt_id);
    /* a new attemptId is journalled with the queue's next offset */
    pop_journal_buf jb = {0};
    q0->attempt_id = strdup("C-1");
    pop_journal_next(&jb, q0);
    assert_int_equal(pop_journal_flush(&s, &jb), 0);
    pthread_mutex_unlock(&s.mu);
    assert_non_null(strstr(read_all(path), "N G T 0 4 C-1\n"));
    pop_state_close(&s);
    assert_int_equal(pop_state_open(&s, dir, err, sizeof err), 0);
    pthread_mutex_lock(&s.mu);
    q0 = pop_queue_find(&s, "G", "T", 0);
    assert_non_null(q0);
    assert_string_equal(q0->attempt_id, "C-1");
    assert_non_null(pop_inflight_find(q0, 3));
    pthread_mutex_unlock(&s.mu);
    const char *text = read_all(path); /* the checkpoint */
    assert_non_null(strstr(text, "N G T 0 4 C-1\n"));
    assert_non_null(strstr(text, "N G T 1 3 B\n"));
    assert_non_null(strstr(text, "N G T 2 3\n"));
    close_and_remove(&s, dir);
}

/* revive_at (the background revive's "look no earlier than"): set from the
 * replayed journal, lowered by any change of an in-flight message, cleared
 * when nothing is left in flight; the revive alone raises it. */
static void revive_at_follows_the_in_flight_messages(void **state)
{
    (void)state;
    char dir[] = "/tmp/rmq-pop-revive.XXXXXX";
    pop_state s;
    open_fresh(&s, dir);
    pop_journal_buf jb = {0};
    pop_queue *q = pop_queue_get(&s, "G", "T", 0);
    assert_non_null(q);
    assert_true(q->revive_at == INT64_MAX);
    pop_inflight a = {.offset = 0, .pop_time = 1000, .invisible = 5000, .deliveries = 1};
    pop_inflight b = {.offset = 1, .pop_time = 1000, .invisible = 3000, .deliveries = 4};
    assert_int_equal(pop_inflight_put(q, &a), 0);
    pop_journal_inflight(&jb, q, &a);
    assert_true(q->revive_at == 6000);
    assert_int_equal(pop_inflight_put(q, &b), 0);
    pop_journal_inflight(&jb, q, &b);
    assert_true(q->revive_at == 4000);
    assert_int_equal(pop_journal_flush(&s, &jb), 0);
    /* a revive pass at 4000 saw b expire: it raises revive_at to a's end */
    q->revive_at = 6000;
    pop_queue_note_visible(q, 5000); /* an invisible time changed to end sooner */
    assert_true(q->revive_at == 5000);
    assert_true(q->next_visible == 4000);
    pop_state_close(&s);

    /* kill -9 and reopen: the replay gives the revive the earliest end again */
    char err[256];
    assert_int_equal(pop_state_open(&s, dir, err, sizeof err), 0);
    q = pop_queue_get(&s, "G", "T", 0);
    assert_int_equal(q->n, 2);
    assert_true(q->revive_at == 4000);
    pop_inflight_remove(q, 0);
    pop_inflight_remove(q, 1);
    assert_true(q->revive_at == INT64_MAX);
    close_and_remove(&s, dir);
}

/* Many queues: each found again (the index grows), none confused. */
static void thousands_of_queues_stay_distinct(void **state)
{
    (void)state;
    char dir[] = "/tmp/rmq-pop-many.XXXXXX";
    pop_state s;
    open_fresh(&s, dir);
    enum { N = 3000 };
    pop_queue *made[N];
    for (int i = 0; i < N; i++) {
        char g[32], t[32];
        snprintf(g, sizeof g, "G%d", i % 7);
        snprintf(t, sizeof t, "T%d", i / 7);
        made[i] = pop_queue_get(&s, g, t, i % 3);
        assert_non_null(made[i]);
        made[i]->next_offset = i;
    }
    assert_int_equal(s.nq, N);
    for (int i = 0; i < N; i++) {
        char g[32], t[32];
        snprintf(g, sizeof g, "G%d", i % 7);
        snprintf(t, sizeof t, "T%d", i / 7);
        pop_queue *q = pop_queue_get(&s, g, t, i % 3);
        assert_ptr_equal(q, made[i]);
        assert_int_equal(q->next_offset, i);
    }
    assert_int_equal(s.nq, N);
    close_and_remove(&s, dir);
}

/* 100,000 in flight acknowledged in order (the common case): each ack marks
 * a slot, the marked ones are dropped in bulk, the commit offset follows,
 * and the earliest-visible bound only moves when a walk recomputes it. */
static void in_order_acks_of_many_in_flight(void **state)
{
    (void)state;
    pop_queue q;
    memset(&q, 0, sizeof q);
    q.next_visible = INT64_MAX;
    enum { N = 100000 };
    for (int o = 0; o < N; o++) {
        pop_inflight e = {.offset = o, .pop_time = 1000 + o, .invisible = 500, .deliveries = 1};
        assert_int_equal(pop_inflight_put(&q, &e), 0);
    }
    assert_int_equal(q.n, N);
    assert_int_equal(q.next_visible, 1500);
    for (int o = 0; o < N - 10; o++) {
        pop_inflight_remove(&q, o);
        pop_queue_tidy(&q);
        assert_int_equal(pop_queue_commit_offset(&q), o + 1);
    }
    assert_int_equal(q.n, 10);
    assert_true(q.len <= 10 + 64 || q.len <= 2 * q.n); /* marked slots were dropped */
    assert_null(pop_inflight_find(&q, N - 11));
    pop_inflight *e = pop_inflight_find(&q, N - 10);
    assert_non_null(e);
    assert_int_equal(e->pop_time, 1000 + N - 10);
    /* a marked slot brought back to life, out of order */
    pop_inflight back = {.offset = 5, .pop_time = 7, .invisible = 1, .deliveries = 3};
    assert_int_equal(pop_inflight_put(&q, &back), 0);
    assert_int_equal(pop_queue_commit_offset(&q), 5);
    assert_int_equal(q.next_visible, 8);
    assert_int_equal(q.n, 11);
    for (int o = N - 10; o < N; o++)
        pop_inflight_remove(&q, o);
    pop_inflight_remove(&q, 5);
    assert_int_equal(q.n, 0);
    assert_int_equal(q.next_visible, INT64_MAX);
    q.next_offset = N;
    assert_int_equal(pop_queue_commit_offset(&q), N);
    free(q.inflight);
}

static void names_with_whitespace_are_refused(void **state)
{
    (void)state;
    assert_true(pop_name_ok("%RETRY%G_T"));
    assert_false(pop_name_ok("a b"));
    assert_false(pop_name_ok(""));
    assert_false(pop_name_ok(NULL));
}

/* Random 64-bit values weighted towards the edges printf cares about: zero,
 * one digit, the extremes, negatives. */
static uint64_t rnd64(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

static int64_t rnd_i64(uint64_t *x)
{
    static const int64_t edges[] = {0,   1,         -1,        9,         10,
                                    -10, INT64_MAX, INT64_MIN, INT32_MAX, INT32_MIN};
    uint64_t r = rnd64(x);
    switch (r % 4) {
    case 0: return edges[(r >> 8) % (sizeof edges / sizeof edges[0])];
    case 1: return (int64_t)(r >> (r >> 58)); /* any number of digits */
    case 2: return -(int64_t)(rnd64(x) >> (1 + (r >> 59)));
    default: return (int64_t)rnd64(x);
    }
}

static void rnd_name(uint64_t *x, char *out, size_t cap)
{
    size_t n = 1 + rnd64(x) % (cap - 1);
    for (size_t i = 0; i < n; i++)
        out[i] = (char)('!' + rnd64(x) % 94); /* printable, no space */
    out[n] = '\0';
}

/* The journal lines are formatted by hand (pop_state.c): the same bytes as
 * the printf formats they replaced, on random names and numbers, appended
 * to one buffer that starts empty and grows. */
static void journal_lines_match_printf(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    pop_journal_buf jb = {0};
    size_t cap = 1 << 20, len = 0;
    char *want = malloc(cap);
    assert_non_null(want);
    char group[300], topic[300], attempt[300];
    for (int i = 0; i < 20000; i++) {
        rnd_name(&x, group, 40);
        rnd_name(&x, topic, 40);
        pop_queue q = {.group = group, .topic = topic};
        q.queue_id = (int32_t)rnd_i64(&x);
        q.next_offset = rnd_i64(&x);
        uint64_t pick = rnd64(&x);
        if (pick % 5 == 0) {
            rnd_name(&x, attempt, 300); /* 256 or more: left out */
            q.attempt_id = attempt;
        } else if (pick % 5 == 1) {
            q.attempt_id = "a b";
        }
        pop_inflight e = {.offset = rnd_i64(&x),
                          .pop_time = rnd_i64(&x),
                          .invisible = rnd_i64(&x),
                          .deliveries = (int32_t)rnd_i64(&x),
                          .flags = (pick >> 8) % 3 == 0 ? 0u : (uint32_t)rnd64(&x)};
        int64_t ack = rnd_i64(&x);
        if (cap - len < 4096) {
            /* start over: the buffer already grew many times */
            free(jb.buf);
            jb = (pop_journal_buf){0};
            len = 0;
        }
        switch (pick % 3) {
        case 0:
            pop_journal_next(&jb, &q);
            if (pop_name_ok(q.attempt_id))
                len +=
                    (size_t)snprintf(want + len, cap - len, "N %s %s %" PRId32 " %" PRId64 " %s\n",
                                     group, topic, q.queue_id, q.next_offset, q.attempt_id);
            else
                len += (size_t)snprintf(want + len, cap - len, "N %s %s %" PRId32 " %" PRId64 "\n",
                                        group, topic, q.queue_id, q.next_offset);
            break;
        case 1:
            pop_journal_inflight(&jb, &q, &e);
            if (e.flags)
                len += (size_t)snprintf(want + len, cap - len,
                                        "I %s %s %" PRId32 " %" PRId64 " %" PRId64 " %" PRId64
                                        " %" PRId32 " %u\n",
                                        group, topic, q.queue_id, e.offset, e.pop_time, e.invisible,
                                        e.deliveries, e.flags);
            else
                len += (size_t)snprintf(
                    want + len, cap - len,
                    "I %s %s %" PRId32 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId32 "\n", group,
                    topic, q.queue_id, e.offset, e.pop_time, e.invisible, e.deliveries);
            break;
        default:
            pop_journal_ack(&jb, &q, ack);
            len += (size_t)snprintf(want + len, cap - len, "A %s %s %" PRId32 " %" PRId64 "\n",
                                    group, topic, q.queue_id, ack);
            break;
        }
        assert_false(jb.failed);
        assert_int_equal(jb.len, len);
        assert_memory_equal(jb.buf, want, len);
        assert_int_equal(jb.buf[jb.len], '\0');
    }
    free(jb.buf);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(journal_replays_acks_and_drops_a_torn_line),
        cmocka_unit_test(attempt_id_replays_from_the_n_line),
        cmocka_unit_test(revive_at_follows_the_in_flight_messages),
        cmocka_unit_test(thousands_of_queues_stay_distinct),
        cmocka_unit_test(in_order_acks_of_many_in_flight),
        cmocka_unit_test(names_with_whitespace_are_refused),
        cmocka_unit_test(journal_lines_match_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
