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
