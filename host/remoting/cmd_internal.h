/* cmd_internal.h — what the codec's .c files share and nobody outside
 * host/remoting/ may include: arena allocation, the raw ext insert used by the
 * decoders, error formatting and a bounded output writer. */
#ifndef RMQHOST_REMOTING_CMD_INTERNAL_H
#define RMQHOST_REMOTING_CMD_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "remoting_command.h"

/* A command plus a first arena block of at least arena_hint bytes, in one
 * malloc. Fields take the rmq_cmd_new() defaults except version = 0 (the
 * default a decoder must keep when the peer sends none). */
rmq_cmd *rmq_cmd_alloc_with_arena(size_t arena_hint);

/* `size` bytes aligned for any type, from the arena; NULL on OOM. */
void *rmq_arena_alloc(rmq_cmd *cmd, size_t size);

/* `size` unaligned bytes (strings, bodies); NULL on OOM. */
char *rmq_arena_alloc_str(rmq_cmd *cmd, size_t size);

/* Arena position to return to when a speculative decode gives up. Rewinding
 * reclaims the bytes only if no block was added since; otherwise they stay
 * allocated (still freed with the command), so rewinding is always safe once
 * nothing points into them. */
typedef struct rmq_arena_mark {
    const struct rmq_arena_block *head;
    size_t used;
} rmq_arena_mark;
rmq_arena_mark rmq_arena_get_mark(const rmq_cmd *cmd);
void rmq_arena_rewind(rmq_cmd *cmd, rmq_arena_mark mark);

/* Make room for at least `cap` ext entries. 0 or -ENOMEM. */
int rmq_cmd_ext_reserve(rmq_cmd *cmd, uint32_t cap);

/* Decoder insert: key/value already live in the arena (value may be NULL for
 * a JSON null or binary empty value). A repeated key replaces the earlier
 * value in place (Java HashMap put: last wins). 0 or -ENOMEM. */
int rmq_cmd_ext_put_owned(rmq_cmd *cmd, char *key, char *value);
/* The same for a key known to be absent (no search). */
int rmq_cmd_ext_append_owned(rmq_cmd *cmd, char *key, char *value);

/* Language byte for a name of `len` bytes; unknown names give OTHER. */
int32_t rmq_language_from_name(const char *name, size_t len);

/* strlen(rmq_language_name(language)), without the strlen. */
size_t rmq_language_name_len(int32_t language);

/* snprintf into errbuf when there is one; always returns -1 so callers can
 * `return rmq_codec_fail(...)`. */
int rmq_codec_fail(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Header codecs: decode `len` header bytes into cmd (0 or -1 with errbuf
 * set); encode into w (which may be counting only). */
int rmq_header_json_decode(rmq_cmd *cmd, const uint8_t *hdr, size_t len, char *errbuf,
                           size_t errlen);

/* The JSON decoder's two halves, exposed so tests can hold them against each
 * other. compact: the layouts real clients send (compact, known keys once
 * each, no escapes); 0 when it decoded the whole header, 1 when anything
 * surprised it, in which case cmd and its arena are as they were. general:
 * every form the host accepts, with reasons for the rest. */
int rmq_header_json_decode_compact(rmq_cmd *cmd, const uint8_t *hdr, size_t len);
int rmq_header_json_decode_general(rmq_cmd *cmd, const uint8_t *hdr, size_t len, char *errbuf,
                                   size_t errlen);
int rmq_header_binary_decode(rmq_cmd *cmd, const uint8_t *hdr, size_t len, char *errbuf,
                             size_t errlen);

/* Output sink: with buf == NULL it only counts, so one routine both sizes and
 * writes a header and the two can never disagree. */
typedef struct rmq_out {
    uint8_t *buf;
    size_t cap;
    size_t len;
    int failed; /* buffer too small, or a value not representable */
} rmq_out;

static inline void rmq_out_bytes(rmq_out *o, const void *p, size_t n)
{
    if (o->buf) {
        if (o->failed || n > o->cap - o->len) {
            o->failed = 1;
            return;
        }
        if (n)
            memcpy(o->buf + o->len, p, n);
    }
    o->len += n;
}

static inline void rmq_out_byte(rmq_out *o, uint8_t b)
{
    rmq_out_bytes(o, &b, 1);
}

static inline void rmq_out_be16(rmq_out *o, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    rmq_out_bytes(o, b, 2);
}

static inline void rmq_out_be32(rmq_out *o, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    rmq_out_bytes(o, b, 4);
}

static inline uint32_t rmq_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* Nonzero when some byte of w equals b (exact for "any"; which byte is left
 * to the caller, so the word trick is endian-neutral). */
static inline uint64_t rmq_word_has_byte(uint64_t w, uint8_t b)
{
    uint64_t x = w ^ (0x0101010101010101ull * b);
    return (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
}

/* The JSON decoders' common int: a bare integer of at most 10 digits that
 * fits int32, at [p, end). Returns the byte after its digits (what may
 * follow is each caller's rule) or NULL, leaving *dst alone, for anything
 * else. */
static inline const uint8_t *rmq_json_plain_int(const uint8_t *p, const uint8_t *end, int32_t *dst)
{
    const uint8_t *i = p;
    bool neg = i < end && *i == '-';
    if (neg)
        i++;
    const uint8_t *digits = i;
    int64_t v = 0;
    while (i < end && (uint8_t)(*i - '0') <= 9) {
        if (i - digits == 10)
            return NULL;
        v = v * 10 + (*i - '0');
        i++;
    }
    if (i == digits)
        return NULL;
    if (neg)
        v = -v;
    if (v > INT32_MAX || v < INT32_MIN)
        return NULL;
    *dst = (int32_t)v;
    return i;
}

static inline uint16_t rmq_be16(const uint8_t *p)
{
    return (uint16_t)(((unsigned)p[0] << 8) | p[1]);
}

void rmq_header_json_encode(const rmq_cmd *cmd, rmq_out *o);
void rmq_header_binary_encode(const rmq_cmd *cmd, rmq_out *o);

#endif
