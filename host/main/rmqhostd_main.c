/* rmqhostd_main.c — the daemon's command line: parse options, read and
 * check the configuration, run in the foreground until SIGTERM/SIGINT, and
 * map failures to exit codes (0 ok, 1 runtime failure, 2 bad config/usage). */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <urcu.h>

#include "host.h"

int admin_server_start(rmq_host *h, uv_loop_t *loop, char *err, size_t errlen);
void admin_server_stop(rmq_host *h);
int host_reload_config(rmq_host *h, char *msg, size_t msglen);

typedef struct control {
    rmq_host *host;
    uv_loop_t loop;
    uv_signal_t sigterm, sigint, sighup, sigusr1;
    int exit_code;
} control;

static void usage(FILE *f)
{
    fprintf(f, "usage: rmqhostd [-c CONF_DIR] [-o KEY=VALUE]... [--check] [--list-settings] "
               "[--version]\n"
               "  -c DIR           configuration directory (default: conf.d)\n"
               "  -o KEY=VALUE     override a setting (state_dir=..., servers.NAME.listen=...,\n"
               "                   plugins.NAME.enabled=true, plugins.NAME.settings.KEY=...)\n"
               "  --check          validate the configuration and plugins, then exit 0 or 2\n"
               "  --list-settings  print every setting of every configured plugin\n"
               "  --version        print the version\n");
}

static void on_stop_signal(uv_signal_t *s, int signum)
{
    control *c = s->data;
    if (c->host->stopping)
        return; /* a repeated signal while draining changes nothing */
    HLOG_INFO(c->host, "received %s, shutting down", strsignal(signum));
    admin_server_stop(c->host);
    host_shutdown(c->host);
    uv_stop(&c->loop);
}

static void on_sighup(uv_signal_t *s, int signum)
{
    (void)signum;
    control *c = s->data;
    char msg[2048];
    int rc = host_reload_config(c->host, msg, sizeof(msg));
    if (rc == 0)
        HLOG_INFO(c->host, "SIGHUP: configuration reloaded: %s", msg);
    else
        HLOG_ERROR(c->host, "SIGHUP: configuration not reloaded: %s", msg);
}

static void on_sigusr1(uv_signal_t *s, int signum)
{
    (void)signum;
    control *c = s->data;
    if (host_log_reopen(&c->host->log) != 0)
        HLOG_ERROR(c->host, "SIGUSR1: cannot reopen the log file");
}

static int load_conf(const char *dir, char **ovr, int novr, host_conf *conf)
{
    char err[2048];
    if (host_conf_load(conf, dir, err, sizeof(err)) != 0) {
        fprintf(stderr, "rmqhostd: %s\n", err);
        host_conf_free(conf);
        return -1;
    }
    for (int i = 0; i < novr; i++) {
        if (host_conf_override(conf, ovr[i], err, sizeof(err)) != 0) {
            fprintf(stderr, "rmqhostd: %s\n", err);
            host_conf_free(conf);
            return -1;
        }
    }
    if (host_conf_finish(conf, err, sizeof(err)) != 0) {
        fprintf(stderr, "rmqhostd: %s\n", err);
        host_conf_free(conf);
        return -1;
    }
    return 0;
}

static const char *type_name(rmq_setting_type t)
{
    switch (t) {
    case RMQ_SETTING_INT: return "int";
    case RMQ_SETTING_BOOL: return "bool";
    case RMQ_SETTING_DOUBLE: return "double";
    default: return "string";
    }
}

/* --check and --list-settings: load each plugin's descriptor without init. */
static int inspect_plugins(rmq_host *h, bool list)
{
    int bad = 0;
    for (size_t i = 0; i < h->conf.nplugins; i++) {
        plugin_conf *pc = &h->conf.plugins[i];
        if (!list && !pc->enabled)
            continue;
        char err[2048];
        plugin_inst *p = plugin_load(h, pc, 0, err, sizeof(err));
        if (!p) {
            fprintf(stderr, "%s\n", err);
            if (!pc->optional)
                bad = 1;
            continue;
        }
        if (list) {
            printf("plugin %s (%s %s, %s)%s\n", pc->name, p->desc->name,
                   p->desc->version ? p->desc->version : "?", p->so_path,
                   pc->enabled ? "" : " [disabled]");
            for (size_t k = 0; k < p->nsettings; k++) {
                const rmq_setting_decl *d = p->settings[k].decl;
                printf("  %-40s %-6s default=%-20s %s\n", d->name, type_name(d->type),
                       d->default_value ? d->default_value : "\"\"",
                       d->description ? d->description : "");
            }
        }
        plugin_unload(p);
    }
    return bad;
}

static void exe_dir_of(const char *argv0, char *out, size_t cap)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n > 0) {
        buf[n] = 0;
    } else if (!realpath(argv0, buf)) {
        snprintf(buf, sizeof(buf), "%s", argv0);
    }
    snprintf(out, cap, "%s", dirname(buf));
}

int main(int argc, char **argv)
{
    const char *conf_dir = "conf.d";
    char **ovr = calloc((size_t)argc + 1, sizeof(char *));
    int novr = 0;
    bool check = false, list = false;
    if (!ovr)
        return 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            conf_dir = argv[++i];
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            ovr[novr++] = argv[++i];
        } else if (strcmp(argv[i], "--check") == 0 || strcmp(argv[i], "-t") == 0) {
            check = true;
        } else if (strcmp(argv[i], "--list-settings") == 0) {
            list = true;
        } else if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-v") == 0) {
            printf("rmqhostd %s (plugin ABI %d.%d)\n", RMQ_VERSION_STRING, RMQ_ABI_MAJOR,
                   RMQ_ABI_MINOR);
            free(ovr);
            return 0;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            free(ovr);
            return 0;
        } else {
            fprintf(stderr, "rmqhostd: unknown option '%s'\n", argv[i]);
            usage(stderr);
            free(ovr);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    host_conf conf;
    if (load_conf(conf_dir, ovr, novr, &conf) != 0) {
        free(ovr);
        return 2;
    }
    free(ovr);
    rcu_register_thread();
    rmq_host *h = calloc(1, sizeof(*h));
    char exe_dir[CONF_PATH_MAX];
    exe_dir_of(argv[0], exe_dir, sizeof(exe_dir));
    char err[2048];
    if (!h || host_init(h, &conf, exe_dir, err, sizeof(err)) != 0) {
        fprintf(stderr, "rmqhostd: %s\n", h ? err : "out of memory");
        free(h);
        rcu_unregister_thread();
        return 2;
    }
    if (check || list) {
        int bad = inspect_plugins(h, list);
        if (check && !bad)
            printf("rmqhostd: configuration %s is valid\n", h->conf.conf_dir);
        host_destroy(h);
        free(h);
        rcu_unregister_thread();
        return bad ? 2 : 0;
    }

    control c;
    memset(&c, 0, sizeof(c));
    c.host = h;
    uv_loop_init(&c.loop);
    int code = 0;
    /* Signal watchers first: a SIGTERM that arrives while the servers start
     * (listen.addrs may already exist) waits in the loop and stops the
     * daemon cleanly once it runs, instead of killing it. */
    uv_signal_init(&c.loop, &c.sigterm);
    uv_signal_init(&c.loop, &c.sigint);
    uv_signal_init(&c.loop, &c.sighup);
    uv_signal_init(&c.loop, &c.sigusr1);
    c.sigterm.data = c.sigint.data = c.sighup.data = c.sigusr1.data = &c;
    uv_signal_start(&c.sigterm, on_stop_signal, SIGTERM);
    uv_signal_start(&c.sigint, on_stop_signal, SIGINT);
    uv_signal_start(&c.sighup, on_sighup, SIGHUP);
    uv_signal_start(&c.sigusr1, on_sigusr1, SIGUSR1);
    /* The admin socket opens before the data ports, so an operator can
     * always reach a daemon that listens. */
    if (state_dir_prepare(h, err, sizeof(err)) != 0 ||
        admin_server_start(h, &c.loop, err, sizeof(err)) != 0 ||
        host_start(h, err, sizeof(err)) != 0) {
        HLOG_ERROR(h, "start-up failed: %s", err);
        admin_server_stop(h);
        host_shutdown(h);
        code = 1;
    } else {
        HLOG_INFO(h, "rmqhostd %s ready (conf %s, state %s)", RMQ_VERSION_STRING, h->conf.conf_dir,
                  h->conf.state_dir);
        uv_run(&c.loop, UV_RUN_DEFAULT);
        HLOG_INFO(h, "rmqhostd stopped");
    }
    uv_close((uv_handle_t *)&c.sigterm, NULL);
    uv_close((uv_handle_t *)&c.sigint, NULL);
    uv_close((uv_handle_t *)&c.sighup, NULL);
    uv_close((uv_handle_t *)&c.sigusr1, NULL);
    uv_run(&c.loop, UV_RUN_NOWAIT);
    uv_loop_close(&c.loop);
    host_destroy(h);
    free(h);
    rcu_unregister_thread();
    return code;
}
