/* admin_commands.c — what each rmqhostctl command does inside the daemon:
 * list, reload, enable, disable, reload-config, stats, config, health, and
 * the commands plugins register. Runs on the control thread; produces both a
 * human text and a JSON `data` object; never touches the socket. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin_context.h"
#include "metrics_http.h"
#include "secret_settings.h"

/* Admin answers are built as text in a byte_buf (NUL-terminated). */
typedef byte_buf out_text;
#define out_add byte_buf_appendf

static json_t *respond(int code, const char *text, json_t *data)
{
    json_t *r = json_pack("{s:i, s:s}", "exit", code, "text", text ? text : "");
    if (r && data)
        json_object_set_new(r, "data", data);
    else
        json_decref(data);
    return r;
}

static json_t *respond_out(int code, out_text *o, json_t *data)
{
    json_t *r = respond(code, o->data ? (const char *)o->data : "", data);
    byte_buf_free(o);
    return r;
}

static const char *state_name(plugin_state s)
{
    switch (s) {
    case PLUGIN_LOADED: return "loaded";
    case PLUGIN_LIVE: return "live";
    case PLUGIN_DRAINING: return "draining";
    default: return "dead";
    }
}

static void iso_time(uint64_t wall_ms, char *buf, size_t len)
{
    time_t t = (time_t)(wall_ms / 1000u);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- list ---- */
static json_t *cmd_list(admin_ctx *a)
{
    rmq_host *h = a->host;
    json_t *arr = json_array();
    out_text o = {0};
    out_add(&o, "%-20s %-10s %-5s %-12s %-9s %4s %-20s %10s\n", "NAME", "VERSION", "ABI", "SERVER",
            "STATE", "GEN", "LOADED-AT", "SERVED");
    pthread_mutex_lock(&h->registry_mu);
    for (size_t i = 0; i < h->nplugins; i++) {
        plugin_inst *p = h->plugins[i];
        char when[32], abi[16];
        iso_time(p->loaded_at_ms, when, sizeof(when));
        snprintf(abi, sizeof(abi), "%u.%u", p->desc->abi_major, p->desc->abi_minor);
        const char *ver = p->desc->version ? p->desc->version : "?";
        unsigned long served = atomic_load(&p->served);
        json_array_append_new(
            arr, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:I, s:I, s:I, s:s}", "name",
                           p->conf.name, "version", ver, "abi", abi, "server",
                           p->srv ? p->srv->name : "", "state", state_name(p->state), "generation",
                           (json_int_t)p->generation, "loaded_at", when, "loaded_at_ms",
                           (json_int_t)p->loaded_at_ms, "served", (json_int_t)served, "inflight",
                           (json_int_t)atomic_load(&p->inflight), "path", p->so_path));
        out_add(&o, "%-20s %-10s %-5s %-12s %-9s %4u %-20s %10lu\n", p->conf.name, ver, abi,
                p->srv ? p->srv->name : "-", state_name(p->state), p->generation, when, served);
    }
    pthread_mutex_unlock(&h->registry_mu);
    for (size_t i = 0; i < h->conf.nplugins; i++) {
        plugin_conf *pc = &h->conf.plugins[i];
        if (plugin_find_live(h, pc->name))
            continue;
        const char *st = pc->enabled ? "failed" : "disabled";
        json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:I, s:s}", "name", pc->name,
                                             "server", pc->server, "state", st, "generation",
                                             (json_int_t)0, "path", pc->path));
        out_add(&o, "%-20s %-10s %-5s %-12s %-9s %4s %-20s %10s\n", pc->name, "-", "-",
                pc->server[0] ? pc->server : "-", st, "-", "-", "-");
    }
    for (size_t i = 0; i < a->retired.n; i++) {
        plugin_inst *p = a->retired.items[i];
        json_array_append_new(arr, json_pack("{s:s, s:s, s:I, s:I}", "name", p->conf.name, "state",
                                             "retiring", "generation", (json_int_t)p->generation,
                                             "inflight", (json_int_t)atomic_load(&p->inflight)));
        out_add(&o, "%-20s %-10s %-5s %-12s %-9s %4u (still referenced: %ld)\n", p->conf.name, "",
                "", "", "retiring", p->generation, atomic_load(&p->inflight));
    }
    return respond_out(0, &o, json_pack("{s:o}", "plugins", arr));
}

/* ---- stats ---- */
static json_t *cmd_stats(admin_ctx *a)
{
    json_t *data = admin_stats_json(a->host);
    out_text o = {0};
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(data, "servers"), i, s)
    {
        json_t *lat = json_object_get(s, "latency_us");
        out_add(&o, "server %s (%s): %lld connections, %lld requests, %lld errors",
                json_string_value(json_object_get(s, "name")),
                json_string_value(json_object_get(s, "listen")),
                json_integer_value(json_object_get(s, "connections")),
                json_integer_value(json_object_get(s, "requests")),
                json_integer_value(json_object_get(s, "errors")));
        if (json_integer_value(json_object_get(lat, "max")) > 0)
            out_add(&o, "; latency p50 <%lld us, p90 <%lld us, p99 <%lld us, max %lld us\n",
                    json_integer_value(json_object_get(lat, "p50")),
                    json_integer_value(json_object_get(lat, "p90")),
                    json_integer_value(json_object_get(lat, "p99")),
                    json_integer_value(json_object_get(lat, "max")));
        else
            out_add(&o, "; latency -\n");
        size_t k;
        json_t *c;
        json_array_foreach(json_object_get(s, "codes"), k, c)
        {
            json_t *code = json_object_get(c, "code");
            if (json_is_integer(code))
                out_add(&o, "  code %6lld: %lld requests, %lld errors\n", json_integer_value(code),
                        json_integer_value(json_object_get(c, "requests")),
                        json_integer_value(json_object_get(c, "errors")));
            else
                out_add(&o, "  code  other: %lld requests, %lld errors\n",
                        json_integer_value(json_object_get(c, "requests")),
                        json_integer_value(json_object_get(c, "errors")));
        }
    }
    out_add(&o, "outgoing connections: %lld\n",
            json_integer_value(json_object_get(data, "outgoing_connections")));
    json_array_foreach(json_object_get(data, "executors"), i, s)
        out_add(&o, "executor %s: %lld threads, queue depth %lld, executed %lld, rejected %lld\n",
                json_string_value(json_object_get(s, "name")),
                json_integer_value(json_object_get(s, "threads")),
                json_integer_value(json_object_get(s, "queue_depth")),
                json_integer_value(json_object_get(s, "executed")),
                json_integer_value(json_object_get(s, "rejected")));
    /* plugins' gauges (ABI 1.10): "plugin name{k=v,...} value" */
    json_array_foreach(json_object_get(data, "gauges"), i, s)
    {
        out_add(&o, "%s %s", json_string_value(json_object_get(s, "plugin")),
                json_string_value(json_object_get(s, "name")));
        const char *key;
        json_t *val;
        bool first = true;
        json_object_foreach(json_object_get(s, "labels"), key, val)
        {
            out_add(&o, "%s%s=%s", first ? "{" : ",", key, json_string_value(val));
            first = false;
        }
        out_add(&o, "%s %.17g\n", first ? "" : "}", json_number_value(json_object_get(s, "value")));
    }
    return respond_out(0, &o, data);
}

/* ---- config ---- */
/* Secrets (secretKey, passwords) are shown masked; an unset one stays empty
 * so an operator still sees whether it is configured. */
static const char *shown_value(const char *name, const char *value)
{
    if (value && *value && setting_name_is_secret(name))
        return SECRET_SETTING_MASK;
    return value;
}

static json_t *plugin_conf_json(rmq_host *h, const plugin_conf *pc)
{
    json_t *settings = json_object();
    plugin_inst *p = plugin_find_live(h, pc->name);
    if (p) {
        /* effective values: declared defaults included */
        for (size_t i = 0; i < p->nsettings; i++)
            json_object_set_new(
                settings, p->settings[i].decl->name,
                json_string(shown_value(p->settings[i].decl->name, p->settings[i].value)));
    } else {
        for (size_t i = 0; i < pc->nsettings; i++)
            json_object_set_new(
                settings, pc->settings[i].name,
                json_string(shown_value(pc->settings[i].name, pc->settings[i].value)));
    }
    return json_pack("{s:s, s:s, s:s, s:b, s:b, s:b, s:s, s:o}", "name", pc->name, "path", pc->path,
                     "server", pc->server, "enabled", pc->enabled, "optional", pc->optional,
                     "running", p != NULL, "file", pc->file, "settings", settings);
}

static json_t *cmd_config(admin_ctx *a)
{
    rmq_host *h = a->host;
    host_conf *c = &h->conf;
    json_t *servers = json_array(), *plugins = json_array();
    for (size_t i = 0; i < h->nservers; i++) {
        server *s = &h->servers[i];
        char bound[128] = "";
        if (s->listening)
            snprintf(bound, sizeof(bound), "%s:%d", s->bound_host, s->bound_port);
        json_array_append_new(servers, json_pack("{s:s, s:s, s:s, s:i}", "name", s->name, "listen",
                                                 s->listen_spec, "bound", bound,
                                                 "channel_max_idle_seconds", s->idle_ms / 1000));
    }
    for (size_t i = 0; i < c->nplugins; i++)
        json_array_append_new(plugins, plugin_conf_json(h, &c->plugins[i]));
    json_t *data = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:I, s:i, s:s, s:o, s:o}", "conf_dir",
        c->conf_dir, "state_dir", c->state_dir, "admin_socket", c->admin_socket, "plugin_dir",
        c->plugin_dir, "log_level", c->log_level, "log_file", c->log_file, "io_threads", h->nloops,
        "max_frame_bytes", (json_int_t)c->max_frame_bytes, "write_high_water",
        (json_int_t)c->write_high_water, "write_low_water", (json_int_t)c->write_low_water,
        "drain_timeout_ms", c->drain_timeout_ms, "metrics_listen", c->metrics_listen, "servers",
        servers, "plugins", plugins);
    json_object_set_new(data, "metrics_port", json_integer(metrics_http_port(a->metrics)));
    char *text = json_dumps(data, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_t *r = respond(0, text, data);
    free(text);
    return r;
}

/* ---- health ---- */
static json_t *cmd_health(admin_ctx *a)
{
    rmq_host *h = a->host;
    json_t *problems = json_array();
    out_text o = {0};
    for (size_t i = 0; i < h->conf.nplugins; i++) {
        plugin_conf *pc = &h->conf.plugins[i];
        if (!pc->enabled)
            continue;
        plugin_inst *p = plugin_find_live(h, pc->name);
        if (!p) {
            out_add(&o, "plugin %s: enabled but not running\n", pc->name);
            json_array_append_new(problems, json_sprintf("plugin %s: not running", pc->name));
        } else if (p->srv && !p->srv->listening) {
            out_add(&o, "server %s (plugin %s): not listening\n", p->srv->name, pc->name);
            json_array_append_new(problems, json_sprintf("server %s: not listening", p->srv->name));
        }
    }
    bool ok = json_array_size(problems) == 0;
    if (ok)
        out_add(&o, "ok: %zu plugins up, every server listens\n", h->nplugins);
    return respond_out(ok ? 0 : 1, &o,
                       json_pack("{s:b, s:o}", "healthy", ok, "problems", problems));
}

/* ---- plugin-registered commands ---- */
static json_t *cmd_plugin(admin_ctx *a, const char *name, int argc, const char **argv, bool json)
{
    rmq_host *h = a->host;
    admin_cmd_rec rec;
    bool found = false;
    pthread_mutex_lock(&h->registry_mu);
    for (size_t i = 0; i < h->nplugins && !found; i++) {
        plugin_inst *p = h->plugins[i];
        if (p->state != PLUGIN_LIVE)
            continue;
        for (size_t k = 0; k < p->nadmin && !found; k++)
            if (strcmp(p->admin_cmds[k].name, name) == 0) {
                rec = p->admin_cmds[k];
                atomic_fetch_add(&p->inflight, 1);
                found = true;
            }
    }
    pthread_mutex_unlock(&h->registry_mu);
    if (!found) {
        char text[200];
        snprintf(text, sizeof(text), "unknown command '%s' (rmqhostctl help lists them)", name);
        return respond(2, text, NULL);
    }
    rmq_admin_call call;
    memset(&call, 0, sizeof(call));
    call.json = json;
    /* as main(): argv[0] is the command's name */
    const char *full[65];
    full[0] = name;
    for (int i = 0; i < argc && i < 63; i++)
        full[i + 1] = argv[i];
    full[argc + 1] = NULL;
    int rc = rec.fn(&call, argc + 1, full, rec.ud);
    atomic_fetch_sub(&rec.plugin->inflight, 1);
    if (byte_buf_reserve(&call.out, 1) == 0)
        call.out.data[call.out.len] = 0;
    json_t *r =
        respond(rc < 0 || rc > 2 ? 1 : rc, call.out.data ? (char *)call.out.data : "", NULL);
    byte_buf_free(&call.out);
    return r;
}

static json_t *cmd_help(admin_ctx *a)
{
    rmq_host *h = a->host;
    out_text o = {0};
    json_t *cmds = json_array();
    out_add(&o, "host commands: list, reload NAME, enable NAME, disable NAME, reload-config, "
                "stats, config, health, help\n");
    pthread_mutex_lock(&h->registry_mu);
    for (size_t i = 0; i < h->nplugins; i++)
        for (size_t k = 0; k < h->plugins[i]->nadmin; k++) {
            admin_cmd_rec *c = &h->plugins[i]->admin_cmds[k];
            out_add(&o, "%s (plugin %s): %s\n", c->name, h->plugins[i]->conf.name, c->usage);
            json_array_append_new(cmds, json_pack("{s:s, s:s, s:s}", "name", c->name, "plugin",
                                                  h->plugins[i]->conf.name, "usage", c->usage));
        }
    pthread_mutex_unlock(&h->registry_mu);
    return respond_out(0, &o, json_pack("{s:o}", "plugin_commands", cmds));
}

static json_t *one_name(int argc, const char **argv, const char *cmd, const char **name)
{
    if (argc != 1 || !argv[0][0]) {
        char text[128];
        snprintf(text, sizeof(text), "usage: rmqhostctl %s NAME", cmd);
        return respond(2, text, NULL);
    }
    *name = argv[0];
    return NULL;
}

json_t *admin_execute(admin_ctx *a, const json_t *req)
{
    const char *cmd = json_string_value(json_object_get(req, "cmd"));
    json_t *args = json_object_get(req, "args");
    bool json = json_is_true(json_object_get(req, "json"));
    if (!cmd)
        return respond(2, "bad admin request: no \"cmd\"", NULL);
    const char *argv[64];
    int argc = 0;
    size_t i;
    json_t *v;
    json_array_foreach(args, i, v)
    {
        if (!json_is_string(v) || argc == 63)
            return respond(2, "bad admin request: \"args\" must be up to 63 strings", NULL);
        argv[argc++] = json_string_value(v);
    }
    argv[argc] = NULL;
    if (strcmp(cmd, "list") == 0)
        return cmd_list(a);
    if (strcmp(cmd, "stats") == 0)
        return cmd_stats(a);
    if (strcmp(cmd, "config") == 0)
        return cmd_config(a);
    if (strcmp(cmd, "health") == 0)
        return cmd_health(a);
    if (strcmp(cmd, "help") == 0)
        return cmd_help(a);
    char msg[4096];
    const char *name = NULL;
    json_t *usage;
    if (strcmp(cmd, "reload") == 0) {
        if ((usage = one_name(argc, argv, cmd, &name)))
            return usage;
        /* a reload picks up the plugin's current file settings too */
        int rc = plugin_reload(a->host, &a->retired, name, NULL, msg, sizeof(msg));
        plugin_inst *p = plugin_find_live(a->host, name);
        return respond(rc == 0 ? 0 : 1, msg,
                       json_pack("{s:s, s:I}", "name", name, "generation",
                                 (json_int_t)(p ? p->generation : 0)));
    }
    if (strcmp(cmd, "enable") == 0 || strcmp(cmd, "disable") == 0) {
        if ((usage = one_name(argc, argv, cmd, &name)))
            return usage;
        int rc = cmd[0] == 'e' ? admin_enable(a, name, msg, sizeof(msg))
                               : admin_disable(a, name, msg, sizeof(msg));
        return respond(rc == 0 ? 0 : 1, msg, NULL);
    }
    if (strcmp(cmd, "reload-config") == 0) {
        int rc = admin_reload_config(a, msg, sizeof(msg));
        return respond(rc == 0 ? 0 : 1, msg, NULL);
    }
    return cmd_plugin(a, cmd, argc, argv, json);
}
