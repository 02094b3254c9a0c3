/* rmq_test_daemon.c — runs a real rmqhostd for an integration test: a temp
 * root with conf.d/ and state/, ephemeral ports read back from
 * state/listen.addrs, and a stop that always reaps the process. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child_lifetime.h"
#include "rmq_test_support.h"

#define RMQ_TD_START_MS 60000
#define RMQ_TD_STOP_MS 60000

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f) == 0 ? 0 : -1;
}

int rmq_td_init(rmq_test_daemon *d, const char *const *servers, const char *extra_host_conf)
{
    memset(d, 0, sizeof(*d));
    d->pid = -1;
    snprintf(d->dir, sizeof(d->dir), "/tmp/rmqtest.XXXXXX");
    if (!mkdtemp(d->dir))
        return -1;
    /* a kept directory is only useful when the run says which one it is */
    if (getenv("RMQ_TEST_KEEP"))
        fprintf(stderr, "rmq_td: daemon directory %s (kept: RMQ_TEST_KEEP)\n", d->dir);
    snprintf(d->conf_dir, sizeof(d->conf_dir), "%s/conf.d", d->dir);
    snprintf(d->state_dir, sizeof(d->state_dir), "%s/state", d->dir);
    snprintf(d->admin_socket, sizeof(d->admin_socket), "%s/state/admin.sock", d->dir);
    snprintf(d->log_path, sizeof(d->log_path), "%s/daemon.log", d->dir);
    if (mkdir(d->conf_dir, 0755) != 0 || mkdir(d->state_dir, 0755) != 0)
        return -1;
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof(text),
                                "state_dir = \"%s\";\nadmin_socket = \"%s\";\n"
                                "log_level = \"debug\";\nio_threads = 2;\nservers = {\n",
                                d->state_dir, d->admin_socket);
    for (size_t i = 0; servers && servers[i] && n < sizeof(text); i++) {
        /* "name@statements": statements go inside the server's group */
        const char *at = strchr(servers[i], '@');
        int namelen = at ? (int)(at - servers[i]) : (int)strlen(servers[i]);
        n += (size_t)snprintf(text + n, sizeof(text) - n,
                              "  %.*s = { listen = \"127.0.0.1:0\"; %s };\n", namelen, servers[i],
                              at ? at + 1 : "");
    }
    if (n < sizeof(text))
        n += (size_t)snprintf(text + n, sizeof(text) - n, "};\n%s\n",
                              extra_host_conf ? extra_host_conf : "");
    if (n >= sizeof(text))
        return -1;
    return rmq_td_write_conf(d, "host.conf", text);
}

int rmq_td_write_conf(rmq_test_daemon *d, const char *file_name, const char *content)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", d->conf_dir, file_name);
    return write_text(path, content);
}

int rmq_td_add_plugin(rmq_test_daemon *d, const char *name, const char *so_name, const char *server,
                      const char *settings_body)
{
    char text[8192], file[128];
    snprintf(text, sizeof(text),
             "plugin = {\n  name = \"%s\";\n  path = \"%s/%s.so\";\n  server = \"%s\";\n"
             "  enabled = true;\n  settings = {\n%s\n  };\n};\n",
             name, RMQ_TEST_PLUGIN_DIR, so_name, server, settings_body ? settings_body : "");
    snprintf(file, sizeof(file), "50-%s.conf", name);
    return rmq_td_write_conf(d, file, text);
}

static bool addrs_ready(const rmq_test_daemon *d)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/listen.addrs", d->state_dir);
    return access(path, R_OK) == 0;
}

static void dump_log(const rmq_test_daemon *d)
{
    FILE *f = fopen(d->log_path, "r");
    if (!f)
        return;
    char line[1024];
    fprintf(stderr, "---- rmqhostd log (%s) ----\n", d->log_path);
    while (fgets(line, sizeof(line), f))
        fputs(line, stderr);
    fprintf(stderr, "---- end of log ----\n");
    fclose(f);
}

int rmq_td_start(rmq_test_daemon *d, const char *const *extra_args)
{
    const char *argv[64];
    int argc = 0;
    argv[argc++] = RMQ_TEST_DAEMON;
    argv[argc++] = "-c";
    argv[argc++] = d->conf_dir;
    for (size_t i = 0; extra_args && extra_args[i] && argc < 62; i++)
        argv[argc++] = extra_args[i];
    argv[argc] = NULL;
    char listen_path[512];
    snprintf(listen_path, sizeof(listen_path), "%s/listen.addrs", d->state_dir);
    unlink(listen_path);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* a test that aborts or is killed takes its daemon with it */
        if (rmq_child_die_with_parent(parent) != 0)
            _exit(126);
        int fd = open(d->log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    d->pid = pid;
    /* a deadline, not a count of polls: an ASan daemon on a loaded 2-core
     * machine (load 8 and more) can take seconds to load its plugins and
     * recover a store; the bound only ends a daemon that never comes up */
    uint64_t until = rmq_test_now_ms() + RMQ_TD_START_MS;
    while (rmq_test_now_ms() < until) {
        if (addrs_ready(d))
            return 0;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            d->pid = -1;
            dump_log(d);
            return -1;
        }
        sleep_ms(10);
    }
    dump_log(d);
    rmq_td_stop(d);
    return -1;
}

int rmq_td_port(const rmq_test_daemon *d, const char *server)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/listen.addrs", d->state_dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char name[128], addr[256];
    int port = -1;
    while (fscanf(f, "%127s %255s", name, addr) == 2) {
        if (strcmp(name, server) == 0) {
            const char *colon = strrchr(addr, ':');
            port = colon ? atoi(colon + 1) : -1;
            break;
        }
    }
    fclose(f);
    return port;
}

int rmq_td_stop(rmq_test_daemon *d)
{
    if (d->pid <= 0)
        return -1;
    kill(d->pid, SIGTERM);
    int st = 0;
    /* a clean stop flushes and syncs the store: generous under load */
    uint64_t until = rmq_test_now_ms() + RMQ_TD_STOP_MS;
    while (rmq_test_now_ms() < until) {
        pid_t r = waitpid(d->pid, &st, WNOHANG);
        if (r == d->pid) {
            d->pid = -1;
            if (WIFEXITED(st))
                return WEXITSTATUS(st);
            return 128 + WTERMSIG(st);
        }
        sleep_ms(10);
    }
    kill(d->pid, SIGKILL);
    waitpid(d->pid, &st, 0);
    d->pid = -1;
    dump_log(d);
    return 128 + SIGKILL;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void rmq_td_cleanup(rmq_test_daemon *d)
{
    if (d->pid > 0)
        rmq_td_stop(d);
    if (d->dir[0] && getenv("RMQ_TEST_KEEP") == NULL)
        nftw(d->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    d->dir[0] = 0;
}

bool rmq_td_log_contains(const rmq_test_daemon *d, const char *needle)
{
    FILE *f = fopen(d->log_path, "r");
    if (!f)
        return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

int rmq_td_ctl(const rmq_test_daemon *d, char *out, size_t out_len, const char *const *args)
{
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        const char *argv[64];
        int argc = 0;
        argv[argc++] = RMQ_TEST_CTL;
        argv[argc++] = "-s";
        argv[argc++] = d->admin_socket;
        for (size_t i = 0; args && args[i] && argc < 62; i++)
            argv[argc++] = args[i];
        argv[argc] = NULL;
        dup2(pipefd[1], 1);
        close(pipefd[0]);
        close(pipefd[1]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    size_t n = 0;
    char buf[4096];
    ssize_t r;
    while ((r = read(pipefd[0], buf, sizeof(buf))) > 0) {
        if (out && n + 1 < out_len) {
            size_t take = (size_t)r < out_len - n - 1 ? (size_t)r : out_len - n - 1;
            memcpy(out + n, buf, take);
            n += take;
        }
    }
    close(pipefd[0]);
    if (out && out_len)
        out[n] = 0;
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The NULL-terminated inline arguments after `first` into args[16]. */
static void ctl_args(const char **args, const char *first, va_list ap)
{
    int n = 0;
    for (const char *a = first; a && n < 15; a = va_arg(ap, const char *))
        args[n++] = a;
    args[n] = NULL;
}

const char *rmq_td_ctl_output(rmq_test_daemon *d, int *status, const char *first, ...)
{
    const char *args[16];
    va_list ap;
    va_start(ap, first);
    ctl_args(args, first, ap);
    va_end(ap);
    *status = rmq_td_ctl(d, d->ctl_out, sizeof d->ctl_out, args);
    return d->ctl_out;
}

/* The log's last `lines` lines: where a failed stop says why. */
static void print_log_tail(const rmq_test_daemon *d, int lines)
{
    FILE *f = fopen(d->log_path, "r");
    if (!f) {
        fprintf(stderr, "(log unavailable)\n");
        return;
    }
    long offsets[61] = {0};
    int count = 0;
    char line[1024];
    long pos = ftell(f);
    while (fgets(line, sizeof(line), f)) {
        offsets[count++ % 61] = pos;
        pos = ftell(f);
    }
    int skip = count > lines ? count - lines : 0;
    fseek(f, count > lines ? offsets[skip % 61] : 0, SEEK_SET);
    while (fgets(line, sizeof(line), f))
        fputs(line, stderr);
    fclose(f);
}

int rmq_td_stop_reporting(rmq_test_daemon *d)
{
    int status = rmq_td_stop(d);
    if (status != 0) {
        fprintf(stderr, "rmqhostd exited with %d; its log:\n", status);
        print_log_tail(d, 60);
    }
    return status;
}
