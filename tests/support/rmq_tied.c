/* rmq_tied — `rmq_tied COMMAND [ARGS...]` execs COMMAND so that it dies
 * (SIGKILL) when the process that started rmq_tied dies. The shell-driven
 * tests start their daemons and clients through it: a trap cleans up when
 * the script ends normally or fails, this covers the script being killed
 * (kill -9, a ctest timeout) when no trap can run. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "child_lifetime.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: rmq_tied COMMAND [ARGS...]\n");
        return 2;
    }
    /* rmq_tied is the child the script forked: its parent is the script
     * (a script already dead by now would leave a re-parented rmq_tied,
     * which the comparison after prctl cannot see; the window is the few
     * microseconds between fork and here) */
    if (rmq_child_die_with_parent(getppid()) != 0) {
        fprintf(stderr, "rmq_tied: cannot tie %s to its parent\n", argv[1]);
        return 125;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "rmq_tied: cannot run %s: %s\n", argv[1], strerror(errno));
    return 127;
}
