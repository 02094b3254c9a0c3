/* response_peek.h — cheap extraction of code, opaque and flag from one
 * complete frame, without building an rmq_cmd. Shared by rmqbench (reading
 * responses) and baseline_server (reading requests; it frames with
 * rmq_peek_frame_size so that the ceiling does not link the codec). */
#ifndef RMQBENCH_RESPONSE_PEEK_H
#define RMQBENCH_RESPONSE_PEEK_H

#include <stddef.h>
#include <stdint.h>

typedef struct rmq_frame_peek {
    int32_t code;
    int32_t opaque;
    int32_t flag;
    uint8_t serialize_type;
} rmq_frame_peek;

/* Read the 4-byte length prefix: 1 and *frame_total set when `avail` bytes
 * hold a whole frame; 0 when more bytes are needed; -1 when the prefix is
 * impossible (length < 4, header longer than the frame, or length + 4 above
 * max_frame_bytes, as Java's decoder rejects). */
int rmq_peek_frame_size(const uint8_t *buf, size_t avail, size_t max_frame_bytes,
                        size_t *frame_total);

/* Fill *out from a complete frame. JSON headers are scanned for the top-level
 * "code", "opaque" and "flag" keys (missing flag/opaque read as 0, as Java
 * does); binary headers are read at their fixed offsets. 0, or -1 when the
 * header is not what the fast path understands (the caller may then decode
 * it fully). */
int rmq_peek_frame(const uint8_t *frame, size_t frame_total, rmq_frame_peek *out);

#endif
