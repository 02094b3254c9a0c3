/* test_admin_channel.c — the admin socket and rmqhostctl against a real
 * rmqhostd running the echo example: socket mode and ownership rules, exit
 * codes, enable/disable/reload-config driven by edits to a temp conf.d,
 * health, stats and the Prometheus endpoint. */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <poll.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "rmq_test_support.h"

static const char *const SERVERS[] = {"main", "aux", NULL};

static json_t *ctl_json(rmq_test_daemon *d, const char *cmd)
{
    int code;
    const char *out = rmq_td_ctl_output(d, &code, cmd, "--json", NULL);
    assert_int_equal(code, 0);
    json_error_t err;
    json_t *j = json_loads(out, 0, &err);
    if (!j)
        fprintf(stderr, "not JSON: %s\n", out);
    assert_non_null(j);
    return j;
}

/* generation of plugin `name` from `list --json` (0 = listed but not
 * running, -1 = absent) and its state. */
static int generation_of(rmq_test_daemon *d, const char *name, char *state, size_t statelen)
{
    json_t *j = ctl_json(d, "list");
    int gen = -1;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(j, "plugins"), i, p)
    {
        if (strcmp(json_string_value(json_object_get(p, "name")), name) != 0)
            continue;
        gen = (int)json_integer_value(json_object_get(p, "generation"));
        if (state)
            snprintf(state, statelen, "%s", json_string_value(json_object_get(p, "state")));
    }
    json_decref(j);
    return gen;
}

static void echo_conf(rmq_test_daemon *d, const char *file, const char *name, const char *server,
                      bool enabled, const char *greeting)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "plugin = {\n  name = \"%s\";\n  path = \"%s/echo.so\";\n  server = \"%s\";\n"
             "  enabled = %s;\n  settings = { greeting = \"%s\"; };\n};\n",
             name, RMQ_TEST_PLUGIN_DIR, server, enabled ? "true" : "false", greeting);
    assert_int_equal(rmq_td_write_conf(d, file, text), 0);
}

/* One 9001 echo on `port`; returns the greeting ext (malloc'd) or NULL. */
static char *echo_greeting(int port)
{
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        return NULL;
    const char *kv[] = {"msg", "hi", NULL};
    rmq_cmd *req = rmq_tc_request(9001, 7, kv);
    rmq_cmd *resp = rmq_tc_call(fd, req, 5000);
    rmq_cmd_free(req);
    close(fd);
    char *g = NULL;
    if (resp && resp->code == 0) {
        const char *v = rmq_cmd_ext_get(resp, "greeting");
        g = strdup(v ? v : "");
    }
    rmq_cmd_free(resp);
    return g;
}

static int setup_daemon(void **state)
{
    rmq_test_daemon *d = calloc(1, sizeof(*d));
    if (!d || rmq_td_init(d, SERVERS, "metrics_listen = \"127.0.0.1:0\";") != 0)
        return -1;
    echo_conf(d, "50-echo.conf", "echo", "main", true, "hello");
    if (rmq_td_start(d, NULL) != 0)
        return -1;
    *state = d;
    return 0;
}

static int teardown_daemon(void **state)
{
    rmq_test_daemon *d = *state;
    if (d) {
        int st = rmq_td_stop(d);
        rmq_td_cleanup(d);
        free(d);
        if (st != 0) {
            fprintf(stderr, "rmqhostd exited with %d\n", st);
            return -1;
        }
    }
    return 0;
}

/* ---- socket ---- */

static void test_admin_socket_is_0600_and_list_starts_at_generation_1(void **state)
{
    rmq_test_daemon *d = *state;
    struct stat st;
    assert_int_equal(lstat(d->admin_socket, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    char s[32];
    assert_int_equal(generation_of(d, "echo", s, sizeof(s)), 1);
    assert_string_equal(s, "live");
    int code;
    const char *out = rmq_td_ctl_output(d, &code, "list", NULL);
    assert_int_equal(code, 0);
    assert_non_null(strstr(out, "echo"));
    assert_non_null(strstr(out, "GEN"));
}

static void test_stale_socket_is_replaced_on_start(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    echo_conf(&d, "50-echo.conf", "echo", "main", true, "hello");
    /* a socket nobody accepts on, as a crashed daemon leaves behind */
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d.admin_socket);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    close(fd);
    assert_int_equal(rmq_td_start(&d, NULL), 0);
    assert_int_equal(generation_of(&d, "echo", NULL, 0), 1);
    assert_int_equal(rmq_td_stop(&d), 0);
    rmq_td_cleanup(&d);
}

static void test_regular_file_at_socket_path_is_refused(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    echo_conf(&d, "50-echo.conf", "echo", "main", true, "hello");
    FILE *f = fopen(d.admin_socket, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    assert_int_not_equal(rmq_td_start(&d, NULL), 0);
    assert_true(rmq_td_log_contains(&d, "is not a socket"));
    struct stat st;
    assert_int_equal(stat(d.admin_socket, &st), 0);
    assert_true(S_ISREG(st.st_mode)); /* left alone */
    rmq_td_cleanup(&d);
}

static void test_other_uid_is_refused(void **state)
{
    rmq_test_daemon *d = *state;
    if (geteuid() != 0) {
        /* only root can connect as someone else (the 0600 mode stops the rest) */
        skip();
    }
    /* open the file modes so only the daemon's uid check stands in the way */
    assert_int_equal(chmod(d->dir, 0711), 0);
    assert_int_equal(chmod(d->state_dir, 0711), 0);
    assert_int_equal(chmod(d->admin_socket, 0666), 0);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pipefd[0]);
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(3);
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d->admin_socket);
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
            _exit(4);
        /* the daemon may refuse before reading: the write can hit EPIPE */
        signal(SIGPIPE, SIG_IGN);
        const char req[] = "{\"cmd\":\"list\"}\n";
        (void)!write(fd, req, sizeof(req) - 1);
        char buf[512];
        ssize_t n, total = 0;
        while ((n = read(fd, buf + total, sizeof(buf) - 1 - (size_t)total)) > 0)
            total += n;
        if (write(pipefd[1], buf, (size_t)total) < 0)
            _exit(6);
        _exit(0);
    }
    close(pipefd[1]);
    char answer[512] = "";
    ssize_t n, total = 0;
    while ((n = read(pipefd[0], answer + total, sizeof(answer) - 1 - (size_t)total)) > 0)
        total += n;
    answer[total] = 0;
    close(pipefd[0]);
    int st;
    waitpid(pid, &st, 0);
    chmod(d->admin_socket, 0600);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_non_null(strstr(answer, "refused"));
    assert_null(strstr(answer, "plugins"));
}

/* ---- ctl ---- */

static void test_ctl_exit_codes_usage_unreachable_refused(void **state)
{
    rmq_test_daemon *d = *state;
    int code;
    const char *out = rmq_td_ctl_output(d, &code, "reload", NULL); /* missing NAME */
    assert_int_equal(code, 2);
    out = rmq_td_ctl_output(d, &code, "reload", "no-such-plugin", NULL);
    assert_int_equal(code, 1);
    assert_non_null(strstr(out, "no-such-plugin"));
    out = rmq_td_ctl_output(d, &code, "no-such-command", NULL);
    assert_int_equal(code, 2);
    /* unreachable daemon: a socket path nobody listens on */
    rmq_test_daemon other = *d;
    snprintf(other.admin_socket, sizeof(other.admin_socket), "%s/nobody.sock", d->dir);
    out = rmq_td_ctl_output(&other, &code, "list", NULL);
    assert_int_equal(code, 2);
}

static void test_ctl_finds_socket_from_conf_dir(void **state)
{
    rmq_test_daemon *d = *state;
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s -c %s health >/dev/null", RMQ_TEST_CTL, d->conf_dir);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_plugin_command_is_served_through_ctl(void **state)
{
    rmq_test_daemon *d = *state;
    int code;
    const char *out = rmq_td_ctl_output(d, &code, "help", NULL);
    assert_int_equal(code, 0);
    assert_non_null(strstr(out, "echo-stats"));
    out = rmq_td_ctl_output(d, &code, "echo-stats", NULL);
    assert_int_equal(code, 0);
    assert_true(strlen(out) > 0);
    out = rmq_td_ctl_output(d, &code, "echo-stats", "surplus-arg", NULL);
    assert_int_equal(code, 2);
}

/* ---- conf.d edits ---- */

static void test_reload_config_starts_reloads_and_stops_plugins(void **state)
{
    rmq_test_daemon *d = *state;
    int main_port = rmq_td_port(d, "main");
    assert_true(main_port > 0);
    assert_int_equal(rmq_td_port(d, "aux"), -1); /* nobody bound to aux yet */

    /* a new file: echo2 on aux, which must start listening */
    echo_conf(d, "60-echo2.conf", "echo2", "aux", true, "bonjour");
    int code;
    const char *out = rmq_td_ctl_output(d, &code, "reload-config", NULL);
    assert_int_equal(code, 0);
    assert_non_null(strstr(out, "echo2"));
    assert_int_equal(generation_of(d, "echo2", NULL, 0), 1);
    int aux_port = rmq_td_port(d, "aux");
    assert_true(aux_port > 0);
    char *g = echo_greeting(aux_port);
    assert_non_null(g);
    assert_string_equal(g, "bonjour");
    free(g);

    /* changed settings: the running echo is reloaded with them */
    echo_conf(d, "50-echo.conf", "echo", "main", true, "salut");
    out = rmq_td_ctl_output(d, &code, "reload-config", NULL);
    assert_int_equal(code, 0);
    int gen = generation_of(d, "echo", NULL, 0);
    assert_true(gen >= 2);
    g = echo_greeting(main_port);
    assert_non_null(g);
    assert_string_equal(g, "salut");
    free(g);

    /* nothing changed: nothing reloaded */
    out = rmq_td_ctl_output(d, &code, "reload-config", NULL);
    assert_int_equal(code, 0);
    assert_int_equal(generation_of(d, "echo", NULL, 0), gen);

    /* disabled in its file: stopped */
    echo_conf(d, "60-echo2.conf", "echo2", "aux", false, "bonjour");
    out = rmq_td_ctl_output(d, &code, "reload-config", NULL);
    assert_int_equal(code, 0);
    char s[32];
    assert_int_equal(generation_of(d, "echo2", s, sizeof(s)), 0);
    assert_string_equal(s, "disabled");

    /* file removed: gone from the list too */
    char path[512];
    snprintf(path, sizeof(path), "%s/60-echo2.conf", d->conf_dir);
    unlink(path);
    out = rmq_td_ctl_output(d, &code, "reload-config", NULL);
    assert_int_equal(code, 0);
    assert_int_equal(generation_of(d, "echo2", NULL, 0), -1);
}

/* host.conf as setup_daemon writes it, with `servers_body` as the servers
 * and `extra` appended. */
static void write_host_conf(rmq_test_daemon *d, const char *servers_body, const char *extra)
{
    char text[4096];
    snprintf(text, sizeof(text),
             "state_dir = \"%s\";\nadmin_socket = \"%s\";\nlog_level = \"debug\";\n"
             "io_threads = 2;\nmetrics_listen = \"127.0.0.1:0\";\nservers = {\n%s};\n%s\n",
             d->state_dir, d->admin_socket, servers_body, extra ? extra : "");
    assert_int_equal(rmq_td_write_conf(d, "host.conf", text), 0);
}

/* One 9001 echo on an open connection: the greeting (malloc'd) or NULL. */
static char *echo_on(int fd)
{
    static int opaque = 100;
    const char *kv[] = {"msg", "hi", NULL};
    rmq_cmd *req = rmq_tc_request(9001, ++opaque, kv);
    rmq_cmd *resp = rmq_tc_call(fd, req, 5000);
    rmq_cmd_free(req);
    char *g = NULL;
    if (resp && resp->code == 0) {
        const char *v = rmq_cmd_ext_get(resp, "greeting");
        g = strdup(v ? v : "");
    }
    rmq_cmd_free(resp);
    return g;
}

static void expect_greeting_on(int fd, const char *want)
{
    char *g = echo_on(fd);
    assert_non_null(g);
    assert_string_equal(g, want);
    free(g);
}

static bool refused(int port)
{
    int fd = rmq_tc_connect(port);
    if (fd >= 0)
        close(fd);
    return fd < 0;
}

/* Issue #12: servers added, moved and removed by reload-config while a
 * client keeps using another server over one connection; a port that cannot
 * be bound changes nothing; restart-only settings are reported and skipped
 * while the rest applies. */
static void test_reload_config_adds_moves_and_removes_servers(void **state)
{
    rmq_test_daemon *d = *state;
    int main_port = rmq_td_port(d, "main");
    int client = rmq_tc_connect(main_port);
    assert_true(client >= 0);
    expect_greeting_on(client, "hello");
    char servers[512];
    int code;

    /* add: a new server with a plugin on it */
    int p1 = rmq_tc_free_port();
    snprintf(servers, sizeof(servers),
             "  main = { listen = \"127.0.0.1:%d\"; };\n  aux = { listen = \"127.0.0.1:0\"; };\n"
             "  extra = { listen = \"127.0.0.1:%d\"; };\n",
             main_port, p1);
    write_host_conf(d, servers, NULL);
    echo_conf(d, "70-echo3.conf", "echo3", "extra", true, "hola");
    const char *out = rmq_td_ctl_output(d, &code, "reload-config", NULL);
    if (code != 0)
        fail_msg("reload-config: %s", out);
    assert_non_null(strstr(out, "server extra declared"));
    assert_int_equal(rmq_td_port(d, "extra"), p1);
    int extra = rmq_tc_connect(p1);
    assert_true(extra >= 0);
    expect_greeting_on(extra, "hola");
    expect_greeting_on(client, "hello");

    /* move: the new socket listens, then the old one closes; connections
     * already open on the old one stay */
    int p2 = rmq_tc_free_port();
    snprintf(servers, sizeof(servers),
             "  main = { listen = \"127.0.0.1:%d\"; };\n  aux = { listen = \"127.0.0.1:0\"; };\n"
             "  extra = { listen = \"127.0.0.1:%d\"; };\n",
             main_port, p2);
    write_host_conf(d, servers, NULL);
    out = rmq_td_ctl_output(d, &code, "reload-config", NULL);
    if (code != 0)
        fail_msg("reload-config: %s", out);
    assert_non_null(strstr(out, "server extra moved"));
    assert_int_equal(rmq_td_port(d, "extra"), p2);
    assert_true(refused(p1));
    int extra2 = rmq_tc_connect(p2);
    assert_true(extra2 >= 0);
    expect_greeting_on(extra2, "hola");
    expect_greeting_on(extra, "hola");
    expect_greeting_on(client, "hello");
    close(extra2);

    /* a port taken by someone else: reported, nothing changes */
    int taken = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(taken, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(taken, 4), 0);
    socklen_t alen = sizeof(a);
    getsockname(taken, (struct sockaddr *)&a, &alen);
    snprintf(servers, sizeof(servers),
             "  main = { listen = \"127.0.0.1:%d\"; };\n  aux = { listen = \"127.0.0.1:0\"; };\n"
             "  extra = { listen = \"127.0.0.1:%d\"; };\n",
             main_port, ntohs(a.sin_port));
    write_host_conf(d, servers, NULL);
    echo_conf(d, "50-echo.conf", "echo", "main", true, "not-applied");
    out = rmq_td_ctl_output(d, &code, "reload-config", NULL);
    assert_int_equal(code, 1);
    assert_non_null(strstr(out, "nothing changed"));
    assert_non_null(strstr(out, "extra"));
    close(taken);
    assert_int_equal(rmq_td_port(d, "extra"), p2);
    expect_greeting_on(extra, "hola");
    expect_greeting_on(client, "hello");

    /* remove: the server and its plugin go; restart-only settings are
     * reported and skipped, the rest applies */
    echo_conf(d, "50-echo.conf", "echo", "main", true, "hello");
    char path[512];
    snprintf(path, sizeof(path), "%s/70-echo3.conf", d->conf_dir);
    unlink(path);
    snprintf(servers, sizeof(servers),
             "  main = { listen = \"127.0.0.1:%d\"; };\n  aux = { listen = \"127.0.0.1:0\"; };\n",
             main_port);
    char state_text[400];
    snprintf(state_text, sizeof(state_text), "write_high_water = 8388608;");
    write_host_conf(d, servers, state_text);
    /* io_threads changes too: rewrite the line */
    char text[4096];
    snprintf(text, sizeof(text),
             "state_dir = \"%s\";\nadmin_socket = \"%s\";\nlog_level = \"info\";\n"
             "io_threads = 1;\nmetrics_listen = \"127.0.0.1:0\";\nservers = {\n%s};\n%s\n",
             d->state_dir, d->admin_socket, servers, state_text);
    assert_int_equal(rmq_td_write_conf(d, "host.conf", text), 0);
    out = rmq_td_ctl_output(d, &code, "reload-config", NULL);
    if (code != 0)
        fail_msg("reload-config: %s", out);
    assert_non_null(strstr(out, "server extra removed"));
    assert_non_null(strstr(out, "io_threads changed"));
    assert_non_null(strstr(out, "log_level info"));
    assert_non_null(strstr(out, "write_high_water 8388608"));
    assert_int_equal(rmq_td_port(d, "extra"), -1);
    assert_true(refused(p2));
    assert_int_equal(generation_of(d, "echo3", NULL, 0), -1);
    expect_greeting_on(client, "hello");
    close(extra);
    close(client);
}

/* -o overrides given at start-up are re-applied by every reload-config: the
 * server moved by -o stays where -o put it. */
static void test_reload_config_reapplies_start_up_overrides(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    echo_conf(&d, "50-echo.conf", "echo", "main", true, "hello");
    int port = rmq_tc_free_port();
    char ovr[64];
    snprintf(ovr, sizeof(ovr), "servers.main.listen=127.0.0.1:%d", port);
    const char *args[] = {"-o", ovr, "-o", "plugins.echo.settings.greeting=from-o", NULL};
    assert_int_equal(rmq_td_start(&d, args), 0);
    assert_int_equal(rmq_td_port(&d, "main"), port);
    int code;
    const char *out = rmq_td_ctl_output(&d, &code, "reload-config", NULL);
    if (code != 0)
        fail_msg("reload-config: %s", out);
    assert_null(strstr(out, "moved"));
    assert_int_equal(rmq_td_port(&d, "main"), port);
    char *g = echo_greeting(port);
    assert_non_null(g);
    assert_string_equal(g, "from-o");
    free(g);
    assert_int_equal(rmq_td_stop(&d), 0);
    rmq_td_cleanup(&d);
}

static void test_reload_config_syntax_error_names_file_line_and_changes_nothing(void **state)
{
    rmq_test_daemon *d = *state;
    int before = generation_of(d, "echo", NULL, 0);
    echo_conf(d, "50-echo.conf", "echo", "main", true, "changed-but-not-applied");
    assert_int_equal(
        rmq_td_write_conf(d, "70-broken.conf",
                          "plugin = {\n  name = \"broken\";\n  path = oops no quotes;\n};\n"),
        0);
    int code;
    const char *out = rmq_td_ctl_output(d, &code, "reload-config", NULL);
    assert_int_equal(code, 1);
    assert_non_null(strstr(out, "70-broken.conf:3"));
    assert_int_equal(generation_of(d, "echo", NULL, 0), before);
    char *g = echo_greeting(rmq_td_port(d, "main"));
    assert_non_null(g);
    assert_string_not_equal(g, "changed-but-not-applied");
    free(g);
    char path[512];
    snprintf(path, sizeof(path), "%s/70-broken.conf", d->conf_dir);
    unlink(path);
}

static void test_enable_and_disable_follow_conf_d(void **state)
{
    rmq_test_daemon *d = *state;
    echo_conf(d, "65-echo3.conf", "echo3", "aux", false, "hola");
    int code;
    rmq_td_ctl_output(d, &code, "enable", "echo3", NULL);
    assert_int_equal(code, 0);
    char s[32];
    assert_int_equal(generation_of(d, "echo3", s, sizeof(s)), 1);
    assert_string_equal(s, "live");
    char *g = echo_greeting(rmq_td_port(d, "aux"));
    assert_non_null(g);
    assert_string_equal(g, "hola");
    free(g);
    rmq_td_ctl_output(d, &code, "enable", "echo3", NULL); /* already running */
    assert_int_equal(code, 1);
    rmq_td_ctl_output(d, &code, "disable", "echo3", NULL);
    assert_int_equal(code, 0);
    assert_int_equal(generation_of(d, "echo3", s, sizeof(s)), 0);
    assert_string_equal(s, "disabled");
    rmq_td_ctl_output(d, &code, "disable", "echo3", NULL);
    assert_int_equal(code, 1);
    rmq_td_ctl_output(d, &code, "enable", "nobody-declared-me", NULL);
    assert_int_equal(code, 1);
    char path[512];
    snprintf(path, sizeof(path), "%s/65-echo3.conf", d->conf_dir);
    unlink(path);
}

static void test_sighup_applies_conf_d(void **state)
{
    rmq_test_daemon *d = *state;
    echo_conf(d, "50-echo.conf", "echo", "main", true, "from-sighup");
    int before = generation_of(d, "echo", NULL, 0);
    assert_int_equal(kill(d->pid, SIGHUP), 0);
    /* poll with a deadline: the signal is handled asynchronously */
    int gen = before;
    for (int i = 0; i < 1000 && gen == before; i++) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
        gen = generation_of(d, "echo", NULL, 0);
    }
    assert_int_equal(gen, before + 1);
    char *g = echo_greeting(rmq_td_port(d, "main"));
    assert_non_null(g);
    assert_string_equal(g, "from-sighup");
    free(g);
}

/* ---- figures ---- */

static void test_health_is_0_when_everything_is_up(void **state)
{
    rmq_test_daemon *d = *state;
    int code;
    rmq_td_ctl_output(d, &code, "health", NULL);
    assert_int_equal(code, 0);
}

static void test_stats_count_requests_per_code(void **state)
{
    rmq_test_daemon *d = *state;
    char *g = echo_greeting(rmq_td_port(d, "main"));
    assert_non_null(g);
    free(g);
    json_t *j = ctl_json(d, "stats");
    json_t *srv = json_array_get(json_object_get(j, "servers"), 0);
    assert_string_equal(json_string_value(json_object_get(srv, "name")), "main");
    assert_true(json_integer_value(json_object_get(srv, "requests")) >= 1);
    bool seen = false;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(srv, "codes"), i, c) seen |=
        json_integer_value(json_object_get(c, "code")) == 9001 &&
        json_integer_value(json_object_get(c, "requests")) >= 1;
    assert_true(seen);
    assert_true(json_integer_value(json_object_get(json_object_get(srv, "latency_us"), "p50")) > 0);
    assert_true(json_array_size(json_object_get(j, "executors")) >= 1);
    /* the echo plugin dials nothing: no outgoing connection */
    json_t *og = json_object_get(j, "outgoing_connections");
    assert_true(json_is_integer(og));
    assert_int_equal(json_integer_value(og), 0);
    json_decref(j);
}

static void test_metrics_endpoint_serves_prometheus_text(void **state)
{
    rmq_test_daemon *d = *state;
    char *g = echo_greeting(rmq_td_port(d, "main"));
    free(g);
    json_t *cfg = ctl_json(d, "config");
    int port = (int)json_integer_value(json_object_get(cfg, "metrics_port"));
    json_decref(cfg);
    assert_true(port > 0);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
    assert_int_equal(write(fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    ssize_t n;
    while ((n = read(fd, buf + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = 0;
    close(fd);
    assert_non_null(strstr(buf, "HTTP/1.0 200"));
    assert_non_null(strstr(buf, "rmqhost_requests_total{server=\"main\",code=\"9001\"}"));
    assert_non_null(strstr(buf, "rmqhost_plugin_generation{plugin=\"echo\"}"));
    assert_non_null(strstr(buf, "\nrmqhost_outgoing_connections 0\n"));
    assert_non_null(strstr(buf, "rmqhost_request_duration_seconds_bucket{server=\"main\""));
    assert_null(strstr(buf, "127.0.0.1:")); /* no client addresses in labels */
    free(buf);
}

static void test_ready_1_is_sent_to_notify_socket_once_listening(void **state)
{
    (void)state;
    rmq_test_daemon d;
    assert_int_equal(rmq_td_init(&d, SERVERS, NULL), 0);
    echo_conf(&d, "50-echo.conf", "echo", "main", true, "hello");
    char path[400];
    snprintf(path, sizeof(path), "%s/notify.sock", d.dir);
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    setenv("NOTIFY_SOCKET", path, 1);
    int rc = rmq_td_start(&d, NULL);
    unsetenv("NOTIFY_SOCKET");
    assert_int_equal(rc, 0);
    struct pollfd pfd = {fd, POLLIN, 0};
    assert_int_equal(poll(&pfd, 1, 10000), 1);
    char buf[64] = "";
    ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
    assert_true(n > 0);
    buf[n] = 0;
    assert_string_equal(buf, "READY=1");
    /* by then the servers listen */
    assert_true(rmq_td_port(&d, "main") > 0);
    close(fd);
    assert_int_equal(rmq_td_stop(&d), 0);
    rmq_td_cleanup(&d);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_daemon, teardown_daemon)

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : NULL;
    const struct CMUnitTest all[] = {
        T(test_admin_socket_is_0600_and_list_starts_at_generation_1),
        cmocka_unit_test(test_stale_socket_is_replaced_on_start),
        cmocka_unit_test(test_regular_file_at_socket_path_is_refused),
        cmocka_unit_test(test_ready_1_is_sent_to_notify_socket_once_listening),
        T(test_other_uid_is_refused),
        T(test_ctl_exit_codes_usage_unreachable_refused),
        T(test_ctl_finds_socket_from_conf_dir),
        T(test_plugin_command_is_served_through_ctl),
        T(test_reload_config_starts_reloads_and_stops_plugins),
        T(test_reload_config_syntax_error_names_file_line_and_changes_nothing),
        T(test_reload_config_adds_moves_and_removes_servers),
        cmocka_unit_test(test_reload_config_reapplies_start_up_overrides),
        T(test_enable_and_disable_follow_conf_d),
        T(test_sighup_applies_conf_d),
        T(test_health_is_0_when_everything_is_up),
        T(test_stats_count_requests_per_code),
        T(test_metrics_endpoint_serves_prometheus_text),
    };
    struct CMUnitTest pick[sizeof(all) / sizeof(all[0])];
    size_t n = 0;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (rmq_test_name_selected(filter, all[i].name))
            pick[n++] = all[i];
    return _cmocka_run_group_tests("admin_channel", pick, n, NULL, NULL);
}
