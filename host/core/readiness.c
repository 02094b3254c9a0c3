/* readiness.c — the sd_notify datagram protocol by hand: one sendto() of
 * "READY=1" to the UNIX datagram socket named by $NOTIFY_SOCKET (a leading
 * '@' means the abstract namespace). Knows nothing of the daemon's state. */
#include "readiness.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int readiness_notify(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !path[0])
        return 1;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    size_t n = strlen(path);
    if (n >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    memcpy(sa.sun_path, path, n);
    if (path[0] == '@')
        sa.sun_path[0] = 0;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    ssize_t w = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
    int rc = w < 0 ? -errno : 0;
    close(fd);
    return rc;
}
