/* host_config.c — reads conf.d with libconfig into host_conf and applies
 * `-o` overrides. Reports every problem as "file:line: message"; never
 * touches sockets, plugins or the filesystem beyond reading the files. */
#include "host_config.h"
#include "message_text.h"

#include <dirent.h>
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_IDLE_SECONDS 120

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static void defaults(host_conf *c)
{
    memset(c, 0, sizeof(*c));
    copy_str(c->state_dir, sizeof(c->state_dir), "state");
    copy_str(c->admin_socket, sizeof(c->admin_socket), "rmqhost.sock");
    copy_str(c->log_level, sizeof(c->log_level), "info");
    c->io_threads = 0;
    c->max_frame_bytes = 16L * 1024 * 1024;
    c->write_high_water = 4L * 1024 * 1024;
    c->write_low_water = 1L * 1024 * 1024;
    c->drain_timeout_ms = 5000;
}

static int line_of(const config_setting_t *s)
{
    return (int)config_setting_source_line(s);
}

static int get_string(const config_setting_t *s, const char *file, char *dst, size_t cap, char *err,
                      size_t errlen)
{
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return msg_fail(err, errlen, "%s:%d: '%s' must be a string", file, line_of(s),
                        config_setting_name(s));
    const char *v = config_setting_get_string(s);
    if (strlen(v) >= cap)
        return msg_fail(err, errlen, "%s:%d: '%s' is too long", file, line_of(s),
                        config_setting_name(s));
    copy_str(dst, cap, v);
    return 0;
}

static int get_long(const config_setting_t *s, const char *file, long min, long max, long *out,
                    char *err, size_t errlen)
{
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
        return msg_fail(err, errlen, "%s:%d: '%s' must be an integer", file, line_of(s),
                        config_setting_name(s));
    long long v = config_setting_get_int64(s);
    if (v < min || v > max)
        return msg_fail(err, errlen, "%s:%d: '%s' must be between %ld and %ld", file, line_of(s),
                        config_setting_name(s), min, max);
    *out = (long)v;
    return 0;
}

static int get_bool(const config_setting_t *s, const char *file, bool *out, char *err,
                    size_t errlen)
{
    if (config_setting_type(s) != CONFIG_TYPE_BOOL)
        return msg_fail(err, errlen, "%s:%d: '%s' must be true or false", file, line_of(s),
                        config_setting_name(s));
    *out = config_setting_get_bool(s) != 0;
    return 0;
}

static int read_file(config_t *cfg, const char *path, char *err, size_t errlen)
{
    config_init(cfg);
    if (config_read_file(cfg, path) != CONFIG_TRUE) {
        const char *f = config_error_file(cfg);
        int rc = msg_fail(err, errlen, "%s:%d: %s", f ? f : path, config_error_line(cfg),
                          config_error_text(cfg));
        config_destroy(cfg);
        return rc;
    }
    return 0;
}

static int parse_protocol(const char *v, int *out);

static int parse_servers(host_conf *c, const config_setting_t *group, const char *file, char *err,
                         size_t errlen)
{
    if (!config_setting_is_group(group))
        return msg_fail(err, errlen,
                        "%s:%d: 'servers' must be a group { name = { listen = ...; }; }", file,
                        line_of(group));
    int n = config_setting_length(group);
    c->servers = calloc((size_t)(n > 0 ? n : 1), sizeof(server_conf));
    if (!c->servers)
        return msg_fail(err, errlen, "out of memory");
    for (int i = 0; i < n; i++) {
        config_setting_t *s = config_setting_get_elem(group, (unsigned)i);
        server_conf *sc = &c->servers[c->nservers++];
        copy_str(sc->name, sizeof(sc->name), config_setting_name(s));
        copy_str(sc->file, sizeof(sc->file), file);
        sc->line = line_of(s);
        sc->idle_seconds = DEFAULT_IDLE_SECONDS;
        tls_conf_defaults(&sc->tls, false);
        if (!config_setting_is_group(s))
            return msg_fail(err, errlen, "%s:%d: server '%s' must be a group", file, sc->line,
                            sc->name);
        for (int k = 0; k < config_setting_length(s); k++) {
            config_setting_t *f = config_setting_get_elem(s, (unsigned)k);
            const char *key = config_setting_name(f);
            if (strcmp(key, "listen") == 0) {
                if (get_string(f, file, sc->listen, sizeof(sc->listen), err, errlen))
                    return -1;
            } else if (strcmp(key, "vip_listen") == 0) {
                if (get_string(f, file, sc->vip_listen, sizeof(sc->vip_listen), err, errlen))
                    return -1;
            } else if (strcmp(key, "protocol") == 0) {
                char proto[32];
                if (get_string(f, file, proto, sizeof(proto), err, errlen))
                    return -1;
                if (parse_protocol(proto, &sc->protocol) != 0)
                    return msg_fail(err, errlen,
                                    "%s:%d: server '%s': protocol must be \"remoting\" or \"grpc\"",
                                    file, line_of(f), sc->name);
            } else if (strcmp(key, "channel_max_idle_seconds") == 0) {
                long v = 0;
                if (get_long(f, file, 1, 86400 * 7, &v, err, errlen))
                    return -1;
                sc->idle_seconds = (int)v;
            } else if (strcmp(key, "tls") == 0) {
                if (tls_conf_parse_group(&sc->tls, false, f, file, err, errlen))
                    return -1;
            } else {
                return msg_fail(err, errlen, "%s:%d: unknown key '%s' in server '%s'", file,
                                line_of(f), key, sc->name);
            }
        }
        if (!sc->listen[0])
            return msg_fail(err, errlen, "%s:%d: server '%s' has no 'listen' address", file,
                            sc->line, sc->name);
    }
    return 0;
}

static int parse_host(host_conf *c, const char *path, char *err, size_t errlen)
{
    config_t cfg;
    if (read_file(&cfg, path, err, errlen))
        return -1;
    int rc = -1;
    config_setting_t *root = config_root_setting(&cfg);
    for (int i = 0; i < config_setting_length(root); i++) {
        config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        const char *key = config_setting_name(s);
        long v = 0;
        if (strcmp(key, "state_dir") == 0) {
            if (get_string(s, path, c->state_dir, sizeof(c->state_dir), err, errlen))
                goto out;
        } else if (strcmp(key, "admin_socket") == 0) {
            if (get_string(s, path, c->admin_socket, sizeof(c->admin_socket), err, errlen))
                goto out;
        } else if (strcmp(key, "plugin_dir") == 0) {
            if (get_string(s, path, c->plugin_dir, sizeof(c->plugin_dir), err, errlen))
                goto out;
        } else if (strcmp(key, "log_level") == 0) {
            if (get_string(s, path, c->log_level, sizeof(c->log_level), err, errlen))
                goto out;
        } else if (strcmp(key, "log_file") == 0) {
            if (get_string(s, path, c->log_file, sizeof(c->log_file), err, errlen))
                goto out;
        } else if (strcmp(key, "metrics_listen") == 0) {
            if (get_string(s, path, c->metrics_listen, sizeof(c->metrics_listen), err, errlen))
                goto out;
        } else if (strcmp(key, "io_threads") == 0) {
            if (get_long(s, path, 0, 256, &v, err, errlen))
                goto out;
            c->io_threads = (int)v;
        } else if (strcmp(key, "max_frame_bytes") == 0) {
            if (get_long(s, path, 1024, 1L << 30, &v, err, errlen))
                goto out;
            c->max_frame_bytes = v;
        } else if (strcmp(key, "write_high_water") == 0) {
            if (get_long(s, path, 4096, 1L << 32, &v, err, errlen))
                goto out;
            c->write_high_water = v;
        } else if (strcmp(key, "write_low_water") == 0) {
            if (get_long(s, path, 0, 1L << 32, &v, err, errlen))
                goto out;
            c->write_low_water = v;
        } else if (strcmp(key, "drain_timeout_ms") == 0) {
            if (get_long(s, path, 0, 600000, &v, err, errlen))
                goto out;
            c->drain_timeout_ms = (int)v;
        } else if (strcmp(key, "servers") == 0) {
            if (parse_servers(c, s, path, err, errlen))
                goto out;
        } else if (strcmp(key, "tls_client") == 0) {
            if (tls_conf_parse_group(&c->tls_client, true, s, path, err, errlen))
                goto out;
        } else {
            msg_fail(err, errlen, "%s:%d: unknown key '%s' in host.conf", path, line_of(s), key);
            goto out;
        }
    }
    rc = 0;
out:
    config_destroy(&cfg);
    return rc;
}

static int add_setting(plugin_conf *p, const char *name, const char *value, conf_value_type type,
                       const char *file, int line)
{
    for (size_t i = 0; i < p->nsettings; i++) {
        if (strcmp(p->settings[i].name, name) == 0) {
            char *nv = strdup(value);
            if (!nv)
                return -1;
            free(p->settings[i].value);
            p->settings[i].value = nv;
            p->settings[i].type = type;
            copy_str(p->settings[i].file, sizeof(p->settings[i].file), file);
            p->settings[i].line = line;
            return 0;
        }
    }
    conf_setting *ns = realloc(p->settings, (p->nsettings + 1) * sizeof(*ns));
    if (!ns)
        return -1;
    p->settings = ns;
    conf_setting *s = &ns[p->nsettings];
    memset(s, 0, sizeof(*s));
    s->name = strdup(name);
    s->value = strdup(value);
    if (!s->name || !s->value) {
        free(s->name);
        free(s->value);
        return -1;
    }
    s->type = type;
    copy_str(s->file, sizeof(s->file), file);
    s->line = line;
    p->nsettings++;
    return 0;
}

static int parse_plugin_settings(plugin_conf *p, const config_setting_t *g, const char *file,
                                 char *err, size_t errlen)
{
    if (!config_setting_is_group(g))
        return msg_fail(err, errlen, "%s:%d: 'settings' must be a group", file, line_of(g));
    for (int i = 0; i < config_setting_length(g); i++) {
        config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
        char buf[64];
        const char *text;
        conf_value_type type;
        switch (config_setting_type(s)) {
        case CONFIG_TYPE_STRING:
            text = config_setting_get_string(s);
            type = CONF_VALUE_STRING;
            break;
        case CONFIG_TYPE_INT:
        case CONFIG_TYPE_INT64:
            snprintf(buf, sizeof(buf), "%lld", (long long)config_setting_get_int64(s));
            text = buf;
            type = CONF_VALUE_INT;
            break;
        case CONFIG_TYPE_BOOL:
            text = config_setting_get_bool(s) ? "true" : "false";
            type = CONF_VALUE_BOOL;
            break;
        case CONFIG_TYPE_FLOAT:
            snprintf(buf, sizeof(buf), "%.17g", config_setting_get_float(s));
            text = buf;
            type = CONF_VALUE_FLOAT;
            break;
        default:
            return msg_fail(err, errlen, "%s:%d: setting '%s' must be a string, number or boolean",
                            file, line_of(s), config_setting_name(s));
        }
        if (add_setting(p, config_setting_name(s), text, type, file, line_of(s)))
            return msg_fail(err, errlen, "out of memory");
    }
    return 0;
}

static int parse_plugin_file(host_conf *c, const char *path, char *err, size_t errlen)
{
    config_t cfg;
    if (read_file(&cfg, path, err, errlen))
        return -1;
    int rc = -1;
    config_setting_t *root = config_root_setting(&cfg);
    config_setting_t *pg = NULL;
    for (int i = 0; i < config_setting_length(root); i++) {
        config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
        if (strcmp(config_setting_name(s), "plugin") == 0) {
            pg = s;
        } else {
            msg_fail(err, errlen,
                     "%s:%d: unknown key '%s' (a plugin file holds one 'plugin' group)", path,
                     line_of(s), config_setting_name(s));
            goto out;
        }
    }
    if (!pg || !config_setting_is_group(pg)) {
        msg_fail(err, errlen, "%s:%d: missing 'plugin = { name = ...; path = ...; server = ...; }'",
                 path, pg ? line_of(pg) : 1);
        goto out;
    }
    plugin_conf *np = realloc(c->plugins, (c->nplugins + 1) * sizeof(*np));
    if (!np) {
        msg_fail(err, errlen, "out of memory");
        goto out;
    }
    c->plugins = np;
    plugin_conf *p = &np[c->nplugins++];
    memset(p, 0, sizeof(*p));
    p->enabled = true;
    copy_str(p->file, sizeof(p->file), path);
    p->line = line_of(pg);
    for (int i = 0; i < config_setting_length(pg); i++) {
        config_setting_t *s = config_setting_get_elem(pg, (unsigned)i);
        const char *key = config_setting_name(s);
        if (strcmp(key, "name") == 0) {
            if (get_string(s, path, p->name, sizeof(p->name), err, errlen))
                goto out;
        } else if (strcmp(key, "path") == 0) {
            if (get_string(s, path, p->path, sizeof(p->path), err, errlen))
                goto out;
        } else if (strcmp(key, "server") == 0) {
            if (get_string(s, path, p->server, sizeof(p->server), err, errlen))
                goto out;
        } else if (strcmp(key, "enabled") == 0) {
            if (get_bool(s, path, &p->enabled, err, errlen))
                goto out;
        } else if (strcmp(key, "optional") == 0) {
            if (get_bool(s, path, &p->optional, err, errlen))
                goto out;
        } else if (strcmp(key, "settings") == 0) {
            if (parse_plugin_settings(p, s, path, err, errlen))
                goto out;
        } else {
            msg_fail(err, errlen, "%s:%d: unknown key '%s' in plugin", path, line_of(s), key);
            goto out;
        }
    }
    if (!p->name[0]) {
        msg_fail(err, errlen, "%s:%d: plugin has no 'name'", path, p->line);
        goto out;
    }
    if (!p->path[0]) {
        msg_fail(err, errlen, "%s:%d: plugin '%s' has no 'path'", path, p->line, p->name);
        goto out;
    }
    rc = 0;
out:
    config_destroy(&cfg);
    return rc;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int host_conf_load(host_conf *c, const char *dir, char *err, size_t errlen)
{
    defaults(c);
    char abs[PATH_MAX];
    if (!realpath(dir, abs))
        return msg_fail(err, errlen, "%s: %s", dir, strerror(errno));
    copy_str(c->conf_dir, sizeof(c->conf_dir), abs);
    snprintf(c->host_file, sizeof(c->host_file), "%s/host.conf", abs);
    if (access(c->host_file, R_OK) != 0)
        return msg_fail(err, errlen, "%s:0: %s", c->host_file, strerror(errno));
    if (parse_host(c, c->host_file, err, errlen))
        return -1;

    DIR *d = opendir(abs);
    if (!d)
        return msg_fail(err, errlen, "%s: %s", abs, strerror(errno));
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".conf") != 0 || e->d_name[0] == '.')
            continue;
        if (strcmp(e->d_name, "host.conf") == 0)
            continue;
        char **nn = realloc(names, (n + 1) * sizeof(*nn));
        if (!nn) {
            rc = msg_fail(err, errlen, "out of memory");
            break;
        }
        names = nn;
        names[n] = strdup(e->d_name);
        if (!names[n]) {
            rc = msg_fail(err, errlen, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (names)
        qsort(names, n, sizeof(*names), cmp_names);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[CONF_PATH_MAX + 256];
        snprintf(path, sizeof(path), "%s/%s", abs, names[i]);
        rc = parse_plugin_file(c, path, err, errlen);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

static int parse_protocol(const char *v, int *out)
{
    if (strcmp(v, "remoting") == 0)
        *out = SERVER_PROTOCOL_REMOTING;
    else if (strcmp(v, "grpc") == 0)
        *out = SERVER_PROTOCOL_GRPC;
    else
        return -1;
    return 0;
}

static int parse_long_text(const char *v, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < min || x > max)
        return -1;
    *out = (long)x;
    return 0;
}

static int parse_bool_text(const char *v, bool *out)
{
    if (strcmp(v, "true") == 0) {
        *out = true;
        return 0;
    }
    if (strcmp(v, "false") == 0) {
        *out = false;
        return 0;
    }
    return -1;
}

int host_conf_override(host_conf *c, const char *kv, char *err, size_t errlen)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv)
        return msg_fail(err, errlen, "-o %s: expected KEY=VALUE", kv);
    char key[512];
    size_t klen = (size_t)(eq - kv);
    if (klen >= sizeof(key))
        return msg_fail(err, errlen, "-o: key too long");
    memcpy(key, kv, klen);
    key[klen] = 0;
    const char *val = eq + 1;
    long v = 0;
    int tls_rc = tls_conf_override(c, key, val, err, errlen); /* tls_config.c */
    if (tls_rc != 1)
        return tls_rc;
    struct {
        const char *name;
        char *dst;
        size_t cap;
    } strs[] = {
        {"state_dir", c->state_dir, sizeof(c->state_dir)},
        {"admin_socket", c->admin_socket, sizeof(c->admin_socket)},
        {"plugin_dir", c->plugin_dir, sizeof(c->plugin_dir)},
        {"log_level", c->log_level, sizeof(c->log_level)},
        {"log_file", c->log_file, sizeof(c->log_file)},
        {"metrics_listen", c->metrics_listen, sizeof(c->metrics_listen)},
    };
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        if (strcmp(key, strs[i].name) == 0) {
            if (strlen(val) >= strs[i].cap)
                return msg_fail(err, errlen, "-o %s: value too long", key);
            copy_str(strs[i].dst, strs[i].cap, val);
            return 0;
        }
    }
    struct {
        const char *name;
        long min, max;
        int kind;
    } nums[] = {
        {"io_threads", 0, 256, 0},
        {"max_frame_bytes", 1024, 1L << 30, 1},
        {"write_high_water", 4096, 1L << 32, 2},
        {"write_low_water", 0, 1L << 32, 3},
        {"drain_timeout_ms", 0, 600000, 4},
    };
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        if (strcmp(key, nums[i].name) != 0)
            continue;
        if (parse_long_text(val, nums[i].min, nums[i].max, &v))
            return msg_fail(err, errlen, "-o %s: '%s' is not an integer in [%ld, %ld]", key, val,
                            nums[i].min, nums[i].max);
        switch (nums[i].kind) {
        case 0: c->io_threads = (int)v; break;
        case 1: c->max_frame_bytes = v; break;
        case 2: c->write_high_water = v; break;
        case 3: c->write_low_water = v; break;
        default: c->drain_timeout_ms = (int)v; break;
        }
        return 0;
    }
    if (strncmp(key, "servers.", 8) == 0) {
        const char *name = key + 8;
        const char *dot = strrchr(name, '.');
        if (!dot)
            return msg_fail(err, errlen, "-o %s: unknown key", key);
        char sname[CONF_NAME_MAX];
        snprintf(sname, sizeof(sname), "%.*s", (int)(dot - name), name);
        server_conf *sc = (server_conf *)host_conf_server(c, sname);
        if (!sc)
            return msg_fail(err, errlen, "-o %s: no server '%s' in host.conf", key, sname);
        if (strcmp(dot + 1, "listen") == 0) {
            copy_str(sc->listen, sizeof(sc->listen), val);
            return 0;
        }
        if (strcmp(dot + 1, "vip_listen") == 0) {
            copy_str(sc->vip_listen, sizeof(sc->vip_listen), val);
            return 0;
        }
        if (strcmp(dot + 1, "protocol") == 0) {
            if (parse_protocol(val, &sc->protocol) != 0)
                return msg_fail(err, errlen, "-o %s: '%s' is not remoting or grpc", key, val);
            return 0;
        }
        if (strcmp(dot + 1, "channel_max_idle_seconds") == 0) {
            if (parse_long_text(val, 1, 86400 * 7, &v))
                return msg_fail(err, errlen, "-o %s: '%s' is not a number of seconds", key, val);
            sc->idle_seconds = (int)v;
            return 0;
        }
        return msg_fail(err, errlen, "-o %s: unknown key", key);
    }
    if (strncmp(key, "plugins.", 8) == 0) {
        const char *name = key + 8;
        const char *dot = strchr(name, '.');
        if (!dot)
            return msg_fail(err, errlen, "-o %s: unknown key", key);
        char pname[CONF_NAME_MAX];
        snprintf(pname, sizeof(pname), "%.*s", (int)(dot - name), name);
        plugin_conf *p = host_conf_plugin(c, pname);
        if (!p)
            return msg_fail(err, errlen, "-o %s: no plugin named '%s' in conf.d", key, pname);
        const char *field = dot + 1;
        if (strcmp(field, "enabled") == 0 || strcmp(field, "optional") == 0) {
            bool b;
            if (parse_bool_text(val, &b))
                return msg_fail(err, errlen, "-o %s: '%s' is not true or false", key, val);
            if (field[0] == 'e')
                p->enabled = b;
            else
                p->optional = b;
            return 0;
        }
        if (strcmp(field, "path") == 0) {
            copy_str(p->path, sizeof(p->path), val);
            return 0;
        }
        if (strcmp(field, "server") == 0) {
            copy_str(p->server, sizeof(p->server), val);
            return 0;
        }
        if (strncmp(field, "settings.", 9) == 0 && field[9]) {
            /* Typed later against the plugin's declaration. */
            if (add_setting(p, field + 9, val, CONF_VALUE_STRING, "-o", 0))
                return msg_fail(err, errlen, "out of memory");
            return 0;
        }
        return msg_fail(err, errlen, "-o %s: unknown key", key);
    }
    return msg_fail(err, errlen, "-o %s: unknown key", key);
}

static int absolutise(char *path, size_t cap, const char *base)
{
    if (!path[0] || path[0] == '/')
        return 0;
    char tmp[CONF_PATH_MAX * 2 + 2];
    snprintf(tmp, sizeof(tmp), "%s/%s", base, path);
    if (strlen(tmp) >= cap)
        return -1;
    copy_str(path, cap, tmp);
    return 0;
}

int host_conf_finish(host_conf *c, char *err, size_t errlen)
{
    char parent[CONF_PATH_MAX];
    copy_str(parent, sizeof(parent), c->conf_dir);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent)
        *slash = 0;
    else if (slash)
        slash[1] = 0;
    if (absolutise(c->state_dir, sizeof(c->state_dir), parent) ||
        absolutise(c->admin_socket, sizeof(c->admin_socket), c->state_dir) ||
        absolutise(c->log_file, sizeof(c->log_file), c->state_dir) ||
        absolutise(c->plugin_dir, sizeof(c->plugin_dir), parent))
        return msg_fail(err, errlen, "%s: a configured path is too long", c->host_file);
    if (tls_conf_finish_all(c, err, errlen)) /* tls_config.c */
        return -1;
    /* a gRPC server's TLS offers HTTP/2 by ALPN: gRPC clients require it */
    for (size_t i = 0; i < c->nservers; i++)
        c->servers[i].tls.alpn_h2 = c->servers[i].protocol == SERVER_PROTOCOL_GRPC;
    if (c->write_low_water > c->write_high_water)
        return msg_fail(err, errlen, "%s: write_low_water must not exceed write_high_water",
                        c->host_file);
    for (size_t i = 0; i < c->nservers; i++)
        for (size_t j = i + 1; j < c->nservers; j++)
            if (strcmp(c->servers[i].name, c->servers[j].name) == 0)
                return msg_fail(err, errlen, "%s:%d: server '%s' declared twice",
                                c->servers[j].file, c->servers[j].line, c->servers[j].name);
    for (size_t i = 0; i < c->nplugins; i++) {
        plugin_conf *p = &c->plugins[i];
        for (size_t j = 0; j < i; j++)
            if (strcmp(c->plugins[j].name, p->name) == 0)
                return msg_fail(err, errlen, "%s:%d: plugin name '%s' already used in %s", p->file,
                                p->line, p->name, c->plugins[j].file);
        if (p->enabled && p->server[0] && !host_conf_server(c, p->server))
            return msg_fail(err, errlen,
                            "%s:%d: plugin '%s' binds to server '%s', which host.conf "
                            "does not declare",
                            p->file, p->line, p->name, p->server);
    }
    return 0;
}

const server_conf *host_conf_server(const host_conf *c, const char *name)
{
    for (size_t i = 0; i < c->nservers; i++)
        if (strcmp(c->servers[i].name, name) == 0)
            return &c->servers[i];
    return NULL;
}

plugin_conf *host_conf_plugin(host_conf *c, const char *name)
{
    for (size_t i = 0; i < c->nplugins; i++)
        if (strcmp(c->plugins[i].name, name) == 0)
            return &c->plugins[i];
    return NULL;
}

void plugin_conf_free(plugin_conf *p)
{
    for (size_t i = 0; i < p->nsettings; i++) {
        free(p->settings[i].name);
        free(p->settings[i].value);
    }
    free(p->settings);
    p->settings = NULL;
    p->nsettings = 0;
}

int plugin_conf_copy(plugin_conf *dst, const plugin_conf *src)
{
    *dst = *src;
    dst->settings = NULL;
    dst->nsettings = 0;
    for (size_t i = 0; i < src->nsettings; i++) {
        const conf_setting *s = &src->settings[i];
        if (add_setting(dst, s->name, s->value, s->type, s->file, s->line)) {
            plugin_conf_free(dst);
            return -1;
        }
    }
    return 0;
}

void host_conf_free(host_conf *c)
{
    for (size_t i = 0; i < c->nplugins; i++)
        plugin_conf_free(&c->plugins[i]);
    free(c->plugins);
    free(c->servers);
    c->plugins = NULL;
    c->servers = NULL;
    c->nplugins = c->nservers = 0;
}
