/* header_json_encode.c — writes the JSON header byte-for-byte as Java's
 * fastjson does (protocol.md §2.2): fixed alphabetical key order, nulls
 * omitted, ext values always strings, fastjson's escaping. Does no
 * allocation; the same routine sizes (counting sink) and writes. */
#include <stdbool.h>
#include <string.h>

#include "cmd_internal.h"

static const char hex_upper[] = "0123456789ABCDEF";

/* `s` is a string literal: a constant length lets the copy inline. */
#define put_lit(o, s) rmq_out_bytes((o), (s), sizeof(s) - 1)

static const char digit_pairs[] = "00010203040506070809"
                                  "10111213141516171819"
                                  "20212223242526272829"
                                  "30313233343536373839"
                                  "40414243444546474849"
                                  "50515253545556575859"
                                  "60616263646566676869"
                                  "70717273747576777879"
                                  "80818283848586878889"
                                  "90919293949596979899";

static size_t decimal_digits(uint32_t u)
{
    size_t n = 1;
    while (u >= 10000) {
        u /= 10000;
        n += 4;
    }
    return n + (u >= 10) + (u >= 100) + (u >= 1000);
}

/* Two digits per division; the counting sink only needs the width. */
static void put_int(rmq_out *o, int32_t v)
{
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    if (!o->buf) {
        o->len += decimal_digits(u) + (v < 0);
        return;
    }
    /* with room for the widest value, digits go straight into the output */
    char tmp[11];
    bool direct = !o->failed && o->cap - o->len >= sizeof tmp;
    size_t width = direct ? decimal_digits(u) + (v < 0) : sizeof tmp;
    char *base = direct ? (char *)o->buf + o->len : tmp;
    char *p = base + width;
    while (u >= 100) {
        uint32_t r = u % 100;
        u /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * r, 2);
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * u, 2);
    } else {
        *--p = (char)('0' + u);
    }
    if (v < 0)
        *--p = '-';
    if (direct)
        o->len += width;
    else
        rmq_out_bytes(o, p, (size_t)(tmp + sizeof tmp - p));
}

static void put_u_escape(rmq_out *o, uint32_t unit)
{
    char e[6] = {'\\',
                 'u',
                 hex_upper[(unit >> 12) & 15],
                 hex_upper[(unit >> 8) & 15],
                 hex_upper[(unit >> 4) & 15],
                 hex_upper[unit & 15]};
    rmq_out_bytes(o, e, sizeof e);
}

/* fastjson (default features) escapes '"', '\\', U+0000..U+001F (\b \t \n
 * \f \r by letter, the rest as \u00XX), U+007F..U+009F and U+2028 as \uXXXX
 * with uppercase hex; '/' and other non-ASCII text stay raw. The input is
 * UTF-8, so U+0080..U+009F arrive as C2 80..C2 9F and U+2028 as E2 80 A8. */
/* 1 for the bytes that may need escaping (see put_string), NUL included:
 * one table load per byte instead of a chain of compares. */
#define ONES16 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
static const uint8_t maybe_special[256] = {
    ONES16, ONES16, ['"'] = 1, ['\\'] = 1, [0x7F] = 1, [0xC2] = 1, [0xE2] = 1,
};
#undef ONES16

static void put_string(rmq_out *o, const char *str)
{
    const uint8_t *s = (const uint8_t *)str;
    rmq_out_byte(o, '"');
    const uint8_t *run = s;
    for (;; s++) {
        uint8_t c = *s;
        if (!maybe_special[c])
            continue;
        bool special = (c != 0xC2 && c != 0xE2) || (c == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F) ||
                       (c == 0xE2 && s[1] == 0x80 && s[2] == 0xA8);
        if (!special)
            continue;
        rmq_out_bytes(o, run, (size_t)(s - run));
        if (c == 0)
            break;
        switch (c) {
        case '"': put_lit(o, "\\\""); break;
        case '\\': put_lit(o, "\\\\"); break;
        case '\b': put_lit(o, "\\b"); break;
        case '\t': put_lit(o, "\\t"); break;
        case '\n': put_lit(o, "\\n"); break;
        case '\f': put_lit(o, "\\f"); break;
        case '\r': put_lit(o, "\\r"); break;
        case 0xC2:
            put_u_escape(o, s[1]);
            s += 1;
            break;
        case 0xE2:
            put_u_escape(o, 0x2028);
            s += 2;
            break;
        default: put_u_escape(o, c); break;
        }
        run = s + 1;
    }
    rmq_out_byte(o, '"');
}

void rmq_header_json_encode(const rmq_cmd *cmd, rmq_out *o)
{
    put_lit(o, "{\"code\":");
    put_int(o, cmd->code);
    if (cmd->has_ext) {
        put_lit(o, ",\"extFields\":{");
        bool first = true;
        for (uint32_t i = 0; i < cmd->ext_count; i++) {
            const rmq_ext_field *f = &cmd->ext[i];
            if (!f->value)
                continue; /* fastjson drops null map values */
            if (!first)
                rmq_out_byte(o, ',');
            first = false;
            put_string(o, f->key);
            rmq_out_byte(o, ':');
            put_string(o, f->value);
        }
        rmq_out_byte(o, '}');
    }
    put_lit(o, ",\"flag\":");
    put_int(o, cmd->flag);
    put_lit(o, ",\"language\":\"");
    rmq_out_bytes(o, rmq_language_name(cmd->language), rmq_language_name_len(cmd->language));
    put_lit(o, "\",\"opaque\":");
    put_int(o, cmd->opaque);
    if (cmd->remark) {
        put_lit(o, ",\"remark\":");
        put_string(o, cmd->remark);
    }
    put_lit(o, ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":");
    put_int(o, cmd->version);
    rmq_out_byte(o, '}');
}
