/* tls_context.c — builds OpenSSL contexts from tls_conf (certificate chain,
 * key with its password, trust store, client-auth policy, TLS >= 1.2, a
 * self-signed certificate in Java's test mode) and owns the endpoints that
 * hand them to new connections, swapping in rebuilt ones on rotation. */
#include "tls_context.h"
#include "message_text.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FILE_CHECK_INTERVAL_MS 1000

typedef struct file_sig {
    long long mtime_ns;
    long long size;
    unsigned long long ino;
    bool present;
} file_sig;

struct tls_endpoint {
    pthread_mutex_t mu;
    tls_conf conf; /* under mu */
    SSL_CTX *ctx;  /* under mu; NULL when disabled */
    atomic_int mode;
    char label[1200];
    uint64_t next_check_ms; /* under mu */
    file_sig sigs[3];       /* cert, key, trust as last built (under mu) */
};

/* OpenSSL's first queued reason, for messages; clears the queue. */
static const char *ssl_reason(char *buf, size_t len)
{
    unsigned long e = ERR_peek_last_error();
    if (e == 0)
        snprintf(buf, len, "unknown error");
    else
        ERR_error_string_n(e, buf, len);
    ERR_clear_error();
    return buf;
}

/* A file we cannot open is reported with errno's words, not OpenSSL's. */
static int check_readable(const char *what, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return msg_fail(err, errlen, "%s %s: %s", what, path, strerror(errno));
    fclose(f);
    return 0;
}

/* Never prompt on a terminal: no password configured means none. */
static int password_cb(char *buf, int size, int rwflag, void *u)
{
    (void)rwflag;
    const char *pw = u;
    if (!pw || !*pw)
        return -1;
    int n = (int)strlen(pw);
    if (n > size)
        return -1;
    memcpy(buf, pw, (size_t)n);
    return n;
}

static int load_key(SSL_CTX *ctx, const tls_conf *t, char *err, size_t errlen)
{
    FILE *f = fopen(t->key_file, "r");
    if (!f)
        return msg_fail(err, errlen, "key_file %s: %s", t->key_file, strerror(errno));
    EVP_PKEY *pk = PEM_read_PrivateKey(f, NULL, password_cb, (void *)t->key_password);
    fclose(f);
    char why[256];
    if (!pk)
        return msg_fail(
            err, errlen, "key_file %s: cannot read a PEM private key%s: %s", t->key_file,
            t->key_password[0] ? " with key_password" : " (encrypted keys need key_password)",
            ssl_reason(why, sizeof(why)));
    X509 *cert = SSL_CTX_get0_certificate(ctx);
    if (cert && X509_check_private_key(cert, pk) != 1) {
        EVP_PKEY_free(pk);
        ERR_clear_error();
        return msg_fail(err, errlen, "key_file %s does not match cert_file %s", t->key_file,
                        t->cert_file);
    }
    int ok = SSL_CTX_use_PrivateKey(ctx, pk);
    EVP_PKEY_free(pk);
    if (ok != 1)
        return msg_fail(err, errlen, "key_file %s: %s", t->key_file, ssl_reason(why, sizeof(why)));
    if (SSL_CTX_check_private_key(ctx) != 1) {
        ERR_clear_error();
        return msg_fail(err, errlen, "key_file %s does not match cert_file %s", t->key_file,
                        t->cert_file);
    }
    return 0;
}

/* Java's tls.test.mode.enable on a server: a fresh self-signed certificate. */
static int use_self_signed(SSL_CTX *ctx, char *err, size_t errlen)
{
    char why[256];
    EVP_PKEY *pk = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    int rc = -1;
    if (!pk || !x)
        goto out;
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), (long)time(NULL));
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 365L * 24 * 3600);
    X509_set_pubkey(x, pk);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"rmqhost test mode",
                               -1, -1, 0);
    X509_set_issuer_name(x, name);
    if (X509_sign(x, pk, EVP_sha256()) <= 0 || SSL_CTX_use_certificate(ctx, x) != 1 ||
        SSL_CTX_use_PrivateKey(ctx, pk) != 1)
        goto out;
    rc = 0;
out:
    if (rc != 0)
        msg_fail(err, errlen, "test_mode: cannot make a self-signed certificate: %s",
                 ssl_reason(why, sizeof(why)));
    X509_free(x);
    EVP_PKEY_free(pk);
    return rc;
}

/* gRPC clients offer "h2" by ALPN and refuse a server that does not pick
 * it; a client offering no h2 gets no ALPN answer. */
static int select_h2(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                     const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)ssl;
    (void)arg;
    static const unsigned char h2[] = {2, 'h', '2'};
    unsigned char *sel = NULL;
    if (SSL_select_next_proto(&sel, outlen, h2, sizeof(h2), in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

/* Java without authClient/authServer trusts any peer certificate. */
static int accept_any_cert(int preverify_ok, X509_STORE_CTX *store)
{
    (void)preverify_ok;
    (void)store;
    return 1;
}

SSL_CTX *tls_ctx_build(const tls_conf *t, char *err, size_t errlen)
{
    char why[256];
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(t->client ? TLS_client_method() : TLS_server_method());
    if (!ctx) {
        msg_fail(err, errlen, "cannot create a TLS context: %s", ssl_reason(why, sizeof(why)));
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* A client must not make us redo handshakes on an I/O thread at will. */
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    if (!t->client)
        SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"rmqhost", 7);
    if (!t->client && t->alpn_h2)
        SSL_CTX_set_alpn_select_cb(ctx, select_h2, NULL);
    bool own_cert = t->cert_file[0] && !(t->test_mode && !t->client);
    if (!t->client && t->test_mode) {
        if (use_self_signed(ctx, err, errlen) != 0)
            goto bad;
    } else if (own_cert) {
        if (check_readable("cert_file", t->cert_file, err, errlen) != 0)
            goto bad;
        if (SSL_CTX_use_certificate_chain_file(ctx, t->cert_file) != 1) {
            msg_fail(err, errlen, "cert_file %s: cannot read a PEM certificate: %s", t->cert_file,
                     ssl_reason(why, sizeof(why)));
            goto bad;
        }
        if (!t->key_file[0]) {
            msg_fail(err, errlen, "cert_file %s has no key_file", t->cert_file);
            goto bad;
        }
        if (load_key(ctx, t, err, errlen) != 0)
            goto bad;
    }
    bool verify = t->verify_peer && !t->test_mode;
    if (verify || t->trust_cert_file[0]) {
        if (t->trust_cert_file[0]) {
            if (check_readable("trust_cert_file", t->trust_cert_file, err, errlen) != 0)
                goto bad;
            if (SSL_CTX_load_verify_locations(ctx, t->trust_cert_file, NULL) != 1) {
                msg_fail(err, errlen, "trust_cert_file %s: cannot read PEM certificates: %s",
                         t->trust_cert_file, ssl_reason(why, sizeof(why)));
                goto bad;
            }
            if (!t->client) {
                STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(t->trust_cert_file);
                if (names)
                    SSL_CTX_set_client_CA_list(ctx, names);
            }
        } else {
            SSL_CTX_set_default_verify_paths(ctx);
        }
    }
    if (t->client) {
        SSL_CTX_set_verify(ctx, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
    } else if (t->need_client_auth != TLS_AUTH_NONE) {
        int flags = SSL_VERIFY_PEER;
        if (t->need_client_auth == TLS_AUTH_REQUIRE)
            flags |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
        SSL_CTX_set_verify(ctx, flags, verify ? NULL : accept_any_cert);
    } else {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    }
    return ctx;
bad:
    SSL_CTX_free(ctx);
    return NULL;
}

/* ---- endpoints ------------------------------------------------------------------ */

static void sign_file(const char *path, file_sig *s)
{
    struct stat st;
    memset(s, 0, sizeof(*s));
    if (!path[0] || stat(path, &st) != 0)
        return;
    s->present = true;
    s->mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    s->size = (long long)st.st_size;
    s->ino = (unsigned long long)st.st_ino;
}

static void sign_files(const tls_conf *t, file_sig sigs[3])
{
    sign_file(t->cert_file, &sigs[0]);
    sign_file(t->key_file, &sigs[1]);
    sign_file(t->trust_cert_file, &sigs[2]);
}

tls_endpoint *tls_endpoint_new(const tls_conf *t, const char *label, char *err, size_t errlen)
{
    SSL_CTX *ctx = NULL;
    if (t->mode != 0) {
        char why[1024];
        ctx = tls_ctx_build(t, why, sizeof(why));
        if (!ctx) {
            msg_fail(err, errlen, "%s: %s", label, why);
            return NULL;
        }
    }
    tls_endpoint *ep = calloc(1, sizeof(*ep));
    if (!ep) {
        SSL_CTX_free(ctx);
        msg_fail(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&ep->mu, NULL);
    snprintf(ep->label, sizeof(ep->label), "%s", label);
    tls_endpoint_install(ep, t, ctx);
    return ep;
}

void tls_endpoint_free(tls_endpoint *ep)
{
    if (!ep)
        return;
    SSL_CTX_free(ep->ctx);
    pthread_mutex_destroy(&ep->mu);
    memset(ep->conf.key_password, 0, sizeof(ep->conf.key_password));
    free(ep);
}

int tls_endpoint_mode(const tls_endpoint *ep)
{
    return ep ? atomic_load_explicit(&ep->mode, memory_order_acquire) : 0;
}

void tls_endpoint_install(tls_endpoint *ep, const tls_conf *t, SSL_CTX *ctx)
{
    pthread_mutex_lock(&ep->mu);
    SSL_CTX *old = ep->ctx;
    ep->conf = *t;
    ep->ctx = ctx;
    sign_files(t, ep->sigs);
    ep->next_check_ms = 0;
    atomic_store_explicit(&ep->mode, ctx ? t->mode : 0, memory_order_release);
    pthread_mutex_unlock(&ep->mu);
    SSL_CTX_free(old); /* sessions made from it hold their own reference */
}

SSL *tls_endpoint_new_ssl(tls_endpoint *ep, uint64_t now_ms, char *note, size_t notelen)
{
    note[0] = 0;
    pthread_mutex_lock(&ep->mu);
    if (ep->ctx && now_ms >= ep->next_check_ms && !ep->conf.test_mode) {
        ep->next_check_ms = now_ms + FILE_CHECK_INTERVAL_MS;
        file_sig now[3];
        sign_files(&ep->conf, now);
        if (memcmp(now, ep->sigs, sizeof(now)) != 0) {
            /* Remember this state either way: a half-written rotation is
             * retried when the files change again, not every second. */
            memcpy(ep->sigs, now, sizeof(now));
            char why[1024];
            SSL_CTX *fresh = tls_ctx_build(&ep->conf, why, sizeof(why));
            if (fresh) {
                SSL_CTX_free(ep->ctx);
                ep->ctx = fresh;
                snprintf(note, notelen, "%s: certificate files changed; new connections use them",
                         ep->label);
            } else {
                snprintf(note, notelen,
                         "%s: certificate files changed but cannot be used (%s); keeping the "
                         "previous ones",
                         ep->label, why);
            }
        }
    }
    SSL *ssl = ep->ctx ? SSL_new(ep->ctx) : NULL;
    pthread_mutex_unlock(&ep->mu);
    return ssl;
}
