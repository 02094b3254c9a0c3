/* codec_test_frames.h — frame builders and command comparison shared by the
 * codec unit tests. Test-only; asserts through cmocka. */
#ifndef RMQ_CODEC_TEST_FRAMES_H
#define RMQ_CODEC_TEST_FRAMES_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "remoting_command.h"

/* prefix + header + body in a malloc'd buffer (*len = total) */
uint8_t *codec_make_frame(uint8_t type, const void *hdr, size_t hdr_len, const void *body,
                          size_t body_len, size_t *len);

/* decode a JSON header text (no body); errbuf gets the reason on failure */
rmq_cmd *codec_decode_json(const char *hdr, char *errbuf, size_t errlen);

/* encode cmd; returns malloc'd frame, asserts success */
uint8_t *codec_encode(const rmq_cmd *cmd, size_t *len);

/* asserts the two commands carry the same header fields, the same non-null
 * ext entries (any order) and the same body */
void codec_assert_same_cmd(const rmq_cmd *a, const rmq_cmd *b);

/* number of ext entries with a non-NULL value */
uint32_t codec_non_null_ext(const rmq_cmd *cmd);

#endif
