/* rmq_test_node.h — a real client in a child process for interop tests:
 * `node script args...` with NODE_PATH set, its stdin a pipe the test writes
 * commands to, its stdout read back line by line (lines the test does not ask
 * for are copied to stderr so the ctest log shows the whole conversation). */
#ifndef RMQHOST_TEST_NODE_H
#define RMQHOST_TEST_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct rmq_node_proc {
    pid_t pid; /* 0 when none runs */
    int in_fd, out_fd;
    char buf[65536]; /* stdout bytes not yet returned as lines */
    size_t len;
} rmq_node_proc;

/* Start `node_exe argv[0] argv[1] ...` (argv: the script first, then its
 * arguments, NULL-terminated, at most 30) with NODE_PATH = node_modules.
 * 0, or -1 when no process could be started. */
int rmq_node_start(rmq_node_proc *p, const char *node_exe, const char *node_modules,
                   const char *const *argv);

/* The next stdout line starting with `prefix` into line (other lines go to
 * stderr); false on EOF, on a line longer than the buffer, or when none
 * arrives within timeout_ms. */
bool rmq_node_line(rmq_node_proc *p, const char *prefix, char *line, size_t len, int timeout_ms);

/* All of stdout until EOF (or timeout_ms) into out, NUL-terminated. */
void rmq_node_read_all(rmq_node_proc *p, char *out, size_t len, int timeout_ms);

/* Write a command line to the process's stdin (a dead process shows up as a
 * missing answer line, so failures are not reported here). */
void rmq_node_send(rmq_node_proc *p, const char *cmd);

/* Exit status of the process after waiting up to timeout_ms for it; a
 * process still running then is killed and -1 returned (also when none
 * runs or it died of a signal). Closes the pipes; safe to call twice. */
int rmq_node_reap(rmq_node_proc *p, int timeout_ms);

#endif
