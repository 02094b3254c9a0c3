/* acl_signature.c — owns the ACL 1.0 signature: the content (sorted field
 * values, then the body) streamed into HMAC-SHA1 from per-account
 * precomputed pad states (no copy of the body), and its Base64 text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "acl_signature.h"

static int cmp_field(const void *a, const void *b)
{
    /* Java's TreeMap orders by UTF-16 code units; for keys made of BMP
     * characters that is the byte order of their UTF-8 text. */
    return strcmp(((const acl_field *)a)->key, ((const acl_field *)b)->key);
}

static bool left_out(const char *key)
{
    /* first-letter test first: this runs for every field of every request */
    return (key[0] == 'S' && strcmp(key, "Signature") == 0) ||
           (key[0] == '_' && strcmp(key, "_UNIQUE_KEY_QUERY") == 0);
}

void acl_hmac_key_init(acl_hmac_key *k, const char *secret)
{
    uint8_t key[SHA1_BLOCK_BYTES] = {0}, pad[SHA1_BLOCK_BYTES];
    size_t klen = strlen(secret);
    if (klen > SHA1_BLOCK_BYTES) {
        sha1_ctx c;
        sha1_init(&c);
        sha1_update(&c, secret, klen);
        sha1_final(&c, key);
    } else {
        memcpy(key, secret, klen);
    }
    for (int i = 0; i < SHA1_BLOCK_BYTES; i++)
        pad[i] = key[i] ^ 0x36;
    sha1_init(&k->inner);
    sha1_update(&k->inner, pad, sizeof(pad));
    for (int i = 0; i < SHA1_BLOCK_BYTES; i++)
        pad[i] = key[i] ^ 0x5c;
    sha1_init(&k->outer);
    sha1_update(&k->outer, pad, sizeof(pad));
    /* no copy of the secret left on the stack */
    volatile uint8_t *v = key;
    for (size_t i = 0; i < sizeof(key); i++)
        v[i] = 0;
    v = pad;
    for (size_t i = 0; i < sizeof(pad); i++)
        v[i] = 0;
}

static void base64(const uint8_t *in, size_t n, char *out)
{
    static const char T[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        out[o++] = T[v >> 18 & 63];
        out[o++] = T[v >> 12 & 63];
        out[o++] = i + 1 < n ? T[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? T[v & 63] : '=';
    }
    out[o] = 0;
}

void acl_sign_with_key(const acl_hmac_key *k, acl_field *fields, size_t nfields, const void *body,
                       size_t body_len, char out[ACL_SIGNATURE_LEN + 1])
{
    uint8_t inner[SHA1_DIGEST_BYTES], mac[SHA1_DIGEST_BYTES];
    if (nfields > 16) {
        qsort(fields, nfields, sizeof(*fields), cmp_field);
    } else {
        /* a request has a handful of fields: insertion sort, no callback */
        for (size_t i = 1; i < nfields; i++) {
            acl_field f = fields[i];
            size_t j = i;
            for (; j > 0 && strcmp(fields[j - 1].key, f.key) > 0; j--)
                fields[j] = fields[j - 1];
            fields[j] = f;
        }
    }
    sha1_ctx c = k->inner;
    for (size_t i = 0; i < nfields; i++) {
        if (left_out(fields[i].key))
            continue;
        const char *v = fields[i].value ? fields[i].value : "null";
        sha1_update(&c, v, strlen(v));
    }
    if (body_len)
        sha1_update(&c, body, body_len);
    sha1_final(&c, inner);
    c = k->outer;
    sha1_update(&c, inner, sizeof(inner));
    sha1_final(&c, mac);
    base64(mac, sizeof(mac), out);
}

int acl_sign(const char *secret, acl_field *fields, size_t nfields, const void *body,
             size_t body_len, char out[ACL_SIGNATURE_LEN + 1])
{
    acl_hmac_key k;
    acl_hmac_key_init(&k, secret);
    acl_sign_with_key(&k, fields, nfields, body, body_len, out);
    memset(&k, 0, sizeof(k));
    return 0;
}

bool acl_signature_equal(const char *expected, const char *given)
{
    if (!expected || !given)
        return false;
    size_t n = strlen(expected);
    if (strlen(given) != n)
        return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(expected[i] ^ given[i]);
    return diff == 0;
}
