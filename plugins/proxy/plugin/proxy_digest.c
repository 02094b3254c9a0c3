/* proxy_digest.c — the body digest of a received message: MD5 in upper-case
 * hex, as Java's proxy (GrpcConverter, BinaryUtil.generateMd5) hands it to
 * 5.x clients, which check it (the Python client marks a mismatch
 * corrupted). libcrypto's one-shot EVP_Digest: one call per message, no
 * state kept. */
#include <openssl/evp.h>

#include "proxy_internal.h"

int proxy_md5_hex(const void *data, size_t len, char out[33])
{
    static const char hex[] = "0123456789ABCDEF";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (EVP_Digest(data, len, md, &n, EVP_md5(), NULL) != 1 || n != 16)
        return RMQ_ENOMEM;
    for (unsigned int i = 0; i < n; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[32] = '\0';
    return 0;
}
