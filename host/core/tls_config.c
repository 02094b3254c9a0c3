/* tls_config.c — reads TLS settings into tls_conf: host.conf's `tls` and
 * `tls_client` groups, `-o` values, and a Java tls.properties file named by
 * tls_config_file (its tls.* keys fill what host.conf leaves unset). Only
 * reads files; certificates are opened by tls_context.c. */
#include "tls_config.h"

#include "host_config.h"

#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tlsc_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int tlsc_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

void tls_conf_defaults(tls_conf *t, bool client)
{
    memset(t, 0, sizeof(*t));
    t->client = client;
}

const char *tls_mode_name(int mode)
{
    switch (mode) {
    case TLS_MODE_PERMISSIVE: return "permissive";
    case TLS_MODE_ENFORCING: return "enforcing";
    default: return "disabled";
    }
}

static int tlsc_set_path(char *dst, size_t cap, const char *key, const char *v, char *err,
                         size_t errlen)
{
    if (strlen(v) >= cap)
        return tlsc_fail(err, errlen, "%s: value too long", key);
    snprintf(dst, cap, "%s", v);
    return 0;
}

static int tlsc_parse_bool(const char *key, const char *v, bool *out, char *err, size_t errlen)
{
    if (strcasecmp(v, "true") == 0)
        *out = true;
    else if (strcasecmp(v, "false") == 0)
        *out = false;
    else
        return tlsc_fail(err, errlen, "%s: '%s' is not true or false", key, v);
    return 0;
}

/* Apply one key; `from_file` is true for a tls.properties value, which does
 * not mark the key explicit. */
static int tlsc_set_key(tls_conf *t, const char *key, const char *v, bool from_file, char *err,
                        size_t errlen)
{
    unsigned bit = 0;
    int rc = 0;
    if (!t->client && strcmp(key, "mode") == 0) {
        bit = TLS_KEY_MODE;
        if (strcasecmp(v, "disabled") == 0)
            t->mode = TLS_MODE_DISABLED;
        else if (strcasecmp(v, "permissive") == 0)
            t->mode = TLS_MODE_PERMISSIVE;
        else if (strcasecmp(v, "enforcing") == 0)
            t->mode = TLS_MODE_ENFORCING;
        else
            rc =
                tlsc_fail(err, errlen, "%s: '%s' is not disabled, permissive or enforcing", key, v);
    } else if (t->client && strcmp(key, "enable") == 0) {
        bool b = false;
        bit = TLS_KEY_MODE;
        rc = tlsc_parse_bool(key, v, &b, err, errlen);
        t->mode = b ? 1 : 0;
    } else if (strcmp(key, "cert_file") == 0) {
        bit = TLS_KEY_CERT;
        rc = tlsc_set_path(t->cert_file, sizeof(t->cert_file), key, v, err, errlen);
    } else if (strcmp(key, "key_file") == 0) {
        bit = TLS_KEY_KEY;
        rc = tlsc_set_path(t->key_file, sizeof(t->key_file), key, v, err, errlen);
    } else if (strcmp(key, "key_password") == 0) {
        bit = TLS_KEY_PASSWORD;
        rc = tlsc_set_path(t->key_password, sizeof(t->key_password), key, v, err, errlen);
    } else if (strcmp(key, "trust_cert_file") == 0) {
        bit = TLS_KEY_TRUST;
        rc = tlsc_set_path(t->trust_cert_file, sizeof(t->trust_cert_file), key, v, err, errlen);
    } else if (!t->client && strcmp(key, "need_client_auth") == 0) {
        bit = TLS_KEY_CLIENT_AUTH;
        if (strcasecmp(v, "none") == 0)
            t->need_client_auth = TLS_AUTH_NONE;
        else if (strcasecmp(v, "optional") == 0)
            t->need_client_auth = TLS_AUTH_OPTIONAL;
        else if (strcasecmp(v, "require") == 0)
            t->need_client_auth = TLS_AUTH_REQUIRE;
        else
            rc = tlsc_fail(err, errlen, "%s: '%s' is not none, optional or require", key, v);
    } else if ((t->client && strcmp(key, "verify_server") == 0) ||
               (!t->client && strcmp(key, "verify_client") == 0)) {
        bit = TLS_KEY_VERIFY;
        rc = tlsc_parse_bool(key, v, &t->verify_peer, err, errlen);
    } else if (strcmp(key, "test_mode") == 0) {
        bit = TLS_KEY_TEST_MODE;
        rc = tlsc_parse_bool(key, v, &t->test_mode, err, errlen);
    } else if (!from_file && strcmp(key, "tls_config_file") == 0) {
        bit = TLS_KEY_CONFIG_FILE;
        rc = tlsc_set_path(t->config_file, sizeof(t->config_file), key, v, err, errlen);
    } else {
        return tlsc_fail(err, errlen, "%s: unknown key in %s", key,
                         t->client ? "tls_client" : "tls");
    }
    if (rc == 0 && !from_file)
        t->explicit_keys |= bit;
    return rc;
}

int tls_conf_set(tls_conf *t, const char *key, const char *value, char *err, size_t errlen)
{
    return tlsc_set_key(t, key, value, false, err, errlen);
}

int tls_conf_parse_group(tls_conf *t, bool client, const struct config_setting_t *group,
                         const char *file, char *err, size_t errlen)
{
    tls_conf_defaults(t, client);
    if (!config_setting_is_group(group))
        return tlsc_fail(err, errlen,
                         "%s:%d: '%s' must be a group { mode = ...; cert_file = ...; }", file,
                         (int)config_setting_source_line(group), config_setting_name(group));
    for (int i = 0; i < config_setting_length(group); i++) {
        config_setting_t *s = config_setting_get_elem(group, (unsigned)i);
        const char *text = NULL;
        if (config_setting_type(s) == CONFIG_TYPE_STRING)
            text = config_setting_get_string(s);
        else if (config_setting_type(s) == CONFIG_TYPE_BOOL)
            text = config_setting_get_bool(s) ? "true" : "false";
        char why[512];
        if (!text)
            snprintf(why, sizeof(why), "%s: must be a string or a boolean", config_setting_name(s));
        if (!text || tlsc_set_key(t, config_setting_name(s), text, false, why, sizeof(why)) != 0)
            return tlsc_fail(err, errlen, "%s:%d: %s", file, (int)config_setting_source_line(s),
                             why);
    }
    return 0;
}

/* ---- Java tls.properties ---------------------------------------------------- */

/* The Java property each key comes from; server and client variants. */
static const struct {
    const char *prop;
    const char *key;
    int side; /* 0 server, 1 client, 2 both */
} tlsc_java_props[] = {
    {"tls.server.mode", "mode", 0},
    {"tls.server.need.client.auth", "need_client_auth", 0},
    {"tls.server.keyPath", "key_file", 0},
    {"tls.server.keyPassword", "key_password", 0},
    {"tls.server.certPath", "cert_file", 0},
    {"tls.server.authClient", "verify_client", 0},
    {"tls.server.trustCertPath", "trust_cert_file", 0},
    {"tls.enable", "enable", 1},
    {"tls.client.keyPath", "key_file", 1},
    {"tls.client.keyPassword", "key_password", 1},
    {"tls.client.certPath", "cert_file", 1},
    {"tls.client.authServer", "verify_server", 1},
    {"tls.client.trustCertPath", "trust_cert_file", 1},
    {"tls.test.mode.enable", "test_mode", 2},
};

static unsigned tlsc_bit_of(const char *key)
{
    static const struct {
        const char *key;
        unsigned bit;
    } bits[] = {{"mode", TLS_KEY_MODE},
                {"enable", TLS_KEY_MODE},
                {"cert_file", TLS_KEY_CERT},
                {"key_file", TLS_KEY_KEY},
                {"key_password", TLS_KEY_PASSWORD},
                {"trust_cert_file", TLS_KEY_TRUST},
                {"need_client_auth", TLS_KEY_CLIENT_AUTH},
                {"verify_client", TLS_KEY_VERIFY},
                {"verify_server", TLS_KEY_VERIFY},
                {"test_mode", TLS_KEY_TEST_MODE}};
    for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
        if (strcmp(bits[i].key, key) == 0)
            return bits[i].bit;
    return 0;
}

static char *tlsc_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

/* java.util.Properties' line format, enough for tls.properties: `key=value`
 * or `key: value` or `key value`, `#`/`!` comments, blank lines. */
static int tlsc_merge_properties(tls_conf *t, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return tlsc_fail(err, errlen, "%s: cannot read tls_config_file: %s", path, strerror(errno));
    char line[4096];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        lineno++;
        char *s = tlsc_trim(line);
        if (!*s || *s == '#' || *s == '!')
            continue;
        size_t klen = strcspn(s, "=: \t");
        char *v = s + klen;
        if (*v) {
            *v++ = 0;
            v = tlsc_trim(v);
            if (*v == '=' || *v == ':')
                v = tlsc_trim(v + 1);
        }
        for (size_t i = 0; i < sizeof(tlsc_java_props) / sizeof(tlsc_java_props[0]); i++) {
            if (strcmp(tlsc_java_props[i].prop, s) != 0)
                continue;
            if (tlsc_java_props[i].side != 2 && tlsc_java_props[i].side != (t->client ? 1 : 0))
                break;
            if (t->explicit_keys & tlsc_bit_of(tlsc_java_props[i].key))
                break; /* host.conf wins */
            char why[512];
            if (tlsc_set_key(t, tlsc_java_props[i].key, v, true, why, sizeof(why)) != 0)
                rc = tlsc_fail(err, errlen, "%s:%d: %s: %s", path, lineno, s, why);
            break;
        }
    }
    fclose(f);
    return rc;
}

static int tlsc_absolutise(char *path, size_t cap, const char *base)
{
    if (!path[0] || path[0] == '/')
        return 0;
    char tmp[TLS_PATH_MAX * 2 + 2];
    snprintf(tmp, sizeof(tmp), "%s/%s", base, path);
    if (strlen(tmp) >= cap)
        return -1;
    snprintf(path, cap, "%s", tmp);
    return 0;
}

int tls_conf_finish(tls_conf *t, const char *what, const char *base_dir, char *err, size_t errlen)
{
    if (tlsc_absolutise(t->config_file, sizeof(t->config_file), base_dir))
        return tlsc_fail(err, errlen, "%s: tls_config_file path too long", what);
    if (t->config_file[0] && tlsc_merge_properties(t, t->config_file, err, errlen) != 0)
        return -1;
    if (tlsc_absolutise(t->cert_file, sizeof(t->cert_file), base_dir) ||
        tlsc_absolutise(t->key_file, sizeof(t->key_file), base_dir) ||
        tlsc_absolutise(t->trust_cert_file, sizeof(t->trust_cert_file), base_dir))
        return tlsc_fail(err, errlen, "%s: a certificate path is too long", what);
    /* Java's server verifies client certificates only with authClient;
     * here a trust_cert_file implies it unless verify_client says no. */
    if (!t->client && !(t->explicit_keys & TLS_KEY_VERIFY) && !t->config_file[0])
        t->verify_peer = t->trust_cert_file[0] != 0;
    if (t->mode == 0 || t->test_mode)
        return 0;
    if (!t->client && (!t->cert_file[0] || !t->key_file[0]))
        return tlsc_fail(err, errlen,
                         "%s: mode %s needs cert_file and key_file (tls.server.certPath, "
                         "tls.server.keyPath) or test_mode = true",
                         what, tls_mode_name(t->mode));
    if (!!t->cert_file[0] != !!t->key_file[0])
        return tlsc_fail(err, errlen, "%s: cert_file and key_file go together", what);
    return 0;
}

int tls_conf_keep_overrides(tls_conf *fresh, const tls_conf *running, const char *what,
                            const char *base_dir, char *err, size_t errlen)
{
    unsigned k = running->override_keys;
    if (k == 0)
        return 0;
    if (k & TLS_KEY_MODE)
        fresh->mode = running->mode;
    if (k & TLS_KEY_CERT)
        memcpy(fresh->cert_file, running->cert_file, sizeof(fresh->cert_file));
    if (k & TLS_KEY_KEY)
        memcpy(fresh->key_file, running->key_file, sizeof(fresh->key_file));
    if (k & TLS_KEY_PASSWORD)
        memcpy(fresh->key_password, running->key_password, sizeof(fresh->key_password));
    if (k & TLS_KEY_TRUST)
        memcpy(fresh->trust_cert_file, running->trust_cert_file, sizeof(fresh->trust_cert_file));
    if (k & TLS_KEY_CLIENT_AUTH)
        fresh->need_client_auth = running->need_client_auth;
    if (k & TLS_KEY_VERIFY)
        fresh->verify_peer = running->verify_peer;
    if (k & TLS_KEY_TEST_MODE)
        fresh->test_mode = running->test_mode;
    if (k & TLS_KEY_CONFIG_FILE)
        memcpy(fresh->config_file, running->config_file, sizeof(fresh->config_file));
    fresh->explicit_keys |= k;
    fresh->override_keys |= k;
    return tls_conf_finish(fresh, what, base_dir, err, errlen);
}

/* ---- host.conf hooks --------------------------------------------------------- */

int tls_conf_override(struct host_conf *c, const char *key, const char *val, char *err,
                      size_t errlen)
{
    tls_conf *t = NULL;
    const char *field = NULL;
    c->tls_client.client = true;
    if (strncmp(key, "tls_client.", 11) == 0) {
        t = &c->tls_client;
        field = key + 11;
    } else if (strncmp(key, "servers.", 8) == 0) {
        const char *mark = strstr(key + 8, ".tls.");
        if (!mark)
            return 1;
        char sname[CONF_NAME_MAX];
        snprintf(sname, sizeof(sname), "%.*s", (int)(mark - (key + 8)), key + 8);
        server_conf *sc = (server_conf *)host_conf_server(c, sname);
        if (!sc)
            return tlsc_fail(err, errlen, "-o %s: no server '%s' in host.conf", key, sname);
        t = &sc->tls;
        field = mark + 5;
    } else {
        return 1;
    }
    char why[512];
    unsigned before = t->explicit_keys;
    t->explicit_keys = 0;
    int rc = tls_conf_set(t, field, val, why, sizeof(why));
    t->override_keys |= t->explicit_keys;
    t->explicit_keys |= before;
    if (rc != 0)
        return tlsc_fail(err, errlen, "-o %s: %s", key, why);
    return 0;
}

int tls_conf_finish_all(struct host_conf *c, char *err, size_t errlen)
{
    c->tls_client.client = true;
    for (size_t i = 0; i < c->nservers; i++) {
        char what[CONF_NAME_MAX + 64];
        snprintf(what, sizeof(what), "%s: servers.%s.tls", c->host_file, c->servers[i].name);
        if (tls_conf_finish(&c->servers[i].tls, what, c->conf_dir, err, errlen))
            return -1;
    }
    char what[CONF_PATH_MAX + 32];
    snprintf(what, sizeof(what), "%s: tls_client", c->host_file);
    return tls_conf_finish(&c->tls_client, what, c->conf_dir, err, errlen);
}
