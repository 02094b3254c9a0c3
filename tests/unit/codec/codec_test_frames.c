/* codec_test_frames.c — helpers for the codec tests: build frames by hand,
 * encode through the public API, compare commands field by field. */
#include "codec_test_frames.h"

#include <stdlib.h>
#include <string.h>

uint8_t *codec_make_frame(uint8_t type, const void *hdr, size_t hdr_len, const void *body,
                          size_t body_len, size_t *len)
{
    size_t total = 8 + hdr_len + body_len;
    uint8_t *f = malloc(total);
    assert_non_null(f);
    uint32_t length = (uint32_t)(4 + hdr_len + body_len);
    uint32_t word = ((uint32_t)type << 24) | (uint32_t)hdr_len;
    for (int i = 0; i < 4; i++) {
        f[i] = (uint8_t)(length >> (24 - 8 * i));
        f[4 + i] = (uint8_t)(word >> (24 - 8 * i));
    }
    if (hdr_len)
        memcpy(f + 8, hdr, hdr_len);
    if (body_len)
        memcpy(f + 8 + hdr_len, body, body_len);
    *len = total;
    return f;
}

rmq_cmd *codec_decode_json(const char *hdr, char *errbuf, size_t errlen)
{
    size_t len;
    uint8_t *f = codec_make_frame(RMQ_SERIALIZE_JSON, hdr, strlen(hdr), NULL, 0, &len);
    rmq_cmd *cmd = rmq_cmd_decode(f, len, errbuf, errlen);
    free(f);
    return cmd;
}

uint8_t *codec_encode(const rmq_cmd *cmd, size_t *len)
{
    size_t n = rmq_cmd_encoded_size(cmd);
    assert_true(n > 8);
    uint8_t *out = malloc(n);
    assert_non_null(out);
    assert_int_equal(rmq_cmd_encode(cmd, out, n), n);
    *len = n;
    return out;
}

uint32_t codec_non_null_ext(const rmq_cmd *cmd)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < cmd->ext_count; i++)
        n += cmd->ext[i].value != NULL;
    return n;
}

void codec_assert_same_cmd(const rmq_cmd *a, const rmq_cmd *b)
{
    assert_int_equal(a->code, b->code);
    assert_int_equal(a->flag, b->flag);
    assert_int_equal(a->opaque, b->opaque);
    assert_int_equal(a->version, b->version);
    assert_int_equal(a->language, b->language);
    if (a->remark == NULL || b->remark == NULL)
        assert_ptr_equal(a->remark, b->remark);
    else
        assert_string_equal(a->remark, b->remark);
    assert_int_equal(codec_non_null_ext(a), codec_non_null_ext(b));
    for (uint32_t i = 0; i < a->ext_count; i++) {
        if (!a->ext[i].value)
            continue;
        const char *v = rmq_cmd_ext_get(b, a->ext[i].key);
        assert_non_null(v);
        assert_string_equal(a->ext[i].value, v);
    }
    assert_int_equal(a->body_len, b->body_len);
    if (a->body_len)
        assert_memory_equal(a->body, b->body, a->body_len);
    else
        assert_null(b->body);
}
