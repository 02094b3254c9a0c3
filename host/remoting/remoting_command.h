/* remoting_command.h — the in-memory RocketMQ remoting command and its codec.
 * Owns decoding of one frame (JSON or ROCKETMQ binary header) into an
 * rmq_cmd and encoding an rmq_cmd back into a frame. Knows nothing about
 * sockets, threads or plugins. Spec: protocol.md §1, §2. */
#ifndef RMQHOST_REMOTING_COMMAND_H
#define RMQHOST_REMOTING_COMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RMQ_SERIALIZE_JSON 0
#define RMQ_SERIALIZE_ROCKETMQ 1

#define RMQ_FLAG_RESPONSE 0x1
#define RMQ_FLAG_ONEWAY 0x2

/* Language byte values (protocol.md §2.6). Unknown names decode to OTHER. */
#define RMQ_LANG_JAVA 0
#define RMQ_LANG_OTHER 7

/* Default frame limit: largest accepted `length` field is max - 4
 * (Netty compares length + 4 with maxFrameLength, protocol.md §1.2). */
#define RMQ_DEFAULT_MAX_FRAME_BYTES (16u * 1024u * 1024u)

/* Version written in every command the host builds (4.9.8 CURRENT_VERSION). */
#define RMQ_HOST_CMD_VERSION 409

typedef void (*rmq_body_free_fn)(void *ud, const void *data);

typedef struct rmq_ext_field {
    char *key;   /* NUL-terminated, never NULL */
    char *value; /* NUL-terminated; NULL = present key with null value
                    (binary header empty value, protocol.md §2.3) */
} rmq_ext_field;

/* One remoting command: a request, a response or a server-initiated request.
 * All strings live in the command's own arena and die with it. */
typedef struct rmq_cmd {
    int32_t code;
    int32_t language; /* 0..255 byte value; unknown JSON names → RMQ_LANG_OTHER */
    int32_t version;
    int32_t opaque;
    int32_t flag;
    char *remark; /* NULL = absent */
    bool has_ext; /* extFields present (possibly empty: JSON "{}") */
    rmq_ext_field *ext;
    uint32_t ext_count;
    uint32_t ext_cap;
    uint8_t serialize_type; /* type the command arrived in / will be sent in */

    const uint8_t *body; /* NULL when bodyLength == 0 */
    uint32_t body_len;
    rmq_body_free_fn body_free; /* called once when the command is freed */
    void *body_free_ud;
    /* body points into the buffer the frame was decoded from
     * (rmq_cmd_decode_in_place): valid only while that buffer is untouched */
    bool body_in_frame;

    /* arena: owned string storage, chained blocks */
    struct rmq_arena_block *arena;
    /* incoming requests: the peer's "ip:port", owned by the request that
     * carries this command (set at dispatch); NULL otherwise */
    const char *peer;
} rmq_cmd;

/* Result of looking at the start of a receive buffer. */
typedef enum {
    RMQ_FRAME_NEED_MORE = 0, /* not enough bytes yet */
    RMQ_FRAME_READY = 1,     /* *frame_total bytes (incl. 4-byte prefix) form a frame */
    RMQ_FRAME_INVALID = -1   /* connection must be closed; *reason says why */
} rmq_frame_status;

/* Inspect `avail` bytes at `buf`. max_frame_bytes bounds length+4 as Java
 * does. Never reads past buf+avail. */
rmq_frame_status rmq_frame_check(const uint8_t *buf, size_t avail, size_t max_frame_bytes,
                                 size_t *frame_total, const char **reason);

/* Same, but on INVALID formats the reason with the offending numbers into
 * errbuf (e.g. "frame length 99999999 exceeds max_frame_bytes 16777216") and
 * points *reason at errbuf. errbuf NULL = static reasons as above. */
rmq_frame_status rmq_frame_check_ex(const uint8_t *buf, size_t avail, size_t max_frame_bytes,
                                    size_t *frame_total, const char **reason, char *errbuf,
                                    size_t errlen);

/* Decode one complete frame (`frame` points at the 4-byte length prefix,
 * `frame_total` as returned by rmq_frame_check). Returns a new command that
 * owns copies of everything (the frame buffer may be reused at once), or NULL
 * with a static or errbuf-held reason in *reason. Accepts: keys in any order,
 * unknown keys, ext values that are strings/numbers/booleans/null, language as
 * name or number, trailing whitespace/newline after the JSON header. */
rmq_cmd *rmq_cmd_decode(const uint8_t *frame, size_t frame_total, char *errbuf, size_t errlen);
/* Same, but the body is not copied: the command points into `frame` and
 * calls body_free(body_ud, body) when freed — *body_taken says so (false when
 * the frame had no body or decoding failed: the frame stays the caller's).
 * For large frames read straight into a buffer of their own. */
rmq_cmd *rmq_cmd_decode_borrowed(const uint8_t *frame, size_t frame_total,
                                 rmq_body_free_fn body_free, void *body_ud, bool *body_taken,
                                 char *errbuf, size_t errlen);
/* Same, but the body stays in `frame` and nobody is told when the command is
 * freed (body_in_frame): for a request handled while the caller's read buffer
 * stays as it is. Before the command outlives that, the caller either copies
 * the body (rmq_cmd_own_body) or keeps the buffer alive for it
 * (rmq_cmd_body_keep). */
rmq_cmd *rmq_cmd_decode_in_place(const uint8_t *frame, size_t frame_total, char *errbuf,
                                 size_t errlen);
/* An in-frame body copied into the command's arena (no-op otherwise). 0 or
 * -ENOMEM (the body is then still in the frame). */
int rmq_cmd_own_body(rmq_cmd *cmd);
/* An in-frame body left where it is, now released with free_fn(ud, body)
 * when the command is freed: the caller handed the buffer's lifetime over.
 * No-op for a body that is not in-frame (returns false). */
bool rmq_cmd_body_keep(rmq_cmd *cmd, rmq_body_free_fn free_fn, void *free_ud);
/* Decode details: missing JSON keys keep Java's defaults (version 0, not the
 * host's); a repeated key (top level or ext) keeps the last value; a JSON
 * null ext value is kept as key with NULL value. Binary: empty remark and
 * empty ext values decode as NULL, entries with an empty key are dropped. The
 * whole command, strings and body live in one allocation for typical frames. */

/* New empty command (code 0, language JAVA, version RMQ_HOST_CMD_VERSION,
 * serialize JSON). Returns NULL on OOM. */
rmq_cmd *rmq_cmd_new(void);

/* New response for `req`: flag RESPONSE, same opaque, same serialize type,
 * version RMQ_HOST_CMD_VERSION, language JAVA, remark copied if non-NULL. */
rmq_cmd *rmq_cmd_new_response(const rmq_cmd *req, int32_t code, const char *remark);

void rmq_cmd_free(rmq_cmd *cmd);

/* Arena copy helpers; return NULL on OOM. */
char *rmq_cmd_strdup(rmq_cmd *cmd, const char *s);
char *rmq_cmd_strndup(rmq_cmd *cmd, const char *s, size_t n);

/* Set remark (copied; NULL clears). 0 or -ENOMEM. */
int rmq_cmd_set_remark(rmq_cmd *cmd, const char *remark);

/* Ext fields. get returns NULL when absent or null-valued. set copies both
 * and replaces an existing key in place (the JSON encoder writes entries in
 * insertion order); value NULL removes the key. 0, -ENOMEM, or -EINVAL for a
 * NULL cmd/key. */
const char *rmq_cmd_ext_get(const rmq_cmd *cmd, const char *key);
int rmq_cmd_ext_set(rmq_cmd *cmd, const char *key, const char *value);

/* Body. If free_fn is NULL the bytes are copied into the arena; otherwise the
 * command borrows `data` and calls free_fn(ud, data) when freed (or when the
 * body is replaced). len 0 = no body (a non-NULL data with free_fn is then
 * released at once). 0 or -ENOMEM. */
int rmq_cmd_set_body(rmq_cmd *cmd, const void *data, size_t len, rmq_body_free_fn free_fn,
                     void *free_ud);

/* Encoding. The frame is written to a caller buffer: rmq_cmd_encoded_size()
 * gives the exact size (4-byte prefix included) for cmd->serialize_type;
 * rmq_cmd_encode_header() writes prefix + header only (the body follows and
 * may be sent from its own buffer). Both return 0 on failure (e.g. binary
 * code/version outside int16). JSON output: keys alphabetical, remark and
 * extFields omitted when absent, ext values always strings, fastjson
 * escaping (protocol.md §2.2). */
/* rmq_cmd_header_size: header bytes only (no 8-byte prefix, no body). */
size_t rmq_cmd_header_size(const rmq_cmd *cmd);
size_t rmq_cmd_encoded_size(const rmq_cmd *cmd);
size_t rmq_cmd_encode_header(const rmq_cmd *cmd, uint8_t *out, size_t out_cap);
/* Whole frame (header + body) into out; returns bytes written or 0. */
size_t rmq_cmd_encode(const rmq_cmd *cmd, uint8_t *out, size_t out_cap);
/* A cheap upper bound of rmq_cmd_encoded_size() (strlen of each string, no
 * escaping scan), so a caller can reserve once and encode in one pass:
 * rmq_cmd_encode() into a buffer of this many bytes succeeds whenever the
 * command is encodable at all. May exceed the exact size by up to 6x the
 * string bytes plus a few hundred; 0 when the command surely cannot be
 * encoded (NULL, unknown serialize type, body too long for the frame). */
size_t rmq_cmd_encoded_size_bound(const rmq_cmd *cmd);

/* Language name for a byte value ("JAVA", "CPP", ... or "OTHER"). */
const char *rmq_language_name(int32_t language);

#endif
