/* admin_server.c — placeholder until the admin channel lands (issue 6):
 * the daemon starts without an admin socket and SIGHUP reports that
 * reload-config is not available yet. */
#include <stdio.h>

#include "host.h"

int admin_server_start(rmq_host *h, uv_loop_t *loop, char *err, size_t errlen)
{
    (void)h;
    (void)loop;
    (void)err;
    (void)errlen;
    return 0;
}

void admin_server_stop(rmq_host *h)
{
    (void)h;
}

int host_reload_config(rmq_host *h, char *msg, size_t msglen)
{
    (void)h;
    snprintf(msg, msglen, "reload-config is not available in this build");
    return -1;
}
