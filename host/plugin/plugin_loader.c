/* plugin_loader.c — finds a plugin's .so, loads a private copy with
 * RTLD_NOW|RTLD_LOCAL (a second dlopen of the same path would return the
 * old image on reload), checks the descriptor's ABI before reading anything
 * else, validates settings against the plugin's declaration, runs init and
 * undoes everything on failure. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <urcu.h>

#include "host.h"

static bool file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int resolve_path(rmq_host *h, const plugin_conf *pc, char *out, size_t cap)
{
    if (pc->path[0] == '/') {
        snprintf(out, cap, "%s", pc->path);
        return file_exists(out) ? 0 : -1;
    }
    const char *dirs[4];
    char d1[CONF_PATH_MAX + 32], d2[CONF_PATH_MAX + 32];
    size_t n = 0;
    if (h->conf.plugin_dir[0]) {
        dirs[n++] = h->conf.plugin_dir;
    } else {
        /* In a build tree the daemon is build/bin and plugins build/plugins;
         * installed it is P/bin and P/lib/rmqhost/plugins. */
        snprintf(d1, sizeof(d1), "%s/../plugins", h->exe_dir);
        snprintf(d2, sizeof(d2), "%s/../lib/rmqhost/plugins", h->exe_dir);
        dirs[n++] = d1;
        dirs[n++] = d2;
        dirs[n++] = RMQ_DEFAULT_PLUGIN_DIR;
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(out, cap, "%s/%s", dirs[i], pc->path);
        if (file_exists(out))
            return 0;
    }
    snprintf(out, cap, "%s/%s", dirs[0], pc->path);
    return -1;
}

const char *plugin_setting_value(plugin_inst *p, const char *name)
{
    for (size_t i = 0; i < p->nsettings; i++)
        if (strcmp(p->settings[i].decl->name, name) == 0)
            return p->settings[i].value;
    return NULL;
}

static int check_value(const rmq_setting_decl *d, const char *v, char *why, size_t whylen)
{
    char *end;
    switch (d->type) {
    case RMQ_SETTING_STRING: return 0;
    case RMQ_SETTING_INT: {
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (errno || end == v || *end) {
            snprintf(why, whylen, "'%s' is not an integer", v);
            return -1;
        }
        if (d->min < d->max && (x < d->min || x > d->max)) {
            snprintf(why, whylen, "%lld is outside [%lld, %lld]", x, (long long)d->min,
                     (long long)d->max);
            return -1;
        }
        return 0;
    }
    case RMQ_SETTING_BOOL:
        if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
            return 0;
        snprintf(why, whylen, "'%s' is not true or false", v);
        return -1;
    case RMQ_SETTING_DOUBLE:
        errno = 0;
        strtod(v, &end);
        if (errno || end == v || *end) {
            snprintf(why, whylen, "'%s' is not a number", v);
            return -1;
        }
        return 0;
    }
    snprintf(why, whylen, "unknown setting type");
    return -1;
}

static const char *default_text(const rmq_setting_decl *d)
{
    if (d->default_value)
        return d->default_value;
    switch (d->type) {
    case RMQ_SETTING_BOOL: return "false";
    case RMQ_SETTING_INT: return "0";
    case RMQ_SETTING_DOUBLE: return "0";
    default: return "";
    }
}

int plugin_resolve_settings(plugin_inst *p, char *err, size_t errlen)
{
    const rmq_setting_decl *decls = p->desc->settings;
    size_t n = 0;
    while (decls && decls[n].name)
        n++;
    for (size_t i = 0; i < p->conf.nsettings; i++) {
        const conf_setting *cs = &p->conf.settings[i];
        bool known = false;
        for (size_t k = 0; k < n && !known; k++)
            known = strcmp(decls[k].name, cs->name) == 0;
        if (!known) {
            snprintf(err, errlen,
                     "%s:%d: plugin '%s' has no setting '%s' (rmqhostd "
                     "--list-settings shows them)",
                     cs->file, cs->line, p->conf.name, cs->name);
            return -1;
        }
    }
    p->settings = calloc(n + 1, sizeof(resolved_setting));
    if (!p->settings) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        const rmq_setting_decl *d = &decls[k];
        const char *v = default_text(d);
        const conf_setting *src = NULL;
        for (size_t i = 0; i < p->conf.nsettings; i++)
            if (strcmp(p->conf.settings[i].name, d->name) == 0)
                src = &p->conf.settings[i];
        if (src) {
            v = src->value;
            char why[160];
            bool type_ok = true;
            if (d->type == RMQ_SETTING_STRING && src->type == CONF_VALUE_BOOL)
                type_ok = false;
            if (!type_ok || check_value(d, v, why, sizeof(why)) != 0) {
                if (!type_ok)
                    snprintf(why, sizeof(why), "expected a string");
                snprintf(err, errlen, "%s:%d: plugin '%s' setting '%s': %s", src->file, src->line,
                         p->conf.name, d->name, why);
                return -1;
            }
        } else {
            char why[160];
            if (check_value(d, v, why, sizeof(why)) != 0) {
                snprintf(err, errlen, "plugin '%s' declares a bad default for '%s': %s",
                         p->conf.name, d->name, why);
                return -1;
            }
        }
        p->settings[p->nsettings].decl = d;
        p->settings[p->nsettings].value = strdup(v);
        if (!p->settings[p->nsettings].value) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        p->nsettings++;
    }
    return 0;
}

/* Free one registration array and leave it empty (count 0). */
#define DROP_ARRAY(arr, count) (free(arr), (arr) = NULL, (count) = 0)

static void free_registrations(plugin_inst *p)
{
    for (size_t i = 0; i < p->nexecutors; i++) {
        executor_stop(p->executors[i]);
        free(p->executors[i]);
    }
    DROP_ARRAY(p->executors, p->nexecutors);
    DROP_ARRAY(p->procs, p->nprocs);
    DROP_ARRAY(p->listeners, p->nlisteners);
    DROP_ARRAY(p->client_procs, p->nclient_procs);
    DROP_ARRAY(p->hooks, p->nhooks);
    for (size_t i = 0; i < p->ngrpc_methods; i++)
        free(p->grpc_methods[i].path);
    DROP_ARRAY(p->grpc_methods, p->ngrpc_methods);
    for (timer_rec *t = p->timers; t;) {
        timer_rec *n = t->next;
        free(t);
        t = n;
    }
    p->timers = NULL;
    DROP_ARRAY(p->services, p->nservices);
    DROP_ARRAY(p->admin_cmds, p->nadmin);
    DROP_ARRAY(p->subs, p->nsubs);
    memset(&p->deflt, 0, sizeof(p->deflt));
    memset(&p->reject, 0, sizeof(p->reject));
}

static void plugin_free(plugin_inst *p)
{
    free_registrations(p);
    for (size_t i = 0; i < p->nsettings; i++)
        free(p->settings[i].value);
    free(p->settings);
    if (p->dl)
        dlclose(p->dl);
    if (p->so_copy[0])
        unlink(p->so_copy);
    plugin_conf_free(&p->conf);
    free(p);
}

plugin_inst *plugin_load(rmq_host *h, const plugin_conf *pc, uint32_t generation, char *err,
                         size_t errlen)
{
    plugin_inst *p = calloc(1, sizeof(*p));
    if (!p || plugin_conf_copy(&p->conf, pc) != 0) {
        free(p);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->host = h;
    p->head.api = &h->api;
    p->generation = generation;
    const rmq_plugin_descriptor *d = h->linked_descriptor ? h->linked_descriptor(h, pc) : NULL;
    if (d) {
        snprintf(p->so_path, sizeof(p->so_path), "(linked into the test) %s", pc->path);
        goto check_descriptor;
    }
    if (resolve_path(h, pc, p->so_path, sizeof(p->so_path)) != 0) {
        snprintf(err, errlen, "%s:%d: plugin '%s': cannot find %s", pc->file, pc->line, pc->name,
                 p->so_path);
        plugin_free(p);
        return NULL;
    }
    if (generation == 0) {
        /* Inspection only (--check, --list-settings): nothing is written to
         * the state directory, which may not exist yet. */
        p->dl = dlopen(p->so_path, RTLD_NOW | RTLD_LOCAL);
    } else {
        char dir[CONF_PATH_MAX + 32];
        snprintf(dir, sizeof(dir), "%s/.plugins", h->conf.state_dir);
        mkdir(h->conf.state_dir, 0755);
        mkdir(dir, 0700);
        snprintf(p->so_copy, sizeof(p->so_copy), "%s/%s.%u.%ld.so", dir, pc->name, generation,
                 (long)getpid());
        int rc = file_copy(p->so_path, p->so_copy, 0700, false);
        if (rc != 0) {
            snprintf(err, errlen, "%s:%d: plugin '%s': cannot copy %s to %s: %s", pc->file,
                     pc->line, pc->name, p->so_path, p->so_copy, strerror(-rc));
            plugin_free(p);
            return NULL;
        }
        /* The copy stays on disk while loaded, so perf and gdb can read the
         * plugin's symbols; plugin_free removes it. */
        p->dl = dlopen(p->so_copy, RTLD_NOW | RTLD_LOCAL);
    }
    if (!p->dl) {
        snprintf(err, errlen, "%s:%d: plugin '%s': cannot load %s: %s", pc->file, pc->line,
                 pc->name, p->so_path, dlerror());
        plugin_free(p);
        return NULL;
    }
    d = dlsym(p->dl, RMQ_PLUGIN_SYMBOL);
    if (!d) {
        snprintf(err, errlen, "%s:%d: plugin '%s': %s does not export the descriptor symbol '%s'",
                 pc->file, pc->line, pc->name, p->so_path, RMQ_PLUGIN_SYMBOL);
        plugin_free(p);
        return NULL;
    }
check_descriptor:
    if (d->abi_major != RMQ_ABI_MAJOR) {
        snprintf(err, errlen,
                 "%s:%d: plugin '%s': %s was built for plugin ABI %u.%u, this host speaks %d.%d",
                 pc->file, pc->line, pc->name, p->so_path, d->abi_major, d->abi_minor,
                 RMQ_ABI_MAJOR, RMQ_ABI_MINOR);
        plugin_free(p);
        return NULL;
    }
    if (d->descriptor_size < offsetof(rmq_plugin_descriptor, reserved) || !d->init || !d->name) {
        snprintf(err, errlen,
                 "%s:%d: plugin '%s': %s has an incomplete descriptor (needs name "
                 "and init)",
                 pc->file, pc->line, pc->name, p->so_path);
        plugin_free(p);
        return NULL;
    }
    p->desc = d;
    if (plugin_resolve_settings(p, err, errlen) != 0) {
        plugin_free(p);
        return NULL;
    }
    p->state = PLUGIN_LOADED;
    p->loaded_at_ms = host_wall_ms();
    return p;
}

int plugin_run_init(plugin_inst *p, char *err, size_t errlen)
{
    p->in_init = true;
    int rc = p->desc->init((rmq_plugin_ctx *)p, &p->host->api);
    p->in_init = false;
    if (rc != 0) {
        snprintf(err, errlen, "plugin '%s': init failed: %s", p->conf.name, rmq_strerror(rc));
        free_registrations(p);
        return -1;
    }
    p->inited = true;
    return 0;
}

void plugin_quiesce(plugin_inst *p)
{
    atomic_store(&p->quiesced, true);
    if (p->inited && p->desc->quiesce)
        p->desc->quiesce((rmq_plugin_ctx *)p);
    /* after the plugin's own quiesce: what it still waits for locally ends */
    if (p->inited)
        local_invoke_cancel_plugin(p->host, p);
}

void plugin_unload(plugin_inst *p)
{
    if (p->inited) {
        rmq_host *h = p->host;
        timers_cancel_plugin(h, p);
        plugin_quiesce(p);
        while (atomic_load(&p->inflight) > 0)
            usleep(1000);
        for (size_t i = 0; i < p->nexecutors; i++)
            executor_stop(p->executors[i]);
        if (p->desc->fini)
            p->desc->fini((rmq_plugin_ctx *)p);
        /* Calls fini made (e.g. UNREGISTER_BROKER) may still sit in a pending
         * table after their caller timed out; they end at their deadline. */
        while (atomic_load(&p->inflight) > 0)
            usleep(1000);
        p->state = PLUGIN_DEAD;
        p->inited = false;
    }
    plugin_free(p);
}
