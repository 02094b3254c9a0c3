/* child_lifetime.h — a process a test starts dies with the test.
 *
 * Call rmq_child_die_with_parent() in the child between fork() and exec():
 * the kernel then sends SIGKILL to the child when its parent dies, however
 * the parent dies (an assertion's abort, a ctest timeout's SIGKILL, kill -9),
 * so no daemon or client outlives the test that started it and holds its
 * ports or its temporary directory. Linux only (PR_SET_PDEATHSIG). */
#ifndef RMQ_CHILD_LIFETIME_H
#define RMQ_CHILD_LIFETIME_H

#include <sys/types.h>

/* parent: the pid of the process that forked (read before fork(): the
 * child compares it with getppid() to catch a parent that died before the
 * request took effect). Returns 0, or -1 when the parent is already gone
 * (the caller should _exit) or prctl failed. Note: the signal comes when the
 * forking *thread* ends; tests fork from their main thread. */
int rmq_child_die_with_parent(pid_t parent);

/* Starts argv[0] (execv, argv NULL-terminated) as a child that dies with
 * the test, its stdout on a pipe (stderr passes through): the read end, or
 * -1 with nothing started. *pid gets the child's pid. */
int rmq_child_spawn_stdout(char *const argv[], pid_t *pid);

#endif
