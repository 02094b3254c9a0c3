/* test_store_timer.c — 5.x timer messages end to end over raw frames (see
 * CMakeLists.txt). Every wait polls a condition with a deadline; the times
 * asserted are the broker's own (TIMER_OUT_MS against TIMER_DEQUEUE_MS),
 * never how long the test waited. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "store_test_client.h"

/* Bounds of condition waits: they only end a test whose condition never
 * comes, so they are generous (an ASan daemon at load 8+ on 2 cores). */
#define WAIT_MS 60000
#define TIMER_TOPIC "rmq_sys_wheel_timer"

typedef struct fixture {
    rmq_test_daemon d;
    int port;
    int fd;
} fixture;

static long long wall_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static int start(fixture *f)
{
    if (rmq_td_start(&f->d, NULL) != 0)
        return -1;
    f->port = rmq_td_port(&f->d, "broker");
    f->fd = f->port > 0 ? rmq_tc_connect(f->port) : -1;
    return f->fd >= 0 ? 0 : -1;
}

static int setup_with(void **state, const char *settings)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    f->fd = -1;
    if (st_configure(&f->d, settings) != 0)
        return -1;
    return start(f);
}

static int setup(void **state)
{
    return setup_with(state, "timerPrecisionMs = 1000;");
}

static int setup_disabled(void **state)
{
    return setup_with(state, "timerWheelEnable = false;");
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (f) {
        if (f->fd >= 0)
            close(f->fd);
        assert_int_equal(rmq_td_stop_reporting(&f->d), 0);
        rmq_td_cleanup(&f->d);
        free(f);
    }
    return 0;
}

/* timercheck's enqueueOffset once it reaches `want` (what the wheel has
 * taken from rmq_sys_wheel_timer), or the last one read (-1: none) after
 * WAIT_MS * 3. */
static long long wait_enqueued(fixture *f, long long want)
{
    char path[600];
    snprintf(path, sizeof path, "%s/store/config/timercheck", f->d.state_dir);
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS * 3;
    long long enq = -1;
    while (rmq_test_now_ms() < deadline) {
        FILE *fp = fopen(path, "r");
        char line[128];
        while (fp && fgets(line, sizeof line, fp))
            sscanf(line, "enqueueOffset=%lld", &enq);
        if (fp)
            fclose(fp);
        if (enq >= want)
            break;
        rmq_test_pause_ms(100);
    }
    return enq;
}

static bool wait_max_offset(int port, const char *topic, int queue, long long want)
{
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (rmq_test_now_ms() < deadline) {
        if (st_max_offset(port, topic, queue) >= want)
            return true;
        rmq_test_pause_ms(20);
    }
    return false;
}

/* The one record at topic/queue@off; *frame owns it (caller frees). */
static void pull_one(fixture *f, const char *topic, int queue, long long off, rmq_cmd **frame,
                     stored_record *r)
{
    st_pull_args pa = {.group = "TimerCG", .topic = topic, .queue = queue, .offset = off, .max = 1};
    *frame = st_pull(f->fd, 7, &pa);
    assert_non_null(*frame);
    assert_int_equal((*frame)->code, 0);
    assert_int_equal(st_records(*frame, r, 1), 1);
}

static void assert_prop(const stored_record *r, const char *name, const char *want)
{
    char *v = st_prop(r, name);
    if (want ? !v || strcmp(v, want) != 0 : v != NULL)
        fail_msg("property %s = %s, want %s", name, v ? v : "(absent)", want ? want : "(absent)");
    free(v);
}

static long long prop_ll(const stored_record *r, const char *name)
{
    char *v = st_prop(r, name);
    if (!v)
        fail_msg("property %s absent", name);
    long long n = strtoll(v, NULL, 10);
    free(v);
    return n;
}

static void send_ok(fixture *f, const char *topic, int queue, const char *props, const char *body)
{
    rmq_cmd *r = st_send(f->fd, 1, topic, queue, props, body, NULL);
    assert_non_null(r);
    if (r->code != 0)
        fail_msg("send answered %d %s", r->code, r->remark ? r->remark : "");
    assert_int_equal(st_ext_ll(r, "queueId"), queue); /* the queue asked for, as Java */
    rmq_cmd_free(r);
}

/* Java's rounding of a delivery time (precision 1000). */
static long long rounded(long long ms)
{
    return ms % 1000 == 0 ? ms - 1000 : ms / 1000 * 1000;
}

static void test_delay_sec_waits_then_reaches_its_real_queue(void **state)
{
    fixture *f = *state;
    long long before = wall_ms();
    send_ok(f, "TimerT", 1, "TIMER_DELAY_SEC\0012\002TAGS\001tagT\002UNIQ_KEY\001AC1100000001\002",
            "soon");
    long long after = wall_ms();
    /* held in the wheel's topic, not in TimerT: asserted when the look came
     * back before the earliest time it may be due (a loaded machine can
     * take longer than the delay between two requests) */
    assert_int_equal(st_max_offset(f->port, TIMER_TOPIC, 0), 1);
    long long early = st_max_offset(f->port, "TimerT", 1);
    if (wall_ms() < rounded(before + 2000))
        assert_int_equal(early, 0);
    rmq_cmd *frame;
    stored_record rec;
    assert_true(wait_max_offset(f->port, "TimerT", 1, 1));
    pull_one(f, "TimerT", 1, 0, &frame, &rec);
    assert_int_equal(rec.body_len, 4);
    assert_memory_equal(rec.body, "soon", 4);
    assert_prop(&rec, "TAGS", "tagT");
    assert_prop(&rec, "UNIQ_KEY", "AC1100000001");
    assert_prop(&rec, "TIMER_DELAY_SEC", "2");
    assert_prop(&rec, "REAL_TOPIC", NULL); /* convertMessage clears them */
    assert_prop(&rec, "REAL_QID", NULL);
    long long out = prop_ll(&rec, "TIMER_OUT_MS");
    assert_true(out >= rounded(before + 2000) && out <= rounded(after + 2000));
    long long deq = prop_ll(&rec, "TIMER_DEQUEUE_MS");
    long long enq = prop_ll(&rec, "TIMER_ENQUEUE_MS");
    assert_true(enq <= out);
    assert_true(deq >= out); /* never before its time */
    print_message("timer delivered %lld ms after TIMER_OUT_MS\n", deq - out);
    rmq_cmd_free(frame);
}

static void test_deliver_ms_in_the_future_and_in_the_past(void **state)
{
    fixture *f = *state;
    /* a time 1.5 s ahead; when the answer comes back after that time (a
     * loaded machine) the broker may have seen it passed: again on the next
     * queue with a wider margin */
    long long at = 0, answered = 0;
    char props[128];
    int q = 0;
    for (; q < 3; q++) {
        at = wall_ms() + (1500LL << (2 * q));
        snprintf(props, sizeof props, "TIMER_DELIVER_MS\001%lld\002", at);
        send_ok(f, "TimerD", q, props, "future");
        answered = wall_ms();
        if (answered < at)
            break;
        print_message("send answered %lld ms after its delivery time: wider margin\n",
                      answered - at);
    }
    assert_true(q < 3);
    long long early = st_max_offset(f->port, "TimerD", q);
    if (wall_ms() < rounded(at))
        assert_int_equal(early, 0); /* not before its time */
    /* a time already passed: stored in its queue at once, as it is */
    snprintf(props, sizeof props, "TIMER_DELIVER_MS\001%lld\002", wall_ms() - 5000);
    send_ok(f, "TimerP", 2, props, "past");
    assert_int_equal(st_max_offset(f->port, "TimerP", 2), 1);
    rmq_cmd *frame;
    stored_record rec;
    pull_one(f, "TimerP", 2, 0, &frame, &rec);
    assert_prop(&rec, "TIMER_OUT_MS", NULL);
    rmq_cmd_free(frame);

    assert_true(wait_max_offset(f->port, "TimerD", q, 1));
    pull_one(f, "TimerD", q, 0, &frame, &rec);
    assert_memory_equal(rec.body, "future", 6);
    assert_int_equal(prop_ll(&rec, "TIMER_OUT_MS"), rounded(at));
    assert_true(prop_ll(&rec, "TIMER_DEQUEUE_MS") >= rounded(at));
    rmq_cmd_free(frame);
}

/* A delay level and a timer property: the level wins and the TIMER_*
 * properties are cleared (HookUtils.checkIfTimerMessage). */
static void test_delay_level_wins_over_timer_properties(void **state)
{
    fixture *f = *state;
    send_ok(f, "TimerV", 0, "DELAY\0011\002TIMER_DELAY_SEC\0013000\002", "level");
    assert_true(wait_max_offset(f->port, "TimerV", 0, 1)); /* level 1: 1 s, not 3000 s */
    rmq_cmd *frame;
    stored_record rec;
    pull_one(f, "TimerV", 0, 0, &frame, &rec);
    assert_prop(&rec, "DELAY", "1");
    assert_prop(&rec, "TIMER_DELAY_SEC", NULL);
    assert_prop(&rec, "TIMER_OUT_MS", NULL);
    rmq_cmd_free(frame);
}

static void assert_refused(fixture *f, const char *props, int code, const char *remark)
{
    rmq_cmd *r = st_send(f->fd, 3, "TimerR", 0, props, "no", NULL);
    assert_non_null(r);
    assert_int_equal(r->code, code);
    assert_non_null(r->remark);
    assert_string_equal(r->remark, remark);
    rmq_cmd_free(r);
}

static const char ILLEGAL[] =
    "timer message illegal, the delay time should not be bigger than the max delay "
    "259200000ms; or if set del msg, the delay time should be bigger than the current time";

static void test_over_max_delay_and_unparsable_are_refused(void **state)
{
    fixture *f = *state;
    assert_refused(f, "TIMER_DELAY_SEC\001259300\002", 13, ILLEGAL); /* MESSAGE_ILLEGAL */
    assert_refused(f, "TIMER_DELIVER_MS\001soon\002", 13, ILLEGAL);
    assert_refused(f, "TIMER_DELAY_MS\0011.5\002", 13, ILLEGAL);
    /* within the limit: accepted */
    send_ok(f, "TimerR", 0, "TIMER_DELAY_SEC\001259000\002", "ok");
    assert_int_equal(st_max_offset(f->port, "TimerR", 0), 0);
}

static void test_disabled_wheel_refuses(void **state)
{
    fixture *f = *state;
    assert_refused(f, "TIMER_DELAY_SEC\0015\002", 1,
                   "accurate timer message is not enabled, timerWheelEnable is false");
    assert_int_equal(st_max_offset(f->port, TIMER_TOPIC, 0), 0);
}

/* kill -9 with timers pending (some due while the daemon is down, some
 * later): after the restart each one reaches its queue (at least once). */
static void test_pending_timers_survive_kill_9(void **state)
{
    fixture *f = *state;
    enum { N = 40 };
    for (int i = 0; i < N; i++) {
        char props[64], body[16];
        snprintf(props, sizeof props, "TIMER_DELAY_MS\001%d\002", 1500 + (i % 4) * 1000);
        snprintf(body, sizeof body, "k%02d", i);
        send_ok(f, "TimerK", i % 4, props, body);
    }
    assert_int_equal(kill(f->d.pid, SIGKILL), 0);
    assert_int_equal(rmq_td_stop(&f->d), 128 + SIGKILL);
    close(f->fd);
    f->fd = -1;
    rmq_test_pause_ms(2500); /* the first ones fall due while it is down */
    assert_int_equal(start(f), 0);
    bool seen[N] = {0};
    int distinct = 0;
    long long next[4] = {0};
    uint64_t deadline = rmq_test_now_ms() + WAIT_MS;
    while (distinct < N && rmq_test_now_ms() < deadline) {
        for (int q = 0; q < 4; q++) {
            st_pull_args pa = {
                .group = "TimerCG", .topic = "TimerK", .queue = q, .offset = next[q], .max = 32};
            rmq_cmd *c = st_pull(f->fd, 9, &pa);
            stored_record recs[32];
            size_t n = c && c->code == 0 ? st_records(c, recs, 32) : 0;
            for (size_t i = 0; i < n; i++) {
                int k = atoi((const char *)recs[i].body + 1);
                assert_true(k >= 0 && k < N);
                assert_int_equal(k % 4, q);
                if (!seen[k])
                    distinct++;
                seen[k] = true;
            }
            next[q] += (long long)n;
            rmq_cmd_free(c);
        }
        if (distinct < N)
            rmq_test_pause_ms(50);
    }
    long long total = next[0] + next[1] + next[2] + next[3];
    print_message("after kill -9: %d of %d timers delivered (%lld records, %lld duplicates)\n",
                  distinct, N, total, total - distinct);
    char path[600];
    snprintf(path, sizeof path, "%s/store/config/timercheck", f->d.state_dir);
    if (distinct < N) { /* what a failure needs to be understood */
        for (int k = 0; k < N; k++)
            if (!seen[k])
                print_message("k%02d (queue %d) not delivered\n", k, k % 4);
        print_message("TimerK max offsets %lld %lld %lld %lld, %s max %lld\n",
                      st_max_offset(f->port, "TimerK", 0), st_max_offset(f->port, "TimerK", 1),
                      st_max_offset(f->port, "TimerK", 2), st_max_offset(f->port, "TimerK", 3),
                      TIMER_TOPIC, st_max_offset(f->port, TIMER_TOPIC, 0));
        FILE *fp = fopen(path, "r");
        char line[128];
        while (fp && fgets(line, sizeof line, fp))
            print_message("timercheck: %s", line);
        if (fp)
            fclose(fp);
    }
    assert_int_equal(distinct, N);
    /* and the wheel's checkpoint says it took all N: written at the end of
     * a tick, after deliveries the pulls above may already have seen, so
     * waited for (it failed 3 times in 40 loops when only looked at once) */
    assert_int_equal(wait_enqueued(f, N), N);
}

/* A /proc/<pid>/status figure (VmRSS, RssAnon: the mapped commit log's
 * pages count in VmRSS, not in RssAnon). */
/* Timers pending across `rmqhostctl reload store`: the old generation hands
 * the wheel over (checkpointed) and the new one delivers each exactly once. */
static void test_pending_timers_survive_a_reload(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 4; i++) {
        char body[8];
        snprintf(body, sizeof body, "r%d", i);
        send_ok(f, "TimerL", 0, i < 2 ? "TIMER_DELAY_MS\0011200\002" : "TIMER_DELAY_MS\0013500\002",
                body);
    }
    /* the wheel has taken them (its checkpoint says so) before the reload */
    assert_int_equal(wait_enqueued(f, 4), 4);
    int status = -1;
    const char *out = rmq_td_ctl_output(&f->d, &status, "reload", "store", NULL);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "store reloaded"));
    assert_true(wait_max_offset(f->port, "TimerL", 0, 4));
    rmq_test_pause_ms(1500); /* a duplicate would show up meanwhile */
    assert_int_equal(st_max_offset(f->port, "TimerL", 0), 4);
    close(f->fd);
    f->fd = rmq_tc_connect(f->port);
    st_pull_args pa = {.group = "TimerCG", .topic = "TimerL", .queue = 0, .offset = 0, .max = 8};
    rmq_cmd *c = st_pull(f->fd, 11, &pa);
    assert_non_null(c);
    stored_record recs[8];
    size_t n = st_records(c, recs, 8);
    assert_int_equal(n, 4);
    bool seen[4] = {0};
    for (size_t i = 0; i < n; i++) {
        int k = recs[i].body[1] - '0';
        assert_true(k >= 0 && k < 4 && !seen[k]);
        seen[k] = true;
    }
    rmq_cmd_free(c);
}

static long status_kib(pid_t pid, const char *key)
{
    char path[64], line[256], fmt[32];
    snprintf(fmt, sizeof fmt, "%s: %%ld", key);
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *fp = fopen(path, "r");
    long kib = -1;
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, fmt, &kib) == 1)
            break;
    if (fp)
        fclose(fp);
    return kib;
}

/* Many pending timers, pipelined (RMQ_TIMER_MANY, default 20000): all are
 * accepted and held in the wheel topic; the daemon's RSS is printed
 * (measured, not asserted). */
static void test_many_pending_timers(void **state)
{
    fixture *f = *state;
    const char *env = getenv("RMQ_TIMER_MANY");
    int n = env ? atoi(env) : 20000;
    /* RMQ_TIMER_BASELINE=NAME: the same sends with property NAME instead of
     * TIMER_DELAY_SEC (e.g. "plain", or "DELAY": the same slow send path),
     * to see what the daemon's RSS does without timers */
    const char *baseline = getenv("RMQ_TIMER_BASELINE");
    long rss0 = status_kib(f->d.pid, "VmRSS"), anon0 = status_kib(f->d.pid, "RssAnon");
    int sent = 0, acked = 0, window = 256;
    while (acked < n) {
        while (sent < n && sent - acked < window) {
            char props[64];
            snprintf(props, sizeof props, "%s\001%d\002", baseline ? baseline : "TIMER_DELAY_SEC",
                     3600 + sent % 3600); /* none due while the test runs */
            rmq_cmd *req = st_send_request(sent + 1, "TimerM", sent % 4, props, "m", NULL);
            assert_non_null(req);
            assert_int_equal(rmq_tc_send(f->fd, req), 0);
            rmq_cmd_free(req);
            sent++;
        }
        rmq_cmd *r = rmq_tc_recv(f->fd, WAIT_MS);
        assert_non_null(r);
        assert_int_equal(r->code, 0);
        rmq_cmd_free(r);
        acked++;
    }
    if (baseline) {
        print_message("%d sends with %s: daemon VmRSS %ld -> %ld KiB, RssAnon %ld -> %ld KiB\n", n,
                      baseline, rss0, status_kib(f->d.pid, "VmRSS"), anon0,
                      status_kib(f->d.pid, "RssAnon"));
        return;
    }
    assert_int_equal(st_max_offset(f->port, TIMER_TOPIC, 0), n);
    /* the wheel has taken them all: timercheck's enqueueOffset reaches n */
    assert_int_equal(wait_enqueued(f, n), n);
    long rss1 = status_kib(f->d.pid, "VmRSS"), anon1 = status_kib(f->d.pid, "RssAnon");
    print_message("%d pending timers: daemon VmRSS %ld -> %ld KiB, RssAnon %ld -> %ld KiB\n", n,
                  rss0, rss1, anon0, anon1);
    assert_int_equal(st_max_offset(f->port, "TimerM", 0), 0); /* none due yet */
}

int main(void)
{
    /* RMQ_TEST_FILTER=test_name runs one test (cmocka pattern) */
    if (getenv("RMQ_TEST_FILTER"))
        cmocka_set_test_filter(getenv("RMQ_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_delay_sec_waits_then_reaches_its_real_queue, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_deliver_ms_in_the_future_and_in_the_past, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_delay_level_wins_over_timer_properties, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_over_max_delay_and_unparsable_are_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_disabled_wheel_refuses, setup_disabled, teardown),
        cmocka_unit_test_setup_teardown(test_pending_timers_survive_kill_9, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_timers_survive_a_reload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_pending_timers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
