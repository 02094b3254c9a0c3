/* body_fingerprint.c — fingerprints of REGISTER_BROKER JSON bodies with the
 * DataVersion cut out, so that an unchanged broker re-registering every 30 s
 * costs a CRC and a hash over its body instead of a parse and a walk over
 * every topic. Never touches route state. */
#include "body_fingerprint.h"

#include <string.h>
#include <zlib.h>

bool body_fingerprint_equal(const body_fingerprint *a, const body_fingerprint *b)
{
    return a->form != 0 && a->form == b->form && a->has_filter_list == b->has_filter_list &&
           a->filters_empty == b->filters_empty && a->prefix_len == b->prefix_len &&
           a->suffix_len == b->suffix_len && a->suffix_crc == b->suffix_crc &&
           a->suffix_hash == b->suffix_hash && memcmp(a->prefix, b->prefix, a->prefix_len) == 0;
}

static uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

uint64_t body_hash64(const uint8_t *p, size_t n)
{
    const uint64_t k = 0x9E3779B97F4A7C15ULL;
    uint64_t a = 0x243F6A8885A308D3ULL, b = 0x13198A2E03707344ULL, c = 0xA4093822299F31D0ULL,
             d = 0x082EFA98EC4E6C89ULL;
    size_t i = 0;
    /* four independent lanes keep the multipliers busy */
    for (; i + 32 <= n; i += 32) {
        a = (a ^ load64(p + i)) * k;
        b = (b ^ load64(p + i + 8)) * k;
        c = (c ^ load64(p + i + 16)) * k;
        d = (d ^ load64(p + i + 24)) * k;
        a ^= a >> 29;
        b ^= b >> 29;
        c ^= c >> 29;
        d ^= d >> 29;
    }
    uint64_t h = mix(a) ^ (mix(b) * 3) ^ (mix(c) * 5) ^ (mix(d) * 7) ^ (uint64_t)n;
    for (; i + 8 <= n; i += 8)
        h = mix(h ^ load64(p + i));
    uint64_t tail = 0;
    for (size_t j = 0; i < n; i++, j++)
        tail |= (uint64_t)p[i] << (8 * j);
    return mix(h ^ tail ^ k);
}

static uint32_t crc_of(uint32_t c, const uint8_t *p, size_t n)
{
    while (n > 0) {
        uInt chunk = n > 0x40000000u ? 0x40000000u : (uInt)n;
        c = (uint32_t)crc32(c, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return c;
}

/* CRC of prefix | middle | suffix from their own CRCs. */
static int32_t combined_crc(const uint8_t *body, size_t len, size_t mid_begin, size_t mid_end,
                            uint32_t suffix_crc)
{
    uint32_t head = crc_of((uint32_t)crc32(0L, Z_NULL, 0), body, mid_end);
    uint32_t all = (uint32_t)crc32_combine(head, suffix_crc, (z_off_t)(len - mid_end));
    (void)mid_begin;
    return (int32_t)(all & 0x7FFFFFFFu);
}

static void fill_suffix(const uint8_t *body, size_t len, size_t end, body_fingerprint *fp)
{
    fp->suffix_len = len - end;
    fp->suffix_crc = crc_of((uint32_t)crc32(0L, Z_NULL, 0), body + end, len - end);
    fp->suffix_hash = body_hash64(body + end, len - end);
}

void body_fingerprint_of_parsed(const uint8_t *body, size_t len, bool wrapper_only,
                                const register_body *rb, body_fingerprint *fp, int32_t *crc_masked)
{
    memset(fp, 0, sizeof(*fp));
    if (rb->dv_count != 1 || rb->dv_begin >= BODY_FP_PREFIX_MAX || rb->dv_end > len ||
        rb->dv_end <= rb->dv_begin) {
        *crc_masked = (int32_t)(crc_of((uint32_t)crc32(0L, Z_NULL, 0), body, len) & 0x7FFFFFFFu);
        return;
    }
    fill_suffix(body, len, rb->dv_end, fp);
    *crc_masked = combined_crc(body, len, rb->dv_begin, rb->dv_end, fp->suffix_crc);
    fp->form = wrapper_only ? 2 : 1;
    fp->has_filter_list = rb->has_filter_list;
    fp->filters_empty = rb->nfilters == 0;
    fp->prefix_len = (uint16_t)rb->dv_begin;
    memcpy(fp->prefix, body, rb->dv_begin);
}

/* A flat object: '{', then no braces, brackets or escapes up to the first
 * '}'. Parsing it gives what the full parser reads there: a '}' inside a
 * string would leave the string open and the parse fails. */
static size_t flat_object_end(const uint8_t *p, size_t n)
{
    if (n == 0 || p[0] != '{')
        return 0;
    for (size_t i = 1; i < n && i < 256; i++) {
        uint8_t ch = p[i];
        if (ch == '}')
            return i + 1;
        if (ch == '{' || ch == '[' || ch == ']' || ch == '\\')
            return 0;
    }
    return 0;
}

static bool quick(const uint8_t *body, size_t len, bool wrapper_only, const body_fingerprint *like,
                  bool any_suffix, body_fingerprint *fp, data_version *dv, int32_t *crc_masked)
{
    if (like->form != (wrapper_only ? 2 : 1) || len <= like->prefix_len ||
        memcmp(body, like->prefix, like->prefix_len) != 0)
        return false;
    size_t begin = like->prefix_len;
    size_t span = flat_object_end(body + begin, len - begin);
    if (span == 0 || (!any_suffix && len - begin - span != like->suffix_len))
        return false;
    data_version v;
    if (data_version_parse_json((const char *)body + begin, span, &v) != 0)
        return false;
    /* Same bytes before the DataVersion: the parser reaches it in the same
     * state, and after it the same bytes (checked below) read the same. */
    body_fingerprint f = *like;
    fill_suffix(body, len, begin + span, &f);
    if (!any_suffix && (f.suffix_crc != like->suffix_crc || f.suffix_hash != like->suffix_hash))
        return false;
    *crc_masked = combined_crc(body, len, begin, begin + span, f.suffix_crc);
    *fp = f;
    *dv = v;
    return true;
}

bool body_fingerprint_quick(const uint8_t *body, size_t len, bool wrapper_only,
                            const body_fingerprint *like, body_fingerprint *fp, data_version *dv,
                            int32_t *crc_masked)
{
    return quick(body, len, wrapper_only, like, false, fp, dv, crc_masked);
}

bool body_fingerprint_of_frame(const uint8_t *body, size_t len, bool wrapper_only,
                               const body_fingerprint *like, body_fingerprint *fp, data_version *dv,
                               int32_t *crc_masked)
{
    return quick(body, len, wrapper_only, like, true, fp, dv, crc_masked);
}

bool body_fingerprint_of_inflated(const uint8_t *raw, size_t raw_len, body_fingerprint *fp,
                                  data_version *dv)
{
    memset(fp, 0, sizeof(*fp));
    if (raw_len < 4)
        return false;
    size_t n = (size_t)raw[0] << 24 | (size_t)raw[1] << 16 | (size_t)raw[2] << 8 | raw[3];
    if (n > raw_len - 4 || data_version_parse_json((const char *)raw + 4, n, dv) != 0)
        return false;
    fp->form = 3;
    fp->suffix_len = raw_len - 4 - n;
    fp->suffix_hash = body_hash64(raw + 4 + n, raw_len - 4 - n);
    return true;
}
