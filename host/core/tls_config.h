/* tls_config.h — TLS settings as host.conf states them: a `tls` group per
 * server, the top-level `tls_client` group for outgoing connections, and a
 * Java tls.properties file either may name. Plain data; building OpenSSL
 * contexts from it is tls_context.c's job. */
#ifndef RMQHOST_TLS_CONFIG_H
#define RMQHOST_TLS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define TLS_PATH_MAX 1024
#define TLS_PASSWORD_MAX 256

/* Java tls.server.mode. */
typedef enum tls_mode { TLS_MODE_DISABLED = 0, TLS_MODE_PERMISSIVE, TLS_MODE_ENFORCING } tls_mode;

/* Java tls.server.need.client.auth. */
typedef enum tls_client_auth {
    TLS_AUTH_NONE = 0,
    TLS_AUTH_OPTIONAL,
    TLS_AUTH_REQUIRE
} tls_client_auth;

/* Bits of tls_conf.explicit_keys: what host.conf or -o set, which a
 * tls_config_file must not override. */
enum {
    TLS_KEY_MODE = 1u << 0,
    TLS_KEY_CERT = 1u << 1,
    TLS_KEY_KEY = 1u << 2,
    TLS_KEY_PASSWORD = 1u << 3,
    TLS_KEY_TRUST = 1u << 4,
    TLS_KEY_CLIENT_AUTH = 1u << 5,
    TLS_KEY_VERIFY = 1u << 6,
    TLS_KEY_TEST_MODE = 1u << 7,
    TLS_KEY_CONFIG_FILE = 1u << 8,
};

typedef struct tls_conf {
    bool client; /* the tls_client group (outgoing) rather than a server's */
    int mode;    /* server: tls_mode; client: 1 = tls.enable */
    char cert_file[TLS_PATH_MAX];
    char key_file[TLS_PATH_MAX];
    char key_password[TLS_PASSWORD_MAX]; /* secret: never printed */
    char trust_cert_file[TLS_PATH_MAX];
    int need_client_auth; /* tls_client_auth (server only) */
    bool verify_peer;     /* client: tls.client.authServer; server: tls.server.authClient */
    bool test_mode;       /* tls.test.mode.enable: self-signed server cert, trust-all client */
    char config_file[TLS_PATH_MAX]; /* tls_config_file: a Java tls.properties */
    unsigned explicit_keys;
    unsigned override_keys; /* the subset given with -o */
    bool alpn_h2;           /* server: select "h2" by ALPN (gRPC servers; not a tls key) */
} tls_conf;

/* Defaults: disabled, no files, need_client_auth none, verify_peer as Java
 * (server: true when trust_cert_file is given, decided at finish; client:
 * false). */
void tls_conf_defaults(tls_conf *t, bool client);

/* One key of a `tls` / `tls_client` group with its textual value (strings
 * as written, booleans "true"/"false"). 0, or -1 with err "KEY: problem". */
int tls_conf_set(tls_conf *t, const char *key, const char *value, char *err, size_t errlen);

/* Merge tls_config_file (keys host.conf did not set explicitly), turn
 * relative paths absolute against base_dir and cross-check. -1 + err
 * naming the file or key on failure. `what` names the group in messages. */
int tls_conf_finish(tls_conf *t, const char *what, const char *base_dir, char *err, size_t errlen);

/* Read a libconfig `tls` / `tls_client` group into t (defaults applied
 * first). -1 + err "file:line: message" on a bad key or value. */
struct config_setting_t;
int tls_conf_parse_group(tls_conf *t, bool client, const struct config_setting_t *group,
                         const char *file, char *err, size_t errlen);

/* host_config.c's hooks. tls_conf_override: apply "-o servers.NAME.tls.KEY"
 * or "-o tls_client.KEY"; returns 1 when `key` is not a TLS key, else 0 or
 * -1 + err. tls_conf_finish_all: tls_conf_finish every group (paths
 * relative to conf_dir). */
struct host_conf;
int tls_conf_override(struct host_conf *c, const char *key, const char *val, char *err,
                      size_t errlen);
int tls_conf_finish_all(struct host_conf *c, char *err, size_t errlen);

/* reload-config re-reads the files but must not drop what -o set at start
 * (turning TLS off by surprise): copy running's -o keys into fresh and
 * finish fresh again. 0 or -1 + err. */
int tls_conf_keep_overrides(tls_conf *fresh, const tls_conf *running, const char *what,
                            const char *base_dir, char *err, size_t errlen);

const char *tls_mode_name(int mode);

#endif
