/* test_plugin_reload.c — hot reload against a real rmqhostd: reloads that
 * must be refused (wrong ABI, missing symbol, failing init) leave the old
 * generation serving; a plugin without state transfer is reloaded with a
 * warning; 20 reloads of namesrv under a load of route lookups and broker
 * registrations lose no request, no route and no KV entry. */
#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "rmq_test_support.h"

static const char *const SERVERS[] = {"main", "namesrv", NULL};

static int generation_of(rmq_test_daemon *d, const char *name)
{
    int code;
    const char *out = rmq_td_ctl_output(d, &code, "list", "--json", NULL);
    assert_int_equal(code, 0);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    int gen = -1;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(j, "plugins"), i,
                       p) if (strcmp(json_string_value(json_object_get(p, "name")), name) == 0)
        gen = (int)json_integer_value(json_object_get(p, "generation"));
    json_decref(j);
    return gen;
}

static void copy_file(const char *src, const char *dst)
{
    char tmp[600];
    snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
    FILE *in = fopen(src, "rb"), *out = fopen(tmp, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(rename(tmp, dst), 0); /* what a deploy does: never rewrite in place */
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sends req and tells whether its answer is a success with req's opaque. */
static bool call_ok(int fd, const rmq_cmd *req, rmq_cmd **resp_out)
{
    rmq_cmd *resp = rmq_tc_call(fd, req, 10000);
    bool ok = resp && resp->code == 0 && resp->opaque == req->opaque;
    if (!ok)
        fprintf(stderr, "code %d opaque %d: %s (code %d, opaque %d, remark %s)\n", req->code,
                req->opaque, resp ? "bad answer" : "no answer", resp ? resp->code : -1,
                resp ? resp->opaque : -1, resp && resp->remark ? resp->remark : "-");
    if (resp_out)
        *resp_out = resp;
    else
        rmq_cmd_free(resp);
    return ok;
}

/* call_ok for a request of ext fields only. */
static bool call_kv_ok(int fd, int code, int opaque, const char *const *kv, rmq_cmd **resp_out)
{
    rmq_cmd *req = rmq_tc_request(code, opaque, kv);
    bool ok = req && call_ok(fd, req, resp_out);
    rmq_cmd_free(req);
    return ok;
}

/* ---- refused reloads ---- */

static bool echo_works(int port)
{
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        return false;
    const char *kv[] = {"msg", "still-here", NULL};
    rmq_cmd *resp = NULL;
    bool ok = call_kv_ok(fd, 9001, 1, kv, &resp);
    ok = ok && resp && rmq_cmd_ext_get(resp, "echo") &&
         strcmp(rmq_cmd_ext_get(resp, "echo"), "still-here") == 0;
    rmq_cmd_free(resp);
    close(fd);
    return ok;
}

static void test_refused_reloads_keep_the_old_generation_serving(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    char victim[512], echo_so[512];
    snprintf(victim, sizeof(victim), "%s/victim.so", d.dir);
    snprintf(echo_so, sizeof(echo_so), "%s/echo.so", RMQ_TEST_PLUGIN_DIR);
    copy_file(echo_so, victim);
    char conf[1024];
    snprintf(conf, sizeof(conf),
             "plugin = { name = \"victim\"; path = \"%s\"; server = \"main\"; enabled = true; };\n",
             victim);
    assert_int_equal(rmq_td_write_conf(&d, "50-victim.conf", conf), 0);
    assert_int_equal(rmq_td_start(&d, NULL), 0);
    int port = rmq_td_port(&d, "main");
    assert_true(echo_works(port));
    assert_int_equal(generation_of(&d, "victim"), 1);

    static const struct {
        const char *fixture;
        const char *reason;
    } cases[] = {
        {"bad_abi.so", "was built for plugin ABI 2.0, this host speaks 1."},
        {"missing_symbol.so", "undefined symbol: rmq_reload_fixture_symbol_nobody_defines"},
        {"failing_init.so", "init failed: invalid argument"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char src[512];
        snprintf(src, sizeof(src), "%s/%s", RMQ_RELOAD_FIXTURES, cases[i].fixture);
        copy_file(src, victim);
        int code;
        const char *out = rmq_td_ctl_output(&d, &code, "reload", "victim", NULL);
        if (!strstr(out, cases[i].reason))
            fprintf(stderr, "%s: %s\n", cases[i].fixture, out);
        assert_int_equal(code, 1);
        assert_non_null(strstr(out, cases[i].reason));
        assert_non_null(strstr(out, "generation 1 keeps serving"));
        assert_true(echo_works(port));
        assert_int_equal(generation_of(&d, "victim"), 1);
    }
    /* a good build goes through, and timers of the old one were revived in
     * between (the daemon stops cleanly, which waits for them) */
    copy_file(echo_so, victim);
    int code;
    rmq_td_ctl_output(&d, &code, "reload", "victim", NULL);
    assert_int_equal(code, 0);
    assert_int_equal(generation_of(&d, "victim"), 2);
    assert_true(echo_works(port));
    assert_int_equal(rmq_td_stop(&d), 0);
    rmq_td_cleanup(&d);
}

static void test_reload_without_state_transfer_warns_state_is_reset(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    char conf[1024];
    snprintf(conf, sizeof(conf),
             "plugin = { name = \"stateless\"; path = \"%s/stateless.so\"; server = \"main\"; "
             "enabled = true; };\n",
             RMQ_RELOAD_FIXTURES);
    assert_int_equal(rmq_td_write_conf(&d, "50-stateless.conf", conf), 0);
    assert_int_equal(rmq_td_start(&d, NULL), 0);
    int code;
    const char *out = rmq_td_ctl_output(&d, &code, "reload", "stateless", NULL);
    assert_int_equal(code, 0);
    assert_non_null(strstr(out, "its state is reset"));
    assert_int_equal(generation_of(&d, "stateless"), 2);
    int fd = rmq_tc_connect(rmq_td_port(&d, "main"));
    assert_true(call_kv_ok(fd, 9101, 5, NULL, NULL));
    close(fd);
    assert_int_equal(rmq_td_stop(&d), 0);
    rmq_td_cleanup(&d);
}

/* ---- 20 reloads of namesrv under load ---- */

#define BROKERS 4
#define LOADERS 4
#define RELOADS 20
static const char TOPIC[] = "ReloadTopic";

static bool register_broker(int fd, int opaque, int i, long long counter)
{
    char name[16], addr[32];
    snprintf(name, sizeof(name), "rb%d", i);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", 10911 + 10 * i);
    rmq_tc_broker b = {.cluster = "ReloadCluster", .name = name, .addr = addr, .id = 0};
    char *body = rmq_tb_register_body_json(counter, 1700000000000LL, TOPIC);
    rmq_cmd *req = body ? rmq_tc_register_broker_request(opaque, &b, body, strlen(body)) : NULL;
    bool ok = req && call_ok(fd, req, NULL);
    rmq_cmd_free(req);
    free(body);
    return ok;
}

static bool route_has_all_brokers(int fd, int opaque)
{
    const char *kv[] = {"topic", TOPIC, NULL};
    rmq_cmd *resp = NULL;
    bool ok = call_kv_ok(fd, 105, opaque, kv, &resp);
    if (ok) {
        char *body = strndup((const char *)resp->body, resp->body_len);
        for (int i = 0; i < BROKERS && ok; i++) {
            char needle[32];
            snprintf(needle, sizeof(needle), "\"rb%d\"", i);
            ok = strstr(body, needle) != NULL;
        }
        if (!ok)
            fprintf(stderr, "route opaque %d lacks a broker: %s\n", opaque, body);
        free(body);
    }
    rmq_cmd_free(resp);
    return ok;
}

static bool kv_intact(int fd, int opaque)
{
    const char *kv[] = {"namespace", "reload", "key", "k", NULL};
    rmq_cmd *resp = NULL;
    bool ok = call_kv_ok(fd, 101, opaque, kv, &resp);
    ok = ok && rmq_cmd_ext_get(resp, "value") &&
         strcmp(rmq_cmd_ext_get(resp, "value"), "kept-across-reloads") == 0;
    rmq_cmd_free(resp);
    return ok;
}

typedef struct loader {
    pthread_t thread;
    int fd;
    int port, index;
    atomic_bool *stop;
    long sent, answered_ok;
    uint64_t max_ns;
    char first_failure[160];
} loader;

static void *load_main(void *arg)
{
    loader *l = arg;
    int fd = rmq_tc_connect(l->port);
    if (fd < 0) {
        snprintf(l->first_failure, sizeof(l->first_failure), "cannot connect");
        return NULL;
    }
    for (int op = 0; !atomic_load(l->stop); op++) {
        uint64_t t0 = now_ns();
        int opaque = op + 1;
        bool ok;
        l->sent++;
        if (op % 2 == 0)
            ok = route_has_all_brokers(fd, opaque);
        else
            ok = register_broker(fd, opaque, l->index % BROKERS, 1000 + op);
        uint64_t dt = now_ns() - t0;
        if (dt > l->max_ns)
            l->max_ns = dt;
        if (ok)
            l->answered_ok++;
        else if (!l->first_failure[0])
            snprintf(l->first_failure, sizeof(l->first_failure), "op %d (code %d) failed", op,
                     op % 2 == 0 ? 105 : 103);
    }
    /* Closed by the test once every loader stopped: a closed connection
     * removes the broker registered on it, which the other loaders' last
     * route checks would see missing. */
    l->fd = fd;
    return NULL;
}

static void test_twenty_reloads_of_namesrv_under_load_lose_nothing(void **state)
{
    (void)state;
    char so[512];
    snprintf(so, sizeof(so), "%s/namesrv.so", RMQ_TEST_PLUGIN_DIR);
    struct stat st;
    if (stat(so, &st) != 0) {
        fprintf(stderr, "namesrv.so not built: skipped\n");
        skip();
    }
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&d, "namesrv", "namesrv", "namesrv", NULL), 0);
    assert_int_equal(rmq_td_start(&d, NULL), 0);
    int port = rmq_td_port(&d, "namesrv");
    assert_true(port > 0);
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    int opaque = 1;
    for (int i = 0; i < BROKERS; i++)
        assert_true(register_broker(fd, opaque++, i, 1));
    const char *put[] = {"namespace", "reload", "key", "k", "value", "kept-across-reloads", NULL};
    assert_true(call_kv_ok(fd, 100, opaque++, put, NULL));
    assert_true(route_has_all_brokers(fd, opaque++));
    assert_true(kv_intact(fd, opaque++));

    atomic_bool stop = false;
    loader loaders[LOADERS];
    memset(loaders, 0, sizeof(loaders));
    for (int i = 0; i < LOADERS; i++) {
        loaders[i].port = port;
        loaders[i].index = i;
        loaders[i].stop = &stop;
        assert_int_equal(pthread_create(&loaders[i].thread, NULL, load_main, &loaders[i]), 0);
    }
    unsigned long long max_held_us = 0;
    int reloads_ok = 0, checks_ok = 0;
    for (int r = 0; r < RELOADS; r++) {
        int code;
        const char *out = rmq_td_ctl_output(&d, &code, "reload", "namesrv", NULL);
        if (code != 0)
            fprintf(stderr, "reload %d: %s\n", r + 1, out);
        reloads_ok += code == 0;
        const char *held = strstr(out, "requests held ");
        if (held) {
            unsigned long long us = strtoull(held + strlen("requests held "), NULL, 10);
            if (us > max_held_us)
                max_held_us = us;
        }
        /* routes and KV intact right after each reload */
        checks_ok += route_has_all_brokers(fd, opaque++) && kv_intact(fd, opaque++);
    }
    atomic_store(&stop, true);
    long sent = 0, ok = 0;
    uint64_t max_ns = 0;
    for (int i = 0; i < LOADERS; i++) {
        pthread_join(loaders[i].thread, NULL);
        sent += loaders[i].sent;
        ok += loaders[i].answered_ok;
        if (loaders[i].max_ns > max_ns)
            max_ns = loaders[i].max_ns;
        if (loaders[i].first_failure[0])
            fprintf(stderr, "loader %d: %s\n", i, loaders[i].first_failure);
    }
    for (int i = 0; i < LOADERS; i++)
        if (loaders[i].fd > 0)
            close(loaders[i].fd);
    fprintf(stderr,
            "reload under load: %d reloads, %ld requests sent, %ld answered with success; "
            "longest request round trip %.3f ms; longest hold inside a reload %llu us\n",
            RELOADS, sent, ok, (double)max_ns / 1e6, max_held_us);
    assert_int_equal(reloads_ok, RELOADS);
    assert_int_equal(checks_ok, RELOADS);
    assert_true(sent > 0);
    assert_int_equal(ok, sent);
    assert_int_equal(generation_of(&d, "namesrv"), 1 + RELOADS);
    close(fd);
    assert_int_equal(rmq_td_stop(&d), 0);
    rmq_td_cleanup(&d);
}

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : NULL;
    const struct CMUnitTest all[] = {
        cmocka_unit_test(test_refused_reloads_keep_the_old_generation_serving),
        cmocka_unit_test(test_reload_without_state_transfer_warns_state_is_reset),
        cmocka_unit_test(test_twenty_reloads_of_namesrv_under_load_lose_nothing),
    };
    struct CMUnitTest pick[sizeof(all) / sizeof(all[0])];
    size_t n = 0;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (rmq_test_name_selected(filter, all[i].name))
            pick[n++] = all[i];
    return _cmocka_run_group_tests("plugin_reload", pick, n, NULL, NULL);
}
