/* tls_context.h — TLS endpoints: the OpenSSL context a server (or the host's
 * outgoing side) hands to new connections, rebuilt from the files on
 * reload-config or when they change on disk, swapped without touching
 * established sessions. */
#ifndef RMQHOST_TLS_CONTEXT_H
#define RMQHOST_TLS_CONTEXT_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tls_config.h"

typedef struct tls_endpoint tls_endpoint;

/* A context from t (server or client side), or NULL with err naming the file
 * or the setting that failed. TLS 1.2 at least. */
SSL_CTX *tls_ctx_build(const tls_conf *t, char *err, size_t errlen);

/* An endpoint for t; its context is built now when t enables TLS. NULL with
 * err on failure. `label` names it in messages ("server broker"). */
tls_endpoint *tls_endpoint_new(const tls_conf *t, const char *label, char *err, size_t errlen);
void tls_endpoint_free(tls_endpoint *ep);

/* Server: tls_mode; client: 1 when outgoing connections use TLS. */
int tls_endpoint_mode(const tls_endpoint *ep);

/* Install t with ctx (built by tls_ctx_build from t, or NULL when t disables
 * TLS); takes ownership of ctx. Existing sessions keep the old context. */
void tls_endpoint_install(tls_endpoint *ep, const tls_conf *t, SSL_CTX *ctx);

/* A session object for a new connection, or NULL. At most once a second it
 * checks whether the certificate, key or trust files changed and rebuilds
 * the context first; what happened is written to note (empty if nothing). */
SSL *tls_endpoint_new_ssl(tls_endpoint *ep, uint64_t now_ms, char *note, size_t notelen);

#endif
