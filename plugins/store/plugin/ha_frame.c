/* ha_frame.c — reading the master's transfer frames (protocol-ha.md §2.3)
 * out of an arbitrary byte stream: 12-byte header (phyOffset int64 BE,
 * bodySize int32 BE) then the body. Kept apart so the fuzz target drives
 * exactly what the slave runs. */
#include <stdlib.h>
#include <string.h>

#include "ha_frame.h"

void ha_put_be64(uint8_t *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)u;
        u >>= 8;
    }
}

int64_t ha_get_be64(const uint8_t *p)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u = u << 8 | p[i];
    return (int64_t)u;
}

int ha_frame_reader_init(ha_frame_reader *r, size_t cap)
{
    r->buf = malloc(cap);
    r->cap = r->buf ? cap : 0;
    r->len = r->head = 0;
    return r->buf ? 0 : -1;
}

void ha_frame_reader_free(ha_frame_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->cap = r->len = r->head = 0;
}

void ha_frame_reader_reset(ha_frame_reader *r)
{
    r->len = r->head = 0;
}

size_t ha_frame_reader_pending(const ha_frame_reader *r)
{
    return r->len - r->head;
}

/* Below this much room (a quarter of the buffer, at most 256 KiB) the
 * unconsumed rest moves to the front: a read then takes many frames at
 * once, and a move copies about one partial frame per that many bytes. */
#define HA_COMPACT_ROOM (256 * 1024)

uint8_t *ha_frame_reader_space(ha_frame_reader *r, size_t *room)
{
    size_t low = r->cap / 4 < HA_COMPACT_ROOM ? r->cap / 4 : HA_COMPACT_ROOM;
    if (r->head > 0 && (r->head == r->len || r->cap - r->len < low)) {
        memmove(r->buf, r->buf + r->head, r->len - r->head);
        r->len -= r->head;
        r->head = 0;
    }
    *room = r->cap - r->len;
    return r->buf + r->len;
}

void ha_frame_reader_added(ha_frame_reader *r, size_t n)
{
    r->len += n;
}

ha_frame_rc ha_frame_next(ha_frame_reader *r, size_t max_body, int64_t *phys, const uint8_t **body,
                          int32_t *len)
{
    size_t have = r->len - r->head;
    if (have < HA_HEADER)
        return HA_FRAME_MORE;
    const uint8_t *p = r->buf + r->head;
    int32_t n = (int32_t)((uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 |
                          (uint32_t)p[11]);
    int64_t off = ha_get_be64(p);
    if (n < 0 || (size_t)n > max_body || (size_t)n + HA_HEADER > r->cap || off < 0)
        return HA_FRAME_BAD;
    if (have < HA_HEADER + (size_t)n)
        return HA_FRAME_MORE;
    *phys = off;
    *body = p + HA_HEADER;
    *len = n;
    return HA_FRAME_OK;
}

void ha_frame_consume(ha_frame_reader *r)
{
    size_t have = r->len - r->head;
    if (have < HA_HEADER)
        return;
    const uint8_t *p = r->buf + r->head;
    size_t n = (size_t)((uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 |
                        (uint32_t)p[11]);
    size_t used = HA_HEADER + n;
    if (used > have)
        used = have;
    r->head += used;
    if (r->head == r->len)
        r->len = r->head = 0;
}
