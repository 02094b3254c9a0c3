/* test_certs.c — a server certificate for the tests that serve TLS (gRPC
 * over HTTP/2 here), made with the `openssl` command the TLS tests use. */
#include "rmq_test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rmq_test_self_signed_cert(char *dir_template, const char *cn, char *cert, size_t cert_len,
                              char *key, size_t key_len)
{
    if (!mkdtemp(dir_template))
        return -1;
    snprintf(cert, cert_len, "%s/server.pem", dir_template);
    snprintf(key, key_len, "%s/server.key", dir_template);
    /* P-256, as tests/integration/tls does: an RSA-2048 key takes seconds
     * to generate on a loaded machine and a test needs a key, not an RSA one */
    char cmd[1536];
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout '%s' -out '%s' -days 2 -subj '/CN=%s' "
             "-addext subjectAltName=IP:127.0.0.1,DNS:localhost >'%s/openssl.log' 2>&1",
             key, cert, cn, dir_template);
    return system(cmd) == 0 ? 0 : -1;
}

void rmq_test_remove_tree(const char *dir)
{
    if (!dir || !dir[0])
        return;
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}
