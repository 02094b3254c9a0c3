/* test_tls_server.c — TLS on a server of a real rmqhostd running the
 * NameServer plugin: permissive serves TLS and plaintext clients on one
 * port, enforcing closes plaintext, disabled closes a ClientHello, mutual
 * TLS refuses untrusted clients, certificates rotate on reload-config and on
 * a change of the files without dropping sessions, --check names bad files,
 * a Java tls.properties is read as is. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tls_test_client.h"

#define TIMEOUT_MS 5000

typedef tls_fixture fixture;

static int setup(void **state)
{
    return tls_fixture_setup(state);
}

static int teardown(void **state)
{
    return tls_fixture_teardown(state);
}

/* Start the namesrv plugin on server "namesrv" with tls body (format with
 * %1$s = cert dir). */
static void start_namesrv(fixture *f, const char *tls_fmt, const char *const *extra_args)
{
    const char *servers[] = {"namesrv", NULL};
    assert_int_equal(rmq_td_init(&f->d, servers, NULL), 0);
    char body[4096];
    body[0] = 0;
    if (tls_fmt)
        snprintf(body, sizeof(body), tls_fmt, f->certs);
    assert_int_equal(tls_write_host_conf(&f->d, "namesrv", tls_fmt ? body : NULL, NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&f->d, "namesrv", "namesrv", "namesrv", NULL), 0);
    assert_int_equal(rmq_td_start(&f->d, extra_args), 0);
    f->port = rmq_td_port(&f->d, "namesrv");
    assert_true(f->port > 0);
}

static void route_over_tls(tls_tc *t, int opaque)
{
    rmq_cmd *req = tls_route_request(opaque);
    rmq_cmd *resp = tls_tc_call(t, req, TIMEOUT_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 17); /* TOPIC_NOT_EXIST: the NameServer answered */
    rmq_cmd_free(resp);
    rmq_cmd_free(req);
}

static void route_in_plaintext(int port, int opaque)
{
    int fd = rmq_tc_connect(port);
    assert_true(fd >= 0);
    rmq_cmd *req = tls_route_request(opaque);
    rmq_cmd *resp = rmq_tc_call(fd, req, TIMEOUT_MS);
    assert_non_null(resp);
    assert_int_equal(resp->code, 17);
    rmq_cmd_free(resp);
    rmq_cmd_free(req);
    close(fd);
}

static const char *SERVER1 =
    "mode = \"%1$s\"; cert_file = \"%%1$s/server1.pem\"; key_file = \"%%1$s/server1.key\";";

static void start_mode(fixture *f, const char *mode)
{
    char fmt[512];
    snprintf(fmt, sizeof(fmt), SERVER1, mode);
    start_namesrv(f, fmt, NULL);
}

static void test_permissive_serves_tls_and_plaintext(void **state)
{
    fixture *f = *state;
    start_mode(f, "permissive");
    char why[256];
    tls_tc *t = tls_tc_connect(f->port, NULL, NULL, why, sizeof(why));
    assert_non_null(t);
    assert_string_equal(tls_tc_peer_cn(t), "server-1");
    route_over_tls(t, 1);
    route_in_plaintext(f->port, 2);
    route_over_tls(t, 3); /* the TLS session is unaffected by the plaintext one */
    /* pipelined: many records in one read, many answers in one write */
    enum { N = 400 };
    for (int i = 0; i < N; i++) {
        rmq_cmd *req = tls_route_request(1000 + i);
        assert_int_equal(tls_tc_send(t, req), 0);
        rmq_cmd_free(req);
    }
    for (int i = 0; i < N; i++) {
        rmq_cmd *resp = tls_tc_recv(t, TIMEOUT_MS);
        assert_non_null(resp);
        assert_int_equal(resp->opaque, 1000 + i);
        assert_int_equal(resp->code, 17);
        rmq_cmd_free(resp);
    }
    tls_tc_close(t);
}

static void test_test_mode_self_signed(void **state)
{
    fixture *f = *state;
    start_namesrv(f, "mode = \"enforcing\"; test_mode = true;", NULL);
    char why[256];
    tls_tc *t = tls_tc_connect(f->port, NULL, NULL, why, sizeof(why));
    assert_non_null(t);
    assert_string_equal(tls_tc_peer_cn(t), "rmqhost test mode");
    route_over_tls(t, 1);
    tls_tc_close(t);
}

static void test_enforcing_closes_plaintext(void **state)
{
    fixture *f = *state;
    start_mode(f, "enforcing");
    int fd = rmq_tc_connect(f->port);
    assert_true(fd >= 0);
    rmq_cmd *req = tls_route_request(1);
    assert_int_equal(rmq_tc_send(fd, req), 0);
    assert_true(rmq_tc_wait_closed(fd, TIMEOUT_MS));
    close(fd);
    rmq_cmd_free(req);
    assert_true(rmq_td_log_contains(&f->d, "plaintext request, but the server's tls mode is "
                                           "enforcing"));
    char why[256];
    tls_tc *t = tls_tc_connect(f->port, NULL, NULL, why, sizeof(why));
    assert_non_null(t);
    route_over_tls(t, 2);
    tls_tc_close(t);
}

static void test_disabled_closes_client_hello(void **state)
{
    fixture *f = *state;
    start_namesrv(f, NULL, NULL); /* no tls group: disabled */
    char why[256];
    tls_tc *t = tls_tc_connect(f->port, NULL, NULL, why, sizeof(why));
    assert_null(t);
    assert_true(rmq_td_log_contains(&f->d, "TLS handshake, but TLS is disabled on this server "
                                           "(servers.namesrv.tls.mode)"));
    route_in_plaintext(f->port, 1);
}

static void test_mutual_tls_refuses_untrusted_clients(void **state)
{
    fixture *f = *state;
    start_namesrv(f,
                  "mode = \"enforcing\"; cert_file = \"%1$s/server1.pem\"; key_file = "
                  "\"%1$s/server1.key\"; trust_cert_file = \"%1$s/ca.pem\"; need_client_auth = "
                  "\"require\";",
                  NULL);
    char why[256], path_c[300], path_k[300], rogue_c[300], rogue_k[300];
    snprintf(path_c, sizeof(path_c), "%s/client.pem", f->certs);
    snprintf(path_k, sizeof(path_k), "%s/client.key", f->certs);
    snprintf(rogue_c, sizeof(rogue_c), "%s/rogue.pem", f->certs);
    snprintf(rogue_k, sizeof(rogue_k), "%s/rogue.key", f->certs);
    tls_tc *good = tls_tc_connect(f->port, path_c, path_k, why, sizeof(why));
    assert_non_null(good);
    route_over_tls(good, 1);
    tls_tc_close(good);

    /* Under TLS 1.3 the refusal may surface after SSL_connect: then the
     * request gets no answer and the session ends. */
    const char *certs[][2] = {{NULL, NULL}, {rogue_c, rogue_k}};
    for (int i = 0; i < 2; i++) {
        tls_tc *bad = tls_tc_connect(f->port, certs[i][0], certs[i][1], why, sizeof(why));
        if (bad) {
            rmq_cmd *req = tls_route_request(2);
            rmq_cmd *resp = tls_tc_call(bad, req, TIMEOUT_MS);
            assert_null(resp);
            rmq_cmd_free(req);
            tls_tc_close(bad);
        }
    }
    assert_true(rmq_td_log_contains(&f->d, "TLS handshake failed"));
}

static int copy_file(const char *from, const char *to)
{
    char cmd[1024];
    /* Written beside, then renamed: a reader never sees half a file. */
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s.tmp' && mv '%s.tmp' '%s'", from, to, to, to);
    return system(cmd) == 0 ? 0 : -1;
}

static void swap_cert(fixture *f, const char *which)
{
    char from[300], to[300];
    snprintf(from, sizeof(from), "%s/%s.key", f->certs, which);
    snprintf(to, sizeof(to), "%s/live.key", f->certs);
    assert_int_equal(copy_file(from, to), 0);
    snprintf(from, sizeof(from), "%s/%s.pem", f->certs, which);
    snprintf(to, sizeof(to), "%s/live.pem", f->certs);
    assert_int_equal(copy_file(from, to), 0);
}

static void test_rotation_keeps_sessions(void **state)
{
    fixture *f = *state;
    swap_cert(f, "server1");
    start_namesrv(f,
                  "mode = \"permissive\"; cert_file = \"%1$s/live.pem\"; key_file = "
                  "\"%1$s/live.key\";",
                  NULL);
    char why[256];
    tls_tc *old = tls_tc_connect(f->port, NULL, NULL, why, sizeof(why));
    assert_non_null(old);
    assert_string_equal(tls_tc_peer_cn(old), "server-1");

    /* reload-config re-reads the files */
    swap_cert(f, "server2");
    int status = -1;
    const char *out = rmq_td_ctl_output(&f->d, &status, "reload-config", NULL);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "servers.namesrv.tls: permissive, certificates re-read"));
    tls_tc *fresh = tls_tc_connect(f->port, NULL, NULL, why, sizeof(why));
    assert_non_null(fresh);
    assert_string_equal(tls_tc_peer_cn(fresh), "server-2");
    route_over_tls(old, 1); /* the established session goes on */
    route_over_tls(fresh, 2);
    tls_tc_close(fresh);

    /* a change of the files alone is noticed by the next connections */
    swap_cert(f, "server1");
    bool rotated = false;
    uint64_t deadline = rmq_test_now_ms() + 10000;
    while (!rotated && rmq_test_now_ms() < deadline) {
        tls_tc *t = tls_tc_connect(f->port, NULL, NULL, why, sizeof(why));
        assert_non_null(t);
        rotated = strcmp(tls_tc_peer_cn(t), "server-1") == 0;
        tls_tc_close(t);
        if (!rotated)
            rmq_test_pause_ms(100);
    }
    assert_true(rotated);
    assert_true(rmq_td_log_contains(&f->d, "certificate files changed; new connections use them"));
    route_over_tls(old, 3);
    tls_tc_close(old);
}

static void test_reload_with_bad_key_changes_nothing(void **state)
{
    fixture *f = *state;
    swap_cert(f, "server1");
    start_namesrv(f,
                  "mode = \"permissive\"; cert_file = \"%1$s/live.pem\"; key_file = "
                  "\"%1$s/live.key\";",
                  NULL);
    char from[300], to[300], why[256];
    snprintf(from, sizeof(from), "%s/server2.key", f->certs);
    snprintf(to, sizeof(to), "%s/live.key", f->certs);
    assert_int_equal(copy_file(from, to), 0); /* key no longer matches the certificate */
    int status = -1;
    const char *out = rmq_td_ctl_output(&f->d, &status, "reload-config", NULL);
    assert_int_not_equal(status, 0);
    assert_non_null(strstr(out, "does not match cert_file"));
    tls_tc *t = tls_tc_connect(f->port, NULL, NULL, why, sizeof(why));
    assert_non_null(t);
    assert_string_equal(tls_tc_peer_cn(t), "server-1");
    route_over_tls(t, 1);
    tls_tc_close(t);
}

/* rmqhostd --check's exit status and output. */
static int run_check(fixture *f, char *out, size_t outlen)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s -c '%s' --check 2>&1", RMQ_TEST_DAEMON, f->d.conf_dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_check_names_bad_files(void **state)
{
    fixture *f = *state;
    const char *servers[] = {"namesrv", NULL};
    assert_int_equal(rmq_td_init(&f->d, servers, NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&f->d, "namesrv", "namesrv", "namesrv", NULL), 0);
    char body[2048], out[4096], want[512];
    snprintf(body, sizeof(body),
             "mode = \"permissive\"; cert_file = \"%s/server1.pem\"; key_file = "
             "\"%s/server2.key\";",
             f->certs, f->certs);
    assert_int_equal(tls_write_host_conf(&f->d, "namesrv", body, NULL), 0);
    assert_int_equal(run_check(f, out, sizeof(out)), 2);
    snprintf(want, sizeof(want), "key_file %s/server2.key does not match cert_file", f->certs);
    assert_non_null(strstr(out, want));

    snprintf(body, sizeof(body),
             "mode = \"permissive\"; cert_file = \"%s/missing.pem\"; key_file = "
             "\"%s/server1.key\";",
             f->certs, f->certs);
    assert_int_equal(tls_write_host_conf(&f->d, "namesrv", body, NULL), 0);
    assert_int_equal(run_check(f, out, sizeof(out)), 2);
    snprintf(want, sizeof(want), "cert_file %s/missing.pem: No such file or directory", f->certs);
    assert_non_null(strstr(out, want));

    /* an encrypted key needs its password, and works with it */
    snprintf(body, sizeof(body),
             "mode = \"permissive\"; cert_file = \"%s/server1.pem\"; key_file = "
             "\"%s/enc.key\";",
             f->certs, f->certs);
    assert_int_equal(tls_write_host_conf(&f->d, "namesrv", body, NULL), 0);
    assert_int_equal(run_check(f, out, sizeof(out)), 2);
    assert_non_null(strstr(out, "enc.key: cannot read a PEM private key"));
    snprintf(body, sizeof(body),
             "mode = \"permissive\"; cert_file = \"%s/server1.pem\"; key_file = "
             "\"%s/enc.key\"; key_password = \"s3cret\";",
             f->certs, f->certs);
    assert_int_equal(tls_write_host_conf(&f->d, "namesrv", body, NULL), 0);
    assert_int_equal(run_check(f, out, sizeof(out)), 0);
}

static void test_java_properties_and_overrides(void **state)
{
    fixture *f = *state;
    char props[512], text[2048];
    snprintf(props, sizeof(props), "%s/tls.properties", f->certs);
    snprintf(text, sizeof(text),
             "# as a Java broker reads it\ntls.test.mode.enable=false\n"
             "tls.server.need.client.auth=none\ntls.server.keyPath=%s/server2.key\n"
             "tls.server.certPath=%s/server2.pem\ntls.client.authServer=false\n",
             f->certs, f->certs);
    FILE *pf = fopen(props, "w");
    assert_non_null(pf);
    fputs(text, pf);
    fclose(pf);
    char mode_arg[] = "servers.namesrv.tls.mode=enforcing";
    const char *args[] = {"-o", mode_arg, NULL};
    char body[600];
    snprintf(body, sizeof(body), "tls_config_file = \"%s\";", props);
    const char *servers[] = {"namesrv", NULL};
    assert_int_equal(rmq_td_init(&f->d, servers, NULL), 0);
    assert_int_equal(tls_write_host_conf(&f->d, "namesrv", body, NULL), 0);
    assert_int_equal(rmq_td_add_plugin(&f->d, "namesrv", "namesrv", "namesrv", NULL), 0);
    assert_int_equal(rmq_td_start(&f->d, args), 0);
    f->port = rmq_td_port(&f->d, "namesrv");
    char why[256];
    tls_tc *t = tls_tc_connect(f->port, NULL, NULL, why, sizeof(why));
    assert_non_null(t);
    assert_string_equal(tls_tc_peer_cn(t), "server-2");
    route_over_tls(t, 1);
    tls_tc_close(t);
    int fd = rmq_tc_connect(f->port); /* -o made it enforcing */
    rmq_cmd *req = tls_route_request(2);
    assert_int_equal(rmq_tc_send(fd, req), 0);
    assert_true(rmq_tc_wait_closed(fd, TIMEOUT_MS));
    rmq_cmd_free(req);
    close(fd);
    /* reload-config re-reads the files but keeps what -o said */
    int status = -1;
    const char *out = rmq_td_ctl_output(&f->d, &status, "reload-config", NULL);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "servers.namesrv.tls: enforcing, certificates re-read"));
    fd = rmq_tc_connect(f->port);
    req = tls_route_request(3);
    assert_int_equal(rmq_tc_send(fd, req), 0);
    assert_true(rmq_tc_wait_closed(fd, TIMEOUT_MS));
    rmq_cmd_free(req);
    close(fd);
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN); /* a refused TLS client writes to a closed socket */
    const struct CMUnitTest all[] = {
        cmocka_unit_test_setup_teardown(test_permissive_serves_tls_and_plaintext, setup, teardown),
        cmocka_unit_test_setup_teardown(test_test_mode_self_signed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enforcing_closes_plaintext, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disabled_closes_client_hello, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mutual_tls_refuses_untrusted_clients, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rotation_keeps_sessions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload_with_bad_key_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_names_bad_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_java_properties_and_overrides, setup, teardown),
    };
    struct CMUnitTest sel[sizeof(all) / sizeof(all[0])];
    size_t n = 0;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (rmq_test_name_selected(argc > 1 ? argv[1] : NULL, all[i].name))
            sel[n++] = all[i];
    return _cmocka_run_group_tests("tls_server", sel, n, NULL, NULL);
}
