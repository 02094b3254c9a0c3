/* acl_plugin.h — the acl plugin's context shared by its files: settings, the
 * RCU-published configuration, file-watch stamps and refusal statistics. */
#ifndef ACL_PLUGIN_H
#define ACL_PLUGIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rmqhost/rmqhost.h>

#include "acl_config.h"

#define ACL_MAX_PEERS 4096

typedef struct acl_peer_stat {
    char ip[64];
    uint64_t auth_failures;
    uint64_t perm_refusals;
    uint64_t last_log_ms;
    uint64_t suppressed;
    char last_remark[160];
} acl_peer_stat;

typedef struct acl_file_stamp {
    char *path;
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
    int64_t ctime_ns;
} acl_file_stamp;

typedef struct acl_plugin {
    rmq_plugin_ctx *ctx;
    const rmq_host_api *api;
    bool namesrv; /* role = "namesrv": rmqhost's NameServer policy */
    bool allow_anonymous_read;
    char *acl_file; /* resolved absolute path, or NULL */
    char *acl_dir;  /* resolved absolute path, or NULL */
    uint64_t log_interval_ms;

    acl_config *cfg;        /* RCU-published; writers hold `lock` */
    pthread_mutex_t lock;   /* reloads and admin-code writes */
    acl_file_stamp *stamps; /* what the published cfg was read from */
    size_t nstamps;
    bool recheck;         /* a file changed just before it was read: read again */
    char last_error[512]; /* last refused reload, logged once */
    uint64_t generation;

    atomic_ulong allowed, white_listed, refused_auth, refused_perm, audited;
    atomic_ulong reloads, reload_failures;

    pthread_mutex_t stats_lock;
    acl_peer_stat *peers;
    size_t npeers;
    uint64_t peers_dropped; /* failures from peers past ACL_MAX_PEERS */
} acl_plugin;

/* acl_files.c: the list of files (aclFile, then aclDir files ending .yml or .yaml, sorted),
 * loading them, publishing, and the watch timer. */
int acl_files_collect(acl_plugin *p, char ***paths, size_t *n, char *err, size_t errlen);
void acl_paths_free(char **paths, size_t n);
/* Load and publish (INIT or the watch thread). 0, or -1 with err: the old
 * configuration stays. */
int acl_reload(acl_plugin *p, const char *why, char *err, size_t errlen);
int acl_watch_start(acl_plugin *p, uint64_t interval_ms);
/* The file new accounts go to (aclFile, else the first file of aclDir). */
const char *acl_default_file(acl_plugin *p, const acl_config *c);

/* acl_stats.c */
void acl_stats_refused(acl_plugin *p, const char *ip, bool auth, const char *remark, int32_t code,
                       const char *access_key);
int acl_stats_register(acl_plugin *p);
void acl_stats_free(acl_plugin *p);

/* acl_grpc_service.c: service "acl.check" (SDK acl_service.h) for the gRPC
 * endpoint, exported by a broker-role instance */
int acl_grpc_service_export(acl_plugin *p);

/* acl_admin_codes.c: broker codes 50..54 */
int acl_admin_codes_register(acl_plugin *p);

#endif
