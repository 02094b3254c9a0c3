/* tls_connection.c — TLS on a connection: the server's first-byte decision
 * (permissive, enforcing, disabled), decrypting what the socket delivered
 * into the frame buffer, and sealing output before it is written. */
#include <string.h>

#include "tls_context.h"
#include "tls_host.h"
#include "tls_session.h"

int tls_conn_input(connection *c, size_t start)
{
    rmq_host *h = c->loop->host;
    if (c->tls_detect) {
        c->tls_detect = false;
        tls_endpoint *ep = tls_server_endpoint(c->srv);
        int mode = tls_endpoint_mode(ep);
        switch (tls_first_byte_verdict(mode, c->rbuf.data[start])) {
        case TLS_VERDICT_PLAIN: return 0;
        case TLS_VERDICT_REFUSE_TLS:
            HLOG_WARN(h,
                      "closing connection %s on server %s: TLS handshake, but TLS is disabled "
                      "on this server (servers.%s.tls.mode)",
                      c->peer, c->srv->name, c->srv->name);
            return -1;
        case TLS_VERDICT_REFUSE_PLAIN:
            HLOG_WARN(h,
                      "closing connection %s on server %s: plaintext request, but the "
                      "server's tls mode is enforcing",
                      c->peer, c->srv->name);
            return -1;
        case TLS_VERDICT_TLS: break;
        }
        char note[1400];
        SSL *ssl = tls_endpoint_new_ssl(ep, uv_now(&c->loop->loop), note, sizeof(note));
        if (note[0])
            HLOG_WARN(h, "%s", note);
        c->tls = ssl ? tls_session_new(ssl, true) : NULL;
        if (!c->tls) {
            HLOG_WARN(h, "closing connection %s on server %s: cannot start TLS", c->peer,
                      c->srv->name);
            return -1;
        }
    }
    if (!c->tls)
        return 0;
    size_t n = c->rbuf.len - start;
    c->rbuf.len = start;
    char why[512];
    int rc = tls_session_feed(c->tls, c->rbuf.data + start, n, &c->rbuf, why, sizeof(why));
    if (rc == 1)
        return -2;
    if (rc < 0) {
        HLOG_INFO(h, "closing connection %s on %s%s: TLS %s: %s", c->peer,
                  c->srv ? "server " : "client connection", c->srv ? c->srv->name : "",
                  tls_session_established(c->tls) ? "error" : "handshake failed", why);
        return -1;
    }
    return tls_session_has_output(c->tls) ? 1 : 0;
}

int tls_conn_seal(connection *c)
{
    char why[512];
    if (tls_session_seal(c->tls, &c->out, why, sizeof(why)) == 0)
        return 0;
    HLOG_INFO(c->loop->host, "closing connection %s on %s%s: TLS %s: %s", c->peer,
              c->srv ? "server " : "client connection", c->srv ? c->srv->name : "",
              tls_session_established(c->tls) ? "error" : "handshake failed", why);
    return -1;
}

int tls_conn_start_client(connection *c)
{
    rmq_host *h = c->loop->host;
    if (!tls_endpoint_mode(h->tls_client))
        return 0;
    char note[1400];
    SSL *ssl = tls_endpoint_new_ssl(h->tls_client, uv_now(&c->loop->loop), note, sizeof(note));
    if (note[0])
        HLOG_WARN(h, "%s", note);
    c->tls = ssl ? tls_session_new(ssl, false) : NULL;
    if (!c->tls) {
        HLOG_WARN(h, "cannot start TLS to %s", c->addr_key);
        return -1;
    }
    return 0;
}

void tls_conn_free(connection *c)
{
    tls_session_free(c->tls);
    c->tls = NULL;
}
