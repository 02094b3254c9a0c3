/* rmqhostctl_main.c — the admin CLI: parses the command line, finds the
 * daemon's admin socket (-s PATH, or host.conf in -c DIR), sends one command
 * and prints the answer. Exit codes: 0 success, 1 the daemon refused or the
 * command failed, 2 usage error or daemon unreachable. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_client.h"

#define CTL_TIMEOUT_MS 600000 /* a reload waits for in-flight requests to drain */

static void usage(FILE *f)
{
    fprintf(f, "usage: rmqhostctl [-c CONF_DIR | -s SOCKET] [--json] COMMAND [ARGS...]\n"
               "  -c DIR      configuration directory to find admin_socket in (default: conf.d)\n"
               "  -s PATH     admin socket path (overrides -c)\n"
               "  --json      machine-readable output\n"
               "commands:\n"
               "  list                 plugins: name, version, ABI, server, state, generation,\n"
               "                       loaded-at, requests served\n"
               "  reload NAME          hot-reload a plugin (new .so, same settings file)\n"
               "  enable NAME          start a plugin declared in conf.d\n"
               "  disable NAME         stop a running plugin\n"
               "  reload-config        re-read conf.d and apply the difference\n"
               "  stats                per server: connections, requests per code, errors,\n"
               "                       latency; per executor: queue depth\n"
               "  config               the effective configuration\n"
               "  health               exit 0 when every enabled plugin is up and its server "
               "listens\n"
               "  help                 commands registered by plugins\n"
               "  ha                   replication status (store plugin)\n"
               "  promote              this slave becomes the master of its broker name\n"
               "  demote HOST:HAPORT   this master becomes a slave of that HA address\n"
               "  OTHER [ARGS...]      a command a plugin registered (e.g. expr)\n"
               "exit status: 0 success, 1 command failed, 2 usage error or daemon unreachable\n");
}

int main(int argc, char **argv)
{
    const char *conf_dir = "conf.d";
    const char *sock = NULL;
    bool json = false;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            conf_dir = argv[++i];
        } else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
            sock = argv[++i];
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("rmqhostctl %s\n", RMQ_VERSION_STRING);
            return 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "rmqhostctl: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            break;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    json_t *req = json_object();
    json_t *args = json_array();
    json_object_set_new(req, "cmd", json_string(argv[i]));
    /* `--json` is ours anywhere before a `--`; after it every word belongs to
     * the command (`rmqhostctl expr -- --json` evaluates "--json"). */
    bool literal = false;
    for (int k = i + 1; k < argc; k++) {
        if (!literal && strcmp(argv[k], "--json") == 0) {
            json = true;
            continue;
        }
        if (strcmp(argv[k], "--") == 0)
            literal = true;
        json_array_append_new(args, json_string(argv[k]));
    }
    json_object_set_new(req, "args", args);
    json_object_set_new(req, "json", json_boolean(json));

    char path[4096], err[2048];
    if (!sock) {
        if (admin_client_socket_path(conf_dir, path, sizeof(path), err, sizeof(err)) != 0) {
            fprintf(stderr, "rmqhostctl: %s\n", err);
            json_decref(req);
            return 2;
        }
        sock = path;
    }
    json_t *resp = admin_client_call(sock, req, CTL_TIMEOUT_MS, err, sizeof(err));
    json_decref(req);
    if (!resp) {
        fprintf(stderr, "rmqhostctl: %s\n", err);
        return 2;
    }
    json_t *jexit = json_object_get(resp, "exit");
    int code = json_is_integer(jexit) ? (int)json_integer_value(jexit) : 2;
    if (code < 0 || code > 2)
        code = 1;
    const char *text = json_string_value(json_object_get(resp, "text"));
    json_t *data = json_object_get(resp, "data");
    if (json && data) {
        char *out = json_dumps(data, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (out)
            printf("%s\n", out);
        free(out);
        /* the daemon's explanation still reaches a human on failure */
        if (code != 0 && text && text[0])
            fprintf(stderr, "%s\n", text);
    } else if (text && text[0]) {
        size_t n = strlen(text);
        printf("%s%s", text, text[n - 1] == '\n' ? "" : "\n");
    }
    json_decref(resp);
    return code;
}
