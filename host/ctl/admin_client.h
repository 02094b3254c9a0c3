/* admin_client.h — rmqhostctl's side of the admin channel: find the socket,
 * send one JSON line, read one JSON line back. */
#ifndef RMQHOST_ADMIN_CLIENT_H
#define RMQHOST_ADMIN_CLIENT_H

#include <jansson.h>
#include <stddef.h>

/* The admin socket path configured in conf_dir (absolute). 0 or -1 + err. */
int admin_client_socket_path(const char *conf_dir, char *out, size_t cap, char *err, size_t errlen);

/* Send `req`, wait up to timeout_ms for the response line. NULL + err when the
 * daemon cannot be reached or answers garbage. */
json_t *admin_client_call(const char *socket_path, const json_t *req, int timeout_ms, char *err,
                          size_t errlen);

#endif
