/* rmq_test_node.c — the child `node` process of the interop tests: start it
 * with piped stdin/stdout, read its answer lines with deadlines, reap it.
 * One copy for every interop test, so each test holds only its scenario. */
#include "rmq_test_node.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child_lifetime.h"
#include "rmq_test_support.h"

int rmq_node_start(rmq_node_proc *p, const char *node_exe, const char *node_modules,
                   const char *const *argv)
{
    const char *args[32] = {"node"};
    size_t n = 1;
    for (; argv[n - 1] && n < 31; n++)
        args[n] = argv[n - 1];
    args[n] = NULL;
    /* a node that died must fail the test by its missing answer, not kill
     * the test process with SIGPIPE on the next command */
    signal(SIGPIPE, SIG_IGN);
    int in[2], out[2];
    if (pipe(in) != 0)
        return -1;
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        if (rmq_child_die_with_parent(parent) != 0)
            _exit(126);
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        setenv("NODE_PATH", node_modules, 1);
        execv(node_exe, (char *const *)args);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    if (pid < 0) {
        close(in[1]);
        close(out[0]);
        return -1;
    }
    p->pid = pid;
    p->in_fd = in[1];
    p->out_fd = out[0];
    p->len = 0;
    return 0;
}

/* Read what stdout has within the deadline; false on EOF, error or timeout. */
static bool fill(rmq_node_proc *p, uint64_t deadline)
{
    while (rmq_test_now_ms() < deadline) {
        struct pollfd pfd = {.fd = p->out_fd, .events = POLLIN};
        if (poll(&pfd, 1, 200) <= 0)
            continue;
        ssize_t r = read(p->out_fd, p->buf + p->len, sizeof p->buf - p->len);
        if (r <= 0)
            return false;
        p->len += (size_t)r;
        return true;
    }
    return false;
}

bool rmq_node_line(rmq_node_proc *p, const char *prefix, char *line, size_t len, int timeout_ms)
{
    if (p->pid <= 0)
        return false;
    uint64_t deadline = rmq_test_now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        char *nl = memchr(p->buf, '\n', p->len);
        if (nl) {
            size_t l = (size_t)(nl - p->buf);
            snprintf(line, len, "%.*s", (int)l, p->buf);
            memmove(p->buf, nl + 1, p->len - l - 1);
            p->len -= l + 1;
            if (strncmp(line, prefix, strlen(prefix)) == 0)
                return true;
            fprintf(stderr, "node: %s\n", line);
            continue;
        }
        if (p->len == sizeof p->buf || !fill(p, deadline))
            return false;
    }
}

void rmq_node_read_all(rmq_node_proc *p, char *out, size_t len, int timeout_ms)
{
    uint64_t deadline = rmq_test_now_ms() + (uint64_t)timeout_ms;
    size_t n = 0;
    for (;;) {
        size_t take = p->len < len - 1 - n ? p->len : len - 1 - n;
        memcpy(out + n, p->buf, take);
        memmove(p->buf, p->buf + take, p->len - take);
        p->len -= take;
        n += take;
        if (n + 1 >= len || p->pid <= 0 || !fill(p, deadline))
            break;
    }
    out[n] = '\0';
}

void rmq_node_send(rmq_node_proc *p, const char *cmd)
{
    if (p->pid <= 0)
        return;
    ssize_t w = write(p->in_fd, cmd, strlen(cmd));
    (void)w;
}

int rmq_node_reap(rmq_node_proc *p, int timeout_ms)
{
    if (p->pid <= 0)
        return -1;
    int st = 0, status = -1;
    uint64_t deadline = rmq_test_now_ms() + (uint64_t)timeout_ms;
    pid_t r;
    while ((r = waitpid(p->pid, &st, WNOHANG)) == 0 && rmq_test_now_ms() < deadline)
        rmq_test_pause_ms(50);
    if (r == p->pid) {
        status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    } else {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
    }
    close(p->in_fd);
    close(p->out_fd);
    p->pid = 0;
    p->len = 0;
    return status;
}
