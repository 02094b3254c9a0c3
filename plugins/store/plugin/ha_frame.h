/* ha_frame.h — the HA stream's records (protocol-ha.md §2.2, §2.3) and the
 * reader of the master's transfer frames. No dependencies: the fuzz target
 * builds it alone. */
#ifndef STORE_HA_FRAME_H
#define STORE_HA_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define HA_HEADER 12               /* phyOffset int64 BE + bodySize int32 BE */
#define HA_MAX_BODY (4194304 - 12) /* a Java slave's 4 MiB buffer */

/* ---- frame reader (ha_frame.c): slave side of §2.3, any byte stream ---- */
/* buf[head, len) is unconsumed: a consumed frame only moves head, and what
 * is left moves to the front only when room runs short (moving the rest of
 * a 4 MiB read after each 32 KiB frame made catch-up quadratic) */
typedef struct ha_frame_reader {
    uint8_t *buf;
    size_t cap, len, head;
} ha_frame_reader;
typedef enum { HA_FRAME_MORE = 0, HA_FRAME_OK = 1, HA_FRAME_BAD = -1 } ha_frame_rc;
/* 0, or -1 when the buffer cannot be allocated. */
int ha_frame_reader_init(ha_frame_reader *r, size_t cap);
void ha_frame_reader_free(ha_frame_reader *r);
/* Forget what is buffered (a new connection). */
void ha_frame_reader_reset(ha_frame_reader *r);
/* Bytes received and not consumed. */
size_t ha_frame_reader_pending(const ha_frame_reader *r);
/* Room to receive into (may be 0 when a frame fills the buffer: BAD). */
uint8_t *ha_frame_reader_space(ha_frame_reader *r, size_t *room);
void ha_frame_reader_added(ha_frame_reader *r, size_t n);
/* The next whole frame: OK with *phys, *body, *len (valid until consumed),
 * MORE when incomplete, BAD when its size is negative or exceeds max_body. */
ha_frame_rc ha_frame_next(ha_frame_reader *r, size_t max_body, int64_t *phys, const uint8_t **body,
                          int32_t *len);
void ha_frame_consume(ha_frame_reader *r);
/* Big-endian helpers */
void ha_put_be64(uint8_t *p, int64_t v);
int64_t ha_get_be64(const uint8_t *p);

#endif
