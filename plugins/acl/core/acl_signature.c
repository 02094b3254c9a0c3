/* acl_signature.c — owns the ACL 1.0 signature: the content (sorted field
 * values, then the body) fed straight into an HMAC-SHA1 built on OpenSSL's
 * incremental digests (no copy of the body), and its Base64 text. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl_signature.h"

#define SHA1_BLOCK 64
#define SHA1_LEN 20

static int cmp_field(const void *a, const void *b)
{
    /* Java's TreeMap orders by UTF-16 code units; for keys made of BMP
     * characters that is the byte order of their UTF-8 text. */
    return strcmp(((const acl_field *)a)->key, ((const acl_field *)b)->key);
}

static bool left_out(const char *key)
{
    return strcmp(key, "Signature") == 0 || strcmp(key, "_UNIQUE_KEY_QUERY") == 0;
}

int acl_sign(const char *secret, acl_field *fields, size_t nfields, const void *body,
             size_t body_len, char out[ACL_SIGNATURE_LEN + 1])
{
    unsigned char key[SHA1_BLOCK] = {0}, pad[SHA1_BLOCK], inner[SHA1_LEN], mac[SHA1_LEN];
    size_t klen = strlen(secret);
    int rc = -1;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md)
        return -1;
    if (klen > SHA1_BLOCK) {
        unsigned int n = 0;
        if (!EVP_Digest(secret, klen, key, &n, EVP_sha1(), NULL))
            goto done;
    } else {
        memcpy(key, secret, klen);
    }
    qsort(fields, nfields, sizeof(*fields), cmp_field);
    for (int i = 0; i < SHA1_BLOCK; i++)
        pad[i] = key[i] ^ 0x36;
    if (!EVP_DigestInit_ex(md, EVP_sha1(), NULL) || !EVP_DigestUpdate(md, pad, SHA1_BLOCK))
        goto done;
    for (size_t i = 0; i < nfields; i++) {
        if (left_out(fields[i].key))
            continue;
        const char *v = fields[i].value ? fields[i].value : "null";
        if (!EVP_DigestUpdate(md, v, strlen(v)))
            goto done;
    }
    if (body_len && !EVP_DigestUpdate(md, body, body_len))
        goto done;
    if (!EVP_DigestFinal_ex(md, inner, NULL))
        goto done;
    for (int i = 0; i < SHA1_BLOCK; i++)
        pad[i] = key[i] ^ 0x5c;
    if (!EVP_DigestInit_ex(md, EVP_sha1(), NULL) || !EVP_DigestUpdate(md, pad, SHA1_BLOCK) ||
        !EVP_DigestUpdate(md, inner, SHA1_LEN) || !EVP_DigestFinal_ex(md, mac, NULL))
        goto done;
    EVP_EncodeBlock((unsigned char *)out, mac, SHA1_LEN);
    out[ACL_SIGNATURE_LEN] = 0;
    rc = 0;
done:
    OPENSSL_cleanse(key, sizeof(key));
    OPENSSL_cleanse(pad, sizeof(pad));
    EVP_MD_CTX_free(md);
    return rc;
}

bool acl_signature_equal(const char *expected, const char *given)
{
    if (!expected || !given)
        return false;
    size_t n = strlen(expected);
    if (strlen(given) != n)
        return false;
    return CRYPTO_memcmp(expected, given, n) == 0;
}
