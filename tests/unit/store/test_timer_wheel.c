/* test_timer_wheel.c — the timer messages' on-disk wheel (timer_wheel.c):
 * entries come out at their bucket's time and not before, in arrival order,
 * a delivery refused is retried from that entry, the progress survives a
 * reopen (no loss, and delivered buckets are not repeated), a torn entry
 * from a crash is trimmed, a bucket already passed is reported late, a
 * delivered bucket's slot file is removed, a bucket's recall markers
 * come before its messages, delivery goes on while the checkpoint's fsync
 * is blocked (it runs on the wheel's writer thread), and a kill -9 while
 * that fsync is blocked loses no timer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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
    /* the delivered bucket's file is gone once its checkpoint is written */
    assert_int_equal(timer_wheel_checkpoint(w), 0);
    assert_int_equal(slot_files(d), 1);
    assert_int_equal(timer_wheel_deliver_due(w, t0 + 10 * P, 100, collect, &g), 1);
    assert_int_equal(g.phys[2], 3);
    assert_int_equal(timer_wheel_checkpoint(w), 0);
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
    assert_int_equal(timer_wheel_checkpoint(w), 0);
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
    assert_int_equal(timer_wheel_checkpoint(w), 0);
    assert_int_equal(slot_files(d), 0);
    timer_wheel_close(w);
}

/* A checkpoint fsync that blocks until the test releases it. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int entered; /* fsyncs begun */
    bool hold;   /* the next fsyncs block until cleared */
} gate;

static int gated_fsync(void *ud, int fd)
{
    gate *g = ud;
    pthread_mutex_lock(&g->mu);
    g->entered++;
    pthread_cond_broadcast(&g->cv);
    while (g->hold)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
    return fsync(fd) == 0 ? 0 : -1;
}

/* Only a deadlock (the delivery thread waiting for the blocked fsync)
 * trips this: it turns a hang into a failure that says why. */
static void on_deadlock(int sig)
{
    (void)sig;
    static const char msg[] = "deadlock: the delivery thread waited for the blocked checkpoint "
                              "fsync\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

static int64_t ckpt_next_bucket(const dirs *d)
{
    FILE *f = fopen(d->ckpt, "r");
    char line[128];
    long long v = -1;
    while (f && fgets(line, sizeof line, f))
        (void)sscanf(line, "nextBucket=%lld", &v);
    if (f)
        fclose(f);
    return v;
}

static bool slot_exists(const dirs *d, int64_t bucket)
{
    char p[200];
    snprintf(p, sizeof p, "%s/%lld", d->wheel, (long long)bucket);
    return access(p, F_OK) == 0;
}

/* The delivery thread (this one) hands finished buckets to the writer and
 * goes on: while the writer sits in a blocked fsync, later buckets are
 * delivered, timers added and checkpoints handed over; the blocked
 * checkpoint's bucket file stays until that checkpoint is on disk. */
static void delivery_goes_on_while_checkpoint_fsync_blocks(void **state)
{
    dirs *d = *state;
    gate gt = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false};
    timer_wheel *w = NULL;
    int64_t t0 = 5000000 * (int64_t)P, b0 = t0 / P;
    assert_int_equal(timer_wheel_open(d->wheel, d->ckpt, P, t0, &w), 0);
    timer_wheel_set_checkpoint_sync_hook(w, gated_fsync, &gt);
    add(w, 1, t0 + P);
    add(w, 2, t0 + P);
    add(w, 3, t0 + 2 * P);
    add(w, 4, t0 + 3 * P);
    assert_int_equal(timer_wheel_checkpoint(w), 0); /* not held yet: on disk */
    assert_int_equal(ckpt_next_bucket(d), b0);
    pthread_mutex_lock(&gt.mu);
    gt.hold = true;
    int before = gt.entered;
    pthread_mutex_unlock(&gt.mu);

    signal(SIGALRM, on_deadlock);
    alarm(60);
    got g = {.refuse_at = SIZE_MAX};
    assert_int_equal(timer_wheel_deliver_due(w, t0 + P, 100, collect, &g), 2);
    /* the writer is now inside the held fsync of bucket b0+1's checkpoint */
    pthread_mutex_lock(&gt.mu);
    while (gt.entered == before)
        pthread_cond_wait(&gt.cv, &gt.mu);
    pthread_mutex_unlock(&gt.mu);
    /* ... and delivery goes on */
    assert_int_equal(timer_wheel_deliver_due(w, t0 + 2 * P, 100, collect, &g), 1);
    add(w, 5, t0 + 4 * P);
    assert_int_equal(timer_wheel_deliver_due(w, t0 + 3 * P, 100, collect, &g), 1);
    assert_int_equal(timer_wheel_checkpoint_async(w), 0);
    assert_int_equal(g.n, 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(g.phys[i], (int64_t)i + 1);
    /* nothing claimed on disk yet, nothing removed before its checkpoint */
    pthread_mutex_lock(&gt.mu);
    assert_true(gt.hold);
    pthread_mutex_unlock(&gt.mu);
    assert_int_equal(ckpt_next_bucket(d), b0);
    assert_true(slot_exists(d, b0 + 1));
    assert_true(slot_exists(d, b0 + 2));
    alarm(0);

    pthread_mutex_lock(&gt.mu);
    gt.hold = false;
    pthread_cond_broadcast(&gt.cv);
    pthread_mutex_unlock(&gt.mu);
    assert_int_equal(timer_wheel_checkpoint(w), 0);
    assert_int_equal(ckpt_next_bucket(d), b0 + 4);
    assert_false(slot_exists(d, b0 + 1));
    assert_false(slot_exists(d, b0 + 2));
    assert_false(slot_exists(d, b0 + 3));
    assert_true(slot_exists(d, b0 + 4)); /* timer 5, not due yet */
    timer_wheel_close(w);
}

static int stuck_fsync(void *ud, int fd)
{
    (void)fd;
    int *ready = ud; /* a pipe: tell the parent, then never return */
    (void)!write(*ready, "s", 1);
    for (;;)
        pause();
    return 0;
}

/* kill -9 while the checkpoint's fsync hangs, after deliveries that
 * checkpoint was to record: the restart starts from the last checkpoint on
 * disk, so the delivered timers come again (at least once, as Java's
 * restart from its checkpoint) and the undelivered ones are all there. */
static void kill_9_during_blocked_checkpoint_loses_no_timer(void **state)
{
    dirs *d = *state;
    int64_t t0 = 6000000 * (int64_t)P;
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pipefd[0]);
        timer_wheel *w = NULL;
        if (timer_wheel_open(d->wheel, d->ckpt, P, t0, &w) != 0)
            _exit(1);
        for (int i = 0; i < 6; i++) {
            timer_entry e = {10 + i, t0 + (1 + i / 2) * P, 1, false};
            if (timer_wheel_add(w, &e) != 0)
                _exit(1);
        }
        timer_wheel_set_enqueue_offset(w, 6);
        if (timer_wheel_checkpoint(w) != 0)
            _exit(1);
        timer_wheel_set_checkpoint_sync_hook(w, stuck_fsync, &pipefd[1]);
        got g = {.refuse_at = SIZE_MAX};
        if (timer_wheel_deliver_due(w, t0 + 2 * P, 100, collect, &g) != 4)
            _exit(1);
        (void)!write(pipefd[1], "d", 1); /* delivered 10..13 */
        for (;;)
            pause();
    }
    close(pipefd[1]);
    char seen[2] = {0};
    assert_int_equal(read(pipefd[0], &seen[0], 1), 1);
    assert_int_equal(read(pipefd[0], &seen[1], 1), 1);
    close(pipefd[0]);
    /* both the stuck fsync and the deliveries happened, in either order */
    assert_true((seen[0] == 's' && seen[1] == 'd') || (seen[0] == 'd' && seen[1] == 's'));
    assert_int_equal(kill(pid, SIGKILL), 0);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

    timer_wheel *w = NULL;
    assert_int_equal(timer_wheel_open(d->wheel, d->ckpt, P, t0 + 10 * P, &w), 0);
    assert_int_equal(timer_wheel_enqueue_offset(w), 6);
    assert_int_equal(timer_wheel_next_bucket(w), t0 / P); /* the last checkpoint on disk */
    got g = {.refuse_at = SIZE_MAX};
    assert_int_equal(timer_wheel_deliver_due(w, t0 + 10 * P, 100, collect, &g), 6);
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(g.phys[i], 10 + (int64_t)i);
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
        cmocka_unit_test_setup_teardown(delivery_goes_on_while_checkpoint_fsync_blocks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(kill_9_during_blocked_checkpoint_loses_no_timer, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
