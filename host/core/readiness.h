/* readiness.h — tell a service manager the daemon is ready (sd_notify's
 * READY=1 over $NOTIFY_SOCKET), without depending on libsystemd. */
#ifndef RMQHOST_READINESS_H
#define RMQHOST_READINESS_H

/* Send `state` ("READY=1", "STOPPING=1", "RELOADING=1") to $NOTIFY_SOCKET.
 * 0 when sent, 1 when no service manager asked for it, -errno on failure. */
int readiness_notify(const char *state);

#endif
