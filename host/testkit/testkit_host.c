/* testkit_host.c — the kit's life: a temporary state directory, the plugin
 * list turned into the same host_conf rmqhostd builds from conf.d, the
 * daemon's host_init/host_start/host_shutdown around it, and what a test
 * asks of the running host (log, services, events, hot reload). */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu.h>

#include "testkit_internal.h"

/* The test's thread runs plugin code (init, fini, timer ticks, reload) as
 * the daemon's control and housekeeping threads do, and those are liburcu
 * readers: register it while a kit runs on it. */
static _Thread_local bool tk_rcu_registered;

static char **copy_kv(const char *const *kv)
{
    size_t n = 0;
    while (kv && kv[n])
        n++;
    if (n % 2)
        return NULL;
    char **out = calloc(n + 1, sizeof(*out));
    for (size_t i = 0; out && i < n; i++) {
        out[i] = strdup(kv[i]);
        if (!out[i]) {
            while (i-- > 0)
                free(out[i]);
            free(out);
            return NULL;
        }
    }
    return out;
}

static void free_kv(char **kv)
{
    for (size_t i = 0; kv && kv[i]; i++)
        free(kv[i]);
    free(kv);
}

rmq_testkit *rmq_tk_new(void)
{
    rmq_testkit *kit = calloc(1, sizeof(*kit));
    if (!kit)
        return NULL;
    const char *tmp = getenv("TMPDIR");
    snprintf(kit->dir, sizeof(kit->dir), "%s/rmqtk.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(kit->dir)) {
        free(kit);
        return NULL;
    }
    snprintf(kit->state_dir, sizeof(kit->state_dir), "%s/state", kit->dir);
    snprintf(kit->log_path, sizeof(kit->log_path), "%s/host.log", kit->dir);
    kit->io_threads = 1;
    pthread_mutex_init(&kit->mu, NULL);
    pthread_cond_init(&kit->cv, NULL);
    return kit;
}

static int add_plugin(rmq_testkit *kit, const char *name, const char *path,
                      const rmq_plugin_descriptor *desc, const char *const *settings)
{
    if (!kit || kit->started || !name || !name[0] || strlen(name) >= CONF_NAME_MAX ||
        strcmp(name, TK_DOUBLES_NAME) == 0)
        return RMQ_EINVAL;
    for (size_t i = 0; i < kit->nplugins; i++)
        if (strcmp(kit->plugins[i].name, name) == 0)
            return RMQ_EEXIST;
    char **kv = copy_kv(settings);
    if (!kv)
        return RMQ_EINVAL;
    tk_plugin *np = realloc(kit->plugins, (kit->nplugins + 1) * sizeof(*np));
    if (!np) {
        free_kv(kv);
        return RMQ_ENOMEM;
    }
    kit->plugins = np;
    tk_plugin *p = &np[kit->nplugins++];
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "%s", name);
    if (desc)
        snprintf(p->path, sizeof(p->path), "linked:%s", name);
    else
        snprintf(p->path, sizeof(p->path), "%s", path);
    p->desc = desc;
    p->settings = kv;
    return 0;
}

int rmq_tk_add_plugin(rmq_testkit *kit, const char *name, const char *so_path,
                      const char *const *settings)
{
    if (!so_path || !so_path[0] || strlen(so_path) >= CONF_PATH_MAX)
        return RMQ_EINVAL;
    char abs[CONF_PATH_MAX];
    if (so_path[0] != '/' && realpath(so_path, abs))
        so_path = abs;
    return add_plugin(kit, name, so_path, NULL, settings);
}

int rmq_tk_add_plugin_descriptor(rmq_testkit *kit, const char *name,
                                 const rmq_plugin_descriptor *desc, const char *const *settings)
{
    return desc ? add_plugin(kit, name, NULL, desc, settings) : RMQ_EINVAL;
}

int rmq_tk_add_service(rmq_testkit *kit, const char *name, uint32_t version, const void *table,
                       void *table_ud)
{
    if (!kit || kit->started || !name || !table || strlen(name) >= sizeof(kit->services->name))
        return RMQ_EINVAL;
    tk_service *ns = realloc(kit->services, (kit->nservices + 1) * sizeof(*ns));
    if (!ns)
        return RMQ_ENOMEM;
    kit->services = ns;
    tk_service *s = &ns[kit->nservices++];
    snprintf(s->name, sizeof(s->name), "%s", name);
    s->version = version;
    s->table = table;
    s->table_ud = table_ud;
    return 0;
}

int rmq_tk_subscribe_event(rmq_testkit *kit, const char *event, rmq_event_fn fn, void *ud)
{
    if (!kit || kit->started || !event || !fn || strlen(event) >= sizeof(kit->subs->event))
        return RMQ_EINVAL;
    tk_sub *ns = realloc(kit->subs, (kit->nsubs + 1) * sizeof(*ns));
    if (!ns)
        return RMQ_ENOMEM;
    kit->subs = ns;
    tk_sub *s = &ns[kit->nsubs++];
    snprintf(s->event, sizeof(s->event), "%s", event);
    s->fn = fn;
    s->ud = ud;
    return 0;
}

int rmq_tk_set_io_threads(rmq_testkit *kit, int n)
{
    if (!kit || kit->started || n < 1 || n > 64)
        return RMQ_EINVAL;
    kit->io_threads = n;
    return 0;
}

static const rmq_plugin_descriptor *linked_descriptor(rmq_host *h, const plugin_conf *pc)
{
    rmq_testkit *kit = tk_of_host(h);
    if (strcmp(pc->path, "linked:" TK_DOUBLES_NAME) == 0)
        return &tk_doubles_descriptor;
    for (size_t i = 0; i < kit->nplugins; i++)
        if (kit->plugins[i].desc && strcmp(kit->plugins[i].path, pc->path) == 0)
            return kit->plugins[i].desc;
    return NULL;
}

static int fill_plugin_conf(plugin_conf *pc, const char *name, const char *path, char **kv)
{
    memset(pc, 0, sizeof(*pc));
    snprintf(pc->name, sizeof(pc->name), "%s", name);
    snprintf(pc->path, sizeof(pc->path), "%s", path);
    snprintf(pc->server, sizeof(pc->server), "%s", TK_SERVER);
    snprintf(pc->file, sizeof(pc->file), "testkit settings of %s", name);
    pc->enabled = true;
    size_t n = 0;
    while (kv && kv[n])
        n++;
    pc->settings = calloc(n / 2 + 1, sizeof(conf_setting));
    if (!pc->settings)
        return RMQ_ENOMEM;
    for (size_t i = 0; i + 1 < n; i += 2) {
        conf_setting *s = &pc->settings[pc->nsettings++];
        s->name = strdup(kv[i]);
        s->value = strdup(kv[i + 1]);
        s->type = CONF_VALUE_STRING;
        snprintf(s->file, sizeof(s->file), "%s", pc->file);
        s->line = (int)(i / 2 + 1);
        if (!s->name || !s->value)
            return RMQ_ENOMEM;
    }
    return 0;
}

/* The host_conf rmqhostd would read from a conf.d holding one server and
 * one file per plugin (the doubles first). */
static int build_conf(rmq_testkit *kit, host_conf *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->conf_dir, sizeof(c->conf_dir), "%s", kit->dir);
    snprintf(c->state_dir, sizeof(c->state_dir), "%s", kit->state_dir);
    snprintf(c->admin_socket, sizeof(c->admin_socket), "%s/admin.sock", kit->state_dir);
    snprintf(c->log_level, sizeof(c->log_level), "debug");
    snprintf(c->log_file, sizeof(c->log_file), "%s", kit->log_path);
    snprintf(c->host_file, sizeof(c->host_file), "testkit");
    c->io_threads = kit->io_threads;
    c->max_frame_bytes = 16 * 1024 * 1024;
    c->write_high_water = 4 * 1024 * 1024;
    c->write_low_water = 1024 * 1024;
    c->drain_timeout_ms = 5000;
    c->servers = calloc(1, sizeof(server_conf));
    c->plugins = calloc(kit->nplugins + 1, sizeof(plugin_conf));
    if (!c->servers || !c->plugins)
        return RMQ_ENOMEM;
    c->nservers = 1;
    snprintf(c->servers[0].name, sizeof(c->servers[0].name), TK_SERVER);
    snprintf(c->servers[0].listen, sizeof(c->servers[0].listen), "127.0.0.1:0");
    c->servers[0].idle_seconds = 120;
    int rc = fill_plugin_conf(&c->plugins[c->nplugins++], TK_DOUBLES_NAME,
                              "linked:" TK_DOUBLES_NAME, NULL);
    for (size_t i = 0; rc == 0 && i < kit->nplugins; i++)
        rc = fill_plugin_conf(&c->plugins[c->nplugins++], kit->plugins[i].name,
                              kit->plugins[i].path, kit->plugins[i].settings);
    return rc;
}

int rmq_tk_start(rmq_testkit *kit, char *err, size_t errlen)
{
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof(dummy);
    }
    if (!kit || kit->started) {
        snprintf(err, errlen, "kit missing or already started");
        return -1;
    }
    host_conf conf;
    if (build_conf(kit, &conf) != 0) {
        host_conf_free(&conf);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (host_init(&kit->host, &conf, kit->dir, err, errlen) != 0) {
        host_destroy(&kit->host);
        return -1;
    }
    if (!tk_rcu_registered) {
        rcu_register_thread();
        tk_rcu_registered = true;
        kit->registered_rcu = true;
    }
    kit->host.linked_descriptor = linked_descriptor;
    tk_clock_install(kit);
    tk_outgoing_install(&kit->host);
    if (host_start(&kit->host, err, errlen) != 0) {
        host_shutdown(&kit->host);
        host_destroy(&kit->host);
        return -1;
    }
    server *s = host_server(&kit->host, TK_SERVER);
    kit->port = s ? s->bound_port : 0;
    kit->doubles = plugin_find_live(&kit->host, TK_DOUBLES_NAME);
    kit->started = true;
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void rmq_tk_free(rmq_testkit *kit)
{
    if (!kit)
        return;
    if (kit->started) {
        tk_channels_close_all(kit);
        kit->host.stopping = true; /* calls made from now on fail at once */
        tk_calls_fail_pending(kit);
        kit->host.stopping = false;
        host_shutdown(&kit->host);
        plugin_retired_drain(&kit->host, &kit->retired);
        host_destroy(&kit->host);
    }
    if (kit->registered_rcu && tk_rcu_registered) {
        rcu_unregister_thread();
        tk_rcu_registered = false;
    }
    tk_calls_free(kit);
    tk_clock_release(kit);
    for (size_t i = 0; i < kit->nplugins; i++)
        free_kv(kit->plugins[i].settings);
    free(kit->plugins);
    free(kit->services);
    free(kit->subs);
    nftw(kit->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    pthread_mutex_destroy(&kit->mu);
    pthread_cond_destroy(&kit->cv);
    free(kit);
}

const rmq_host_api *rmq_tk_api(rmq_testkit *kit)
{
    return kit ? &kit->host.api : NULL;
}

const char *rmq_tk_state_dir(rmq_testkit *kit)
{
    return kit ? kit->state_dir : NULL;
}

char *rmq_tk_log_text(rmq_testkit *kit)
{
    if (!kit)
        return NULL;
    pthread_mutex_lock(&kit->host.log.mu);
    if (kit->host.log.fp)
        fflush(kit->host.log.fp);
    pthread_mutex_unlock(&kit->host.log.mu);
    FILE *fp = fopen(kit->log_path, "r");
    if (!fp)
        return strdup("");
    byte_buf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0) {
        if (byte_buf_reserve(&b, n + 1) != 0)
            break;
        memcpy(b.data + b.len, chunk, n);
        b.len += n;
    }
    fclose(fp);
    if (byte_buf_reserve(&b, 1) != 0) {
        byte_buf_free(&b);
        return NULL;
    }
    b.data[b.len] = 0;
    return (char *)b.data;
}

bool rmq_tk_log_contains(rmq_testkit *kit, const char *needle)
{
    char *text = rmq_tk_log_text(kit);
    bool found = text && needle && strstr(text, needle) != NULL;
    free(text);
    return found;
}

int rmq_tk_service_acquire(rmq_testkit *kit, const char *name, uint32_t min_version,
                           const void **table, void **table_ud, rmq_service_ref *ref)
{
    if (!kit || !kit->doubles)
        return RMQ_EINVAL;
    return kit->host.api.service_acquire((rmq_plugin_ctx *)kit->doubles, name, min_version, table,
                                         table_ud, ref);
}

void rmq_tk_service_release(rmq_testkit *kit, rmq_service_ref ref)
{
    if (kit && kit->doubles)
        kit->host.api.service_release((rmq_plugin_ctx *)kit->doubles, ref);
}

int rmq_tk_publish_event(rmq_testkit *kit, const char *event, const void *data, size_t len)
{
    if (!kit || !kit->doubles || !event)
        return RMQ_EINVAL;
    return kit->host.api.publish_event((rmq_plugin_ctx *)kit->doubles, event, data, len);
}

int rmq_tk_reload(rmq_testkit *kit, const char *name, char *msg, size_t msglen)
{
    char dummy[8];
    if (!msg || !msglen) {
        msg = dummy;
        msglen = sizeof(dummy);
    }
    if (!kit || !kit->started || !name || strcmp(name, TK_DOUBLES_NAME) == 0) {
        snprintf(msg, msglen, "no plugin to reload");
        return -1;
    }
    int rc = plugin_reload(&kit->host, &kit->retired, name, NULL, msg, msglen);
    plugin_retired_sweep(&kit->host, &kit->retired, NULL, 0);
    return rc == 0 ? 0 : -1;
}
