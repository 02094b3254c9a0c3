/* grpc_wire.h — the gRPC layer above HTTP/2, as plain functions with no I/O:
 * length-prefixed messages (1 byte compressed flag + 4 byte big-endian
 * length + bytes), the grpc-timeout header and grpc-message's
 * percent-encoding. The HTTP/2 session (grpc_h2.c) and the fuzz targets use
 * them; nothing here knows about connections or plugins. */
#ifndef RMQHOST_GRPC_WIRE_H
#define RMQHOST_GRPC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* gRPC status codes (grpc/doc/statuscodes.md). */
enum {
    GRPC_STATUS_OK = 0,
    GRPC_STATUS_CANCELLED = 1,
    GRPC_STATUS_UNKNOWN = 2,
    GRPC_STATUS_INVALID_ARGUMENT = 3,
    GRPC_STATUS_DEADLINE_EXCEEDED = 4,
    GRPC_STATUS_NOT_FOUND = 5,
    GRPC_STATUS_RESOURCE_EXHAUSTED = 8,
    GRPC_STATUS_UNIMPLEMENTED = 12,
    GRPC_STATUS_INTERNAL = 13,
    GRPC_STATUS_UNAVAILABLE = 14,
};

#define GRPC_PREFIX_LEN 5

/* Reassembles messages from DATA payloads that may cut them anywhere. */
typedef struct grpc_msg_reader {
    uint8_t *buf;
    size_t len, cap;
    size_t max_msg; /* a longer declared length is an error */
} grpc_msg_reader;

typedef enum grpc_read_status {
    GRPC_READ_MESSAGE = 1,     /* *msg, *msg_len: one whole message */
    GRPC_READ_NEED_MORE = 0,   /* everything buffered is an incomplete message */
    GRPC_READ_TOO_LARGE = -1,  /* declared length above max_msg */
    GRPC_READ_COMPRESSED = -2, /* compressed flag set: we announce no encodings */
    GRPC_READ_NOMEM = -3,
} grpc_read_status;

void grpc_msg_reader_init(grpc_msg_reader *r, size_t max_msg);
void grpc_msg_reader_free(grpc_msg_reader *r);
/* Append received bytes. 0 or GRPC_READ_NOMEM. */
int grpc_msg_reader_feed(grpc_msg_reader *r, const uint8_t *data, size_t len);
/* Look at the next whole message; it stays at the front (valid until the
 * next feed) until grpc_msg_reader_consume(r, *msg_len) drops it. */
grpc_read_status grpc_msg_reader_next(grpc_msg_reader *r, const uint8_t **msg, size_t *msg_len);
void grpc_msg_reader_consume(grpc_msg_reader *r, size_t msg_len);
/* Bytes of an incomplete message left at end of stream. */
size_t grpc_msg_reader_pending(const grpc_msg_reader *r);

/* Write the 5-byte prefix of an uncompressed message of `len` bytes. */
void grpc_msg_prefix(uint8_t out[GRPC_PREFIX_LEN], uint32_t len);

/* grpc-timeout: 1-8 ASCII digits and a unit H M S m u n. true with the
 * value in milliseconds (rounded up, at least 1 for a positive value). */
bool grpc_timeout_parse(const char *v, size_t len, uint64_t *ms);

/* grpc-message percent-encoding: bytes outside 0x20-0x7E and '%' become
 * %XX. Writes at most cap - 1 bytes and a NUL; returns the length written. */
size_t grpc_message_encode(const char *msg, char *out, size_t cap);

#endif
