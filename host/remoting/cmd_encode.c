/* cmd_encode.c — frames a command: 4-byte length, header-length word with
 * the serialize type, header in cmd->serialize_type, then the body. Sizes are
 * computed by the very routines that write, so they always agree. */
#include <string.h>

#include "cmd_internal.h"

static int encode_header_into(const rmq_cmd *cmd, rmq_out *o)
{
    if (cmd->serialize_type == RMQ_SERIALIZE_JSON)
        rmq_header_json_encode(cmd, o);
    else if (cmd->serialize_type == RMQ_SERIALIZE_ROCKETMQ)
        rmq_header_binary_encode(cmd, o);
    else
        o->failed = 1;
    return o->failed ? -1 : 0;
}

size_t rmq_cmd_header_size(const rmq_cmd *cmd)
{
    if (!cmd)
        return 0;
    rmq_out o = {0};
    if (encode_header_into(cmd, &o) != 0 || o.len > 0x00FFFFFFu)
        return 0;
    return o.len;
}

size_t rmq_cmd_encoded_size(const rmq_cmd *cmd)
{
    size_t h = rmq_cmd_header_size(cmd);
    if (h == 0)
        return 0;
    /* the length field is an int32 that does not count itself */
    if ((uint64_t)4 + h + cmd->body_len > INT32_MAX)
        return 0;
    return 8 + h + cmd->body_len;
}

/* One pass: the header is written straight after the 8-byte prefix, whose
 * words are filled in once its length is known. A short buffer fails the
 * bounded writer instead of being measured first. */
static size_t encode_prefix_and_header(const rmq_cmd *cmd, uint8_t *out, size_t out_cap)
{
    if (!cmd || !out || out_cap < 8)
        return 0;
    rmq_out o = {out + 8, out_cap - 8, 0, 0};
    if (encode_header_into(cmd, &o) != 0)
        return 0;
    size_t h = o.len;
    if (h == 0 || h > 0x00FFFFFFu || (uint64_t)4 + h + cmd->body_len > INT32_MAX)
        return 0;
    rmq_out prefix = {out, 8, 0, 0};
    rmq_out_be32(&prefix, (uint32_t)(4 + h + cmd->body_len));
    rmq_out_be32(&prefix, ((uint32_t)cmd->serialize_type << 24) | (uint32_t)h);
    return 8 + h;
}

size_t rmq_cmd_encode_header(const rmq_cmd *cmd, uint8_t *out, size_t out_cap)
{
    return encode_prefix_and_header(cmd, out, out_cap);
}

size_t rmq_cmd_encode(const rmq_cmd *cmd, uint8_t *out, size_t out_cap)
{
    size_t n = encode_prefix_and_header(cmd, out, out_cap);
    if (n == 0 || out_cap - n < cmd->body_len)
        return 0;
    if (cmd->body_len)
        memcpy(out + n, cmd->body, cmd->body_len);
    return n + cmd->body_len;
}

/* Worst case of a fastjson-escaped string: every byte as \u00XX, plus the
 * quotes. */
static uint64_t json_string_bound(const char *s)
{
    return 2 + 6 * (uint64_t)strlen(s);
}

/* Everything but the strings: the fixed keys and punctuation (well under
 * 128 bytes), four ints of at most 11 characters, the longest language name. */
#define JSON_FIXED_BOUND 192u

static uint64_t json_header_bound(const rmq_cmd *cmd)
{
    uint64_t n = JSON_FIXED_BOUND;
    if (cmd->remark)
        n += json_string_bound(cmd->remark);
    for (uint32_t i = 0; i < cmd->ext_count; i++) {
        const rmq_ext_field *f = &cmd->ext[i];
        if (f->value) /* ',' and ':' */
            n += 2 + json_string_bound(f->key) + json_string_bound(f->value);
    }
    return n;
}

static uint64_t binary_header_bound(const rmq_cmd *cmd)
{
    uint64_t n = 21u + (cmd->remark ? strlen(cmd->remark) : 0);
    for (uint32_t i = 0; i < cmd->ext_count; i++) {
        const rmq_ext_field *f = &cmd->ext[i];
        if (f->value && f->key[0])
            n += 6u + strlen(f->key) + strlen(f->value);
    }
    return n;
}

size_t rmq_cmd_encoded_size_bound(const rmq_cmd *cmd)
{
    if (!cmd)
        return 0;
    uint64_t h;
    if (cmd->serialize_type == RMQ_SERIALIZE_JSON)
        h = json_header_bound(cmd);
    else if (cmd->serialize_type == RMQ_SERIALIZE_ROCKETMQ)
        h = binary_header_bound(cmd);
    else
        return 0;
    /* no encodable header is longer than the 24-bit length allows */
    if (h > 0x00FFFFFFu)
        h = 0x00FFFFFFu;
    if ((uint64_t)4 + 1 + cmd->body_len > INT32_MAX)
        return 0;
    uint64_t total = 8 + h + cmd->body_len;
    return total > SIZE_MAX ? SIZE_MAX : (size_t)total;
}
