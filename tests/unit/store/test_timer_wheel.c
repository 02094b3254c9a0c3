/* test_timer_wheel.c — the timer messages' on-disk wheel (timer_wheel.c):
 * entries come out at their bucket's time and not before, in arrival order,
 * a delivery refused is retried from that entry, the progress survives a
 * reopen (no loss, and delivered buckets are not repeated), a torn entry
 * from a crash is trimmed, a bucket already passed is reported late, a
 * delivered bucket's slot file is removed, and a bucket's recall markers
 * come before its messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "timer_wheel.h"

#define P 1000 /* precision (ms) */

typedef struct got {
    int64_t phys[4096];
    size_t n;
    size_t refuse_at; /* refuse the delivery with this index (SIZE_MAX: none) */
} got;

static bool collect(void *ud, const timer_entry *e)
{
    got *g = ud;
    if (e->deleting) { /* a recall marker: recorded negated, never refused */
        g->phys[g->n++] = -e->phys_offset;
        return true;
    }
    if (g->n == g->refuse_at) {
        g->refuse_at = SIZE_MAX;
        return false;
    }
    g->phys[g->n++] = e->phys_offset;
    return true;
}

typedef struct dirs {
    char root[64];
    char wheel[128];
    char ckpt[128];
} dirs;

static int setup(void **state)
{
    dirs *d = calloc(1, sizeof *d);
    snprintf(d->root, sizeof d->root, "/tmp/twheelXXXXXX");
    if (!mkdtemp(d->root))
        return -1;
    snprintf(d->wheel, sizeof d->wheel, "%s/timerwheel", d->root);
    snprintf(d->ckpt, sizeof d->ckpt, "%s/timercheck", d->root);
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    dirs *d = *state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->root);
    if (system(cmd) != 0)
        return -1;
    free(d);
    return 0;
}

static size_t slot_files(const dirs *d)
{
    DIR *dir = opendir(d->wheel);
    size_t n = 0;
    struct dirent *de;
    while (dir && (de = readdir(dir)) != NULL)
        if (de->d_name[0] != '.')
            n++;
    if (dir)
        closedir(dir);
    return n;
}

static void add(timer_wheel *w, int64_t phys, int64_t at)
{
    timer_entry e = {phys, at, 100, false};
    assert_int_equal(timer_wheel_add(w, &e), 0);
}

static void due_in_time_order_not_before(void **state)
{
    dirs *d = *state;
    timer_wheel *w = NULL;
    int64_t t0 = 1000000 * (int64_t)P;
    assert_int_equal(timer_wheel_open(d->wheel, d->ckpt, P, t0, &w), 0);
    add(w, 3, t0 + 5 * P);
    add(w, 1, t0 + 2 * P);
    add(w, 2, t0 + 2 * P);
    got g = {.refuse_at = SIZE_MAX};
    assert_int_equal(timer_wheel_deliver_due(w, t0 + 2 * P - 1, 100, collect, &g), 0);
    assert_int_equal(g.n, 0);
    assert_int_equal(timer_wheel_deliver_due(w, t0 + 2 * P, 100, collect, &g), 2);
    assert_int_equal(g.phys[0], 1);
    assert_int_equal(g.phys[1], 2);
    assert_int_equal(slot_files(d), 1); /* the delivered bucket's file is gone */
    assert_int_equal(timer_wheel_deliver_due(w, t0 + 10 * P, 100, collect, &g), 1);
    assert_int_equal(g.phys[2], 3);
    assert_int_equal(slot_files(d), 0);
    /* a time whose bucket was delivered: the caller delivers it */
    timer_entry late = {9, t0 + 3 * P, 1, false};
    assert_int_equal(timer_wheel_add(w, &late), 1);
    timer_wheel_close(w);
}

static void refused_entry_is_retried_and_progress_survives_reopen(void **state)
{
    dirs *d = *state;
    timer_wheel *w = NULL;
    int64_t t0 = 2000000 * (int64_t)P;
    assert_int_equal(timer_wheel_open(d->wheel, d->ckpt, P, t0, &w), 0);
    for (int i = 0; i < 10; i++)
        add(w, 100 + i, t0 + P);
    for (int i = 0; i < 5; i++)
        add(w, 200 + i, t0 + 3 * P);
    timer_wheel_set_enqueue_offset(w, 15);
    got g = {.refuse_at = 4};
    assert_int_equal(timer_wheel_deliver_due(w, t0 + P, 100, collect, &g), 4);
    assert_int_equal(timer_wheel_deliver_due(w, t0 + P, 3, collect, &g), 3);
    assert_int_equal(g.n, 7);
    assert_int_equal(g.phys[4], 104); /* the refused one came again */
    assert_int_equal(timer_wheel_checkpoint(w), 0);
    timer_wheel_close(w); /* as a restart after the checkpoint */
    w = NULL;
    assert_int_equal(timer_wheel_open(d->wheel, d->ckpt, P, t0 + 100 * P, &w), 0);
    assert_int_equal(timer_wheel_enqueue_offset(w), 15);
    assert_int_equal(timer_wheel_next_bucket(w), (t0 + P) / P);
    assert_int_equal(timer_wheel_deliver_due(w, t0 + 100 * P, 100, collect, &g), 8);
    assert_int_equal(g.n, 15);
    for (size_t i = 0; i < 10; i++)
        assert_int_equal(g.phys[i], 100 + (int64_t)i); /* nothing twice, nothing lost */
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(g.phys[10 + i], 200 + (int64_t)i);
    assert_int_equal(slot_files(d), 0);
    timer_wheel_close(w);
}

static void crash_without_checkpoint_loses_nothing(void **state)
{
    dirs *d = *state;
    int64_t t0 = 3000000 * (int64_t)P;
    /* a child adds two timers after its last checkpoint and dies (kill -9:
     * no close) */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        timer_wheel *w = NULL;
        if (timer_wheel_open(d->wheel, d->ckpt, P, t0, &w) != 0 || timer_wheel_checkpoint(w) != 0)
            _exit(1);
        timer_entry a = {1, t0 + 2 * P, 1, false}, b = {2, t0 + 2 * P, 1, false};
        _exit(timer_wheel_add(w, &a) == 0 && timer_wheel_add(w, &b) == 0 ? 0 : 1);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* and a torn entry at the slot's end */
    char p[200];
    snprintf(p, sizeof p, "%s/%lld", d->wheel, (long long)((t0 + 2 * P) / P));
    int fd = open(p, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "torn", 4), 4);
    close(fd);
    timer_wheel *w = NULL;
    assert_int_equal(timer_wheel_open(d->wheel, d->ckpt, P, t0 + P, &w), 0);
    add(w, 3, t0 + 2 * P); /* lands after the trimmed tail, aligned */
    got g = {.refuse_at = SIZE_MAX};
    assert_int_equal(timer_wheel_deliver_due(w, t0 + 2 * P, 100, collect, &g), 3);
    assert_int_equal(g.phys[0], 1);
    assert_int_equal(g.phys[1], 2);
    assert_int_equal(g.phys[2], 3);
    timer_wheel_close(w);
}

static void many_timers_stream_through_fixed_memory(void **state)
{
    dirs *d = *state;
    timer_wheel *w = NULL;
    int64_t t0 = 4000000 * (int64_t)P;
    assert_int_equal(timer_wheel_open(d->wheel, d->ckpt, P, t0, &w), 0);
    enum { N = 3000 };
    for (int i = 0; i < N; i++)
        add(w, i, t0 + (1 + i % 7) * P); /* 7 buckets, interleaved */
    got *g = calloc(1, sizeof *g);
    g->refuse_at = SIZE_MAX;
    /* a small per-call limit: the wheel resumes mid-bucket each time */
    long total = 0, n;
    while ((n = timer_wheel_deliver_due(w, t0 + 8 * P, 97, collect, g)) > 0)
        total += n;
    assert_int_equal(n, 0);
    assert_int_equal(total, N);
    /* bucket by bucket, arrival order inside each */
    size_t k = 0;
    for (int b = 0; b < 7; b++)
        for (int i = b; i < N; i += 7)
            assert_int_equal(g->phys[k++], i);
    free(g);
    timer_wheel_close(w);
}

/* A recall marker added after the messages of its bucket is handed over
 * before them, and again when a refused delivery resumes the bucket. */
static void recall_markers_come_first(void **state)
{
    dirs *d = *state;
    timer_wheel *w = NULL;
    int64_t t0 = 1000000 * (int64_t)P;
    assert_int_equal(timer_wheel_open(d->wheel, d->ckpt, P, t0, &w), 0);
    add(w, 1, t0 + 2 * P);
    add(w, 2, t0 + 2 * P + 10);
    timer_entry del = {3, t0 + 2 * P, 1, true};
    assert_int_equal(timer_wheel_add(w, &del), 0);
    got g = {.refuse_at = 2}; /* refuses message 2 once */
    assert_int_equal(timer_wheel_deliver_due(w, t0 + 3 * P, 100, collect, &g), 1);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.phys[0], -3);
    assert_int_equal(g.phys[1], 1);
    /* resumed: the marker again, then message 2; the marker entry itself
     * is passed over, never delivered as a message */
    assert_int_equal(timer_wheel_deliver_due(w, t0 + 3 * P, 100, collect, &g), 2);
    assert_int_equal(g.n, 4);
    assert_int_equal(g.phys[2], -3);
    assert_int_equal(g.phys[3], 2);
    assert_int_equal(slot_files(d), 0);
    timer_wheel_close(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(due_in_time_order_not_before, setup, teardown),
        cmocka_unit_test_setup_teardown(refused_entry_is_retried_and_progress_survives_reopen,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(crash_without_checkpoint_loses_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(many_timers_stream_through_fixed_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(recall_markers_come_first, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
