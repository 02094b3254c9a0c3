/* acl_grpc_header.c — owns reading a 5.x client's `authorization` metadata
 * with Java's splitting rules (a space after the method, comma-separated
 * key=value items trimmed, trailing empty items dropped as String.split
 * does) and checking its hex signature against the account's key. */
#include <stdio.h>
#include <string.h>

#include "acl_grpc_header.h"

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* commons-codec Hex.decodeHex: odd length first, then the first bad digit. */
static int decode_hex(const char *s, size_t n, acl_grpc_header *h, char *err, size_t errlen)
{
    if (n % 2) {
        snprintf(err, errlen, "Odd number of characters.");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (hex_value(s[i]) < 0) {
            snprintf(err, errlen, "Illegal hexadecimal character %c at index %zu", s[i], i);
            return -1;
        }
    h->signature_len = n / 2;
    for (size_t i = 0; i < n / 2 && i < ACL_GRPC_SIG_MAX; i++)
        h->signature[i] = (uint8_t)(hex_value(s[2 * i]) << 4 | hex_value(s[2 * i + 1]));
    return 0;
}

static bool is_blank(char c)
{
    return (unsigned char)c <= ' '; /* String.trim */
}

/* One trimmed "key=value" item [b, e). */
static int parse_item(const char *b, const char *e, acl_grpc_header *h, char *err, size_t errlen)
{
    while (b < e && is_blank(*b))
        b++;
    while (e > b && is_blank(e[-1]))
        e--;
    const char *eq = memchr(b, '=', (size_t)(e - b));
    if (!eq) {
        snprintf(err, errlen, "authorization keyValues length is incorrect, actual length=1");
        return -1;
    }
    size_t klen = (size_t)(eq - b);
    const char *v = eq + 1;
    size_t vlen = (size_t)(e - v);
    if (klen == 10 && memcmp(b, "Credential", 10) == 0) {
        size_t cut = 0;
        while (cut < vlen && v[cut] != '/')
            cut++;
        /* "a/b".split("/")[0]; a value of slashes only splits into nothing */
        bool only_slashes = vlen > 0 && cut == 0;
        for (size_t i = 0; only_slashes && i < vlen; i++)
            only_slashes = v[i] == '/';
        if (only_slashes) {
            snprintf(err, errlen, "authorization credential length is incorrect, actual length=0");
            return -1;
        }
        if (cut >= sizeof(h->access_key))
            cut = sizeof(h->access_key) - 1;
        memcpy(h->access_key, v, cut);
        h->access_key[cut] = '\0';
        h->has_key = true;
    } else if (klen == 9 && memcmp(b, "Signature", 9) == 0) {
        if (decode_hex(v, vlen, h, err, errlen) != 0)
            return -1;
        h->has_signature = true;
    }
    return 0;
}

int acl_grpc_header_parse(const char *text, acl_grpc_header *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof(*h));
    const char *sp = text ? strchr(text, ' ') : NULL;
    if (!sp) {
        snprintf(err, errlen, "authorization header is incorrect");
        return -1;
    }
    const char *p = sp + 1;
    const char *end = p + strlen(p);
    while (end > p && end[-1] == ',') /* trailing empty items are dropped */
        end--;
    while (p <= end) {
        const char *c = memchr(p, ',', (size_t)(end - p));
        const char *e = c ? c : end;
        if (parse_item(p, e, h, err, errlen) != 0)
            return -1;
        if (!c)
            break;
        p = c + 1;
    }
    return 0;
}

bool acl_grpc_signature_ok(const acl_hmac_key *k, const acl_grpc_header *h, const char *content)
{
    if (!h->has_signature || h->signature_len != SHA1_DIGEST_BYTES || !content)
        return false;
    uint8_t inner[SHA1_DIGEST_BYTES], mac[SHA1_DIGEST_BYTES];
    sha1_ctx c = k->inner;
    sha1_update(&c, content, strlen(content));
    sha1_final(&c, inner);
    c = k->outer;
    sha1_update(&c, inner, sizeof(inner));
    sha1_final(&c, mac);
    unsigned char diff = 0;
    for (size_t i = 0; i < SHA1_DIGEST_BYTES; i++)
        diff |= (unsigned char)(mac[i] ^ h->signature[i]);
    return diff == 0;
}
