/* frame_file.h — reading a recorded frame file (a .bin of tests/vectors: one
 * frame with its length prefix) whole, for rmqhost-replay and the tests. */
#ifndef RMQ_FRAME_FILE_H
#define RMQ_FRAME_FILE_H

#include <stddef.h>

/* The file's bytes (malloc'd, caller frees) and their count in *len; NULL
 * with *len = 0 when it cannot be read or is empty. */
unsigned char *rmq_frame_file_read(const char *path, size_t *len);

#endif
