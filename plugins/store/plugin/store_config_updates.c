/* store_config_updates.c — owns the store's part of UPDATE_BROKER_CONFIG
 * (25): the settings store_settings.c reads (MessageStoreConfig names), set
 * through `store.queues`' config_update by the broker plugin, kept in
 * <storePathRootDir>/config/store.properties and read over conf.d at the
 * next start; fileReservedTime, deleteWhen and diskMaxUsedSpaceRatio also
 * reach the running engine at once (Java's clean-up service reads them on
 * every pass), and the settings Java reads per request or per use
 * (store_setting_is_live, store_setting_is_engine_live) reach the workers
 * and the engine at once. Java rewrites its
 * whole config file with every field. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "store_plugin.h"

#define UPDATES_FILE "store.properties"

/* Keys no update may change: the file lives under the first, and the
 * second is where the commit log is. The settings read by other files
 * (delay levels, transactions, replies, timers) are not taken either. */
static bool updatable(const char *key)
{
    static const char *const OTHERS[] = {
        "storePathRootDir",         "storePathCommitLog", "messageDelayLevel",
        "storeReplyMessageEnable",  "transactionTimeOut", "transactionCheckMax",
        "transactionCheckInterval", "timerWheelEnable",   "timerMaxDelaySec",
        "timerPrecisionMs",
    };
    for (size_t i = 0; i < sizeof OTHERS / sizeof OTHERS[0]; i++)
        if (strcmp(key, OTHERS[i]) == 0)
            return false;
    return true;
}

static const rmq_setting_decl *decl_of(const char *key)
{
    for (const rmq_setting_decl *d = STORE_SETTINGS; d->name; d++)
        if (strcmp(d->name, key) == 0)
            return updatable(key) ? d : NULL;
    return NULL;
}

/* What Java's setter would take (properties2Object ignores the rest). */
static bool value_fits(const rmq_setting_decl *d, const char *v)
{
    char *end;
    if (d->type == RMQ_SETTING_INT) {
        errno = 0;
        long long n = strtoll(v, &end, 10);
        if (errno || end == v || *end)
            return false;
        return d->min >= d->max || (n >= d->min && n <= d->max);
    }
    if (d->type == RMQ_SETTING_DOUBLE) {
        strtod(v, &end);
        return end != v && !*end;
    }
    if (strcmp(d->name, "flushDiskType") == 0)
        return strcmp(v, "ASYNC_FLUSH") == 0 || strcmp(v, "SYNC_FLUSH") == 0;
    return true;
}

static void file_path(store_plugin *sp, char *out, size_t cap)
{
    snprintf(out, cap, "%s/config/%s", sp->set.root_dir, UPDATES_FILE);
}

json_t *store_updates_read(store_plugin *sp)
{
    json_t *u = json_object();
    if (!u)
        return NULL;
    char path[1200];
    file_path(sp, path, sizeof path);
    char *data = NULL;
    size_t len = 0;
    if (sp->api->read_file_with_backup(sp->ctx, path, NULL, NULL, &data, &len) != 0)
        return u;
    /* "key=value" lines as store_config_update writes them */
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '=');
        if (!eq || line[0] == '#')
            continue;
        *eq = 0;
        const rmq_setting_decl *d = decl_of(line);
        if (d && value_fits(d, eq + 1))
            json_object_set_new(u, line, json_string(eq + 1));
    }
    free(data);
    return u;
}

static int update(store_plugin *sp, const char *key, const char *value, const char *source)
{
    const rmq_setting_decl *d = decl_of(key);
    if (!d)
        return RMQ_ENOENT;
    if (!value_fits(d, value))
        return RMQ_EINVAL;
    pthread_mutex_lock(&sp->updates_mu); /* one read-modify-write of the file at a time */
    json_t *u = store_updates_read(sp);
    char *text = NULL;
    size_t n = 0;
    if (u) {
        json_object_set_new(u, key, json_string(value));
        size_t cap = 64;
        const char *k;
        json_t *v;
        json_object_foreach(u, k, v) cap += strlen(k) + strlen(json_string_value(v)) + 2;
        text = malloc(cap);
        json_object_foreach(u, k, v)
        {
            if (text)
                n += (size_t)snprintf(text + n, cap - n, "%s=%s\n", k, json_string_value(v));
        }
    }
    bool live = store_setting_is_live(key);
    if (live && u)
        store_settings_apply_live(sp, u);
    bool engine_live = store_setting_is_engine_live(key);
    if (engine_live && u) {
        pthread_rwlock_rdlock(&sp->engine_rw);
        store_settings_apply_engine(sp, sp->engine, u);
        pthread_rwlock_unlock(&sp->engine_rw);
    }
    /* the retention settings reach the engine's next pass */
    bool retention = strcmp(key, "fileReservedTime") == 0 || strcmp(key, "deleteWhen") == 0 ||
                     strcmp(key, "diskMaxUsedSpaceRatio") == 0;
    if (retention && u) {
        const char *h = json_string_value(json_object_get(u, "fileReservedTime"));
        const char *w = json_string_value(json_object_get(u, "deleteWhen"));
        const char *r = json_string_value(json_object_get(u, "diskMaxUsedSpaceRatio"));
        pthread_rwlock_rdlock(&sp->engine_rw);
        store_set_retention(sp->engine,
                            h ? strtoll(h, NULL, 10) : sp->set.engine.file_reserved_hours,
                            w ? w : sp->set.delete_when,
                            r ? (int32_t)strtol(r, NULL, 10) : sp->set.engine.disk_max_used_ratio);
        pthread_rwlock_unlock(&sp->engine_rw);
    }
    int rc = RMQ_ENOMEM;
    char path[1200];
    file_path(sp, path, sizeof path);
    if (text) {
        char dir[1200];
        snprintf(dir, sizeof dir, "%s/config", sp->set.root_dir);
        mkdir(dir, 0755); /* Java's layout: <storePathRootDir>/config */
        rc = sp->api->write_file_atomic(sp->ctx, path, text, n);
    }
    pthread_mutex_unlock(&sp->updates_mu);
    json_decref(u);
    free(text);
    if (rc != 0) {
        sp->api->log(sp->ctx, RMQ_LOG_ERROR, "cannot write %s: %s", path, rmq_strerror(rc));
        return rc;
    }
    sp->api->log(sp->ctx, RMQ_LOG_INFO, "%s: %s=%s kept in %s (%s)", source, key, value, path,
                 retention || live || engine_live || !strcmp(source, "role change")
                     ? "applied now"
                     : "applies at the next start");
    return 0;
}

int store_config_update(store_plugin *sp, const char *key, const char *value)
{
    return update(sp, key, value, "UPDATE_BROKER_CONFIG");
}

int store_role_keep(store_plugin *sp, const char *key, const char *value)
{
    return update(sp, key, value, "role change");
}
