/* tls_session.c — the TLS record engine of one connection: a memory BIO pair
 * between OpenSSL and the connection's byte buffers. The caller moves bytes
 * to and from the socket; nothing here blocks or does I/O. */
#include "tls_session.h"

#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "tls_config.h"

#define TLS_READ_ROOM (16 * 1024 + 512)

struct tls_session {
    SSL *ssl;
    BIO *rbio;      /* ciphertext from the peer (owned by ssl) */
    BIO *wbio;      /* ciphertext to the peer (owned by ssl) */
    byte_buf plain; /* plaintext waiting for the handshake to finish */
    bool server;
};

tls_verdict tls_first_byte_verdict(int mode, uint8_t first)
{
    /* 0x16 is a TLS handshake record; a remoting frame starts with the high
     * byte of its length, which is never 0x16 for frames under 369 MB. */
    bool hello = first == 0x16;
    if (mode == TLS_MODE_DISABLED)
        return hello ? TLS_VERDICT_REFUSE_TLS : TLS_VERDICT_PLAIN;
    if (hello)
        return TLS_VERDICT_TLS;
    return mode == TLS_MODE_ENFORCING ? TLS_VERDICT_REFUSE_PLAIN : TLS_VERDICT_PLAIN;
}

tls_session *tls_session_new(SSL *ssl, bool server)
{
    tls_session *s = calloc(1, sizeof(*s));
    BIO *r = BIO_new(BIO_s_mem());
    BIO *w = BIO_new(BIO_s_mem());
    if (!s || !r || !w) {
        free(s);
        BIO_free(r);
        BIO_free(w);
        SSL_free(ssl);
        return NULL;
    }
    /* An empty memory BIO means "try again", not end of file. */
    BIO_set_mem_eof_return(r, -1);
    BIO_set_mem_eof_return(w, -1);
    SSL_set_bio(ssl, r, w);
    s->ssl = ssl;
    s->rbio = r;
    s->wbio = w;
    s->server = server;
    if (server)
        SSL_set_accept_state(ssl);
    else
        SSL_set_connect_state(ssl);
    return s;
}

void tls_session_free(tls_session *s)
{
    if (!s)
        return;
    SSL_free(s->ssl);
    byte_buf_free(&s->plain);
    free(s);
}

static void describe_error(tls_session *s, int ret, char *why, size_t whylen)
{
    int e = SSL_get_error(s->ssl, ret);
    unsigned long code = ERR_peek_last_error();
    char buf[256] = "";
    if (code)
        ERR_error_string_n(code, buf, sizeof(buf));
    ERR_clear_error();
    long vr = SSL_get_verify_result(s->ssl);
    if (vr != X509_V_OK && !SSL_is_init_finished(s->ssl))
        snprintf(why, whylen, "%s (certificate: %s)", buf[0] ? buf : "handshake failed",
                 X509_verify_cert_error_string(vr));
    else if (e == SSL_ERROR_SYSCALL && !code)
        snprintf(why, whylen, "unexpected end of the TLS stream");
    else
        snprintf(why, whylen, "%s", buf[0] ? buf : "TLS protocol error");
}

int tls_session_feed(tls_session *s, const uint8_t *data, size_t len, byte_buf *plain, char *why,
                     size_t whylen)
{
    while (len > 0) {
        int chunk = len > (1u << 30) ? (1 << 30) : (int)len;
        int n = BIO_write(s->rbio, data, chunk);
        if (n <= 0) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    for (;;) {
        if (byte_buf_reserve(plain, TLS_READ_ROOM) != 0) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        size_t room = plain->cap - plain->len;
        int n =
            SSL_read(s->ssl, plain->data + plain->len, room > INT32_MAX ? INT32_MAX : (int)room);
        if (n > 0) {
            plain->len += (size_t)n;
            continue;
        }
        int e = SSL_get_error(s->ssl, n);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
            return 0;
        if (e == SSL_ERROR_ZERO_RETURN)
            return 1;
        describe_error(s, n, why, whylen);
        return -1;
    }
}

int tls_session_seal(tls_session *s, byte_buf *out, char *why, size_t whylen)
{
    if (out->len > 0) {
        if (s->plain.len == 0) {
            byte_buf tmp = s->plain;
            s->plain = *out;
            *out = tmp;
        } else {
            if (byte_buf_reserve(&s->plain, out->len) != 0) {
                snprintf(why, whylen, "out of memory");
                return -1;
            }
            memcpy(s->plain.data + s->plain.len, out->data, out->len);
            s->plain.len += out->len;
        }
        out->len = 0;
    }
    if (!SSL_is_init_finished(s->ssl)) {
        int r = SSL_do_handshake(s->ssl);
        if (r != 1) {
            int e = SSL_get_error(s->ssl, r);
            if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
                describe_error(s, r, why, whylen);
                return -1;
            }
        }
    }
    if (SSL_is_init_finished(s->ssl) && s->plain.len > 0) {
        size_t off = 0;
        while (off < s->plain.len) {
            size_t left = s->plain.len - off;
            int n =
                SSL_write(s->ssl, s->plain.data + off, left > (1u << 30) ? (1 << 30) : (int)left);
            if (n <= 0) {
                describe_error(s, n, why, whylen);
                return -1;
            }
            off += (size_t)n;
        }
        s->plain.len = 0;
    }
    size_t pending = BIO_ctrl_pending(s->wbio);
    if (pending > 0) {
        if (byte_buf_reserve(out, pending) != 0) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        int n = BIO_read(s->wbio, out->data + out->len, (int)pending);
        if (n > 0)
            out->len += (size_t)n;
    }
    return 0;
}

bool tls_session_has_output(const tls_session *s)
{
    return BIO_ctrl_pending(s->wbio) > 0 || (s->plain.len > 0 && SSL_is_init_finished(s->ssl));
}

bool tls_session_established(const tls_session *s)
{
    return SSL_is_init_finished(s->ssl);
}
