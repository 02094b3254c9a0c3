/* fuzz_tls_first_bytes.c — libFuzzer harness for what a server does with the
 * first bytes of a connection: the tls mode's first-byte verdict, then (for
 * a TLS start) the record engine fed in arbitrary chunks, sealing output
 * after each. Input: byte 0 picks the mode, byte 1 the chunk size, the rest
 * is what the peer sends. Must never crash, leak or read out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "tls_context.h"
#include "tls_session.h"

static SSL_CTX *server_ctx(void)
{
    static SSL_CTX *ctx;
    if (!ctx) {
        tls_conf t;
        memset(&t, 0, sizeof(t));
        t.mode = TLS_MODE_PERMISSIVE;
        t.test_mode = true; /* a self-signed certificate made in memory */
        char err[512];
        ctx = tls_ctx_build(&t, err, sizeof(err));
        if (!ctx)
            abort();
    }
    return ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    int mode = data[0] % 3;
    size_t chunk = (size_t)data[1] + 1;
    data += 2;
    size -= 2;
    tls_verdict v = tls_first_byte_verdict(mode, data[0]);
    if (v != TLS_VERDICT_TLS)
        return 0;
    tls_session *s = tls_session_new(SSL_new(server_ctx()), true);
    if (!s)
        return 0;
    byte_buf plain = {0}, out = {0};
    char why[256];
    for (size_t off = 0; off < size; off += chunk) {
        size_t n = size - off < chunk ? size - off : chunk;
        int rc = tls_session_feed(s, data + off, n, &plain, why, sizeof(why));
        if (rc != 0)
            break;
        if (tls_session_has_output(s)) {
            if (tls_session_seal(s, &out, why, sizeof(why)) != 0)
                break;
            out.len = 0;
        }
        plain.len = 0;
    }
    tls_session_free(s);
    byte_buf_free(&plain);
    byte_buf_free(&out);
    return 0;
}
