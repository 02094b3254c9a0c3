/* test_bench_smoke.c — runs the real rmqbench binary against the real
 * baseline_server and checks what it reports: requests answered, only
 * SUCCESS codes, non-zero exit when nothing listens. Counts only, never
 * timings: a slow machine must still pass. */
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "child_lifetime.h"

#define DEADLINE_MS 20000

typedef struct smoke_fixture {
    pid_t server_pid;
    int port;
} smoke_fixture;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read until EOF, the buffer is full, or a newline when stop_at_newline;
 * bounded by a deadline so a hung child fails the test instead of CI. */
static size_t read_output(int fd, char *buf, size_t cap, int stop_at_newline)
{
    size_t len = 0;
    int64_t deadline = now_ms() + DEADLINE_MS;
    while (len + 1 < cap) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            break;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, (int)left);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            break;
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        if (stop_at_newline && memchr(buf, '\n', len))
            break;
    }
    buf[len] = '\0';
    return len;
}

static int wait_exit(pid_t pid)
{
    int status = 0;
    int64_t deadline = now_ms() + DEADLINE_MS;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 || now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL); /* polling a child's exit; the deadline decides */
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int start_server(void **state)
{
    smoke_fixture *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    char *argv[] = {BASELINE_SERVER_BIN, "-l", "127.0.0.1:0", NULL};
    int fd = rmq_child_spawn_stdout(argv, &f->server_pid);
    if (fd < 0) {
        free(f);
        return -1;
    }
    char line[128];
    read_output(fd, line, sizeof(line), 1);
    close(fd);
    if (sscanf(line, "listening 127.0.0.1:%d", &f->port) != 1 || f->port <= 0) {
        fprintf(stderr, "baseline_server said: '%s'\n", line);
        kill(f->server_pid, SIGKILL);
        waitpid(f->server_pid, NULL, 0);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int stop_server(void **state)
{
    smoke_fixture *f = *state;
    kill(f->server_pid, SIGTERM);
    waitpid(f->server_pid, NULL, 0);
    free(f);
    return 0;
}

/* Run rmqbench --json against port with extra args; returns parsed output
 * (NULL if unparsable) and the exit status in *exit_status. */
static json_t *run_bench(int port, const char *const *extra, int *exit_status)
{
    char target[64];
    snprintf(target, sizeof(target), "127.0.0.1:%d", port);
    char *argv[32] = {RMQBENCH_BIN, "-a", target, "--json"};
    int n = 4;
    for (; extra && *extra && n < 31; extra++)
        argv[n++] = (char *)*extra;
    argv[n] = NULL;
    pid_t pid;
    int fd = rmq_child_spawn_stdout(argv, &pid);
    assert_true(fd >= 0);
    static char out[16384];
    read_output(fd, out, sizeof(out), 0);
    close(fd);
    *exit_status = wait_exit(pid);
    json_error_t err;
    json_t *j = json_loads(out, 0, &err);
    if (!j)
        fprintf(stderr, "rmqbench printed: '%s'\n", out);
    return j;
}

static void assert_only_success_answers(json_t *j)
{
    json_int_t requests = json_integer_value(json_object_get(j, "requests"));
    assert_true(requests > 0);
    json_t *codes = json_object_get(j, "responses");
    assert_true(json_is_object(codes));
    assert_int_equal(json_object_size(codes), 1);
    assert_int_equal(json_integer_value(json_object_get(codes, "0")), requests);
    assert_int_equal(json_integer_value(json_object_get(j, "errors")), 0);
    json_t *lat = json_object_get(j, "latency_us");
    assert_int_equal(json_integer_value(json_object_get(lat, "samples")), requests);
    assert_true(json_real_value(json_object_get(lat, "p50")) <=
                json_real_value(json_object_get(lat, "max")));
}

static void test_bench_against_baseline_counts_only_success_responses(void **state)
{
    smoke_fixture *f = *state;
    const char *args[] = {"-s", "1", "-w", "0", "-c", "2", "-d", "8", NULL};
    int status;
    json_t *j = run_bench(f->port, args, &status);
    assert_non_null(j);
    assert_int_equal(status, 0);
    assert_only_success_answers(j);
    json_decref(j);
}

static void test_bench_binary_headers_are_answered_and_matched(void **state)
{
    smoke_fixture *f = *state;
    const char *args[] = {"-s", "0.5", "-w",         "0",  "-c", "2",
                          "-d", "4",   "--rocketmq", "-t", "2",  NULL};
    int status;
    json_t *j = run_bench(f->port, args, &status);
    assert_non_null(j);
    assert_int_equal(status, 0);
    assert_string_equal(json_string_value(json_object_get(j, "serialize")), "ROCKETMQ");
    assert_only_success_answers(j);
    json_decref(j);
}

/* Register mode: REGISTER_BROKER rounds (JSON and compressed, split into
 * frames) are sent and answered, and the probe connection looks routes up. */
static void test_register_mode_rounds_are_answered(void **state)
{
    smoke_fixture *f = *state;
    const char *forms[][12] = {
        {"--register", "200", "--rounds", "3", "--split", "64", "--probe", NULL},
        {"--register", "50", "--rounds", "2", "--compressed", NULL},
    };
    for (size_t i = 0; i < 2; i++) {
        int status;
        json_t *j = run_bench(f->port, forms[i], &status);
        assert_non_null(j);
        assert_int_equal(status, 0);
        assert_true(json_real_value(json_object_get(j, "first_ms")) > 0.0);
        assert_true(json_real_value(json_object_get(j, "rereg_median_ms")) > 0.0);
        assert_int_equal(json_integer_value(json_object_get(j, "rounds")), i == 0 ? 3 : 2);
        assert_true(json_integer_value(json_object_get(j, "frame_bytes")) > 0);
        if (i == 0)
            assert_true(
                json_integer_value(json_object_get(json_object_get(j, "probe"), "lookups")) > 0);
        json_decref(j);
    }
}

static void test_bench_exits_nonzero_when_connection_refused(void **state)
{
    (void)state;
    /* A bound socket that never listens: connects to it are refused. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t len = sizeof(a);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    const char *args[] = {"-s", "1", "-w", "0", NULL};
    int status;
    json_t *j = run_bench(ntohs(a.sin_port), args, &status);
    close(fd);
    assert_int_not_equal(status, 0);
    if (j) {
        assert_true(
            json_integer_value(json_object_get(json_object_get(j, "error_detail"), "connect")) > 0);
        json_decref(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bench_against_baseline_counts_only_success_responses),
        cmocka_unit_test(test_bench_binary_headers_are_answered_and_matched),
        cmocka_unit_test(test_bench_exits_nonzero_when_connection_refused),
        cmocka_unit_test(test_register_mode_rounds_are_answered),
    };
    return cmocka_run_group_tests(tests, start_server, stop_server);
}
