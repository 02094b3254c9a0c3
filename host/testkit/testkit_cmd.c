/* testkit_cmd.c — building and reading commands in a test: requests as a
 * Java client builds them (version 409, language JAVA), answers to captured
 * calls, frames decoded with the daemon's own codec. */
#include <stdio.h>
#include <string.h>

#include "testkit_internal.h"

rmq_cmd *rmq_tk_request(int32_t code, int serialize_type, bool oneway, const char *const *ext)
{
    rmq_cmd *c = rmq_cmd_new();
    if (!c)
        return NULL;
    c->code = code;
    c->version = RMQ_HOST_CMD_VERSION;
    c->language = RMQ_LANG_JAVA;
    c->serialize_type =
        serialize_type == RMQ_TK_ROCKETMQ ? RMQ_SERIALIZE_ROCKETMQ : RMQ_SERIALIZE_JSON;
    if (oneway)
        c->flag |= RMQ_FLAG_ONEWAY;
    for (size_t i = 0; ext && ext[i]; i += 2) {
        if (!ext[i + 1] || rmq_cmd_ext_set(c, ext[i], ext[i + 1]) != 0) {
            rmq_cmd_free(c);
            return NULL;
        }
    }
    return c;
}

rmq_cmd *rmq_tk_response(int32_t code, const char *remark)
{
    rmq_cmd *c = rmq_cmd_new();
    if (!c)
        return NULL;
    c->code = code;
    c->version = RMQ_HOST_CMD_VERSION;
    c->language = RMQ_LANG_JAVA;
    c->flag = RMQ_FLAG_RESPONSE;
    if (remark && rmq_cmd_set_remark(c, remark) != 0) {
        rmq_cmd_free(c);
        return NULL;
    }
    return c;
}

int rmq_tk_set_ext(rmq_cmd *cmd, const char *key, const char *value)
{
    return cmd && key && value ? rmq_cmd_ext_set(cmd, key, value) : RMQ_EINVAL;
}

int rmq_tk_set_body(rmq_cmd *cmd, const void *data, size_t len)
{
    return cmd ? rmq_cmd_set_body(cmd, data, len, NULL, NULL) : RMQ_EINVAL;
}

rmq_cmd *rmq_tk_decode(const void *frame, size_t len, char *err, size_t errlen)
{
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof(dummy);
    }
    size_t total = 0;
    const char *reason = "truncated frame";
    if (!frame ||
        rmq_frame_check(frame, len, RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &reason) !=
            RMQ_FRAME_READY ||
        total != len) {
        snprintf(err, errlen, "%s",
                 total && total != len ? "trailing bytes after the frame" : reason);
        return NULL;
    }
    return rmq_cmd_decode(frame, len, err, errlen);
}

int32_t rmq_tk_code(const rmq_cmd *cmd)
{
    return cmd ? cmd->code : -1;
}
int32_t rmq_tk_flag(const rmq_cmd *cmd)
{
    return cmd ? cmd->flag : 0;
}
int32_t rmq_tk_opaque(const rmq_cmd *cmd)
{
    return cmd ? cmd->opaque : 0;
}
const char *rmq_tk_remark(const rmq_cmd *cmd)
{
    return cmd ? cmd->remark : NULL;
}
const char *rmq_tk_ext(const rmq_cmd *cmd, const char *key)
{
    return cmd && key ? rmq_cmd_ext_get(cmd, key) : NULL;
}
const void *rmq_tk_body(const rmq_cmd *cmd, size_t *len)
{
    if (len)
        *len = cmd ? cmd->body_len : 0;
    return cmd ? cmd->body : NULL;
}
void rmq_tk_cmd_free(rmq_cmd *cmd)
{
    rmq_cmd_free(cmd);
}
