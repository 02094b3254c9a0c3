/* child_lifetime.c — see child_lifetime.h. */
#include "child_lifetime.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

int rmq_child_die_with_parent(pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        return -1;
    /* the parent may have died between fork() and prctl(): then the child
     * was already re-parented and no signal will ever come */
    return getppid() == parent ? 0 : -1;
}

int rmq_child_spawn_stdout(char *const argv[], pid_t *pid)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t parent = getpid();
    *pid = fork();
    if (*pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (*pid == 0) {
        /* a failed or killed test takes its child with it */
        if (rmq_child_die_with_parent(parent) != 0)
            _exit(126);
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    return fds[0];
}
