/* tls_test_client.h — what the TLS integration tests share: certificates
 * made with the openssl CLI in a temp dir, a blocking OpenSSL client that
 * speaks remoting frames, and a host.conf writer with a `tls` group. Never
 * asserts; the tests decide what is a failure. */
#ifndef TLS_TEST_CLIENT_H
#define TLS_TEST_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "rmq_test_support.h"

/* Certificates under dir: ca.pem/ca.key, server1.pem/.key (CN server-1),
 * server2.pem/.key (CN server-2), client.pem/.key (signed by ca),
 * rogue.pem/.key (self-signed), enc.key (server1's key encrypted with
 * password "s3cret"). 0 or -1. */
int tls_make_certs(const char *dir);

typedef struct tls_tc tls_tc;

/* TLS to 127.0.0.1:port; cert/key may be NULL (no client certificate); the
 * server certificate is not verified. NULL with why on failure (including a
 * handshake the server refuses). */
tls_tc *tls_tc_connect(int port, const char *cert, const char *key, char *why, size_t whylen);
/* Send req and return the response with its opaque, or NULL. */
rmq_cmd *tls_tc_call(tls_tc *t, const rmq_cmd *req, int timeout_ms);
/* One frame out, or the next frame in (NULL on timeout, EOF or garbage). */
int tls_tc_send(tls_tc *t, const rmq_cmd *req);
rmq_cmd *tls_tc_recv(tls_tc *t, int timeout_ms);
/* The CN of the certificate the server presented. */
const char *tls_tc_peer_cn(tls_tc *t);
/* True when the server ends the session within timeout_ms. */
bool tls_tc_wait_closed(tls_tc *t, int timeout_ms);
void tls_tc_close(tls_tc *t);

/* host.conf for d with one server `name` whose tls group body is tls_body
 * (e.g. "mode = \"permissive\"; cert_file = ...;"), may be NULL. */
int tls_write_host_conf(rmq_test_daemon *d, const char *name, const char *tls_body,
                        const char *extra);

/* GET_ROUTEINFO_BY_TOPIC (105) for a topic nobody has: a real NameServer
 * request whose answer is TOPIC_NOT_EXIST (17). */
rmq_cmd *tls_route_request(int opaque);

/* The TLS tests' fixture: certificates made in a temp dir at setup, the
 * daemon the test starts in d (port: its listener, when the test keeps
 * it). tls_fixture_setup / tls_fixture_teardown are cmocka's setup and
 * teardown: teardown stops the daemon and removes both directories, after
 * a failed assertion too, so a failing test leaves no daemon or file. */
typedef struct tls_fixture {
    char certs[256];
    rmq_test_daemon d;
    int port;
} tls_fixture;
int tls_fixture_setup(void **state);
int tls_fixture_teardown(void **state);

#endif
