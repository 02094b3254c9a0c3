/* message_properties.c — parse and re-encode the properties string of a
 * message (protocol-messages.md §10.3.3, §10.5.4) and the Java String
 * hashCode used as tagsCode. */
#include "message_properties.h"

#include <string.h>

static bool span_eq(const char *a, size_t alen, const char *b, size_t blen)
{
    return alen == blen && memcmp(a, b, alen) == 0;
}

void props_parse(const char *s, size_t len, props_view *out)
{
    out->n = 0;
    out->overflow = false;
    size_t i = 0;
    while (s && i < len) {
        const char *seg = s + i;
        const char *end = memchr(seg, PROP_SEP, len - i);
        size_t seg_len = end ? (size_t)(end - seg) : len - i;
        if (seg_len >= 3) {
            const char *kv = memchr(seg, PROP_NAME_VALUE_SEP, seg_len);
            if (kv && kv > seg && (size_t)(kv - seg) < seg_len - 1) {
                prop_span sp = {seg, (size_t)(kv - seg), kv + 1, seg_len - (size_t)(kv - seg) - 1};
                size_t k = 0;
                while (k < out->n &&
                       !span_eq(out->e[k].name, out->e[k].name_len, sp.name, sp.name_len))
                    k++;
                if (k < out->n)
                    out->e[k] = sp; /* HashMap.put: the last value wins */
                else if (out->n < PROPS_MAX)
                    out->e[out->n++] = sp;
                else
                    out->overflow = true;
            }
        }
        i += seg_len + 1;
    }
}

const char *props_get(const props_view *v, const char *name, size_t *len)
{
    size_t nl = strlen(name);
    for (size_t k = 0; k < v->n; k++)
        if (span_eq(v->e[k].name, v->e[k].name_len, name, nl)) {
            if (len)
                *len = v->e[k].value_len;
            return v->e[k].value;
        }
    return NULL;
}

bool props_has_any(const props_view *v, const prop_name *names, size_t n)
{
    for (size_t k = 0; k < v->n; k++)
        for (size_t i = 0; i < n; i++)
            if (span_eq(v->e[k].name, v->e[k].name_len, names[i].s, names[i].len))
                return true;
    return false;
}

bool props_value_is(const props_view *v, const char *name, const char *lit)
{
    size_t l;
    const char *val = props_get(v, name, &l);
    return val && span_eq(val, l, lit, strlen(lit));
}

static bool dropped(const prop_span *e, const char *const *drop)
{
    for (; drop && *drop; drop++)
        if (span_eq(e->name, e->name_len, *drop, strlen(*drop)))
            return true;
    return false;
}

static size_t put(char *buf, size_t cap, size_t at, const char *p, size_t n)
{
    if (at < cap)
        memcpy(buf + at, p, at + n <= cap ? n : cap - at);
    return at + n;
}

size_t props_encode_stored(const props_view *v, const char *const *drop, const char *cluster,
                           char *buf, size_t cap)
{
    static const char sep1 = PROP_NAME_VALUE_SEP, sep2 = PROP_SEP;
    size_t at = 0;
    for (size_t k = 0; k < v->n; k++) {
        const prop_span *e = &v->e[k];
        if (dropped(e, drop) || (cluster && span_eq(e->name, e->name_len, "CLUSTER", 7)))
            continue;
        if (at)
            at = put(buf, cap, at, &sep2, 1);
        at = put(buf, cap, at, e->name, e->name_len);
        at = put(buf, cap, at, &sep1, 1);
        at = put(buf, cap, at, e->value, e->value_len);
    }
    if (cluster && *cluster) {
        if (at)
            at = put(buf, cap, at, &sep2, 1);
        at = put(buf, cap, at, "CLUSTER", 7);
        at = put(buf, cap, at, &sep1, 1);
        at = put(buf, cap, at, cluster, strlen(cluster));
    }
    return at;
}

/* Next code point of UTF-8 text; malformed input yields U+FFFD and consumes one byte. */
static uint32_t utf8_next(const unsigned char *s, size_t len, size_t *i)
{
    unsigned char c = s[*i];
    size_t need;
    uint32_t cp;
    if (c < 0x80) {
        (*i)++;
        return c;
    } else if ((c & 0xE0) == 0xC0) {
        need = 1;
        cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        need = 2;
        cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        need = 3;
        cp = c & 0x07;
    } else {
        (*i)++;
        return 0xFFFD;
    }
    if (*i + need >= len) {
        (*i)++;
        return 0xFFFD;
    }
    for (size_t k = 1; k <= need; k++) {
        if ((s[*i + k] & 0xC0) != 0x80) {
            (*i)++;
            return 0xFFFD;
        }
        cp = (cp << 6) | (s[*i + k] & 0x3F);
    }
    static const uint32_t min_cp[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[need] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        (*i)++;
        return 0xFFFD;
    }
    *i += need + 1;
    return cp;
}

int32_t java_string_hash(const char *s, size_t len)
{
    uint32_t h = 0;
    size_t i = 0;
    const unsigned char *u = (const unsigned char *)s;
    while (i < len) {
        uint32_t cp = utf8_next(u, len, &i);
        if (cp >= 0x10000) {
            cp -= 0x10000;
            h = h * 31u + (0xD800u + (cp >> 10));
            h = h * 31u + (0xDC00u + (cp & 0x3FF));
        } else {
            h = h * 31u + cp;
        }
    }
    return (int32_t)h;
}
