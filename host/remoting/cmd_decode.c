/* cmd_decode.c — turns one complete frame into an rmq_cmd: validates the
 * prefix, sizes one allocation from the frame, runs the header decoder for
 * the serialize type and copies the body — or leaves it where it is: in a
 * large frame's own buffer (borrowed, released with the command) or in the
 * caller's read buffer (in-frame, for a request handled on the spot). */
#include <stdbool.h>
#include <string.h>

#include "cmd_internal.h"

#define EXT_SLOTS_MAX 64u
#define IN_FRAME_ROOM_MAX (16u * 1024u)

/* Strings decoded from a header never need more bytes than the header has
 * (plus a NUL per string, which a delimiter or length word pays for), so this
 * keeps the typical command in its single malloc. */
static size_t arena_hint(size_t header_len, size_t body_len)
{
    size_t slots = header_len / 6 + 2;
    if (slots > EXT_SLOTS_MAX)
        slots = EXT_SLOTS_MAX;
    return body_len + header_len + header_len / 3 + 64 + slots * sizeof(rmq_ext_field);
}

typedef enum body_mode { BODY_COPY, BODY_BORROWED, BODY_IN_FRAME } body_mode;

static rmq_cmd *decode_frame(const uint8_t *frame, size_t frame_total, body_mode mode,
                             rmq_body_free_fn body_free, void *body_ud, bool *body_taken,
                             char *errbuf, size_t errlen)
{
    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (!frame || frame_total < 8) {
        rmq_codec_fail(errbuf, errlen, "frame of %zu bytes is shorter than its 8-byte prefix",
                       frame_total);
        return NULL;
    }
    size_t total = 0;
    const char *reason = NULL;
    rmq_frame_status st =
        rmq_frame_check_ex(frame, frame_total, SIZE_MAX, &total, &reason, errbuf, errlen);
    (void)reason;
    if (st == RMQ_FRAME_INVALID)
        return NULL; /* errbuf already names the problem */
    if (st != RMQ_FRAME_READY || total != frame_total) {
        rmq_codec_fail(errbuf, errlen, "frame_total %zu does not match length field %u + 4",
                       frame_total, (unsigned)rmq_be32(frame));
        return NULL;
    }
    uint32_t word = rmq_be32(frame + 4);
    uint8_t type = (uint8_t)(word >> 24);
    size_t header_len = word & 0x00FFFFFFu;
    size_t body_len = frame_total - 8 - header_len;
    const uint8_t *hdr = frame + 8;

    /* A borrowed body needs no room. An in-frame one keeps room (unless
     * large) for rmq_cmd_own_body: a request queued on an executor copies it
     * there without a second malloc, and a request handled inline never
     * touches those bytes. */
    size_t room = body_len;
    if (mode == BODY_BORROWED || (mode == BODY_IN_FRAME && body_len > IN_FRAME_ROOM_MAX))
        room = 0;
    rmq_cmd *cmd = rmq_cmd_alloc_with_arena(arena_hint(header_len, room));
    if (!cmd) {
        rmq_codec_fail(errbuf, errlen, "out of memory decoding a %zu-byte frame", frame_total);
        return NULL;
    }
    cmd->serialize_type = type;
    int rc = type == RMQ_SERIALIZE_JSON
                 ? rmq_header_json_decode(cmd, hdr, header_len, errbuf, errlen)
                 : rmq_header_binary_decode(cmd, hdr, header_len, errbuf, errlen);
    if (rc == 0 && body_len && mode == BODY_IN_FRAME) {
        cmd->body = hdr + header_len;
        cmd->body_len = (uint32_t)body_len; /* frame_check keeps it below 2 GiB */
        cmd->body_in_frame = true;
    } else if (rc == 0 && body_len &&
               rmq_cmd_set_body(cmd, hdr + header_len, body_len, body_free, body_ud)) {
        rc = rmq_codec_fail(errbuf, errlen, "out of memory copying a %zu-byte body", body_len);
    }
    if (rc == 0 && body_len && mode == BODY_BORROWED)
        *body_taken = true;
    if (rc != 0) {
        rmq_cmd_free(cmd);
        return NULL;
    }
    return cmd;
}

rmq_cmd *rmq_cmd_decode(const uint8_t *frame, size_t frame_total, char *errbuf, size_t errlen)
{
    return decode_frame(frame, frame_total, BODY_COPY, NULL, NULL, NULL, errbuf, errlen);
}

rmq_cmd *rmq_cmd_decode_in_place(const uint8_t *frame, size_t frame_total, char *errbuf,
                                 size_t errlen)
{
    return decode_frame(frame, frame_total, BODY_IN_FRAME, NULL, NULL, NULL, errbuf, errlen);
}

rmq_cmd *rmq_cmd_decode_borrowed(const uint8_t *frame, size_t frame_total,
                                 rmq_body_free_fn body_free, void *body_ud, bool *body_taken,
                                 char *errbuf, size_t errlen)
{
    *body_taken = false;
    return decode_frame(frame, frame_total, BODY_BORROWED, body_free, body_ud, body_taken, errbuf,
                        errlen);
}
