/* test_sdk_example.c — proves the SDK works the way a third-party author uses
 * it: install this build tree to a temp prefix, build sdk/examples/echo out
 * of tree (pkg-config Makefile and CMake package), load that .so into the
 * real rmqhostd and talk to it. Must not touch the source tree or fixed ports. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remoting_command.h"
#include "rmq_test_support.h"

#define RESPONSE_SUCCESS 0 /* protocol.md §3.1 */

/* Baked in by CMake: RMQ_TEST_BUILD_DIR (tree to install), RMQ_TEST_ECHO_SRC
 * (sdk/examples/echo), RMQ_TEST_CMAKE (cmake binary), RMQ_TEST_MAKE (make),
 * RMQ_TEST_SMOKE_SCRIPT (installed_daemon_smoke.sh). */

typedef struct sdk_fixture {
    char root[256];   /* temp root, removed at teardown */
    char prefix[300]; /* root/prefix: the installed SDK */
    char src[300];    /* root/echo: a copy of the example, built there */
    char log[300];    /* root/commands.log: output of every command */
    char so_path[400];
    bool daemon_started;
    rmq_test_daemon daemon;
} sdk_fixture;

/* Run a shell command with its output appended to the fixture log; on
 * failure print the log so ctest --output-on-failure shows why. */
static int run_logged(const sdk_fixture *f, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(cmd) - 64) {
        fprintf(stderr, "command too long\n");
        return -1;
    }
    char full[sizeof(cmd) + 400];
    snprintf(full, sizeof(full), "(%s) >>'%s' 2>&1", cmd, f->log);
    int st = system(full);
    int rc = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
    if (rc != 0) {
        fprintf(stderr, "FAILED (%d): %s\n--- %s ---\n", rc, cmd, f->log);
        char cat[400];
        snprintf(cat, sizeof(cat), "tail -n 60 '%s' 1>&2", f->log);
        if (system(cat) == -1) {
            perror("system");
        }
    }
    return rc;
}

static bool file_exists(const char *dir, const char *rel)
{
    char p[700];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    return stat(p, &st) == 0;
}

static int fixture_setup(void **state)
{
    sdk_fixture *f = calloc(1, sizeof(*f));
    if (f == NULL) {
        return -1;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(f->root, sizeof(f->root), "%s/rmq-sdk-example-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(f->root) == NULL) {
        perror("mkdtemp");
        free(f);
        return -1;
    }
    snprintf(f->prefix, sizeof(f->prefix), "%s/prefix", f->root);
    snprintf(f->src, sizeof(f->src), "%s/echo", f->root);
    snprintf(f->log, sizeof(f->log), "%s/commands.log", f->root);
    snprintf(f->so_path, sizeof(f->so_path), "%s/echo.so", f->src);
    *state = f;

    /* (a) what `make install PREFIX=...` does, against this very build. */
    if (run_logged(f, "'%s' --install '%s' --prefix '%s'", RMQ_TEST_CMAKE, RMQ_TEST_BUILD_DIR,
                   f->prefix) != 0) {
        return -1;
    }
    /* (b) a copy, so the example's Makefile sees only what an author has:
     * its own directory and the installed SDK. -Werror: the example must
     * stay warning-free for every compiler an author may use. */
    if (run_logged(f, "cp -R '%s' '%s' && rm -f '%s'/*.so && rm -rf '%s/build'", RMQ_TEST_ECHO_SRC,
                   f->src, f->src, f->src) != 0) {
        return -1;
    }
    if (run_logged(f,
                   "cd '%s' && env -u CFLAGS PKG_CONFIG_PATH='%s/lib/pkgconfig' '%s' "
                   "CFLAGS='-O2 -Werror'",
                   f->src, f->prefix, RMQ_TEST_MAKE) != 0) {
        return -1;
    }
    return 0;
}

static int fixture_teardown(void **state)
{
    sdk_fixture *f = *state;
    if (f == NULL) {
        return 0;
    }
    if (f->daemon_started) {
        rmq_td_cleanup(&f->daemon);
    }
    if (getenv("RMQ_KEEP_TMP") == NULL && f->root[0] == '/') {
        char cmd[400];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
        if (system(cmd) == -1) {
            perror("system");
        }
    }
    free(f);
    return 0;
}

static void test_install_gives_sdk_headers_pkgconfig_and_cmake_package(void **state)
{
    sdk_fixture *f = *state;
    assert_true(file_exists(f->prefix, "bin/rmqhostd"));
    assert_true(file_exists(f->prefix, "include/rmqhost/rmqhost.h"));
    assert_true(file_exists(f->prefix, "lib/pkgconfig/rmqhost-sdk.pc"));
    assert_true(file_exists(f->prefix, "lib/cmake/rmqhost-sdk/rmqhost-sdkConfig.cmake"));
    assert_true(file_exists(f->prefix, "lib/cmake/rmqhost-sdk/rmqhost-sdkConfigVersion.cmake"));
    assert_true(file_exists(f->prefix, "lib/rmqhost/plugins"));
    assert_true(file_exists(f->prefix, "etc/rmqhost/conf.d"));
    /* The .pc must name the prefix it was installed to, not the configure
     * prefix, or an author's build would pick up another SDK. */
    assert_int_equal(run_logged(f,
                                "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags rmqhost-sdk"
                                " | grep -qF -- '-I%s/include'",
                                f->prefix, f->prefix),
                     0);
    assert_int_equal(run_logged(f,
                                "test \"$(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config "
                                "--variable=plugindir rmqhost-sdk)\" = '%s/lib/rmqhost/plugins'",
                                f->prefix, f->prefix),
                     0);
}

/* The installed tree is self-contained: its daemon resolves the plugins
 * named in its own conf.d (relative paths) under the prefix it was installed
 * to, even when that is not the configure-time prefix, and runs healthy. */
static void test_installed_daemon_runs_installed_conf_d_unedited(void **state)
{
    sdk_fixture *f = *state;
    assert_int_equal(run_logged(f, "bash '%s' '%s'", RMQ_TEST_SMOKE_SCRIPT, f->prefix), 0);
}

static void test_example_builds_with_pkg_config_makefile(void **state)
{
    sdk_fixture *f = *state;
    struct stat st;
    assert_int_equal(stat(f->so_path, &st), 0);
    /* Only the descriptor may be exported: helpers stay private. */
    assert_int_equal(run_logged(f,
                                "test \"$(nm -D --defined-only '%s' | awk '{print $3}' | "
                                "grep -v '^_' | sort | tr '\\n' ' ')\" = 'rmq_plugin '",
                                f->so_path),
                     0);
}

static void test_example_builds_with_cmake_package(void **state)
{
    sdk_fixture *f = *state;
    assert_int_equal(run_logged(f,
                                "'%s' -S '%s' -B '%s/cmake-build' -DCMAKE_PREFIX_PATH='%s' "
                                "-DCMAKE_C_FLAGS='-Werror %s' -DCMAKE_EXE_LINKER_FLAGS='%s' "
                                "&& '%s' --build '%s/cmake-build'",
                                RMQ_TEST_CMAKE, f->src, f->root, f->prefix, RMQ_TEST_SAN_FLAGS,
                                RMQ_TEST_SAN_FLAGS, RMQ_TEST_CMAKE, f->root),
                     0);
    assert_true(file_exists(f->root, "cmake-build/echo.so"));
}

/* The test kit as an author gets it: library, header, pkg-config file,
 * CMake package, the replay tool and the recorded frames. */
static void test_install_gives_testkit_replay_and_vectors(void **state)
{
    sdk_fixture *f = *state;
    assert_true(file_exists(f->prefix, "include/rmqhost/testkit.h"));
    assert_true(file_exists(f->prefix, "include/rmqhost/helpers.h"));
    assert_true(file_exists(f->prefix, "lib/librmqhost-testkit.so"));
    assert_true(file_exists(f->prefix, "lib/pkgconfig/rmqhost-testkit.pc"));
    assert_true(file_exists(f->prefix, "lib/cmake/rmqhost-testkit/rmqhost-testkitConfig.cmake"));
    assert_true(file_exists(f->prefix, "share/rmqhost/vectors/README.md"));
    assert_true(file_exists(f->prefix, "share/rmqhost/vectors/105-get-routeinfo.req.bin"));
    assert_int_equal(run_logged(f,
                                "'%s/bin/rmqhost-replay' --help | grep -q '^usage: rmqhost-replay'",
                                f->prefix),
                     0);
    /* the installed tool finds the installed frames and the installed kit */
    assert_int_equal(
        run_logged(f,
                   "'%s/bin/rmqhost-replay' --plugin '%s/lib/rmqhost/plugins/namesrv.so' "
                   "103-register-broker.req.bin 100-put-kv-config.req.bin "
                   "101-get-kv-config.req.bin",
                   f->prefix, f->prefix),
        0);
}

/* The example's unit tests, built against the installed kit with nothing
 * but pkg-config (`cc ... $(pkg-config --cflags --libs rmqhost-testkit)`
 * inside `make check`), run and pass. */
static void test_example_unit_tests_build_with_pkg_config_and_pass(void **state)
{
    sdk_fixture *f = *state;
    assert_int_equal(run_logged(f,
                                "cd '%s' && env -u CFLAGS PKG_CONFIG_PATH='%s/lib/pkgconfig' '%s' "
                                "check CFLAGS='-O2 -Werror %s' LDFLAGS='%s'",
                                f->src, f->prefix, RMQ_TEST_MAKE, RMQ_TEST_SAN_FLAGS,
                                RMQ_TEST_SAN_FLAGS),
                     0);
    assert_true(file_exists(f->src, "echo_test"));
}

/* The same tests through the CMake package (built by the test above). */
static void test_example_unit_tests_run_with_cmake_package(void **state)
{
    sdk_fixture *f = *state;
    assert_true(file_exists(f->root, "cmake-build/echo_test"));
    assert_int_equal(
        run_logged(f, "cd '%s/cmake-build' && '%s' --output-on-failure", f->root, RMQ_TEST_CTEST),
        0);
}

/* Start the real daemon with the out-of-tree echo.so bound to server "main". */
static int start_daemon_with_example(sdk_fixture *f)
{
    static const char *const servers[] = {"main", NULL};
    if (rmq_td_init(&f->daemon, servers, NULL) != 0) {
        return -1;
    }
    f->daemon_started = true;
    char conf[1024];
    snprintf(conf, sizeof(conf),
             "plugin = {\n"
             "  name = \"echo\";\n"
             "  path = \"%s\";\n"
             "  server = \"main\";\n"
             "  enabled = true;\n"
             "  settings = { greeting = \"hi from the sdk test\"; delay_ms = 20; };\n"
             "};\n",
             f->so_path);
    if (rmq_td_write_conf(&f->daemon, "50-echo.conf", conf) != 0) {
        return -1;
    }
    return rmq_td_start(&f->daemon, NULL);
}

static void assert_echo(const rmq_cmd *resp, int opaque, const char *msg, const char *body)
{
    assert_non_null(resp);
    assert_int_equal(resp->code, RESPONSE_SUCCESS);
    assert_true(resp->flag & RMQ_FLAG_RESPONSE);
    assert_int_equal(resp->opaque, opaque);
    assert_non_null(rmq_cmd_ext_get(resp, "echo"));
    assert_string_equal(rmq_cmd_ext_get(resp, "echo"), msg);
    assert_non_null(rmq_cmd_ext_get(resp, "greeting"));
    assert_string_equal(rmq_cmd_ext_get(resp, "greeting"), "hi from the sdk test");
    assert_int_equal(resp->body_len, strlen(body));
    if (body[0] != '\0') {
        assert_memory_equal(resp->body, body, strlen(body));
    }
}

static void test_daemon_loads_out_of_tree_example_and_echoes(void **state)
{
    sdk_fixture *f = *state;
    assert_int_equal(start_daemon_with_example(f), 0);
    int port = rmq_td_port(&f->daemon, "main");
    assert_true(port > 0);
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);

    static const char *const kv1[] = {"msg", "hello, rocketmq", NULL};
    rmq_cmd *req = rmq_tc_request(9001, 41, kv1);
    assert_non_null(req);
    assert_int_equal(rmq_cmd_set_body(req, "body bytes", 10, NULL, NULL), 0);
    rmq_cmd *resp = rmq_tc_call(fd, req, 10000);
    assert_echo(resp, 41, "hello, rocketmq", "body bytes");
    rmq_cmd_free(resp);
    rmq_cmd_free(req);

    /* 9002 is bound to the plugin's executor: same answer, other thread. */
    static const char *const kv2[] = {"msg", "later", NULL};
    req = rmq_tc_request(9002, 42, kv2);
    assert_non_null(req);
    assert_int_equal(rmq_cmd_set_body(req, "xyz", 3, NULL, NULL), 0);
    resp = rmq_tc_call(fd, req, 10000);
    assert_echo(resp, 42, "later", "xyz");
    rmq_cmd_free(resp);
    rmq_cmd_free(req);

    close(fd);
}

/* The plugin's admin command is reachable through rmqhostctl. CONNECT events
 * are delivered asynchronously on the EVENT thread, so poll for them with a
 * deadline instead of assuming they already arrived. */
static void test_echo_stats_admin_command_reports_counters(void **state)
{
    sdk_fixture *f = *state;
    if (!f->daemon_started) {
        skip();
    }
    static const char *const args[] = {"--json", "echo-stats", NULL};
    char out[1024] = "";
    bool seen = false;
    for (int i = 0; i < 100 && !seen; i++) {
        assert_int_equal(rmq_td_ctl(&f->daemon, out, sizeof(out), args), 0);
        seen = strstr(out, "\"connects\":1") != NULL;
        if (!seen) {
            usleep(100 * 1000);
        }
    }
    assert_true(seen);
    assert_non_null(strstr(out, "\"echoed\":2"));
    assert_non_null(strstr(out, "\"delayed\":1"));
}

/* Hot reload of the out-of-tree plugin: the new generation imports the old
 * one's counters (export_state/import_state) and serves the code at once. */
static void test_reload_keeps_echo_counters_and_serves_again(void **state)
{
    sdk_fixture *f = *state;
    if (!f->daemon_started) {
        skip();
    }
    static const char *const reload[] = {"reload", "echo", NULL};
    char out[1024] = "";
    assert_int_equal(rmq_td_ctl(&f->daemon, out, sizeof(out), reload), 0);
    static const char *const stats[] = {"--json", "echo-stats", NULL};
    assert_int_equal(rmq_td_ctl(&f->daemon, out, sizeof(out), stats), 0);
    assert_non_null(strstr(out, "\"echoed\":2"));

    int fd = rmq_tc_connect(rmq_td_port(&f->daemon, "main"));
    assert_true(fd >= 0);
    static const char *const kv[] = {"msg", "after reload", NULL};
    rmq_cmd *req = rmq_tc_request(9001, 43, kv);
    assert_non_null(req);
    rmq_cmd *resp = rmq_tc_call(fd, req, 10000);
    assert_echo(resp, 43, "after reload", "");
    rmq_cmd_free(resp);
    rmq_cmd_free(req);
    close(fd);
    assert_int_equal(rmq_td_ctl(&f->daemon, out, sizeof(out), stats), 0);
    assert_non_null(strstr(out, "\"echoed\":3"));
}

static void test_daemon_stops_cleanly_with_example_loaded(void **state)
{
    sdk_fixture *f = *state;
    if (!f->daemon_started) {
        skip();
    }
    assert_int_equal(rmq_td_stop(&f->daemon), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_install_gives_sdk_headers_pkgconfig_and_cmake_package),
        cmocka_unit_test(test_installed_daemon_runs_installed_conf_d_unedited),
        cmocka_unit_test(test_example_builds_with_pkg_config_makefile),
        cmocka_unit_test(test_example_builds_with_cmake_package),
        cmocka_unit_test(test_install_gives_testkit_replay_and_vectors),
        cmocka_unit_test(test_example_unit_tests_build_with_pkg_config_and_pass),
        cmocka_unit_test(test_example_unit_tests_run_with_cmake_package),
        cmocka_unit_test(test_daemon_loads_out_of_tree_example_and_echoes),
        cmocka_unit_test(test_echo_stats_admin_command_reports_counters),
        cmocka_unit_test(test_reload_keeps_echo_counters_and_serves_again),
        cmocka_unit_test(test_daemon_stops_cleanly_with_example_loaded),
    };
    return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
