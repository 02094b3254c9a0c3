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

static size_t encode_prefix_and_header(const rmq_cmd *cmd, uint8_t *out, size_t out_cap,
                                       size_t *header_len)
{
    size_t h = rmq_cmd_header_size(cmd);
    if (h == 0 || (uint64_t)4 + h + cmd->body_len > INT32_MAX || !out || out_cap < 8 + h)
        return 0;
    rmq_out o = {out, out_cap, 0, 0};
    rmq_out_be32(&o, (uint32_t)(4 + h + cmd->body_len));
    rmq_out_be32(&o, ((uint32_t)cmd->serialize_type << 24) | (uint32_t)h);
    if (encode_header_into(cmd, &o) != 0 || o.len != 8 + h)
        return 0;
    *header_len = h;
    return o.len;
}

size_t rmq_cmd_encode_header(const rmq_cmd *cmd, uint8_t *out, size_t out_cap)
{
    size_t h;
    return encode_prefix_and_header(cmd, out, out_cap, &h);
}

size_t rmq_cmd_encode(const rmq_cmd *cmd, uint8_t *out, size_t out_cap)
{
    size_t h;
    size_t n = encode_prefix_and_header(cmd, out, out_cap, &h);
    if (n == 0 || out_cap - n < cmd->body_len)
        return 0;
    if (cmd->body_len)
        memcpy(out + n, cmd->body, cmd->body_len);
    return n + cmd->body_len;
}
