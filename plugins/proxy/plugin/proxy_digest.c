/* proxy_digest.c — the body digest of a message handed to a 5.x client:
 * MD5 in upper-case hex, what Java's proxy puts in SystemProperties'
 * body_digest and what the clients check before consuming. */
#include <openssl/evp.h>

#include "proxy_message.h"

void proxy_md5_hex(const uint8_t *body, size_t len, char *out)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    out[0] = '\0';
    if (EVP_Digest(body, len, md, &n, EVP_md5(), NULL) != 1 || n != 16)
        return;
    /* by table: 16 snprintf calls were a visible share of a Receive's CPU */
    static const char hex[] = "0123456789ABCDEF";
    for (unsigned int i = 0; i < n; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[2 * n] = '\0';
}
