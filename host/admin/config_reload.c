/* config_reload.c — reload-config, enable and disable: re-read conf.d (with
 * the command line's -o overrides re-applied), check the whole new
 * configuration before touching anything, then move, add or remove servers
 * (server_reconfigure.c), start, stop or hot-reload plugins so the daemon
 * matches the files, and apply the host settings that need no restart. A bad
 * file or a port that cannot be bound changes nothing; state_dir,
 * admin_socket, io_threads and metrics_listen are reported as needing a
 * restart while the rest is applied. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_context.h"
#include "tls_host.h"
#include "message_text.h"

static int read_files(rmq_host *h, host_conf *nc, char *msg, size_t msglen)
{
    memset(nc, 0, sizeof(*nc));
    char err[2048];
    if (host_conf_load(nc, h->conf.conf_dir, err, sizeof(err)) != 0 ||
        host_apply_overrides(h, nc, err, sizeof(err)) != 0 ||
        host_conf_finish(nc, err, sizeof(err)) != 0) {
        snprintf(msg, msglen, "configuration not reloaded, nothing changed: %s", err);
        host_conf_free(nc);
        return -1;
    }
    return 0;
}

static const conf_setting *find_setting(const plugin_conf *p, const char *name)
{
    for (size_t i = 0; i < p->nsettings; i++)
        if (strcmp(p->settings[i].name, name) == 0)
            return &p->settings[i];
    return NULL;
}

/* Same plugin, same everything a generation is built from. */
static bool same_plugin_conf(const plugin_conf *a, const plugin_conf *b)
{
    if (strcmp(a->path, b->path) || strcmp(a->server, b->server) || a->nsettings != b->nsettings)
        return false;
    for (size_t i = 0; i < a->nsettings; i++) {
        const conf_setting *o = find_setting(b, a->settings[i].name);
        if (!o || strcmp(o->value, a->settings[i].value) != 0)
            return false;
    }
    return true;
}

static void adopt_plugins(rmq_host *h, host_conf *nc)
{
    /* the server table too: bind errors quote its file and line */
    server_conf *ss = h->conf.servers;
    size_t ns = h->conf.nservers;
    h->conf.servers = nc->servers;
    h->conf.nservers = nc->nservers;
    nc->servers = ss;
    nc->nservers = ns;
    for (size_t i = 0; i < h->conf.nplugins; i++)
        plugin_conf_free(&h->conf.plugins[i]);
    free(h->conf.plugins);
    h->conf.plugins = nc->plugins;
    h->conf.nplugins = nc->nplugins;
    nc->plugins = NULL;
    nc->nplugins = 0;
    host_conf_free(nc);
}

int admin_reload_config(admin_ctx *a, char *msg, size_t msglen)
{
    rmq_host *h = a->host;
    host_conf nc;
    if (read_files(h, &nc, msg, msglen) != 0)
        return -1;
    tls_reload_plan *tls_plan = NULL; /* certificates re-read before anything changes */
    if (tls_host_reload_prepare(h, &nc, &tls_plan, msg, msglen) != 0) {
        host_conf_free(&nc);
        return -1;
    }
    server_plan *plan = NULL;
    if (servers_prepare(h, &nc, &plan, msg, msglen) != 0) {
        tls_host_reload_abandon(tls_plan);
        host_conf_free(&nc);
        return -1;
    }
    msg[0] = 0;
    servers_commit(h, &nc, plan, msg, msglen);
    /* after servers_commit: servers added by this reload get their endpoint */
    tls_host_reload_commit(h, tls_plan, msg, msglen);
    size_t server_notes = strlen(msg);
    int rc = 0, actions = 0;
    char one[2048];
    /* stop what the files no longer enable */
    char names[64][CONF_NAME_MAX];
    size_t nnames = 0;
    pthread_mutex_lock(&h->registry_mu);
    for (size_t i = 0; i < h->nplugins && nnames < 64; i++)
        snprintf(names[nnames++], CONF_NAME_MAX, "%s", h->plugins[i]->conf.name);
    pthread_mutex_unlock(&h->registry_mu);
    for (size_t i = 0; i < nnames; i++) {
        plugin_conf *pc = host_conf_plugin(&nc, names[i]);
        plugin_inst *p = plugin_find_live(h, names[i]);
        if (!p)
            continue;
        if (pc && pc->enabled && strcmp(pc->server, p->conf.server) == 0)
            continue;
        actions++;
        if (plugin_stop(h, &a->retired, names[i], one, sizeof(one)) != 0)
            rc = -1;
        msg_append(msg, msglen, "%s\n", one);
    }
    /* start what is new, reload what changed */
    for (size_t i = 0; i < nc.nplugins; i++) {
        plugin_conf *pc = &nc.plugins[i];
        if (!pc->enabled)
            continue;
        plugin_inst *p = plugin_find_live(h, pc->name);
        int r;
        if (!p) {
            r = plugin_start(h, pc, one, sizeof(one));
        } else if (!same_plugin_conf(&p->conf, pc)) {
            r = plugin_reload(h, &a->retired, pc->name, pc, one, sizeof(one));
        } else {
            continue;
        }
        actions++;
        if (r != 0)
            rc = -1;
        msg_append(msg, msglen, "%s\n", one);
    }
    servers_retire_removed(h, &nc, msg, msglen);
    host_settings_apply(h, &nc, msg, msglen);
    if (actions == 0 && strlen(msg) == server_notes)
        msg_append(msg, msglen, "configuration reloaded: no plugin changed\n");
    adopt_plugins(h, &nc);
    size_t n = strlen(msg);
    if (n && msg[n - 1] == '\n')
        msg[n - 1] = 0;
    return rc;
}

int admin_enable(admin_ctx *a, const char *name, char *msg, size_t msglen)
{
    rmq_host *h = a->host;
    host_conf nc;
    if (read_files(h, &nc, msg, msglen) != 0)
        return -1;
    plugin_conf *pc = host_conf_plugin(&nc, name);
    int rc = -1;
    if (!pc) {
        snprintf(msg, msglen, "no plugin named '%s' in %s", name, h->conf.conf_dir);
    } else if (plugin_find_live(h, name)) {
        snprintf(msg, msglen, "plugin %s is already running", name);
    } else {
        pc->enabled = true;
        rc = plugin_start(h, pc, msg, msglen);
    }
    if (rc == 0) {
        plugin_conf *cur = host_conf_plugin(&h->conf, name);
        if (cur) {
            plugin_conf_free(cur);
            plugin_conf_copy(cur, pc);
        } else {
            plugin_conf *np = realloc(h->conf.plugins, (h->conf.nplugins + 1) * sizeof(*np));
            if (np) {
                h->conf.plugins = np;
                if (plugin_conf_copy(&np[h->conf.nplugins], pc) == 0)
                    h->conf.nplugins++;
            }
        }
    }
    host_conf_free(&nc);
    return rc;
}

int admin_disable(admin_ctx *a, const char *name, char *msg, size_t msglen)
{
    rmq_host *h = a->host;
    int rc = plugin_stop(h, &a->retired, name, msg, msglen);
    plugin_conf *cur = host_conf_plugin(&h->conf, name);
    if (rc == 0 && cur)
        cur->enabled = false;
    return rc;
}
