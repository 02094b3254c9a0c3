/* request_template.c — builds rmqbench's request frame through the real codec
 * (rmq_remoting) and finds where its opaque lives. Must not touch sockets;
 * the per-request path is only rmq_template_patch_opaque (no allocation). */
#include "request_template.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Binary header: code(2) language(1) version(2) then opaque(4). */
#define BINARY_OPAQUE_HEADER_OFFSET 5u

static const uint8_t *find_bytes(const uint8_t *hay, size_t hay_len, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0 || hay_len < n)
        return NULL;
    for (size_t i = 0; i + n <= hay_len; i++)
        if (hay[i] == (uint8_t)needle[0] && memcmp(hay + i, needle, n) == 0)
            return hay + i;
    return NULL;
}

int rmq_template_build(rmq_request_template *t, const rmq_request_spec *spec, char *errbuf,
                       size_t errlen)
{
    memset(t, 0, sizeof(*t));
    rmq_cmd *cmd = rmq_cmd_new();
    if (!cmd) {
        snprintf(errbuf, errlen, "out of memory");
        return -1;
    }
    cmd->code = spec->code;
    cmd->opaque = RMQ_TEMPLATE_OPAQUE_BASE;
    cmd->flag = spec->oneway ? RMQ_FLAG_ONEWAY : 0;
    cmd->serialize_type = spec->serialize_type;
    int rc = 0;
    for (size_t i = 0; i < spec->ext_count && rc == 0; i++)
        rc = rmq_cmd_ext_set(cmd, spec->ext_keys[i], spec->ext_values[i]);
    if (rc == 0 && spec->body_len > 0)
        rc = rmq_cmd_set_body(cmd, spec->body, spec->body_len, NULL, NULL);
    if (rc != 0) {
        snprintf(errbuf, errlen, "out of memory building the request");
        rmq_cmd_free(cmd);
        return -1;
    }
    size_t size = rmq_cmd_encoded_size(cmd);
    t->frame = size ? malloc(size) : NULL;
    if (!t->frame || rmq_cmd_encode(cmd, t->frame, size) != size) {
        snprintf(errbuf, errlen,
                 "cannot encode the request (code or version outside int16 in "
                 "binary form?)");
        free(t->frame);
        t->frame = NULL;
        rmq_cmd_free(cmd);
        return -1;
    }
    rmq_cmd_free(cmd);
    t->frame_len = size;
    t->serialize_type = spec->serialize_type;

    if (spec->serialize_type == RMQ_SERIALIZE_ROCKETMQ) {
        t->opaque_off = 8u + BINARY_OPAQUE_HEADER_OFFSET;
        return 0;
    }
    uint32_t header_len =
        ((uint32_t)t->frame[5] << 16) | ((uint32_t)t->frame[6] << 8) | (uint32_t)t->frame[7];
    char needle[32];
    snprintf(needle, sizeof(needle), "\"opaque\":%d", RMQ_TEMPLATE_OPAQUE_BASE);
    const uint8_t *hit = find_bytes(t->frame + 8, header_len, needle);
    if (!hit) {
        snprintf(errbuf, errlen, "encoded JSON header has no \"opaque\" field");
        rmq_template_free(t);
        return -1;
    }
    t->opaque_off = (size_t)(hit - t->frame) + strlen("\"opaque\":");
    return 0;
}

void rmq_template_free(rmq_request_template *t)
{
    free(t->frame);
    t->frame = NULL;
    t->frame_len = 0;
}

void rmq_template_patch_opaque(const rmq_request_template *t, uint8_t *frame, int32_t opaque)
{
    uint8_t *p = frame + t->opaque_off;
    if (t->serialize_type == RMQ_SERIALIZE_ROCKETMQ) {
        uint32_t u = (uint32_t)opaque;
        p[0] = (uint8_t)(u >> 24);
        p[1] = (uint8_t)(u >> 16);
        p[2] = (uint8_t)(u >> 8);
        p[3] = (uint8_t)u;
        return;
    }
    uint32_t u = (uint32_t)opaque;
    for (int i = RMQ_TEMPLATE_OPAQUE_DIGITS - 1; i >= 0; i--) {
        p[i] = (uint8_t)('0' + u % 10u);
        u /= 10u;
    }
}

int rmq_template_find(const rmq_request_template *t, const char *marker, size_t *off)
{
    size_t n = strlen(marker);
    for (size_t i = 0; n && i + n <= t->frame_len; i++)
        if (memcmp(t->frame + i, marker, n) == 0) {
            *off = i;
            return 0;
        }
    return -1;
}

void rmq_template_patch_digits(uint8_t *frame, size_t off, size_t width, uint64_t v)
{
    for (size_t i = width; i-- > 0;) {
        frame[off + i] = (uint8_t)('0' + v % 10u);
        v /= 10u;
    }
}
