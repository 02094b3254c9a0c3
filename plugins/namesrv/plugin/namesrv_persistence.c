/* namesrv_persistence.c — kvConfig.json and the configStorePath properties
 * file through the host's atomic writer and backup-aware reader. Owns file
 * policy (a corrupt file falls back to .bak; if both are bad the plugin
 * refuses to start rather than overwrite them); never edits tables itself. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "namesrv_plugin.h"

int namesrv_make_parent_dirs(const char *path)
{
    char *tmp = strdup(path);
    if (!tmp)
        return -1;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) {
            free(tmp);
            return -1;
        }
        *p = '/';
    }
    free(tmp);
    return 0;
}

static bool kv_text_valid(const char *data, size_t len, void *ud)
{
    (void)ud;
    kv_store tmp;
    kv_store_init(&tmp);
    char err[128];
    bool ok = kv_store_load(&tmp, data, len, err, sizeof(err)) == 0;
    kv_store_destroy(&tmp);
    return ok;
}

int namesrv_load_kv(namesrv_plugin *ns)
{
    const char *path = ns->core.cfg.kv_config_path;
    char *data = NULL;
    size_t len = 0;
    int rc = ns->api->read_file_with_backup(ns->ctx, path, kv_text_valid, NULL, &data, &len);
    if (rc == RMQ_ENOENT) {
        ns->api->log(ns->ctx, RMQ_LOG_INFO, "no KV config at %s yet: starting empty", path);
        return 0;
    }
    if (rc != 0) {
        ns->api->log(ns->ctx, RMQ_LOG_ERROR,
                     "KV config %s and its .bak are unreadable or corrupt (%s); refusing to "
                     "start so that neither is overwritten",
                     path, rmq_strerror(rc));
        return rc;
    }
    char err[256] = "";
    if (kv_store_load(&ns->core.kv, data, len, err, sizeof(err)) != 0) {
        ns->api->log(ns->ctx, RMQ_LOG_ERROR, "KV config %s: %s", path, err);
        free(data);
        return RMQ_EINVAL;
    }
    free(data);
    ns->api->log(ns->ctx, RMQ_LOG_INFO, "loaded KV config from %s", path);
    return 0;
}

int namesrv_persist_kv(namesrv_plugin *ns)
{
    text_buf t;
    tb_init(&t);
    kv_store_encode_file(&ns->core.kv, &t);
    size_t len;
    char *text = tb_take(&t, &len);
    if (!text)
        return RMQ_ENOMEM;
    const char *path = ns->core.cfg.kv_config_path;
    namesrv_make_parent_dirs(path);
    int rc = ns->api->write_file_atomic(ns->ctx, path, text, len);
    if (rc != 0)
        ns->api->log(ns->ctx, RMQ_LOG_ERROR, "persisting KV config to %s failed: %s", path,
                     rmq_strerror(rc));
    free(text);
    return rc;
}

int namesrv_persist_config(namesrv_plugin *ns)
{
    text_buf t;
    tb_init(&t);
    namesrv_config_properties(&ns->core.cfg, &t);
    size_t len;
    char *text = tb_take(&t, &len);
    if (!text)
        return RMQ_ENOMEM;
    const char *path = ns->core.cfg.config_store_path;
    namesrv_make_parent_dirs(path);
    int rc = ns->api->write_file_atomic(ns->ctx, path, text, len);
    if (rc != 0)
        ns->api->log(ns->ctx, RMQ_LOG_ERROR, "persisting config to %s failed: %s", path,
                     rmq_strerror(rc));
    free(text);
    return rc;
}

void namesrv_load_stored_config(namesrv_plugin *ns)
{
    char *data = NULL;
    size_t len = 0;
    const char *path = ns->core.cfg.config_store_path;
    if (ns->api->read_file_with_backup(ns->ctx, path, NULL, NULL, &data, &len) != 0)
        return;
    namesrv_config_apply_stored(&ns->core.cfg, data, len);
    ns->api->log(ns->ctx, RMQ_LOG_INFO, "applied run-time config changes stored in %s", path);
    free(data);
}
