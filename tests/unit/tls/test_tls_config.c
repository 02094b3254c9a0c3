/* test_tls_config.c — TLS settings as host.conf, -o and a Java
 * tls.properties give them: values, precedence (host.conf and -o over the
 * file), errors naming the key, -o surviving a reload, and which first
 * bytes each mode serves, starts TLS on or refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "host_config.h"
#include "tls_session.h"

typedef struct fx {
    char dir[64];
    host_conf conf;
} fx;

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int load(fx *f, const char *host_conf_text, const char *const *overrides, char *err,
                size_t errlen)
{
    snprintf(f->dir, sizeof(f->dir), "/tmp/rmqtlsconf.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    write_file(f->dir, "host.conf", host_conf_text);
    if (host_conf_load(&f->conf, f->dir, err, errlen) != 0)
        return -1;
    for (size_t i = 0; overrides && overrides[i]; i++)
        if (host_conf_override(&f->conf, overrides[i], err, errlen) != 0)
            return -1;
    return host_conf_finish(&f->conf, err, errlen);
}

static void unload(fx *f)
{
    host_conf_free(&f->conf);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
}

static void test_group_values_and_relative_paths(void **state)
{
    (void)state;
    fx f;
    char err[1024];
    int rc = load(&f,
                  "servers = { b = { listen = \"127.0.0.1:0\"; tls = { mode = \"enforcing\"; "
                  "cert_file = \"c.pem\"; key_file = \"/k.pem\"; need_client_auth = "
                  "\"require\"; trust_cert_file = \"ca.pem\"; }; }; };\n"
                  "tls_client = { enable = true; verify_server = true; };\n",
                  NULL, err, sizeof(err));
    assert_int_equal(rc, 0);
    const tls_conf *t = &f.conf.servers[0].tls;
    assert_int_equal(t->mode, TLS_MODE_ENFORCING);
    assert_int_equal(t->need_client_auth, TLS_AUTH_REQUIRE);
    char want[256];
    snprintf(want, sizeof(want), "%s/c.pem", f.conf.conf_dir);
    assert_string_equal(t->cert_file, want);
    assert_string_equal(t->key_file, "/k.pem");
    assert_true(t->verify_peer); /* trust_cert_file given */
    assert_true(f.conf.tls_client.client);
    assert_int_equal(f.conf.tls_client.mode, 1);
    assert_true(f.conf.tls_client.verify_peer);
    unload(&f);
}

static void test_bad_values_name_the_key(void **state)
{
    (void)state;
    fx f;
    char err[1024];
    assert_int_equal(load(&f,
                          "servers = { b = { listen = \"127.0.0.1:0\"; tls = { mode = "
                          "\"strict\"; }; }; };\n",
                          NULL, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "host.conf:1: mode: 'strict' is not disabled, permissive or "
                                "enforcing"));
    unload(&f);
    assert_int_equal(load(&f,
                          "servers = { b = { listen = \"127.0.0.1:0\"; tls = { mode = "
                          "\"permissive\"; }; }; };\n",
                          NULL, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "servers.b.tls: mode permissive needs cert_file and key_file"));
    unload(&f);
    const char *ovr[] = {"servers.b.tls.need_client_auth=always", NULL};
    assert_int_equal(
        load(&f, "servers = { b = { listen = \"127.0.0.1:0\"; }; };\n", ovr, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "-o servers.b.tls.need_client_auth: need_client_auth: 'always'"));
    unload(&f);
    const char *ovr2[] = {"servers.nope.tls.mode=enforcing", NULL};
    assert_int_equal(
        load(&f, "servers = { b = { listen = \"127.0.0.1:0\"; }; };\n", ovr2, err, sizeof(err)),
        -1);
    assert_non_null(strstr(err, "no server 'nope'"));
    unload(&f);
}

static void test_java_properties_fill_what_host_conf_leaves(void **state)
{
    (void)state;
    fx f;
    char err[1024], text[1024];
    char props[] = "/tmp/rmqtlsprops.XXXXXX";
    int fd = mkstemp(props);
    assert_true(fd >= 0);
    const char *java = "# Java\n"
                       "tls.server.mode = permissive\n"
                       "tls.server.certPath=/etc/s.pem\n"
                       "tls.server.keyPath:/etc/s.key\n"
                       "tls.server.keyPassword=pw\n"
                       "tls.server.need.client.auth=optional\n"
                       "tls.server.authClient=true\n"
                       "tls.server.trustCertPath=/etc/ca.pem\n"
                       "tls.enable=true\n"
                       "tls.client.authServer=true\n"
                       "tls.client.trustCertPath=/etc/ca2.pem\n"
                       "tls.test.mode.enable=false\n"
                       "unrelated.key=1\n";
    assert_int_equal(write(fd, java, strlen(java)), (ssize_t)strlen(java));
    close(fd);
    snprintf(text, sizeof(text),
             "servers = { b = { listen = \"127.0.0.1:0\"; tls = { tls_config_file = \"%s\"; "
             "cert_file = \"/mine.pem\"; }; }; };\n"
             "tls_client = { tls_config_file = \"%s\"; };\n",
             props, props);
    const char *ovr[] = {"servers.b.tls.mode=enforcing", NULL};
    assert_int_equal(load(&f, text, ovr, err, sizeof(err)), 0);
    const tls_conf *t = &f.conf.servers[0].tls;
    assert_int_equal(t->mode, TLS_MODE_ENFORCING);  /* -o wins */
    assert_string_equal(t->cert_file, "/mine.pem"); /* host.conf wins */
    assert_string_equal(t->key_file, "/etc/s.key");
    assert_string_equal(t->key_password, "pw");
    assert_int_equal(t->need_client_auth, TLS_AUTH_OPTIONAL);
    assert_true(t->verify_peer);
    assert_string_equal(t->trust_cert_file, "/etc/ca.pem");
    const tls_conf *c = &f.conf.tls_client;
    assert_int_equal(c->mode, 1);
    assert_true(c->verify_peer);
    assert_string_equal(c->trust_cert_file, "/etc/ca2.pem");
    assert_string_equal(c->cert_file, "");

    /* a reload reads the files again; the -o mode stays */
    tls_conf fresh = f.conf.servers[0].tls;
    fresh.mode = TLS_MODE_DISABLED;
    fresh.override_keys = 0;
    assert_int_equal(tls_conf_keep_overrides(&fresh, t, "-o", f.conf.conf_dir, err, sizeof(err)),
                     0);
    assert_int_equal(fresh.mode, TLS_MODE_ENFORCING);
    unlink(props);
    unload(&f);
}

static void test_first_byte_verdicts(void **state)
{
    (void)state;
    assert_int_equal(tls_first_byte_verdict(TLS_MODE_DISABLED, 0x00), TLS_VERDICT_PLAIN);
    assert_int_equal(tls_first_byte_verdict(TLS_MODE_DISABLED, 0x16), TLS_VERDICT_REFUSE_TLS);
    assert_int_equal(tls_first_byte_verdict(TLS_MODE_PERMISSIVE, 0x00), TLS_VERDICT_PLAIN);
    assert_int_equal(tls_first_byte_verdict(TLS_MODE_PERMISSIVE, 0x16), TLS_VERDICT_TLS);
    assert_int_equal(tls_first_byte_verdict(TLS_MODE_ENFORCING, 0x00), TLS_VERDICT_REFUSE_PLAIN);
    assert_int_equal(tls_first_byte_verdict(TLS_MODE_ENFORCING, 0x16), TLS_VERDICT_TLS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_values_and_relative_paths),
        cmocka_unit_test(test_bad_values_name_the_key),
        cmocka_unit_test(test_java_properties_fill_what_host_conf_leaves),
        cmocka_unit_test(test_first_byte_verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
