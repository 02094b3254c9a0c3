/* header_binary_codec.c — the ROCKETMQ binary header (protocol.md §2.3),
 * both directions. Every length is checked against the header region before
 * a byte is read; knows nothing about framing or JSON. */
#include <string.h>

#include "cmd_internal.h"

#define BINARY_FIXED_BYTES 21u /* code..flag (13) + remark len (4) + ext len (4) */

/* Walks the ext region [p, end) once; with cmd == NULL it only validates and
 * counts, so the entry array can be sized exactly before the copy pass. */
static int ext_entries(rmq_cmd *cmd, const uint8_t *p, const uint8_t *end, uint32_t *count,
                       char *errbuf, size_t errlen)
{
    uint32_t n = 0;
    while (p < end) {
        if (end - p < 2)
            return rmq_codec_fail(errbuf, errlen, "binary header: ext entry key length cut off");
        int16_t klen = (int16_t)rmq_be16(p);
        p += 2;
        if (klen < 0 || klen > end - p)
            return rmq_codec_fail(errbuf, errlen,
                                  "binary header: ext key length %d runs past the ext region",
                                  (int)klen);
        const uint8_t *key = p;
        p += klen;
        if (end - p < 4)
            return rmq_codec_fail(errbuf, errlen, "binary header: ext entry value length cut off");
        int32_t vlen = (int32_t)rmq_be32(p);
        p += 4;
        if (vlen < 0 || vlen > end - p)
            return rmq_codec_fail(errbuf, errlen,
                                  "binary header: ext value length %d runs past the ext region",
                                  (int)vlen);
        const uint8_t *val = p;
        p += vlen;
        /* Java reads an empty key as a null key, which no header field can
         * name and its encoder drops: skip it */
        if (klen == 0)
            continue;
        n++;
        if (!cmd)
            continue;
        char *k = rmq_cmd_strndup(cmd, (const char *)key, (size_t)klen);
        char *v = vlen ? rmq_cmd_strndup(cmd, (const char *)val, (size_t)vlen) : NULL;
        if (!k || (vlen && !v) || rmq_cmd_ext_put_owned(cmd, k, v) != 0)
            return rmq_codec_fail(errbuf, errlen, "out of memory");
    }
    *count = n;
    return 0;
}

int rmq_header_binary_decode(rmq_cmd *cmd, const uint8_t *hdr, size_t len, char *errbuf,
                             size_t errlen)
{
    if (len < BINARY_FIXED_BYTES)
        return rmq_codec_fail(errbuf, errlen,
                              "binary header of %zu bytes is shorter than the %u-byte minimum", len,
                              BINARY_FIXED_BYTES);
    cmd->code = (int16_t)rmq_be16(hdr);
    cmd->language = hdr[2];
    cmd->version = (int16_t)rmq_be16(hdr + 3);
    cmd->opaque = (int32_t)rmq_be32(hdr + 5);
    cmd->flag = (int32_t)rmq_be32(hdr + 9);
    size_t off = 13;
    int32_t remark_len = (int32_t)rmq_be32(hdr + off);
    off += 4;
    /* Java only reads a remark when the length is positive */
    if (remark_len > 0) {
        if ((size_t)remark_len > len - off)
            return rmq_codec_fail(errbuf, errlen,
                                  "binary header: remark length %d runs past header length %zu",
                                  (int)remark_len, len);
        cmd->remark = rmq_cmd_strndup(cmd, (const char *)hdr + off, (size_t)remark_len);
        if (!cmd->remark)
            return rmq_codec_fail(errbuf, errlen, "out of memory");
        off += (size_t)remark_len;
    }
    if (len - off < 4)
        return rmq_codec_fail(errbuf, errlen, "binary header ends before the ext length");
    int32_t ext_len = (int32_t)rmq_be32(hdr + off);
    off += 4;
    if (ext_len <= 0)
        return 0;
    if ((size_t)ext_len > len - off)
        return rmq_codec_fail(errbuf, errlen,
                              "binary header: ext length %d runs past header length %zu",
                              (int)ext_len, len);
    const uint8_t *p = hdr + off, *end = p + ext_len;
    uint32_t count;
    if (ext_entries(NULL, p, end, &count, errbuf, errlen) != 0)
        return -1;
    cmd->has_ext = true;
    if (count && rmq_cmd_ext_reserve(cmd, count) != 0)
        return rmq_codec_fail(errbuf, errlen, "out of memory");
    return ext_entries(cmd, p, end, &count, errbuf, errlen);
}

void rmq_header_binary_encode(const rmq_cmd *cmd, rmq_out *o)
{
    if (cmd->code < INT16_MIN || cmd->code > INT16_MAX || cmd->version < INT16_MIN ||
        cmd->version > INT16_MAX || cmd->language < 0 || cmd->language > 255) {
        o->failed = 1;
        return;
    }
    rmq_out_be16(o, (uint16_t)(int16_t)cmd->code);
    rmq_out_byte(o, (uint8_t)cmd->language);
    rmq_out_be16(o, (uint16_t)(int16_t)cmd->version);
    rmq_out_be32(o, (uint32_t)cmd->opaque);
    rmq_out_be32(o, (uint32_t)cmd->flag);
    size_t remark_len = cmd->remark ? strlen(cmd->remark) : 0;
    if (remark_len > INT32_MAX) {
        o->failed = 1;
        return;
    }
    rmq_out_be32(o, (uint32_t)remark_len);
    rmq_out_bytes(o, cmd->remark, remark_len);

    /* Skipped: null values (as Java) and empty keys, which Java's decoder
     * turns into a null key that its encoder would drop again. */
    uint64_t ext_len = 0;
    for (uint32_t i = 0; i < cmd->ext_count; i++) {
        const rmq_ext_field *f = &cmd->ext[i];
        if (!f->value || !f->key[0])
            continue;
        size_t kl = strlen(f->key), vl = strlen(f->value);
        if (kl > INT16_MAX || vl > INT32_MAX) {
            o->failed = 1;
            return;
        }
        ext_len += 6u + kl + vl;
    }
    if (ext_len > INT32_MAX) {
        o->failed = 1;
        return;
    }
    rmq_out_be32(o, (uint32_t)ext_len);
    for (uint32_t i = 0; i < cmd->ext_count; i++) {
        const rmq_ext_field *f = &cmd->ext[i];
        if (!f->value || !f->key[0])
            continue;
        size_t kl = strlen(f->key), vl = strlen(f->value);
        rmq_out_be16(o, (uint16_t)kl);
        rmq_out_bytes(o, f->key, kl);
        rmq_out_be32(o, (uint32_t)vl);
        rmq_out_bytes(o, f->value, vl);
    }
}
