/* host_config.h — the configuration contract: conf.d/host.conf (servers,
 * paths, threads) plus one file per plugin, read with libconfig in lexical
 * order, and `-o KEY=VALUE` overrides. Plain data; validation of plugin
 * settings against a plugin's declaration happens in plugin_settings.c. */
#ifndef RMQHOST_HOST_CONFIG_H
#define RMQHOST_HOST_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "tls_config.h"

#define CONF_NAME_MAX 64
#define CONF_PATH_MAX 1024

typedef enum conf_value_type {
    CONF_VALUE_STRING = 0,
    CONF_VALUE_INT,
    CONF_VALUE_BOOL,
    CONF_VALUE_FLOAT
} conf_value_type;

typedef struct conf_setting {
    char *name;
    char *value; /* textual form; bools "true"/"false" */
    conf_value_type type;
    char file[CONF_PATH_MAX];
    int line;
} conf_setting;

typedef struct server_conf {
    char name[CONF_NAME_MAX];
    char listen[128]; /* "ip:port" or "[v6]:port" */
    int idle_seconds; /* channel_max_idle_seconds */
    tls_conf tls;     /* servers.NAME.tls (tls_config.c) */
    /* vip_listen: optional second address (Java's VIP port); "" = none */
    char vip_listen[128];
    int protocol; /* SERVER_PROTOCOL_*: what the server's connections speak */
    char file[CONF_PATH_MAX];
    int line;
} server_conf;

/* server_conf.protocol: `protocol = "remoting"` (default) or "grpc". */
enum { SERVER_PROTOCOL_REMOTING = 0, SERVER_PROTOCOL_GRPC = 1 };

typedef struct plugin_conf {
    char name[CONF_NAME_MAX];
    char path[CONF_PATH_MAX]; /* as written; resolved by the loader */
    char server[CONF_NAME_MAX];
    bool enabled;
    bool optional;
    conf_setting *settings;
    size_t nsettings;
    char file[CONF_PATH_MAX];
    int line;
} plugin_conf;

typedef struct host_conf {
    char conf_dir[CONF_PATH_MAX];     /* absolute */
    char state_dir[CONF_PATH_MAX];    /* absolute after resolve */
    char admin_socket[CONF_PATH_MAX]; /* absolute after resolve */
    char plugin_dir[CONF_PATH_MAX];   /* "" = search the defaults */
    char log_level[16];
    char log_file[CONF_PATH_MAX]; /* "" = stderr */
    int io_threads;               /* 0 = number of CPUs */
    long max_frame_bytes;
    long write_high_water;
    long write_low_water;
    int drain_timeout_ms;     /* SIGTERM: how long in-flight requests may take */
    char metrics_listen[128]; /* "" = off */
    tls_conf tls_client;      /* outgoing connections (tls_config.c) */
    server_conf *servers;
    size_t nservers;
    plugin_conf *plugins;
    size_t nplugins;
    char host_file[CONF_PATH_MAX];
} host_conf;

/* Read `dir` (host.conf + every other *.conf in lexical order). On error
 * writes "file:line: message" to err and returns -1. */
int host_conf_load(host_conf *c, const char *dir, char *err, size_t errlen);

/* Apply one "-o KEY=VALUE". Keys: state_dir, admin_socket, plugin_dir,
 * log_level, log_file, io_threads, max_frame_bytes, write_high_water,
 * write_low_water, drain_timeout_ms, metrics_listen,
 * servers.NAME.listen, servers.NAME.channel_max_idle_seconds, servers.NAME.protocol,
 * plugins.NAME.enabled, plugins.NAME.optional, plugins.NAME.path,
 * plugins.NAME.server, plugins.NAME.settings.KEY. An unknown key or bad
 * value is an error naming the key. servers.NAME.tls.KEY and tls_client.KEY
 * go to tls_config.c. */
int host_conf_override(host_conf *c, const char *kv, char *err, size_t errlen);

/* Turn relative paths absolute (state_dir against the parent of conf_dir,
 * admin_socket and log_file against state_dir) and cross-check: plugin names
 * unique, enabled plugins name declared servers. -1 + err on failure. */
int host_conf_finish(host_conf *c, char *err, size_t errlen);

const server_conf *host_conf_server(const host_conf *c, const char *name);
plugin_conf *host_conf_plugin(host_conf *c, const char *name);
void host_conf_free(host_conf *c);

/* Deep copy of one plugin conf (for a plugin instance to keep). */
int plugin_conf_copy(plugin_conf *dst, const plugin_conf *src);
void plugin_conf_free(plugin_conf *p);

#endif
