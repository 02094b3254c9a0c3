/* batch_body.c — decoder of the SEND_BATCH_MESSAGE body (§10.3.6): the walk
 * Java's batch encoder makes, with every length checked against the end. */
#include "batch_body.h"

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static batch_status walk(const uint8_t *body, size_t len, batch_item *items, size_t max, size_t *n)
{
    size_t at = 0, count = 0;
    while (at < len) {
        if (len - at < 20)
            return BATCH_TRUNCATED;
        int32_t flag = (int32_t)be32(body + at + 12);
        int32_t blen = (int32_t)be32(body + at + 16);
        at += 20;
        if (blen < 0)
            return BATCH_BAD_LENGTH;
        if ((size_t)blen > len - at)
            return BATCH_TRUNCATED;
        const uint8_t *b = body + at;
        at += (size_t)blen;
        if (len - at < 2)
            return BATCH_TRUNCATED;
        int16_t plen = (int16_t)((uint16_t)body[at] << 8 | body[at + 1]);
        at += 2;
        if (plen < 0)
            return BATCH_BAD_LENGTH;
        if ((size_t)plen > len - at)
            return BATCH_TRUNCATED;
        if (items) {
            if (count >= max)
                return BATCH_TOO_MANY;
            items[count] =
                (batch_item){flag, b, (size_t)blen, (const char *)body + at, (size_t)plen};
        }
        at += (size_t)plen;
        count++;
    }
    if (n)
        *n = count;
    return count ? BATCH_OK : BATCH_EMPTY;
}

batch_status batch_body_decode(const uint8_t *body, size_t len, batch_item *items, size_t max,
                               size_t *n)
{
    *n = 0;
    return walk(body, len, items, max, n);
}

long batch_body_count(const uint8_t *body, size_t len)
{
    size_t n = 0;
    return walk(body, len, NULL, 0, &n) == BATCH_OK ? (long)n : -1;
}

const char *batch_status_remark(batch_status st)
{
    switch (st) {
    case BATCH_TRUNCATED:
        return "java.nio.BufferUnderflowException, java.nio.Buffer.nextGetIndex(Buffer.java:506)";
    case BATCH_BAD_LENGTH:
        return "java.lang.IllegalArgumentException, java.nio.Buffer.position(Buffer.java:244)";
    case BATCH_EMPTY:
    case BATCH_TOO_MANY:
    case BATCH_OK:
    default: return "the message is illegal, maybe msg body or properties length not matched.";
    }
}
