/* json_emit.c — text buffer and fastjson-compatible string escaping.
 * Owns only byte formatting; knows nothing about routes or requests. */
#include "json_emit.h"

#include <stdlib.h>
#include <string.h>

void tb_init(text_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->oom = false;
}

void tb_free(text_buf *b)
{
    free(b->data);
    tb_init(b);
}

char *tb_take(text_buf *b, size_t *len)
{
    if (b->oom) {
        tb_free(b);
        return NULL;
    }
    tb_reserve(b, 1);
    if (b->oom) {
        tb_free(b);
        return NULL;
    }
    b->data[b->len] = '\0';
    char *d = b->data;
    if (len)
        *len = b->len;
    tb_init(b);
    return d;
}

void tb_reserve(text_buf *b, size_t extra)
{
    if (b->oom || b->len + extra + 1 <= b->cap)
        return;
    size_t nc = b->cap ? b->cap : 256;
    while (nc < b->len + extra + 1)
        nc *= 2;
    char *d = realloc(b->data, nc);
    if (!d) {
        b->oom = true;
        return;
    }
    b->data = d;
    b->cap = nc;
}

void tb_putn(text_buf *b, const char *s, size_t n)
{
    tb_reserve(b, n);
    if (b->oom)
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

void tb_putc(text_buf *b, char c)
{
    tb_reserve(b, 1);
    if (b->oom)
        return;
    b->data[b->len++] = c;
}

void tb_puts(text_buf *b, const char *s)
{
    tb_putn(b, s, strlen(s));
}

void tb_int(text_buf *b, int64_t v)
{
    char tmp[24];
    char *p = tmp + sizeof(tmp);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    tb_putn(b, p, (size_t)(tmp + sizeof(tmp) - p));
}

static const char HEX[] = "0123456789ABCDEF";

static void put_u16(text_buf *b, unsigned v, bool upper)
{
    static const char hexl[] = "0123456789abcdef";
    const char *h = upper ? HEX : hexl;
    char e[6] = {'\\', 'u', h[(v >> 12) & 15], h[(v >> 8) & 15], h[(v >> 4) & 15], h[v & 15]};
    tb_putn(b, e, 6);
}

/* Decodes one UTF-8 sequence; returns its length (1 for invalid bytes,
 * which are then written as U+FFFD like Java's decoder would). */
static size_t utf8_decode(const unsigned char *p, uint32_t *cp)
{
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    if ((p[0] & 0xE0) == 0xC0 && (p[1] & 0xC0) == 0x80) {
        *cp = ((uint32_t)(p[0] & 0x1F) << 6) | (p[1] & 0x3F);
        return 2;
    }
    if ((p[0] & 0xF0) == 0xE0 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80) {
        *cp = ((uint32_t)(p[0] & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
        return 3;
    }
    if ((p[0] & 0xF8) == 0xF0 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80 &&
        (p[3] & 0xC0) == 0x80) {
        *cp = ((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) |
              ((uint32_t)(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
        return 4;
    }
    *cp = 0xFFFD;
    return 1;
}

void tb_json_str(text_buf *b, const char *s, bool standard)
{
    if (!s) {
        tb_puts(b, "null");
        return;
    }
    tb_putc(b, '"');
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *run = p;
    while (*p) {
        unsigned char c = *p;
        /* plain printable ASCII is by far the common case */
        if (c >= 0x30 && c < 0x7F && c != '\\') {
            p++;
            continue;
        }
        bool plain = c >= 0x20 && c != '"' && c != '\\' && c < 0x7F;
        if (plain && !(standard && c == '/')) {
            p++;
            continue;
        }
        if (!standard && c >= 0x80) {
            p++;
            continue;
        }
        tb_putn(b, (const char *)run, (size_t)(p - run));
        switch (c) {
        case '"':
            tb_puts(b, "\\\"");
            p++;
            break;
        case '\\':
            tb_puts(b, "\\\\");
            p++;
            break;
        case '/':
            tb_puts(b, "\\/");
            p++;
            break;
        case '\b':
            tb_puts(b, "\\b");
            p++;
            break;
        case '\f':
            tb_puts(b, "\\f");
            p++;
            break;
        case '\n':
            tb_puts(b, "\\n");
            p++;
            break;
        case '\r':
            tb_puts(b, "\\r");
            p++;
            break;
        case '\t':
            tb_puts(b, "\\t");
            p++;
            break;
        default:
            if (c < 0x80) {
                /* other control characters and DEL */
                put_u16(b, c, standard);
                p++;
            } else {
                uint32_t cp;
                p += utf8_decode(p, &cp);
                if (cp >= 0x10000) {
                    cp -= 0x10000;
                    put_u16(b, 0xD800 + (cp >> 10), true);
                    put_u16(b, 0xDC00 + (cp & 0x3FF), true);
                } else {
                    put_u16(b, cp, true);
                }
            }
        }
        run = p;
    }
    tb_putn(b, (const char *)run, (size_t)(p - run));
    tb_putc(b, '"');
}
