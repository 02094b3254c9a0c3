/* grpc_wire.c — length-prefixed message framing, grpc-timeout and
 * grpc-message encoding (grpc/doc/PROTOCOL-HTTP2.md). */
#include "grpc_wire.h"

#include <stdlib.h>
#include <string.h>

void grpc_msg_reader_init(grpc_msg_reader *r, size_t max_msg)
{
    memset(r, 0, sizeof(*r));
    r->max_msg = max_msg;
}

void grpc_msg_reader_free(grpc_msg_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->len = r->cap = 0;
}

int grpc_msg_reader_feed(grpc_msg_reader *r, const uint8_t *data, size_t len)
{
    if (len == 0)
        return 0;
    if (r->len + len > r->cap) {
        size_t ncap = r->cap ? r->cap : 256;
        while (ncap < r->len + len)
            ncap *= 2;
        uint8_t *nb = realloc(r->buf, ncap);
        if (!nb)
            return GRPC_READ_NOMEM;
        r->buf = nb;
        r->cap = ncap;
    }
    memcpy(r->buf + r->len, data, len);
    r->len += len;
    return 0;
}

grpc_read_status grpc_msg_reader_next(grpc_msg_reader *r, const uint8_t **msg, size_t *msg_len)
{
    if (r->len < GRPC_PREFIX_LEN)
        return GRPC_READ_NEED_MORE;
    uint8_t flag = r->buf[0];
    uint32_t n = ((uint32_t)r->buf[1] << 24) | ((uint32_t)r->buf[2] << 16) |
                 ((uint32_t)r->buf[3] << 8) | r->buf[4];
    if (flag != 0)
        return GRPC_READ_COMPRESSED;
    if (n > r->max_msg)
        return GRPC_READ_TOO_LARGE;
    if (r->len - GRPC_PREFIX_LEN < n)
        return GRPC_READ_NEED_MORE;
    *msg = r->buf + GRPC_PREFIX_LEN;
    *msg_len = n;
    return GRPC_READ_MESSAGE;
}

size_t grpc_msg_reader_pending(const grpc_msg_reader *r)
{
    return r->len;
}

void grpc_msg_reader_consume(grpc_msg_reader *r, size_t msg_len)
{
    size_t used = GRPC_PREFIX_LEN + msg_len;
    if (used > r->len)
        used = r->len;
    memmove(r->buf, r->buf + used, r->len - used);
    r->len -= used;
}

void grpc_msg_prefix(uint8_t out[GRPC_PREFIX_LEN], uint32_t len)
{
    out[0] = 0;
    out[1] = (uint8_t)(len >> 24);
    out[2] = (uint8_t)(len >> 16);
    out[3] = (uint8_t)(len >> 8);
    out[4] = (uint8_t)len;
}

bool grpc_timeout_parse(const char *v, size_t len, uint64_t *ms)
{
    if (len < 2 || len > 9)
        return false;
    uint64_t n = 0;
    for (size_t i = 0; i + 1 < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return false;
        n = n * 10 + (uint64_t)(v[i] - '0');
    }
    uint64_t out;
    switch (v[len - 1]) {
    case 'H': out = n * 3600000u; break;
    case 'M': out = n * 60000u; break;
    case 'S': out = n * 1000u; break;
    case 'm': out = n; break;
    case 'u': out = (n + 999u) / 1000u; break;
    case 'n': out = (n + 999999u) / 1000000u; break;
    default: return false;
    }
    *ms = out;
    return true;
}

size_t grpc_message_encode(const char *msg, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    if (cap == 0)
        return 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
        if (*p >= 0x20 && *p <= 0x7E && *p != '%') {
            if (o + 1 >= cap)
                break;
            out[o++] = (char)*p;
        } else {
            if (o + 3 >= cap)
                break;
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = '\0';
    return o;
}
