/* header_json_compact.c — the JSON header as Java/fastjson and ali-ons send it
 * (protocol.md §2.2, Appendix B): no whitespace, each known key at most once,
 * only the plain escapes (escaped_copy). It never rejects a header: on any surprise it restores the
 * command and the general scanner (header_json_decode.c) starts over, so
 * leniency and error reasons stay that file's alone. */
#include <stdbool.h>
#include <string.h>

#include "cmd_internal.h"

/* the general scanner's first ext reservation, so both leave the same ext_cap */
#define EXT_INITIAL_CAP_MAX 64u

enum {
    SEEN_CODE = 1u << 0,
    SEEN_FLAG = 1u << 1,
    SEEN_OPAQUE = 1u << 2,
    SEEN_VERSION = 1u << 3,
    SEEN_LANGUAGE = 1u << 4,
    SEEN_REMARK = 1u << 5,
    SEEN_EXT = 1u << 6,
    SEEN_SERIALIZE_TYPE = 1u << 7,
};

typedef struct compact_scan {
    const uint8_t *p;
    const uint8_t *end;
    rmq_cmd *cmd;
} compact_scan;

/* `lit` is a string literal, so the compare inlines to a load or two. */
#define TAKE(s, lit) take_literal((s), (lit), sizeof(lit) - 1)

static inline bool take_literal(compact_scan *s, const char *lit, size_t n)
{
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n) != 0)
        return false;
    s->p += n;
    return true;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define COMPACT_WORD_SCAN 1
#endif

/* s->p is at a '"'. [*a, *b) becomes the content and s->p moves past the
 * closing quote. False on a backslash (the general scanner unescapes) or a
 * missing quote. Inline: header strings are short, and a call plus loop
 * set-up cost more than the scan. */
static inline bool plain_string(compact_scan *s, const uint8_t **a, const uint8_t **b)
{
    const uint8_t *i = s->p + 1;
    const uint8_t *end = s->end;
#ifdef COMPACT_WORD_SCAN
    while (end - i >= 8) {
        uint64_t w;
        memcpy(&w, i, sizeof w);
        uint64_t hit = rmq_word_has_byte(w, '"') | rmq_word_has_byte(w, '\\');
        if (hit) {
            /* the lowest flagged byte is always a true match */
            i += (unsigned)__builtin_ctzll(hit) / 8;
            goto stop;
        }
        i += 8;
    }
#endif
    while (i < end && *i != '"' && *i != '\\')
        i++;
#ifdef COMPACT_WORD_SCAN
stop:
#endif
    if (i >= end || *i != '"')
        return false;
    *a = s->p + 1;
    *b = i;
    s->p = i + 1;
    return true;
}

static inline bool at(const compact_scan *s, uint8_t c)
{
    return s->p < s->end && *s->p == c;
}

/* What follows the int is checked by the caller (',' or '}' only, so "1.5"
 * or "1e3" go back to the general path). */
static inline bool plain_int(compact_scan *s, int32_t *dst)
{
    const uint8_t *after = rmq_json_plain_int(s->p, s->end, dst);
    if (!after)
        return false;
    s->p = after;
    return true;
}

static int hex_digit(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The escapes Java and ali-ons write into a send's properties (\u0001,
 * \u0002) and the one-letter ones, decoded into the arena. Every property
 * string has them, so declining here sent every send to the general path.
 * Anything the general scanner treats specially (\u0000, non-ASCII \u,
 * surrogates, \' and \v, bad escapes) still declines: its rules stay there. */
static bool escaped_copy(compact_scan *s, char **out)
{
    const uint8_t *a = s->p + 1, *end = s->end, *b = a;
    /* the closing quote is the first one after an even run of backslashes */
    for (;;) {
        b = memchr(b, '"', (size_t)(end - b));
        if (!b)
            return false;
        const uint8_t *k = b;
        while (k > a && k[-1] == '\\')
            k--;
        if (((b - k) & 1) == 0)
            break;
        b++;
    }
    char *dst = rmq_arena_alloc_str(s->cmd, (size_t)(b - a) + 1);
    if (!dst)
        return false;
    size_t n = 0;
    for (const uint8_t *i = a; i < b;) {
        const uint8_t *bs = memchr(i, '\\', (size_t)(b - i));
        size_t run = (size_t)((bs ? bs : b) - i);
        memcpy(dst + n, i, run);
        n += run;
        if (!bs)
            break;
        uint8_t e = bs[1]; /* bs + 1 < b: backslash runs before b are even */
        i = bs + 2;
        switch (e) {
        case '"':
        case '\\':
        case '/': dst[n++] = (char)e; break;
        case 'b': dst[n++] = '\b'; break;
        case 'f': dst[n++] = '\f'; break;
        case 'n': dst[n++] = '\n'; break;
        case 'r': dst[n++] = '\r'; break;
        case 't': dst[n++] = '\t'; break;
        case 'u': {
            if (b - i < 4 || i[0] != '0' || i[1] != '0')
                return false;
            int hi = hex_digit(i[2]), lo = hex_digit(i[3]);
            if (hi < 0 || hi > 7 || lo < 0 || (hi | lo) == 0)
                return false;
            dst[n++] = (char)(hi << 4 | lo);
            i += 4;
            break;
        }
        default: return false;
        }
    }
    dst[n] = '\0';
    *out = dst;
    s->p = b + 1;
    return true;
}

/* A quoted string copied into the arena, NUL-terminated. */
static inline bool arena_copy(compact_scan *s, char **out)
{
    const uint8_t *a = NULL, *b = NULL;
    if (!at(s, '"'))
        return false;
    if (!plain_string(s, &a, &b))
        return escaped_copy(s, out);
    size_t n = (size_t)(b - a);
    char *dst = rmq_arena_alloc_str(s->cmd, n + 1);
    if (!dst)
        return false;
    memcpy(dst, a, n);
    dst[n] = '\0';
    *out = dst;
    return true;
}

/* ali-ons keeps JSON types in ext values; the host sees their text, as the
 * general scanner gives it. */
static bool ext_value(compact_scan *s, char **out)
{
    if (s->p >= s->end)
        return false;
    switch (*s->p) {
    case '"': return arena_copy(s, out);
    case 't':
        if (!TAKE(s, "true"))
            return false;
        *out = rmq_cmd_strndup(s->cmd, "true", 4);
        return *out != NULL;
    case 'f':
        if (!TAKE(s, "false"))
            return false;
        *out = rmq_cmd_strndup(s->cmd, "false", 5);
        return *out != NULL;
    case 'n': *out = NULL; return TAKE(s, "null");
    default: break;
    }
    const uint8_t *a = s->p;
    if (at(s, '-'))
        s->p++;
    const uint8_t *digits = s->p;
    while (s->p < s->end && (uint8_t)(*s->p - '0') <= 9)
        s->p++;
    if (s->p == digits)
        return false;
    *out = rmq_cmd_strndup(s->cmd, (const char *)a, (size_t)(s->p - a));
    return *out != NULL;
}

static bool ext_fields(compact_scan *s, size_t header_len)
{
    rmq_cmd *cmd = s->cmd;
    if (!at(s, '{'))
        return false;
    s->p++;
    cmd->ext_count = 0;
    cmd->has_ext = true;
    uint32_t guess = (uint32_t)(header_len / 8 + 2);
    if (guess > EXT_INITIAL_CAP_MAX)
        guess = EXT_INITIAL_CAP_MAX;
    if (rmq_cmd_ext_reserve(cmd, guess) != 0)
        return false;
    if (at(s, '}')) {
        s->p++;
        return true;
    }
    uint64_t first_bytes[4] = {0};
    for (;;) {
        char *key = NULL, *value = NULL;
        if (!arena_copy(s, &key) || !at(s, ':'))
            return false;
        s->p++;
        if (!ext_value(s, &value))
            return false;
        /* a key whose first byte no earlier key had is new: no search (a
         * send's single-letter keys never search) */
        uint8_t k0 = (uint8_t)key[0];
        uint64_t bit = 1ull << (k0 & 63);
        bool maybe_seen = (first_bytes[k0 >> 6] & bit) != 0;
        first_bytes[k0 >> 6] |= bit;
        if ((maybe_seen ? rmq_cmd_ext_put_owned(cmd, key, value)
                        : rmq_cmd_ext_append_owned(cmd, key, value)) != 0)
            return false;
        if (at(s, ',')) {
            s->p++; /* a trailing comma fails the key's quote check */
            continue;
        }
        if (!at(s, '}'))
            return false;
        s->p++;
        return true;
    }
}

static bool language_value(compact_scan *s)
{
    if (TAKE(s, "\"JAVA\"")) {
        s->cmd->language = RMQ_LANG_JAVA;
        return true;
    }
    const uint8_t *a = NULL, *b = NULL;
    if (!at(s, '"') || !plain_string(s, &a, &b))
        return false;
    s->cmd->language = rmq_language_from_name((const char *)a, (size_t)(b - a));
    return true;
}

/* The host never reads serializeTypeCurrentRPC: the frame's type byte rules. */
static bool skipped_string_value(compact_scan *s)
{
    if (TAKE(s, "\"JSON\""))
        return true;
    const uint8_t *a = NULL, *b = NULL;
    return at(s, '"') && plain_string(s, &a, &b);
}

/* One member at s->p (a '"'); *seen gets the key's bit. */
static bool member(compact_scan *s, unsigned *seen, size_t header_len)
{
    rmq_cmd *cmd = s->cmd;
    unsigned bit;
    bool ok;
    if (s->end - s->p < 2)
        return false;
    switch (s->p[1]) {
    case 'c':
        bit = SEEN_CODE;
        ok = TAKE(s, "\"code\":") && plain_int(s, &cmd->code);
        break;
    case 'e':
        bit = SEEN_EXT;
        ok = TAKE(s, "\"extFields\":") && ext_fields(s, header_len);
        break;
    case 'f':
        bit = SEEN_FLAG;
        ok = TAKE(s, "\"flag\":") && plain_int(s, &cmd->flag);
        break;
    case 'l':
        bit = SEEN_LANGUAGE;
        ok = TAKE(s, "\"language\":") && language_value(s);
        break;
    case 'o':
        bit = SEEN_OPAQUE;
        ok = TAKE(s, "\"opaque\":") && plain_int(s, &cmd->opaque);
        break;
    case 'r':
        bit = SEEN_REMARK;
        ok = TAKE(s, "\"remark\":") && arena_copy(s, &cmd->remark);
        break;
    case 's':
        bit = SEEN_SERIALIZE_TYPE;
        ok = TAKE(s, "\"serializeTypeCurrentRPC\":") && skipped_string_value(s);
        break;
    case 'v':
        bit = SEEN_VERSION;
        ok = TAKE(s, "\"version\":") && plain_int(s, &cmd->version);
        break;
    default: return false;
    }
    /* a repeated key has its own rules (last wins, ext reset): general path */
    if (!ok || (*seen & bit))
        return false;
    *seen |= bit;
    return true;
}

static bool whole_header(compact_scan *s, size_t header_len)
{
    unsigned seen = 0;
    s->p++; /* '{', checked by the caller, as is the '"' after it */
    for (;;) {
        if (!member(s, &seen, header_len))
            return false;
        if (at(s, ',')) {
            s->p++;
            if (!at(s, '"'))
                return false;
            continue;
        }
        if (!at(s, '}'))
            return false;
        s->p++;
        break;
    }
    /* the C++ client counts a trailing "\n" in the header length */
    for (; s->p < s->end; s->p++) {
        uint8_t c = *s->p;
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\b')
            return false;
    }
    return true;
}

int rmq_header_json_decode_compact(rmq_cmd *cmd, const uint8_t *hdr, size_t len)
{
    if (len < 2 || hdr[0] != '{' || hdr[1] != '"')
        return 1;
    rmq_cmd saved = *cmd;
    rmq_arena_mark mark = rmq_arena_get_mark(cmd);
    compact_scan s = {hdr, hdr + len, cmd};
    if (whole_header(&s, len))
        return 0;
    /* nothing may point into the rewound bytes: every decoded field goes
     * back, only the arena chain (which may have grown) is kept */
    struct rmq_arena_block *arena = cmd->arena;
    *cmd = saved;
    cmd->arena = arena;
    rmq_arena_rewind(cmd, mark);
    return 1;
}
