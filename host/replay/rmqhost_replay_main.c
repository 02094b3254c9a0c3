/* rmqhost_replay_main.c — rmqhost-replay: sends recorded RocketMQ remoting
 * frames (the tests/vectors format) to a server or to plugins loaded
 * in-process, and reports how each answer differs from the recorded one.
 * Command line, step list and report only; targets and comparison live in
 * replay_targets.c and replay_diff.c. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame_file.h"
#include "replay_diff.h"
#include "replay_targets.h"

#define MAX_PLUGINS 16
#define MAX_SETTINGS 64
#define MAX_IGNORE 64

static const char USAGE[] =
    "usage: rmqhost-replay (--addr HOST:PORT | --plugin PATH.so [--name NAME] [--set "
    "KEY=VALUE]...)\n"
    "                      [--vectors DIR] [--ignore KEY]... [--timeout MS] [-q] (--all | "
    "STEP...)\n"
    "\n"
    "Replays recorded RocketMQ remoting frames and compares every answer with the\n"
    "recorded one: code, flag, opaque, serialization, remark, ext fields and the\n"
    "body (JSON bodies as values: key order and array order aside).\n"
    "\n"
    "Target (one of):\n"
    "  --addr HOST:PORT     a running server (rmqhostd, or a Java NameServer/broker)\n"
    "  --plugin PATH.so     a plugin loaded in-process by librmqhost-testkit, with the\n"
    "                       daemon's dispatch; repeat for several plugins on one server\n"
    "    --name NAME        instance name of the last --plugin (default: its descriptor's)\n"
    "    --set KEY=VALUE    a setting of the last --plugin (validated as rmqhostd does)\n"
    "\n"
    "Steps, replayed in the order given:\n"
    "  STEP = [CHANNEL:]FILE  FILE is one frame with its 4-byte length prefix;\n"
    "                       NAME.req.bin expects the answer NAME.resp.bin beside it,\n"
    "                       NAME.oneway.bin expects none. FILE is looked up in --vectors\n"
    "                       unless it contains '/'. CHANNEL (1..64, default 1) picks the\n"
    "                       connection, for sessions that span several.\n"
    "  --all                every *.req.bin and *.oneway.bin of --vectors, in name order\n"
    "  --vectors DIR        default: " RMQ_REPLAY_VECTORS_DIR "\n"
    "\n"
    "Comparison:\n"
    "  --ignore KEY         ext field or JSON member whose value depends on the session\n"
    "                       (timestamps, ports): only its presence and type are compared\n"
    "  --timeout MS         how long to wait for each answer (default 5000)\n"
    "  -q, --quiet          print only the steps that differ and the summary\n"
    "  -h, --help           this text\n"
    "\n"
    "Exit status: 0 every answer matches, 1 some differ, 2 usage or set-up error\n"
    "(or a step that could not run). A request without a recorded answer is sent\n"
    "and reported as skipped.\n"
    "The recorded frames and their format: tests/vectors/README.md of rmqhost.\n";

typedef struct plugin_arg {
    const char *path;
    char name[128];
    const char *settings[MAX_SETTINGS * 2 + 1];
    size_t nsettings;
    char *owned[MAX_SETTINGS * 2];
} plugin_arg;

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "rmqhost-replay: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(rmqhost-replay --help shows the usage)\n");
    return 2;
}

static void default_name(plugin_arg *p)
{
    const char *base = strrchr(p->path, '/');
    base = base ? base + 1 : p->path;
    snprintf(p->name, sizeof(p->name), "%s", base);
    char *dot = strstr(p->name, ".so");
    if (dot)
        *dot = 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Every request frame of dir, sorted by name. */
static char **list_all(const char *dir, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **out = NULL;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!ends_with(e->d_name, ".req.bin") && !ends_with(e->d_name, ".oneway.bin"))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            char **no = realloc(out, cap * sizeof(*no));
            if (!no)
                break;
            out = no;
        }
        out[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    if (out)
        qsort(out, *n, sizeof(*out), cmp_str);
    return out;
}

static rmq_cmd *decode_file(const char *path, char *why, size_t whylen)
{
    size_t len;
    unsigned char *buf = rmq_frame_file_read(path, &len);
    if (!buf) {
        snprintf(why, whylen, "cannot read %s", path);
        return NULL;
    }
    rmq_cmd *c = rmq_cmd_decode(buf, len, why, whylen);
    free(buf);
    return c;
}

typedef struct run_opts {
    const char *vectors;
    int timeout_ms;
    bool quiet;
    replay_ignore ign;
} run_opts;

/* One step: 0 same, 1 different, 2 cannot run it, 3 nothing recorded to
 * compare with (the request was still sent: later steps may rely on it). */
static int run_step(replay_target *t, const run_opts *o, const char *step)
{
    int ch = 1;
    const char *file = step;
    const char *colon = strchr(step, ':');
    if (colon && colon != step && strspn(step, "0123456789") == (size_t)(colon - step)) {
        ch = atoi(step);
        file = colon + 1;
    }
    char path[4096], resp_path[4096];
    if (strchr(file, '/'))
        snprintf(path, sizeof(path), "%s", file);
    else
        snprintf(path, sizeof(path), "%s/%s", o->vectors, file);
    size_t len;
    unsigned char *frame = rmq_frame_file_read(path, &len);
    if (!frame) {
        printf("ERROR %s: cannot read %s\n", step, path);
        return 2;
    }
    char why[512];
    rmq_cmd *req = rmq_cmd_decode(frame, len, why, sizeof(why));
    if (!req) {
        printf("ERROR %s: not a frame: %s\n", step, why);
        free(frame);
        return 2;
    }
    int32_t opaque = req->opaque;
    bool oneway = (req->flag & RMQ_FLAG_ONEWAY) != 0 || ends_with(path, ".oneway.bin");
    rmq_cmd_free(req);
    if (replay_send(t, ch, frame, len) != 0) {
        printf("ERROR %s: cannot send on channel %d\n", step, ch);
        free(frame);
        return 2;
    }
    free(frame);
    if (oneway) {
        if (!o->quiet)
            printf("ok    %s (oneway)\n", step);
        return 0;
    }
    snprintf(resp_path, sizeof(resp_path), "%s", path);
    char *suffix = strstr(resp_path, ".req.bin");
    if (!suffix || !ends_with(resp_path, ".req.bin")) {
        printf("ERROR %s: not NAME.req.bin or NAME.oneway.bin\n", step);
        return 2;
    }
    strcpy(suffix, ".resp.bin");
    if (access(resp_path, F_OK) != 0) {
        rmq_cmd *got = replay_answer(t, ch, opaque, o->timeout_ms);
        printf("skip  %s: no recorded answer %s (answered %s)\n", step, resp_path,
               got ? "" : "nothing");
        if (got)
            replay_answer_free(t, got);
        return 3;
    }
    rmq_cmd *want = decode_file(resp_path, why, sizeof(why));
    if (!want) {
        printf("ERROR %s: recorded answer: %s\n", step, why);
        return 2;
    }
    rmq_cmd *got = replay_answer(t, ch, opaque, o->timeout_ms);
    char diff[2048];
    int n = replay_diff(want, got, &o->ign, diff, sizeof(diff));
    if (n)
        printf("DIFF  %s: %s\n", step, diff);
    else if (!o->quiet)
        printf("ok    %s\n", step);
    rmq_cmd_free(want);
    if (got)
        replay_answer_free(t, got);
    return n ? 1 : 0;
}

/* Everything but the memory main() owns (steps, plugin arguments), so every
 * early return leaves it to main() to free. */
static int replay_main(int argc, char **argv, const char **steps, plugin_arg *plugins,
                       size_t *nplugins_out)
{
    const char *addr = NULL;
    size_t nplugins = 0;
    const char *ignore[MAX_IGNORE + 1] = {0};
    size_t nignore = 0;
    run_opts o = {.vectors = NULL, .timeout_ms = 5000};
    bool all = false;
    size_t nsteps = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(USAGE, stdout);
            return 0;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o.quiet = true;
        } else if (!strcmp(a, "--all")) {
            all = true;
        } else if (!strcmp(a, "--addr") || !strcmp(a, "--plugin") || !strcmp(a, "--name") ||
                   !strcmp(a, "--set") || !strcmp(a, "--vectors") || !strcmp(a, "--ignore") ||
                   !strcmp(a, "--timeout")) {
            if (!v)
                return usage_error("%s needs a value", a);
            i++;
            if (!strcmp(a, "--addr")) {
                addr = v;
            } else if (!strcmp(a, "--plugin")) {
                if (nplugins == MAX_PLUGINS)
                    return usage_error("at most 16 plugins%s", "");
                plugin_arg *p = &plugins[nplugins++];
                *nplugins_out = nplugins;
                memset(p, 0, sizeof(*p));
                p->path = v;
                default_name(p);
            } else if (!strcmp(a, "--name")) {
                if (!nplugins)
                    return usage_error("--name %s comes after a --plugin", v);
                snprintf(plugins[nplugins - 1].name, sizeof(plugins[0].name), "%s", v);
            } else if (!strcmp(a, "--set")) {
                const char *eq = strchr(v, '=');
                if (!nplugins)
                    return usage_error("--set %s comes after a --plugin", v);
                plugin_arg *p = &plugins[nplugins - 1];
                if (!eq || eq == v)
                    return usage_error("--set %s is not KEY=VALUE", v);
                if (p->nsettings == MAX_SETTINGS * 2)
                    return usage_error("too many --set for one plugin%s", "");
                char *key = strndup(v, (size_t)(eq - v));
                p->owned[p->nsettings] = key;
                p->settings[p->nsettings++] = key;
                p->settings[p->nsettings++] = eq + 1;
            } else if (!strcmp(a, "--vectors")) {
                o.vectors = v;
            } else if (!strcmp(a, "--ignore")) {
                if (nignore == MAX_IGNORE)
                    return usage_error("too many --ignore%s", "");
                ignore[nignore++] = v;
            } else {
                char *end;
                long ms = strtol(v, &end, 10);
                if (*end || ms < 1 || ms > 3600000)
                    return usage_error("--timeout %s is not a number of milliseconds", v);
                o.timeout_ms = (int)ms;
            }
        } else if (a[0] == '-') {
            return usage_error("unknown option %s", a);
        } else {
            steps[nsteps++] = a;
        }
    }
    if (!addr == !nplugins)
        return usage_error("give one target: --addr HOST:PORT or --plugin PATH.so%s", "");
    if (!all && !nsteps)
        return usage_error("nothing to replay: give STEP files or --all%s", "");
    if (!o.vectors) {
        FILE *probe = fopen(RMQ_REPLAY_VECTORS_DIR "/README.md", "r");
        o.vectors = probe ? RMQ_REPLAY_VECTORS_DIR : RMQ_REPLAY_SOURCE_VECTORS_DIR;
        if (probe)
            fclose(probe);
    }
    o.ign.keys = ignore;

    char err[1024] = "";
    replay_target *t;
    if (addr) {
        t = replay_target_addr(addr, err, sizeof(err));
    } else {
        const char *names[MAX_PLUGINS], *paths[MAX_PLUGINS];
        const char *const *settings[MAX_PLUGINS];
        for (size_t i = 0; i < nplugins; i++) {
            names[i] = plugins[i].name;
            paths[i] = plugins[i].path;
            settings[i] = plugins[i].settings;
        }
        t = replay_target_kit(nplugins, names, paths, settings, err, sizeof(err));
    }
    if (!t) {
        fprintf(stderr, "rmqhost-replay: %s\n", err);
        return 2;
    }
    char **listed = NULL;
    size_t nlisted = 0;
    if (all) {
        listed = list_all(o.vectors, &nlisted);
        if (!listed) {
            fprintf(stderr, "rmqhost-replay: no frames in %s\n", o.vectors);
            replay_target_close(t);
            return 2;
        }
    }
    size_t same = 0, differ = 0, broken = 0, skipped = 0;
    size_t total = all ? nlisted : nsteps;
    for (size_t i = 0; i < total; i++) {
        int r = run_step(t, &o, all ? listed[i] : steps[i]);
        if (r == 0)
            same++;
        else if (r == 1)
            differ++;
        else if (r == 3)
            skipped++;
        else
            broken++;
    }
    printf("%zu steps: %zu same, %zu differ, %zu could not run, %zu without a recorded answer\n",
           total, same, differ, broken, skipped);
    replay_target_close(t);
    for (size_t i = 0; i < nlisted; i++)
        free(listed[i]);
    free(listed);
    return broken ? 2 : differ ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char **steps = calloc((size_t)argc + 1, sizeof(*steps));
    plugin_arg *plugins = calloc(MAX_PLUGINS, sizeof(*plugins));
    size_t nplugins = 0;
    int rc = 2;
    if (steps && plugins)
        rc = replay_main(argc, argv, steps, plugins, &nplugins);
    for (size_t i = 0; plugins && i < nplugins; i++)
        for (size_t k = 0; k < plugins[i].nsettings; k += 2)
            free(plugins[i].owned[k]);
    free(plugins);
    free(steps);
    return rc;
}
