/* response_peek.c — the hot-path reader of frame prefixes and header numbers
 * for the benchmark tools. It trades generality for speed: it must never be
 * used where a full, validated decode is required (that is rmq_cmd_decode). */
#include "response_peek.h"

#include <string.h>

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

int rmq_peek_frame_size(const uint8_t *buf, size_t avail, size_t max_frame_bytes,
                        size_t *frame_total)
{
    if (avail < 8)
        return 0;
    uint32_t len = be32(buf);
    uint32_t header_len = be32(buf + 4) & 0x00FFFFFFu;
    if (len < 4 || len > 0x7FFFFFFFu || (size_t)len + 4u > max_frame_bytes || header_len > len - 4u)
        return -1;
    if (avail < (size_t)len + 4u)
        return 0;
    *frame_total = (size_t)len + 4u;
    return 1;
}

/* Parse an optionally negative decimal int32 at p (bounded by end). */
static int parse_int(const uint8_t *p, const uint8_t *end, int32_t *out)
{
    int neg = 0;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (p >= end || *p < '0' || *p > '9')
        return -1;
    int64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        v = v * 10 + (*p - '0');
        if (v > 2147483648LL)
            return -1;
        p++;
    }
    if (neg)
        v = -v;
    if (v > 2147483647LL)
        return -1;
    *out = (int32_t)v;
    return 0;
}

/* Value of top-level `"key":` in a flat scan. Ext field keys could shadow a
 * top-level key in theory; the tools' own peers never send such keys, and a
 * wrong guess is caught by the full decode rmqbench does per new code. */
static int find_int(const uint8_t *hdr, size_t len, const char *quoted_key, int32_t *out)
{
    size_t klen = strlen(quoted_key);
    const uint8_t *end = hdr + len;
    for (const uint8_t *p = hdr; p + klen < end; p++) {
        if (*p != '"' || memcmp(p, quoted_key, klen) != 0)
            continue;
        const uint8_t *v = p + klen;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        return parse_int(v, end, out);
    }
    return 1; /* absent */
}

int rmq_peek_frame(const uint8_t *frame, size_t frame_total, rmq_frame_peek *out)
{
    if (frame_total < 8)
        return -1;
    uint32_t word = be32(frame + 4);
    uint8_t type = (uint8_t)(word >> 24);
    size_t header_len = word & 0x00FFFFFFu;
    if (header_len > frame_total - 8)
        return -1;
    const uint8_t *hdr = frame + 8;
    out->serialize_type = type;
    if (type == 1) {
        if (header_len < 13)
            return -1;
        out->code = (int16_t)(((uint16_t)hdr[0] << 8) | hdr[1]);
        out->opaque = (int32_t)be32(hdr + 5);
        out->flag = (int32_t)be32(hdr + 9);
        return 0;
    }
    if (type != 0)
        return -1;
    if (find_int(hdr, header_len, "\"code\":", &out->code) != 0)
        return -1;
    out->opaque = 0;
    out->flag = 0;
    if (find_int(hdr, header_len, "\"opaque\":", &out->opaque) < 0)
        return -1;
    if (find_int(hdr, header_len, "\"flag\":", &out->flag) < 0)
        return -1;
    return 0;
}
