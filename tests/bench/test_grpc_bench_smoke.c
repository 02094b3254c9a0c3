/* test_grpc_bench_smoke.c — rmqbench --grpc against a real all-in-one
 * rmqhostd (namesrv, broker-client-mgr, store, the proxy plugin on a gRPC
 * server, TLS permissive: TLS and h2c on one port): 2,000 messages sent,
 * every one received and acknowledged, over TLS and over plaintext, each on
 * a topic of its own; and a send to a topic that does not exist makes it
 * exit non-zero with the errors counted. Counts only, never timings. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child_lifetime.h"
#include "rmq_test_support.h"

#define COUNT 2000
#define DEADLINE_MS 120000

typedef struct fixture {
    rmq_test_daemon d;
    char cert_dir[64];
    char cert[128], key[128];
    char endpoint[64];
    char out[8192];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    snprintf(f->cert_dir, sizeof f->cert_dir, "/tmp/rmqgrpcbench.XXXXXX");
    if (rmq_test_self_signed_cert(f->cert_dir, "rmqbench-grpc", f->cert, sizeof f->cert, f->key,
                                  sizeof f->key) != 0)
        return -1;
    int ns_port = rmq_tc_free_port();
    if (ns_port <= 0 || rmq_td_init(&f->d, NULL, NULL) != 0)
        return -1;
    char host_conf[2048], bcm[512];
    snprintf(
        host_conf, sizeof host_conf,
        "state_dir = \"%s\";\nadmin_socket = \"%s\";\nlog_level = \"info\";\n"
        "io_threads = 2;\nservers = {\n  namesrv = { listen = \"127.0.0.1:%d\"; };\n"
        "  broker = { listen = \"127.0.0.1:0\"; };\n"
        "  proxy = { listen = \"127.0.0.1:0\"; protocol = \"grpc\";\n"
        "    tls = { mode = \"permissive\"; cert_file = \"%s\"; key_file = \"%s\"; }; };\n};\n",
        f->d.state_dir, f->d.admin_socket, ns_port, f->cert, f->key);
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-g\"; brokerIP1 = "
             "\"127.0.0.1\"; topics = \"BenchTls:4;BenchPlain:4\";",
             ns_port);
    if (rmq_td_write_conf(&f->d, "host.conf", host_conf) != 0 ||
        rmq_td_add_plugin(&f->d, "namesrv", "namesrv", "namesrv", NULL) != 0 ||
        rmq_td_add_plugin(&f->d, "broker-client-mgr", "broker-client-mgr", "broker", bcm) != 0 ||
        rmq_td_add_plugin(&f->d, "store", "store", "broker",
                          "mappedFileSizeCommitLog = 8388608;") != 0 ||
        rmq_td_add_plugin(&f->d, "proxy", "proxy", "proxy", NULL) != 0 ||
        rmq_td_start(&f->d, NULL) != 0)
        return -1;
    snprintf(f->endpoint, sizeof f->endpoint, "127.0.0.1:%d", rmq_td_port(&f->d, "proxy"));
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0;
    int st = rmq_td_stop_reporting(&f->d);
    rmq_td_cleanup(&f->d);
    rmq_test_remove_tree(f->cert_dir);
    free(f);
    return st == 0 ? 0 : -1;
}

/* Run rmqbench with args (NULL-terminated); its stdout in f->out (stderr
 * passes through to the test's); the exit status, or -1. */
static int run_bench(fixture *f, const char *const *args)
{
    char *argv[32] = {RMQBENCH_BIN};
    int n = 1;
    for (; *args && n < 31; args++)
        argv[n++] = (char *)*args;
    argv[n] = NULL;
    pid_t pid;
    int out = rmq_child_spawn_stdout(argv, &pid);
    if (out < 0)
        return -1;
    size_t len = 0;
    uint64_t deadline = rmq_test_now_ms() + DEADLINE_MS;
    while (len + 1 < sizeof f->out && rmq_test_now_ms() < deadline) {
        struct pollfd p = {.fd = out, .events = POLLIN};
        int rc = poll(&p, 1, 500);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            continue;
        ssize_t r = read(out, f->out + len, sizeof f->out - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    f->out[len] = '\0';
    close(out);
    int status = 0;
    if (rmq_test_now_ms() >= deadline)
        kill(pid, SIGKILL); /* a hung client fails the test, not CI */
    waitpid(pid, &status, 0);
    printf("rmqbench said:\n%s", f->out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The value of key= on the line starting with `line` ("send", "recv"), or -1. */
static long field(const fixture *f, const char *line, const char *key)
{
    char start[16], pat[32];
    snprintf(start, sizeof start, "%s ", line);
    snprintf(pat, sizeof pat, " %s=", key);
    for (const char *p = f->out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, start, strlen(start)) != 0)
            continue;
        const char *eol = strchr(p, '\n');
        const char *k = strstr(p, pat);
        if (!k || (eol && k > eol))
            return -1;
        return strtol(k + strlen(pat), NULL, 10);
    }
    return -1;
}

/* TLS: 8 consumers acknowledging one message at a time; plaintext: 16
 * consumers with 4 Acks in flight each. */
static void sends_and_acks_every_message(fixture *f, const char *topic, int tls)
{
    const char *args[] = {"--grpc",
                          f->endpoint,
                          "--topic",
                          topic,
                          "--group",
                          "BenchGroup",
                          "-n",
                          "2000",
                          "-c",
                          tls ? "8" : "16",
                          "--ackc",
                          tls ? "1" : "4",
                          "--batch",
                          "32",
                          tls ? "--tls" : NULL,
                          NULL};
    assert_int_equal(run_bench(f, args), 0);
    assert_int_equal(field(f, "send", "n"), COUNT);
    assert_int_equal(field(f, "send", "errors"), 0);
    assert_int_equal(field(f, "recv", "acked"), COUNT);
    assert_true(field(f, "recv", "n") >= COUNT);
    assert_int_equal(field(f, "recv", "errors"), 0);
    assert_null(strstr(f->out, "incomplete"));
}

static void over_tls(void **state)
{
    sends_and_acks_every_message(*state, "BenchTls", 1);
}

static void over_plaintext(void **state)
{
    sends_and_acks_every_message(*state, "BenchPlain", 0);
}

/* Every send refused (TOPIC_NOT_FOUND): counted, and the exit says so. */
static void missing_topic_fails(void **state)
{
    fixture *f = *state;
    const char *args[] = {"--grpc", f->endpoint, "--topic", "NoSuchBenchTopic", "-n", "20",
                          "-c",     "2",         NULL};
    assert_int_not_equal(run_bench(f, args), 0);
    assert_int_equal(field(f, "send", "n"), 0);
    assert_int_equal(field(f, "send", "errors"), 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(over_tls),
        cmocka_unit_test(over_plaintext),
        cmocka_unit_test(missing_topic_fails),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
