/* tls_session.h — one TLS session over memory BIOs: ciphertext in, plaintext
 * out and back, never touching a socket, so handshakes never block an I/O
 * thread. Also the first-byte verdict of a server's tls mode. */
#ifndef RMQHOST_TLS_SESSION_H
#define RMQHOST_TLS_SESSION_H

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct byte_buf byte_buf;
typedef struct tls_session tls_session;

/* What a server in `mode` (tls_mode) does with a connection whose first byte
 * is `first`: serve it in plaintext, start TLS, or close it. */
typedef enum {
    TLS_VERDICT_PLAIN,
    TLS_VERDICT_TLS,
    TLS_VERDICT_REFUSE_TLS,
    TLS_VERDICT_REFUSE_PLAIN
} tls_verdict;
tls_verdict tls_first_byte_verdict(int mode, uint8_t first);

/* Wrap ssl (takes ownership) as the server or client end. NULL when out of
 * memory (ssl is freed then). */
tls_session *tls_session_new(SSL *ssl, bool server);
void tls_session_free(tls_session *s);

/* Feed ciphertext; decrypted bytes are appended to plain. 0 = fine (maybe
 * nothing decrypted yet), 1 = the peer closed the session (close_notify),
 * -1 = failure with the reason in why. */
int tls_session_feed(tls_session *s, const uint8_t *data, size_t len, byte_buf *plain, char *why,
                     size_t whylen);

/* Take out's plaintext (queued until the handshake is done), and leave in
 * out everything to send: handshake records and encrypted data. 0 or -1 +
 * why. */
int tls_session_seal(tls_session *s, byte_buf *out, char *why, size_t whylen);

/* There is something for tls_session_seal to send. */
bool tls_session_has_output(const tls_session *s);
bool tls_session_established(const tls_session *s);

#endif
