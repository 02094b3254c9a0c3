/* sha1_digest.h — SHA-1 as a small streaming digest whose state is a plain
 * copyable value, so an HMAC key's padded blocks are hashed once per account
 * and each request costs two compressions with no allocation. */
#ifndef ACL_SHA1_DIGEST_H
#define ACL_SHA1_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define SHA1_BLOCK_BYTES 64
#define SHA1_DIGEST_BYTES 20

/* Large and aligned enough for OpenSSL's SHA_CTX (96 bytes today). */
typedef struct sha1_ctx {
    _Alignas(16) unsigned char opaque[128];
} sha1_ctx;

void sha1_init(sha1_ctx *c);
void sha1_update(sha1_ctx *c, const void *data, size_t len);
void sha1_final(sha1_ctx *c, uint8_t out[SHA1_DIGEST_BYTES]);

#endif
