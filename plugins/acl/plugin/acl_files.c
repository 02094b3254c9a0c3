/* acl_files.c — owns which files make the configuration (aclFile, then every
 * *.yml or *.yaml file below aclDir in name order), loading and publishing them with
 * RCU, and the watch timer that reloads on change (the old rules serve until
 * the new files parse). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <urcu.h>

#include "acl_plugin.h"

#define MAX_DEPTH 8

static int add_path(char ***v, size_t *n, const char *path)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i], path) == 0)
            return 0;
    char **nv = realloc(*v, (*n + 1) * sizeof(char *));
    if (!nv)
        return -1;
    *v = nv;
    nv[*n] = strdup(path);
    if (!nv[*n])
        return -1;
    (*n)++;
    return 0;
}

static bool yaml_name(const char *name)
{
    size_t n = strlen(name);
    return (n > 4 && strcmp(name + n - 4, ".yml") == 0) ||
           (n > 5 && strcmp(name + n - 5, ".yaml") == 0);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan_dir(const char *dir, int depth, char ***v, size_t *n, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "aclDir %s: cannot open it", dir);
        return -1;
    }
    char **names = NULL;
    size_t nn = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL && rc == 0) {
        if (e->d_name[0] == '.')
            continue;
        char **t = realloc(names, (nn + 1) * sizeof(char *));
        if (!t || !(t[nn] = strdup(e->d_name))) {
            names = t ? t : names;
            rc = -1;
            break;
        }
        names = t;
        nn++;
    }
    closedir(d);
    qsort(names, nn, sizeof(char *), cmp_str);
    for (size_t i = 0; i < nn && rc == 0; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < MAX_DEPTH)
            rc = scan_dir(path, depth + 1, v, n, err, errlen);
        else if (S_ISREG(st.st_mode) && yaml_name(names[i]))
            rc = add_path(v, n, path);
    }
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    if (rc && !*err)
        snprintf(err, errlen, "out of memory");
    return rc;
}

int acl_files_collect(acl_plugin *p, char ***paths, size_t *n, char *err, size_t errlen)
{
    *paths = NULL;
    *n = 0;
    err[0] = 0;
    if (p->acl_file && add_path(paths, n, p->acl_file) != 0)
        goto oom;
    if (p->acl_dir && scan_dir(p->acl_dir, 0, paths, n, err, errlen) != 0) {
        acl_paths_free(*paths, *n);
        *paths = NULL;
        *n = 0;
        return -1;
    }
    return 0;
oom:
    acl_paths_free(*paths, *n);
    *paths = NULL;
    *n = 0;
    snprintf(err, errlen, "out of memory");
    return -1;
}

void acl_paths_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

static void stamp_of(const char *path, acl_file_stamp *s)
{
    struct stat st;
    memset(s, 0, sizeof(*s));
    if (stat(path, &st) == 0) {
        s->dev = st.st_dev;
        s->ino = st.st_ino;
        s->size = st.st_size;
        s->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        s->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
    }
}

static void set_stamps(acl_plugin *p, char **paths, size_t n)
{
    for (size_t i = 0; i < p->nstamps; i++)
        free(p->stamps[i].path);
    free(p->stamps);
    p->stamps = calloc(n ? n : 1, sizeof(*p->stamps));
    p->nstamps = 0;
    p->recheck = false;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    for (size_t i = 0; p->stamps && i < n; i++) {
        stamp_of(paths[i], &p->stamps[i]);
        p->stamps[i].path = strdup(paths[i]);
        p->nstamps++;
        /* File times tick coarsely (a jiffy): a write finishing just after
         * we read may leave them unchanged. A file changed this recently is
         * read once more at the next tick. */
        if (now_ns - p->stamps[i].ctime_ns < 2000000000LL)
            p->recheck = true;
    }
}

/* Publish `c` (lock held): readers see the old or the new one, never none. */
static void publish(acl_plugin *p, acl_config *c)
{
    acl_config *old = p->cfg;
    c->generation = ++p->generation;
    rcu_assign_pointer(p->cfg, c);
    if (old) {
        synchronize_rcu();
        acl_config_free(old);
    }
}

int acl_reload(acl_plugin *p, const char *why, char *err, size_t errlen)
{
    char **paths = NULL;
    size_t n = 0;
    pthread_mutex_lock(&p->lock);
    int rc = acl_files_collect(p, &paths, &n, err, errlen);
    if (rc == 0 && n == 0) {
        snprintf(err, errlen, "no ACL file found (aclFile %s, aclDir %s)",
                 p->acl_file ? p->acl_file : "unset", p->acl_dir ? p->acl_dir : "unset");
        rc = -1;
    }
    /* stamped before reading (a write meanwhile shows at the next tick);
     * stamps move on even when the files are refused: one log line per change */
    if (paths)
        set_stamps(p, paths, n);
    acl_config *c = NULL;
    if (rc == 0)
        rc = acl_config_load((const char *const *)paths, n, &c, err, errlen);
    if (rc == 0) {
        publish(p, c);
        atomic_fetch_add(&p->reloads, 1);
        p->last_error[0] = 0;
        size_t accounts = c->nkeys;
        pthread_mutex_unlock(&p->lock);
        p->api->log(p->ctx, RMQ_LOG_INFO, "%s: %zu ACL file(s), %zu account(s), generation %llu",
                    why, n, accounts, (unsigned long long)c->generation);
    } else {
        atomic_fetch_add(&p->reload_failures, 1);
        snprintf(p->last_error, sizeof(p->last_error), "%s", err);
        pthread_mutex_unlock(&p->lock);
    }
    acl_paths_free(paths, n);
    return rc;
}

static bool changed(acl_plugin *p)
{
    char **paths = NULL;
    size_t n = 0;
    char err[256];
    pthread_mutex_lock(&p->lock);
    bool diff =
        p->recheck || acl_files_collect(p, &paths, &n, err, sizeof(err)) != 0 || n != p->nstamps;
    for (size_t i = 0; !diff && i < n; i++) {
        acl_file_stamp s;
        stamp_of(paths[i], &s);
        const acl_file_stamp *o = &p->stamps[i];
        diff = strcmp(o->path, paths[i]) != 0 || s.dev != o->dev || s.ino != o->ino ||
               s.size != o->size || s.mtime_ns != o->mtime_ns || s.ctime_ns != o->ctime_ns;
    }
    pthread_mutex_unlock(&p->lock);
    acl_paths_free(paths, n);
    return diff;
}

static void watch_tick(void *ud)
{
    acl_plugin *p = ud;
    if (!changed(p))
        return;
    char before[sizeof(p->last_error)], err[600];
    pthread_mutex_lock(&p->lock);
    memcpy(before, p->last_error, sizeof(before));
    pthread_mutex_unlock(&p->lock);
    /* the same refusal again (a second look at a just-written file): once */
    if (acl_reload(p, "ACL files changed", err, sizeof(err)) != 0 && strcmp(before, err) != 0)
        p->api->log(p->ctx, RMQ_LOG_ERROR,
                    "ACL files changed but are refused, the previous rules stay: %s", err);
}

int acl_watch_start(acl_plugin *p, uint64_t interval_ms)
{
    int rc = p->api->declare_executor(p->ctx, "acl-watch", 1, 4);
    rmq_timer_id id;
    if (rc == 0)
        rc = p->api->add_timer(p->ctx, interval_ms, interval_ms, watch_tick, p, "acl-watch", &id);
    return rc;
}

const char *acl_default_file(acl_plugin *p, const acl_config *c)
{
    if (p->acl_file)
        return p->acl_file;
    return c && c->nfiles ? c->files[0].path : NULL;
}
