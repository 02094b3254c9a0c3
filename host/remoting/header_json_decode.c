/* header_json_decode.c — single-pass scanner for the JSON remoting header
 * (protocol.md §2.2): knows the eight header keys, copies strings straight
 * into the command's arena and skips everything else without building a tree.
 * Hot path: no allocation beyond the arena, no general-purpose JSON library. */
#include <stdbool.h>
#include <string.h>

#include "cmd_internal.h"

#define MAX_SKIP_DEPTH 64
#define EXT_INITIAL_CAP_MAX 64u

typedef struct json_scan {
    const uint8_t *start;
    const uint8_t *p;
    const uint8_t *end;
    rmq_cmd *cmd;
    char *errbuf;
    size_t errlen;
} json_scan;

static int fail(json_scan *s, const char *what)
{
    return rmq_codec_fail(s->errbuf, s->errlen, "bad JSON header at offset %zu: %s",
                          (size_t)(s->p - s->start), what);
}

static inline void skip_ws(json_scan *s)
{
    /* fastjson also treats \f and \b as whitespace; all six are <= ' ', so
     * one compare settles the compact headers real clients send */
    while (s->p < s->end) {
        uint8_t c = *s->p;
        if (c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\b'))
            return;
        s->p++;
    }
}

static inline int peek(const json_scan *s)
{
    return s->p < s->end ? *s->p : -1;
}

static bool is_ident(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c >= 0x80;
}

/* Finds the closing quote of the string starting at s->p (a quote). On
 * success [*a, *b) is the raw content, *escaped says whether it holds a
 * backslash, and s->p is past the closing quote. One pass finds both the
 * quote and any backslash: headers rarely escape anything. */
static int string_extent(json_scan *s, const uint8_t **a, const uint8_t **b, bool *escaped)
{
    uint8_t q = *s->p;
    const uint8_t *start = s->p + 1;
    const uint8_t *end = s->end;
    const uint8_t *i = start;
    while (end - i >= 8) {
        uint64_t w;
        memcpy(&w, i, sizeof w);
        uint64_t hit = rmq_word_has_byte(w, q) | rmq_word_has_byte(w, '\\');
        if (hit) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            /* the lowest flagged byte is always a true match */
            i += (unsigned)__builtin_ctzll(hit) / 8;
#endif
            break;
        }
        i += 8;
    }
    for (; i < end; i++) {
        if (*i == q) {
            *escaped = false;
            goto found;
        }
        if (*i == '\\')
            break;
    }
    /* a backslash (or no quote at all): walk escape pairs from here, as
     * nothing before this point is a quote or a backslash */
    *escaped = true;
    while (i < end && *i != q) {
        if (*i == '\\' && end - i < 2)
            break;
        i += (*i == '\\') ? 2 : 1;
    }
    if (i >= end || *i != q)
        return fail(s, "unterminated string");
found:
    *a = start;
    *b = i;
    s->p = i + 1;
    return 0;
}

static int hex4(const uint8_t *p, const uint8_t *end, uint32_t *out)
{
    if (end - p < 4)
        return -1;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static void put(char *dst, size_t cap, size_t *n, uint8_t c)
{
    if (*n < cap)
        dst[*n] = (char)c;
    (*n)++;
}

static void put_utf8(char *dst, size_t cap, size_t *n, uint32_t cp)
{
    if (cp < 0x80) {
        put(dst, cap, n, (uint8_t)cp);
    } else if (cp < 0x800) {
        put(dst, cap, n, (uint8_t)(0xC0 | (cp >> 6)));
        put(dst, cap, n, (uint8_t)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        put(dst, cap, n, (uint8_t)(0xE0 | (cp >> 12)));
        put(dst, cap, n, (uint8_t)(0x80 | ((cp >> 6) & 0x3F)));
        put(dst, cap, n, (uint8_t)(0x80 | (cp & 0x3F)));
    } else {
        put(dst, cap, n, (uint8_t)(0xF0 | (cp >> 18)));
        put(dst, cap, n, (uint8_t)(0x80 | ((cp >> 12) & 0x3F)));
        put(dst, cap, n, (uint8_t)(0x80 | ((cp >> 6) & 0x3F)));
        put(dst, cap, n, (uint8_t)(0x80 | (cp & 0x3F)));
    }
}

/* Unescapes raw string content [a, b) into dst (at most cap bytes written;
 * *out_len is the full decoded length). Decoded text is never longer than
 * the raw text, so cap = b - a always suffices. */
static int unescape(json_scan *s, const uint8_t *a, const uint8_t *b, char *dst, size_t cap,
                    size_t *out_len)
{
    size_t n = 0;
    const uint8_t *i = a;
    while (i < b) {
        const uint8_t *run = i;
        while (i < b && *i != '\\')
            i++;
        if (i > run) {
            size_t len = (size_t)(i - run);
            if (n < cap)
                memcpy(dst + n, run, len <= cap - n ? len : cap - n);
            n += len;
        }
        if (i >= b)
            break;
        i++; /* backslash; string_extent guaranteed a following byte */
        uint8_t e = *i++;
        switch (e) {
        case '"':
        case '\\':
        case '/':
        case '\'': put(dst, cap, &n, e); break;
        case 'b': put(dst, cap, &n, '\b'); break;
        case 'f': put(dst, cap, &n, '\f'); break;
        case 'n': put(dst, cap, &n, '\n'); break;
        case 'r': put(dst, cap, &n, '\r'); break;
        case 't': put(dst, cap, &n, '\t'); break;
        case 'v': put(dst, cap, &n, '\v'); break;
        case 'u': {
            uint32_t cp;
            if (hex4(i, b, &cp) != 0) {
                s->p = i;
                return fail(s, "bad \\u escape");
            }
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (b - i >= 6 && i[0] == '\\' && i[1] == 'u' && hex4(i + 2, b, &lo) == 0 &&
                    lo >= 0xDC00 && lo <= 0xDFFF) {
                    i += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else {
                    cp = '?'; /* what Java's UTF-8 encoder writes for a lone surrogate */
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                cp = '?';
            }
            put_utf8(dst, cap, &n, cp);
            break;
        }
        default: s->p = i - 1; return fail(s, "unknown escape in string");
        }
    }
    *out_len = n;
    return 0;
}

/* A quoted string value copied into the arena, NUL-terminated. */
static int arena_string(json_scan *s, char **out)
{
    const uint8_t *a = NULL, *b = NULL;
    bool escaped = false;
    if (string_extent(s, &a, &b, &escaped) != 0)
        return -1;
    size_t cap = (size_t)(b - a);
    char *dst = rmq_arena_alloc_str(s->cmd, cap + 1);
    if (!dst)
        return fail(s, "out of memory");
    size_t n = cap;
    if (!escaped)
        memcpy(dst, a, cap);
    else if (unescape(s, a, b, dst, cap, &n) != 0)
        return -1;
    dst[n] = '\0';
    *out = dst;
    return 0;
}

/* A quoted string to look at, not keep: unescaped content stays in the frame
 * (*text points at it, the normal case); an escaped one is decoded into buf
 * (at most cap bytes, not terminated; cap 0 only skips it). *len is the full
 * decoded length, so an over-long text simply matches nothing. */
static int quoted_view(json_scan *s, char *buf, size_t cap, const char **text, size_t *len)
{
    const uint8_t *a = NULL, *b = NULL;
    bool escaped = false;
    if (string_extent(s, &a, &b, &escaped) != 0)
        return -1;
    if (!escaped) {
        *text = (const char *)a;
        *len = (size_t)(b - a);
        return 0;
    }
    *text = buf;
    return unescape(s, a, b, buf, cap, len);
}

/* Past a run of at least one digit at i, or NULL when there is none. */
static const uint8_t *digit_run(const uint8_t *i, const uint8_t *end)
{
    const uint8_t *start = i;
    while (i < end && *i >= '0' && *i <= '9')
        i++;
    return i == start ? NULL : i;
}

/* Length of the JSON number at p (-, digits, fraction, exponent); 0 when
 * there is none. */
static size_t scan_number(const uint8_t *p, const uint8_t *end)
{
    const uint8_t *i = p;
    if (i < end && *i == '-')
        i++;
    if (!(i = digit_run(i, end)))
        return 0;
    if (i < end && *i == '.' && !(i = digit_run(i + 1, end)))
        return 0;
    if (i < end && (*i == 'e' || *i == 'E')) {
        i++;
        if (i < end && (*i == '+' || *i == '-'))
            i++;
        if (!(i = digit_run(i, end)))
            return 0;
    }
    return (size_t)(i - p);
}

/* `word` is a string literal: its length is a compile-time constant, so the
 * compare inlines (no strlen/memcmp calls on the hot path). */
#define literal(s, word) literal_n((s), (word), sizeof(word) - 1)

static inline bool literal_n(json_scan *s, const char *word, size_t n)
{
    if (s->p >= s->end || *s->p != (uint8_t)word[0])
        return false;
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return false;
    if ((size_t)(s->end - s->p) > n && is_ident(s->p[n]))
        return false;
    s->p += n;
    return true;
}

/* A scalar as text (ext values, remark): strings unescaped, numbers and
 * booleans in their textual form, null as NULL. */
static int scalar_text(json_scan *s, char **out, const char *what)
{
    int c = peek(s);
    if (c == '"' || c == '\'')
        return arena_string(s, out);
    if (c == '-' || (c >= '0' && c <= '9')) {
        size_t n = scan_number(s->p, s->end);
        if (n == 0)
            return fail(s, "malformed number");
        char *dst = rmq_cmd_strndup(s->cmd, (const char *)s->p, n);
        if (!dst)
            return fail(s, "out of memory");
        s->p += n;
        *out = dst;
        return 0;
    }
    if (literal(s, "null")) {
        *out = NULL;
        return 0;
    }
    const char *word = literal(s, "true") ? "true" : literal(s, "false") ? "false" : NULL;
    if (word) {
        *out = rmq_cmd_strdup(s->cmd, word);
        return *out ? 0 : fail(s, "out of memory");
    }
    return fail(s, what);
}

/* A bare (unquoted) key: an identifier, as fastjson allows. */
static int bare_key(json_scan *s, const uint8_t **a, size_t *len)
{
    *a = s->p;
    while (s->p < s->end && is_ident(*s->p))
        s->p++;
    *len = (size_t)(s->p - *a);
    return *len ? 0 : fail(s, "expected an object key");
}

/* After a key: the ':' and the blanks around it. */
static int key_colon(json_scan *s)
{
    skip_ws(s);
    if (peek(s) != ':')
        return fail(s, "expected ':' after key");
    s->p++;
    skip_ws(s);
    return 0;
}

/* An ext key goes to the arena whole. */
static int arena_key(json_scan *s, char **out)
{
    int c = peek(s);
    if (c == '"' || c == '\'') {
        if (arena_string(s, out) != 0)
            return -1;
    } else {
        const uint8_t *a = NULL;
        size_t n = 0;
        if (bare_key(s, &a, &n) != 0)
            return -1;
        *out = rmq_cmd_strndup(s->cmd, (const char *)a, n);
        if (!*out)
            return fail(s, "out of memory");
    }
    return key_colon(s);
}

/* A key to look at, not keep (top-level keys, keys skipped with their
 * values): quoted (either quote, quoted_view) or bare (left in the frame). */
static int object_key(json_scan *s, char *buf, size_t cap, const char **key, size_t *len)
{
    int c = peek(s);
    if (c == '"' || c == '\'') {
        if (quoted_view(s, buf, cap, key, len) != 0)
            return -1;
    } else {
        const uint8_t *a = NULL;
        if (bare_key(s, &a, len) != 0)
            return -1;
        *key = (const char *)a;
    }
    return key_colon(s);
}

static int skip_scalar(json_scan *s)
{
    int c = peek(s);
    if (c == '"' || c == '\'') {
        const uint8_t *a = NULL, *b = NULL;
        bool escaped = false;
        return string_extent(s, &a, &b, &escaped);
    }
    const uint8_t *a = s->p;
    while (s->p < s->end && (is_ident(*s->p) || *s->p == '-' || *s->p == '+' || *s->p == '.'))
        s->p++;
    return s->p == a ? fail(s, "expected a value") : 0;
}

static int skip_key(json_scan *s)
{
    const char *key;
    size_t len;
    return object_key(s, NULL, 0, &key, &len);
}

/* Skips any value of an unknown key. Iterative with a bit stack
 * (1 = object) so hostile nesting cannot exhaust the C stack. */
static int skip_value(json_scan *s)
{
    uint64_t kinds = 0;
    int depth = 0;
    for (;;) {
        int c = peek(s);
        bool closed = false;
        if (c == '{' || c == '[') {
            if (depth == MAX_SKIP_DEPTH)
                return fail(s, "nesting deeper than 64 levels");
            kinds = (kinds << 1) | (c == '{');
            depth++;
            s->p++;
            skip_ws(s);
            c = peek(s);
            if (c == '}' || c == ']') {
                if ((c == '}') != (bool)(kinds & 1))
                    return fail(s, "mismatched bracket");
                s->p++;
                kinds >>= 1;
                depth--;
                closed = true;
            } else if (kinds & 1) {
                if (skip_key(s) != 0)
                    return -1;
                continue;
            } else {
                continue;
            }
        }
        if (!closed && skip_scalar(s) != 0)
            return -1;
        /* after a complete value: close containers or move to the next item */
        for (;;) {
            if (depth == 0)
                return 0;
            skip_ws(s);
            c = peek(s);
            if (c == ',') {
                s->p++;
                skip_ws(s);
                if ((kinds & 1) && skip_key(s) != 0)
                    return -1;
                break;
            }
            if ((c == '}' && (kinds & 1)) || (c == ']' && !(kinds & 1))) {
                s->p++;
                kinds >>= 1;
                depth--;
                continue;
            }
            return fail(s, "expected ',' or a closing bracket");
        }
    }
}

/* The common case of an int field (rmq_json_plain_int) not followed by a
 * fraction or exponent. Returns false (moving nothing) for anything else,
 * which the general path then decides, error offsets included. */
static inline bool plain_int(json_scan *s, int32_t *dst)
{
    int32_t v;
    const uint8_t *i = rmq_json_plain_int(s->p, s->end, &v);
    if (!i || (i < s->end && (*i == '.' || *i == 'e' || *i == 'E')))
        return false;
    *dst = v;
    s->p = i;
    return true;
}

static int int_field(json_scan *s, int32_t *dst, const char *name)
{
    if (plain_int(s, dst))
        return 0;
    const uint8_t *a = NULL, *b = NULL;
    bool escaped = false;
    int c = peek(s);
    if (literal(s, "null"))
        return 0;
    if (c == '"' || c == '\'') {
        /* fastjson converts a quoted integer for an int field */
        if (string_extent(s, &a, &b, &escaped) != 0)
            return -1;
    } else {
        a = s->p;
        size_t n = scan_number(s->p, s->end);
        if (n == 0)
            return fail(s, name);
        b = a + n;
        s->p = b;
    }
    const uint8_t *i = a;
    bool neg = i < b && *i == '-';
    if (neg)
        i++;
    if (i == b)
        return fail(s, name);
    int64_t v = 0;
    for (; i < b; i++) {
        if (*i < '0' || *i > '9')
            return fail(s, name);
        v = v * 10 + (*i - '0');
        if (v > (int64_t)INT32_MAX + 1)
            return fail(s, name);
    }
    if (neg)
        v = -v;
    if (v > INT32_MAX)
        return fail(s, name);
    *dst = (int32_t)v;
    return 0;
}

static int language_field(json_scan *s)
{
    int c = peek(s);
    if (literal(s, "null"))
        return 0;
    if (c == '"' || c == '\'') {
        char buf[16];
        const char *name = NULL;
        size_t n = 0;
        if (quoted_view(s, buf, sizeof buf, &name, &n) != 0)
            return -1;
        /* no language name is longer; an escaped one may not fit buf */
        s->cmd->language = n <= sizeof buf ? rmq_language_from_name(name, n) : RMQ_LANG_OTHER;
        return 0;
    }
    int32_t ordinal;
    if (int_field(s, &ordinal, "language is neither a name nor an integer") != 0)
        return -1;
    /* the ordinal of Java's enum; outside it Java has no constant */
    s->cmd->language = ordinal >= 0 && ordinal <= 13 ? ordinal : RMQ_LANG_OTHER;
    return 0;
}

static int ext_object(json_scan *s, size_t header_len)
{
    rmq_cmd *cmd = s->cmd;
    cmd->ext_count = 0; /* a repeated extFields key: the last one wins */
    if (literal(s, "null")) {
        cmd->has_ext = false;
        return 0;
    }
    if (peek(s) != '{')
        return fail(s, "extFields is not an object");
    s->p++;
    cmd->has_ext = true;
    uint32_t guess = (uint32_t)(header_len / 8 + 2);
    if (guess > EXT_INITIAL_CAP_MAX)
        guess = EXT_INITIAL_CAP_MAX;
    if (rmq_cmd_ext_reserve(cmd, guess) != 0)
        return fail(s, "out of memory");
    skip_ws(s);
    if (peek(s) == '}') {
        s->p++;
        return 0;
    }
    for (;;) {
        char *key, *value;
        if (arena_key(s, &key) != 0)
            return -1;
        int c = peek(s);
        if (c == '{' || c == '[')
            return fail(s, "extFields value is an object or array");
        if (scalar_text(s, &value, "extFields value is not a string, number, boolean or null") != 0)
            return -1;
        if (rmq_cmd_ext_put_owned(cmd, key, value) != 0)
            return fail(s, "out of memory");
        skip_ws(s);
        c = peek(s);
        if (c == ',') {
            s->p++;
            skip_ws(s);
            if (peek(s) == '}') { /* fastjson tolerates a trailing comma */
                s->p++;
                return 0;
            }
            continue;
        }
        if (c == '}') {
            s->p++;
            return 0;
        }
        return fail(s, "expected ',' or '}' in extFields");
    }
}

/* n is a constant at every call, so memcmp becomes one or two loads. */
#define KEY_IS(key, name) (memcmp((key), (name), sizeof(name) - 1) == 0)

/* klen has already been checked by the switch: keys are told apart by
 * length, then by their first byte. */
static int header_member(json_scan *s, const char *key, size_t klen, size_t header_len)
{
    rmq_cmd *cmd = s->cmd;
    switch (klen) {
    case 4:
        if (key[0] == 'c' && KEY_IS(key, "code"))
            return int_field(s, &cmd->code, "code is not a 32-bit integer");
        if (key[0] == 'f' && KEY_IS(key, "flag"))
            return int_field(s, &cmd->flag, "flag is not a 32-bit integer");
        break;
    case 6:
        if (key[0] == 'o' && KEY_IS(key, "opaque"))
            return int_field(s, &cmd->opaque, "opaque is not a 32-bit integer");
        if (key[0] == 'r' && KEY_IS(key, "remark")) {
            int c = peek(s);
            if (c == '{' || c == '[')
                return fail(s, "remark is an object or array");
            return scalar_text(s, &cmd->remark, "remark is not a string");
        }
        break;
    case 7:
        if (KEY_IS(key, "version"))
            return int_field(s, &cmd->version, "version is not a 32-bit integer");
        break;
    case 8:
        if (KEY_IS(key, "language"))
            return language_field(s);
        break;
    case 9:
        if (KEY_IS(key, "extFields"))
            return ext_object(s, header_len);
        break;
    default: break;
    }
    return skip_value(s);
}

int rmq_header_json_decode(rmq_cmd *cmd, const uint8_t *hdr, size_t len, char *errbuf,
                           size_t errlen)
{
    /* the compact path never fails a header: whatever it declines is decided
     * here from the first byte, so leniency and error texts are this file's */
    if (rmq_header_json_decode_compact(cmd, hdr, len) == 0)
        return 0;
    return rmq_header_json_decode_general(cmd, hdr, len, errbuf, errlen);
}

int rmq_header_json_decode_general(rmq_cmd *cmd, const uint8_t *hdr, size_t len, char *errbuf,
                                   size_t errlen)
{
    json_scan s = {hdr, hdr, hdr + len, cmd, errbuf, errlen};
    skip_ws(&s);
    if (peek(&s) != '{')
        return fail(&s, "header does not start with '{'");
    s.p++;
    skip_ws(&s);
    if (peek(&s) == '}') {
        s.p++;
    } else {
        for (;;) {
            /* no header key is longer than 9: a longer escaped key need not
             * be kept whole, it only has to match nothing */
            char buf[32];
            const char *key = buf;
            size_t klen = 0;
            if (object_key(&s, buf, sizeof buf - 1, &key, &klen) != 0)
                return -1;
            if (header_member(&s, key, klen < sizeof buf ? klen : 0, len) != 0)
                return -1;
            skip_ws(&s);
            int c = peek(&s);
            if (c == ',') {
                s.p++;
                skip_ws(&s);
                if (peek(&s) == '}') {
                    s.p++;
                    break;
                }
                continue;
            }
            if (c == '}') {
                s.p++;
                break;
            }
            return fail(&s, "expected ',' or '}' after a header member");
        }
    }
    /* the C++ client counts a trailing "\n" in the header length */
    skip_ws(&s);
    if (s.p != s.end)
        return fail(&s, "unexpected bytes after the header object");
    return 0;
}
