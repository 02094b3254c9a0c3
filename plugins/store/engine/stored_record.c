/* stored_record.c — decode, validate and encode one stored-message record
 * (protocol-messages.md §10.3.1) and read a value out of a properties string
 * (§10.3.3). Pure functions over caller buffers. */
#include "stored_record.h"

#include <string.h>
#include <zlib.h>
#ifdef STORE_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

const char *stored_record_rc_name(stored_record_rc rc)
{
    switch (rc) {
    case STORED_RECORD_OK: return "ok";
    case STORED_RECORD_TRUNCATED: return "truncated";
    case STORED_RECORD_BAD_MAGIC: return "bad magic";
    case STORED_RECORD_BLANK: return "blank record";
    case STORED_RECORD_BAD_SIZE: return "TOTALSIZE disagrees with the field lengths";
    case STORED_RECORD_BAD_LENGTHS: return "bad field length";
    case STORED_RECORD_BAD_CRC: return "BODYCRC mismatch";
    }
    return "?";
}

size_t stored_record_size(int32_t sys_flag, size_t body_len, size_t topic_len, size_t props_len)
{
    size_t n = 91 + body_len + topic_len + props_len;
    if (sys_flag & STORED_SYSFLAG_BORNHOST_V6)
        n += 12;
    if (sys_flag & STORED_SYSFLAG_STOREHOST_V6)
        n += 12;
    return n;
}

int32_t stored_record_body_crc(const void *body, size_t len)
{
    if (len == 0)
        return 0;
#ifdef STORE_HAVE_LIBDEFLATE
    /* the same CRC-32 as zlib's (and Java's CRC32), computed several times
     * faster (PCLMULQDQ); it takes a size_t length */
    return (int32_t)(libdeflate_crc32(0, body, len) & 0x7FFFFFFF);
#else
    uLong c = crc32(0L, Z_NULL, 0);
    const uint8_t *p = body;
    /* zlib's length is a uInt: feed huge bodies in pieces */
    while (len > 0) {
        uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
        c = crc32(c, p, chunk);
        p += chunk;
        len -= chunk;
    }
    return (int32_t)(c & 0x7FFFFFFF);
#endif
}

size_t stored_record_store_ts_pos(int32_t sys_flag)
{
    return (sys_flag & STORED_SYSFLAG_BORNHOST_V6) ? 68 : 56;
}

stored_record_rc stored_record_decode(const uint8_t *buf, size_t len, bool check_crc,
                                      stored_record *r)
{
    memset(r, 0, sizeof *r);
    if (len < 8)
        return STORED_RECORD_TRUNCATED;
    r->total_size = (int32_t)stored_be32(buf);
    r->magic = stored_be32(buf + 4);
    if (r->magic == STORED_RECORD_BLANK_MAGIC)
        return STORED_RECORD_BLANK;
    if (r->magic != STORED_RECORD_MAGIC)
        return STORED_RECORD_BAD_MAGIC;
    if (r->total_size < STORED_RECORD_MIN_SIZE)
        return STORED_RECORD_BAD_SIZE;
    if ((size_t)r->total_size > len)
        return STORED_RECORD_TRUNCATED;
    size_t total = (size_t)r->total_size;
    r->body_crc = (int32_t)stored_be32(buf + 8);
    r->queue_id = (int32_t)stored_be32(buf + 12);
    r->flag = (int32_t)stored_be32(buf + 16);
    r->queue_offset = (int64_t)stored_be64(buf + 20);
    r->phys_offset = (int64_t)stored_be64(buf + 28);
    r->sys_flag = (int32_t)stored_be32(buf + 36);
    r->born_ts = (int64_t)stored_be64(buf + 40);
    size_t p = 48;
    r->born_ip_len = (r->sys_flag & STORED_SYSFLAG_BORNHOST_V6) ? 16 : 4;
    r->store_ip_len = (r->sys_flag & STORED_SYSFLAG_STOREHOST_V6) ? 16 : 4;
    /* fixed part up to BODYLENGTH included */
    size_t fixed = 88 + (r->born_ip_len - 4u) + (r->store_ip_len - 4u);
    if (total < fixed + 3)
        return STORED_RECORD_BAD_SIZE;
    r->born_ip = buf + p;
    p += r->born_ip_len;
    r->born_port = (int32_t)stored_be32(buf + p);
    p += 4;
    r->store_ts = (int64_t)stored_be64(buf + p);
    p += 8;
    r->store_ip = buf + p;
    p += r->store_ip_len;
    r->store_port = (int32_t)stored_be32(buf + p);
    p += 4;
    r->reconsume_times = (int32_t)stored_be32(buf + p);
    p += 4;
    r->prepared_tx_offset = (int64_t)stored_be64(buf + p);
    p += 8;
    r->body_len = (int32_t)stored_be32(buf + p);
    p += 4;
    if (r->body_len < 0 || (size_t)r->body_len > total - p - 3)
        return STORED_RECORD_BAD_LENGTHS;
    r->body = buf + p;
    p += (size_t)r->body_len;
    int8_t tl = (int8_t)buf[p];
    if (tl < 0 || (size_t)tl > total - p - 3)
        return STORED_RECORD_BAD_LENGTHS;
    r->topic_len = (uint8_t)tl;
    p += 1;
    r->topic = (const char *)buf + p;
    p += r->topic_len;
    int16_t pl = (int16_t)(((unsigned)buf[p] << 8) | buf[p + 1]);
    p += 2;
    if (pl < 0 || (size_t)pl > total - p)
        return STORED_RECORD_BAD_LENGTHS;
    r->props_len = (uint16_t)pl;
    r->props = (const char *)buf + p;
    p += r->props_len;
    if (p != total)
        return STORED_RECORD_BAD_SIZE;
    if (check_crc && stored_record_body_crc(r->body, (size_t)r->body_len) != r->body_crc)
        return STORED_RECORD_BAD_CRC;
    return STORED_RECORD_OK;
}

size_t stored_record_encode(const stored_record *r, bool compute_crc, uint8_t *out, size_t cap)
{
    if ((r->born_ip_len != 4 && r->born_ip_len != 16) ||
        (r->store_ip_len != 4 && r->store_ip_len != 16) || r->topic_len > STORED_RECORD_MAX_TOPIC ||
        r->props_len > STORED_RECORD_MAX_PROPS || r->body_len < 0)
        return 0;
    int32_t sys_flag = r->sys_flag & ~(STORED_SYSFLAG_BORNHOST_V6 | STORED_SYSFLAG_STOREHOST_V6);
    if (r->born_ip_len == 16)
        sys_flag |= STORED_SYSFLAG_BORNHOST_V6;
    if (r->store_ip_len == 16)
        sys_flag |= STORED_SYSFLAG_STOREHOST_V6;
    size_t total = stored_record_size(sys_flag, (size_t)r->body_len, r->topic_len, r->props_len);
    if (total > cap || total > INT32_MAX)
        return 0;
    int32_t crc = compute_crc ? stored_record_body_crc(r->body, (size_t)r->body_len) : r->body_crc;
    uint8_t *p = out;
    stored_put_be32(p, (uint32_t)total);
    stored_put_be32(p + 4, STORED_RECORD_MAGIC);
    stored_put_be32(p + 8, (uint32_t)crc);
    stored_put_be32(p + 12, (uint32_t)r->queue_id);
    stored_put_be32(p + 16, (uint32_t)r->flag);
    stored_put_be64(p + 20, (uint64_t)r->queue_offset);
    stored_put_be64(p + 28, (uint64_t)r->phys_offset);
    stored_put_be32(p + 36, (uint32_t)sys_flag);
    stored_put_be64(p + 40, (uint64_t)r->born_ts);
    p += 48;
    memcpy(p, r->born_ip, r->born_ip_len);
    p += r->born_ip_len;
    stored_put_be32(p, (uint32_t)r->born_port);
    p += 4;
    stored_put_be64(p, (uint64_t)r->store_ts);
    p += 8;
    memcpy(p, r->store_ip, r->store_ip_len);
    p += r->store_ip_len;
    stored_put_be32(p, (uint32_t)r->store_port);
    p += 4;
    stored_put_be32(p, (uint32_t)r->reconsume_times);
    p += 4;
    stored_put_be64(p, (uint64_t)r->prepared_tx_offset);
    p += 8;
    stored_put_be32(p, (uint32_t)r->body_len);
    p += 4;
    if (r->body_len > 0)
        memcpy(p, r->body, (size_t)r->body_len);
    p += r->body_len;
    *p++ = r->topic_len;
    if (r->topic_len)
        memcpy(p, r->topic, r->topic_len);
    p += r->topic_len;
    *p++ = (uint8_t)(r->props_len >> 8);
    *p++ = (uint8_t)r->props_len;
    if (r->props_len)
        memcpy(p, r->props, r->props_len);
    return total;
}

bool stored_props_get(const char *props, size_t len, const char *name, const char **val,
                      size_t *val_len)
{
    size_t nlen = strlen(name);
    bool found = false;
    size_t i = 0;
    while (i < len) {
        const char *seg = props + i;
        const char *end = memchr(seg, '\002', len - i);
        size_t slen = end ? (size_t)(end - seg) : len - i;
        const char *sep = memchr(seg, '\001', slen);
        if (sep && sep > seg && (size_t)(sep - seg) < slen - 1) {
            size_t kl = (size_t)(sep - seg);
            if (kl == nlen && memcmp(seg, name, nlen) == 0) {
                *val = sep + 1;
                *val_len = slen - kl - 1;
                found = true; /* keep going: the last one wins */
            }
        }
        i += slen + 1;
    }
    return found;
}
