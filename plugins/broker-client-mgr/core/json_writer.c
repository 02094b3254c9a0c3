/* json_writer.c — owns the growing buffer and the JSON string escaping of
 * the streamed documents (json_writer.h). Nothing here knows topics. */
#include "json_writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool bcm_buf_reserve(bcm_buf *b, size_t more)
{
    if (b->oom)
        return false;
    if (b->n + more <= b->cap)
        return true;
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->n + more) {
        if (nc > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        nc *= 2;
    }
    unsigned char *p = realloc(b->p, nc);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = nc;
    return true;
}

void bcm_buf_add(bcm_buf *b, const void *d, size_t n)
{
    if (n && bcm_buf_reserve(b, n)) {
        memcpy(b->p + b->n, d, n);
        b->n += n;
    }
}

void bcm_buf_str(bcm_buf *b, const char *s)
{
    bcm_buf_add(b, s, strlen(s));
}

void bcm_buf_char(bcm_buf *b, char ch)
{
    if (bcm_buf_reserve(b, 1))
        b->p[b->n++] = (unsigned char)ch;
}

void bcm_buf_i64(bcm_buf *b, int64_t v)
{
    /* by hand: snprintf took ~700 instructions a number, two thirds of a
     * topics.journal record's cost (6 numbers a record) */
    char num[24];
    char *end = num + sizeof num, *p = end;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    bcm_buf_add(b, p, (size_t)(end - p));
}

void bcm_buf_be32(bcm_buf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 8), (unsigned char)v};
    bcm_buf_add(b, x, 4);
}

void bcm_buf_free(bcm_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

char *bcm_buf_take_string(bcm_buf *b, size_t *len)
{
    bcm_buf_char(b, '\0');
    if (b->oom) {
        bcm_buf_free(b);
        return NULL;
    }
    char *s = (char *)b->p;
    if (len)
        *len = b->n - 1;
    memset(b, 0, sizeof *b);
    return s;
}

bool bcm_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        unsigned c = *p;
        size_t k;
        uint32_t cp;
        if (c < 0x80) {
            p++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if ((size_t)(end - p) <= k)
            return false;
        for (size_t i = 1; i <= k; i++) {
            if ((p[i] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        if ((k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        p += k + 1;
    }
    return true;
}

void bcm_json_string(bcm_buf *b, const char *s, size_t n)
{
    bcm_buf_char(b, '"');
    size_t run = 0; /* start of the bytes not yet copied */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        bcm_buf_add(b, s + run, i - run);
        run = i + 1;
        char esc[8];
        switch (c) {
        case '"': bcm_buf_add(b, "\\\"", 2); break;
        case '\\': bcm_buf_add(b, "\\\\", 2); break;
        case '\b': bcm_buf_add(b, "\\b", 2); break;
        case '\f': bcm_buf_add(b, "\\f", 2); break;
        case '\n': bcm_buf_add(b, "\\n", 2); break;
        case '\r': bcm_buf_add(b, "\\r", 2); break;
        case '\t': bcm_buf_add(b, "\\t", 2); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04X", (unsigned)c);
            bcm_buf_add(b, esc, 6);
            break;
        }
    }
    bcm_buf_add(b, s + run, n - run);
    bcm_buf_char(b, '"');
}
