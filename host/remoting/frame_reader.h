/* frame_reader.h — blocking, buffered reads of whole frames from a client
 * socket, for tools and the test kit (the daemon itself reads through
 * libuv). The one part of the codec library that touches a socket. */
#ifndef RMQHOST_FRAME_READER_H
#define RMQHOST_FRAME_READER_H

#include <stddef.h>
#include <stdint.h>

#include "remoting_command.h"

typedef struct rmq_frame_reader {
    uint8_t *buf; /* bytes received and not yet decoded */
    size_t len, cap;
    size_t max_frame_bytes;
} rmq_frame_reader;

void rmq_frame_reader_init(rmq_frame_reader *r, size_t max_frame_bytes);
void rmq_frame_reader_free(rmq_frame_reader *r); /* drops buffered bytes; re-usable after init */

/* The clock deadlines are given in (CLOCK_MONOTONIC, ms). */
uint64_t rmq_frame_reader_now_ms(void);

/* The next frame from fd, decoded (frames that do not decode are skipped);
 * NULL when none is complete by deadline_ms, on EOF, a socket error or an
 * invalid frame (the stream cannot be resynchronised). */
rmq_cmd *rmq_frame_reader_next(rmq_frame_reader *r, int fd, uint64_t deadline_ms);

#endif
