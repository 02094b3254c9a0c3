/* tls_test_client.c — certificates for the TLS tests (openssl CLI), a
 * blocking OpenSSL client speaking remoting frames, and host.conf writing.
 * Test support only. */
#include "tls_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct tls_tc {
    int fd;
    SSL_CTX *ctx;
    SSL *ssl;
    char cn[128];
};

static int run(const char *dir, const char *cmd)
{
    char line[2048];
    snprintf(line, sizeof(line), "cd '%s' && %s >>openssl.log 2>&1", dir, cmd);
    return system(line) == 0 ? 0 : -1;
}

/* P-256 keys: an RSA-2048 key generation takes seconds on a loaded machine
 * and every fixture makes five, which brought the ASan TLS server test to
 * 294 s of its 300 s timeout; the tests need a key, not an RSA one. */
#define KEY_SPEC "ec -pkeyopt ec_paramgen_curve:prime256v1"

int tls_make_certs(const char *dir)
{
    const char *steps[] = {
        "openssl req -x509 -newkey " KEY_SPEC " -nodes -keyout ca.key -out ca.pem -days 2 "
        "-subj /CN=rmqhost-test-ca",
        "openssl req -newkey " KEY_SPEC " -nodes -keyout server1.key -out server1.csr "
        "-subj /CN=server-1",
        "openssl x509 -req -in server1.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out server1.pem -days 2",
        "openssl req -newkey " KEY_SPEC " -nodes -keyout server2.key -out server2.csr "
        "-subj /CN=server-2",
        "openssl x509 -req -in server2.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out server2.pem -days 2",
        "openssl req -newkey " KEY_SPEC " -nodes -keyout client.key -out client.csr "
        "-subj /CN=client-1",
        "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out client.pem -days 2",
        "openssl req -x509 -newkey " KEY_SPEC " -nodes -keyout rogue.key -out rogue.pem -days 2 "
        "-subj /CN=rogue",
        "openssl pkcs8 -topk8 -in server1.key -out enc.key -passout pass:s3cret -v2 aes-256-cbc",
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (run(dir, steps[i]) != 0)
            return -1;
    return 0;
}

tls_tc *tls_tc_connect(int port, const char *cert, const char *key, char *why, size_t whylen)
{
    tls_tc *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->fd = rmq_tc_connect(port);
    t->ctx = SSL_CTX_new(TLS_client_method());
    if (t->fd < 0 || !t->ctx) {
        snprintf(why, whylen, "cannot connect");
        goto bad;
    }
    SSL_CTX_set_verify(t->ctx, SSL_VERIFY_NONE, NULL);
    if (cert && (SSL_CTX_use_certificate_chain_file(t->ctx, cert) != 1 ||
                 SSL_CTX_use_PrivateKey_file(t->ctx, key, SSL_FILETYPE_PEM) != 1)) {
        snprintf(why, whylen, "cannot load %s", cert);
        goto bad;
    }
    t->ssl = SSL_new(t->ctx);
    SSL_set_fd(t->ssl, t->fd);
    if (SSL_connect(t->ssl) != 1) {
        unsigned long e = ERR_get_error();
        ERR_error_string_n(e, why, whylen);
        goto bad;
    }
    /* TLS 1.3 reports a refused client certificate only at the first read:
     * one round trip of nothing would hide it, so callers do a request. */
    X509 *peer = SSL_get1_peer_certificate(t->ssl);
    if (peer) {
        X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, t->cn,
                                  sizeof(t->cn));
        X509_free(peer);
    }
    return t;
bad:
    ERR_clear_error();
    tls_tc_close(t);
    return NULL;
}

static int read_full(tls_tc *t, uint8_t *buf, size_t len, int timeout_ms)
{
    size_t got = 0;
    uint64_t deadline = rmq_test_now_ms() + (uint64_t)timeout_ms;
    while (got < len) {
        if (SSL_pending(t->ssl) == 0) {
            struct pollfd p = {.fd = t->fd, .events = POLLIN};
            int left = (int)(deadline - rmq_test_now_ms());
            if (rmq_test_now_ms() >= deadline || poll(&p, 1, left) <= 0)
                return -1;
        }
        int n = SSL_read(t->ssl, buf + got, (int)(len - got));
        if (n <= 0) {
            int e = SSL_get_error(t->ssl, n);
            if (e == SSL_ERROR_WANT_READ)
                continue;
            ERR_clear_error();
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

int tls_tc_send(tls_tc *t, const rmq_cmd *req)
{
    size_t cap = rmq_cmd_encoded_size_bound(req);
    uint8_t *buf = malloc(cap);
    size_t n = buf ? rmq_cmd_encode(req, buf, cap) : 0;
    int w = n ? SSL_write(t->ssl, buf, (int)n) : -1;
    free(buf);
    if (w != (int)n) {
        ERR_clear_error();
        return -1;
    }
    return 0;
}

rmq_cmd *tls_tc_recv(tls_tc *t, int timeout_ms)
{
    uint8_t head[4];
    if (read_full(t, head, 4, timeout_ms) != 0)
        return NULL;
    uint32_t len =
        ((uint32_t)head[0] << 24) | ((uint32_t)head[1] << 16) | ((uint32_t)head[2] << 8) | head[3];
    if (len < 4 || len > 64u * 1024 * 1024)
        return NULL;
    uint8_t *frame = malloc(len + 4);
    if (!frame)
        return NULL;
    memcpy(frame, head, 4);
    if (read_full(t, frame + 4, len, timeout_ms) != 0) {
        free(frame);
        return NULL;
    }
    char err[128];
    rmq_cmd *c = rmq_cmd_decode(frame, len + 4, err, sizeof(err));
    free(frame);
    return c;
}

rmq_cmd *tls_tc_call(tls_tc *t, const rmq_cmd *req, int timeout_ms)
{
    if (tls_tc_send(t, req) != 0)
        return NULL;
    for (;;) {
        rmq_cmd *c = tls_tc_recv(t, timeout_ms);
        if (!c || c->opaque == req->opaque)
            return c;
        rmq_cmd_free(c);
    }
}

const char *tls_tc_peer_cn(tls_tc *t)
{
    return t->cn;
}

bool tls_tc_wait_closed(tls_tc *t, int timeout_ms)
{
    uint8_t b;
    return read_full(t, &b, 1, timeout_ms) != 0;
}

void tls_tc_close(tls_tc *t)
{
    if (!t)
        return;
    if (t->ssl)
        SSL_free(t->ssl);
    if (t->ctx)
        SSL_CTX_free(t->ctx);
    if (t->fd >= 0)
        close(t->fd);
    free(t);
}

int tls_write_host_conf(rmq_test_daemon *d, const char *name, const char *tls_body,
                        const char *extra)
{
    char text[8192];
    snprintf(text, sizeof(text),
             "state_dir = \"%s\";\nadmin_socket = \"%s\";\nlog_level = \"debug\";\n"
             "io_threads = 2;\nservers = {\n  %s = { listen = \"127.0.0.1:0\";%s%s%s };\n};\n%s\n",
             d->state_dir, d->admin_socket, name, tls_body ? " tls = { " : "",
             tls_body ? tls_body : "", tls_body ? " };" : "", extra ? extra : "");
    return rmq_td_write_conf(d, "host.conf", text);
}

rmq_cmd *tls_route_request(int opaque)
{
    const char *kv[] = {"topic", "NoSuchTopicForTls", NULL};
    return rmq_tc_request(105, opaque, kv);
}

int tls_fixture_setup(void **state)
{
    tls_fixture *f = calloc(1, sizeof(*f));
    *state = f;
    if (!f)
        return -1;
    f->d.pid = -1;
    snprintf(f->certs, sizeof(f->certs), "/tmp/rmqtls.XXXXXX");
    if (!mkdtemp(f->certs)) {
        f->certs[0] = 0;
        return -1;
    }
    return tls_make_certs(f->certs);
}

int tls_fixture_teardown(void **state)
{
    tls_fixture *f = *state;
    if (!f)
        return 0;
    int st = 0;
    if (f->d.pid > 0)
        st = rmq_td_stop_reporting(&f->d);
    rmq_td_cleanup(&f->d);
    if (f->certs[0]) {
        char cmd[512];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->certs);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", f->certs);
    }
    free(f);
    return st == 0 ? 0 : -1;
}
