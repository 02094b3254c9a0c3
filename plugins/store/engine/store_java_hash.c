/* store_java_hash.c — Java's String.hashCode() of a UTF-8 byte string: the
 * hash runs over UTF-16 code units (supplementary characters as surrogate
 * pairs), malformed input decodes to U+FFFD per bad sequence as Java's
 * decoder does. Used for index keys and recovered tagsCodes. */
#include "store_internal.h"

static uint32_t step(uint32_t h, uint32_t unit)
{
    return h * 31u + unit;
}

int32_t store_java_hash(const char *str, size_t len)
{
    const uint8_t *s = (const uint8_t *)str;
    uint32_t h = 0;
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        if (c < 0x80) {
            h = step(h, c);
            i++;
            continue;
        }
        size_t need;
        uint32_t cp, min;
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
            cp = c & 0x1F;
            min = 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            cp = c & 0x0F;
            min = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            cp = c & 0x07;
            min = 0x10000;
        } else {
            h = step(h, 0xFFFD);
            i++;
            continue;
        }
        size_t k = 1;
        for (; k <= need && i + k < len; k++) {
            uint8_t cc = s[i + k];
            if ((cc & 0xC0) != 0x80)
                break;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (k <= need || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            /* malformed: one replacement for a truncated sequence, one per
             * byte for an overlong or surrogate encoding */
            h = step(h, 0xFFFD);
            i += k <= need ? k : 1;
            continue;
        }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            h = step(h, 0xD800 + (cp >> 10));
            h = step(h, 0xDC00 + (cp & 0x3FF));
        } else {
            h = step(h, cp);
        }
        i += need + 1;
    }
    return (int32_t)h;
}
