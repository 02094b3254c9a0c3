/* tls_host.h — where TLS meets the host: endpoints per server and for
 * outgoing connections (init, reload-config, teardown) and the hooks the
 * connection read/write paths call. */
#ifndef RMQHOST_TLS_HOST_H
#define RMQHOST_TLS_HOST_H

#include <stddef.h>

#include "host.h"

/* Build every server's endpoint and the outgoing one from h->conf; -1 + err
 * naming the server and the file that failed. */
int tls_host_init(rmq_host *h, char *err, size_t errlen);
void tls_host_destroy(rmq_host *h);
/* A server's endpoint (NULL for a server a reload declared until
 * tls_host_reload_commit gives it one: its connections are then plaintext). */
struct tls_endpoint *tls_server_endpoint(const server *s);

/* reload-config: rebuild every TLS context from nc (re-reading the files)
 * before anything is applied; -1 + msg when one fails (nothing changed).
 * Commit installs them and appends one line per TLS endpoint to msg; call
 * it after servers a reload adds exist (it gives them their endpoint). */
typedef struct tls_reload_plan tls_reload_plan;
int tls_host_reload_prepare(rmq_host *h, const host_conf *nc, tls_reload_plan **plan, char *msg,
                            size_t msglen);
void tls_host_reload_commit(rmq_host *h, tls_reload_plan *plan, char *msg, size_t msglen);
void tls_host_reload_abandon(tls_reload_plan *plan);

/* ---- connection hooks (loop thread; tls_connection.c) ---- */

/* c->rbuf[start, len) just arrived from the socket. Decides TLS on a
 * server connection's first byte, decrypts in place. Returns 0, 1 when
 * there is TLS output to flush, -1 to close as an error (logged), -2 when
 * the peer ended the TLS session. */
int tls_conn_input(connection *c, size_t start);
/* Before writing: turn c->out's plaintext into records. 0 or -1 (logged). */
int tls_conn_seal(connection *c);
/* An outgoing connection: start TLS when tls_client enables it. 0 or -1. */
int tls_conn_start_client(connection *c);
void tls_conn_free(connection *c);

#endif
