/* test_store_ali_ons.c — a real client (ali-ons) produces and consumes
 * through the all-in-one daemon (namesrv + broker-client-mgr + filter +
 * store): every message reaches a '*' group exactly once with body, tags,
 * keys and user properties intact; a TAG group gets only its tag, an SQL92
 * group only the matching messages (ali_ons_produce_consume.js checks each
 * delivery and prints RESULT). One daemon, one node process, both always
 * stopped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bcm_test_daemon.h"

#define TOPIC "InteropTopic"
#define COUNT "40"

typedef struct fixture {
    rmq_test_daemon d;
    int ns_port;
    pid_t pid;
    int out_fd;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    f->ns_port = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char bcm[512];
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-s\"; brokerIP1 = "
             "\"127.0.0.1\"; topics = \"" TOPIC ":4\";",
             f->ns_port);
    if (f->ns_port <= 0 || rmq_td_init(&f->d, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(&f->d, f->ns_port, "info", bcm) != 0 ||
        rmq_td_add_plugin(&f->d, "filter", "filter", "broker", NULL) != 0 ||
        rmq_td_add_plugin(&f->d, "store", "store", "broker",
                          "mappedFileSizeCommitLog = 1048576;") != 0 ||
        rmq_td_start(&f->d, NULL) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    if (f->pid > 0) {
        kill(f->pid, SIGKILL);
        waitpid(f->pid, NULL, 0);
    }
    int st = rmq_td_stop_reporting(&f->d);
    rmq_td_cleanup(&f->d);
    free(f);
    return st == 0 ? 0 : -1;
}

/* The RESULT line of the script (its other lines go to stderr for the log). */
static bool read_result(fixture *f, char *result, size_t len, int timeout_ms)
{
    char buf[65536];
    size_t have = 0;
    uint64_t deadline = rmq_test_now_ms() + (uint64_t)timeout_ms;
    while (rmq_test_now_ms() < deadline) {
        char *nl;
        while ((nl = memchr(buf, '\n', have)) != NULL) {
            size_t l = (size_t)(nl - buf);
            fprintf(stderr, "node: %.*s\n", (int)l, buf);
            if (l >= 7 && strncmp(buf, "RESULT ", 7) == 0) {
                snprintf(result, len, "%.*s", (int)(l - 7), buf + 7);
                return true;
            }
            memmove(buf, nl + 1, have - l - 1);
            have -= l + 1;
        }
        if (have == sizeof buf)
            have = 0; /* an absurd line: drop it */
        struct pollfd pfd = {.fd = f->out_fd, .events = POLLIN};
        if (poll(&pfd, 1, 200) <= 0)
            continue;
        ssize_t n = read(f->out_fd, buf + have, sizeof buf - have);
        if (n <= 0)
            return false;
        have += (size_t)n;
    }
    return false;
}

static void produce_and_consume_exactly_once(void **state)
{
    fixture *f = *state;
    int out[2];
    assert_int_equal(pipe(out), 0);
    char port[16];
    snprintf(port, sizeof port, "%d", f->ns_port);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        setenv("NODE_PATH", ST_NODE_MODULES, 1);
        execl(ST_NODE, "node", ST_SCRIPT, port, TOPIC, COUNT, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    f->pid = pid;
    f->out_fd = out[0];
    char result[1024] = "";
    bool got = read_result(f, result, sizeof result, 120000);
    close(f->out_fd);
    int status = 0;
    waitpid(f->pid, &status, 0);
    f->pid = 0;
    assert_true(got);
    if (strcmp(result, "ok") != 0)
        fail_msg("ali-ons: %s", result);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(produce_and_consume_exactly_once, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
