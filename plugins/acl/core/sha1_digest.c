/* sha1_digest.c — owns SHA-1 through OpenSSL's low-level SHA1_* functions:
 * their SHA_CTX is a plain struct (copied per request from a precomputed
 * HMAC pad state) and they use the CPU's SHA extensions. The EVP interface
 * would allocate and dispatch per call, several times the cost of the hash
 * for a route lookup's few bytes; these functions are deprecated in OpenSSL
 * 3 but present in every Debian build, hence the suppression below. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <string.h>

#include "sha1_digest.h"

_Static_assert(sizeof(SHA_CTX) <= sizeof(((sha1_ctx *)0)->opaque), "SHA_CTX outgrew sha1_ctx");

void sha1_init(sha1_ctx *c)
{
    SHA1_Init((SHA_CTX *)(void *)c->opaque);
}

void sha1_update(sha1_ctx *c, const void *data, size_t len)
{
    SHA1_Update((SHA_CTX *)(void *)c->opaque, data, len);
}

void sha1_final(sha1_ctx *c, uint8_t out[SHA1_DIGEST_BYTES])
{
    SHA1_Final(out, (SHA_CTX *)(void *)c->opaque);
}
