/* register_body.c — single-pass, schema-specific parser of REGISTER_BROKER
 * bodies (JSON and compressed). It exists because a generic JSON DOM is ~4x
 * too slow for 10,000-topic registrations; it must stay allocation-light and
 * must never touch route state. */
#include "register_body.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

bool data_version_equal(const data_version *a, const data_version *b)
{
    return a->counter == b->counter && a->timestamp == b->timestamp;
}

void register_body_init(register_body *rb)
{
    memset(rb, 0, sizeof(*rb));
}

void register_body_free(register_body *rb)
{
    free(rb->topics);
    free(rb->filter_servers);
    free(rb->arena);
    register_body_init(rb);
}

int32_t body_crc32_masked(const void *data, size_t len)
{
    uLong c = crc32(0L, Z_NULL, 0);
    const Bytef *p = data;
    while (len > 0) {
        uInt chunk = len > 0x40000000u ? 0x40000000u : (uInt)len;
        c = crc32(c, p, chunk);
        p += chunk;
        len -= chunk;
    }
    return (int32_t)(c & 0x7FFFFFFFu);
}

/* ---- JSON cursor ---------------------------------------------------------- */

typedef struct cursor {
    const char *start; /* of the input, for offsets */
    const char *p;
    const char *end;
    register_body *rb;
    const char *err;
} cursor;

static int arena_prepare(register_body *rb, size_t need)
{
    free(rb->arena);
    rb->arena = malloc(need);
    rb->arena_len = 0;
    rb->arena_cap = need;
    return rb->arena ? 0 : -1;
}

static void skip_ws(cursor *c)
{
    if (c->p < c->end && (unsigned char)*c->p > ' ')
        return; /* compact JSON: nearly always */
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t'))
        c->p++;
}

static bool expect(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    c->err = "unexpected character";
    return false;
}

static int hexval(char h)
{
    if (h >= '0' && h <= '9')
        return h - '0';
    if (h >= 'a' && h <= 'f')
        return h - 'a' + 10;
    if (h >= 'A' && h <= 'F')
        return h - 'A' + 10;
    return -1;
}

static char *arena_put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

/* A quoted string (either quote) unescaped into the arena; *out points at it.
 * The arena is sized so that any string of the input fits. */
static bool parse_quoted(cursor *c, const char **out)
{
    char q = *c->p++;
    char *o = c->rb->arena + c->rb->arena_len;
    char *start = o;
    const char *p = c->p;
    for (;;) {
        /* fast path: copy the plain run */
        const char *run = p;
        while (p < c->end && *p != q && *p != '\\')
            p++;
        memcpy(o, run, (size_t)(p - run));
        o += p - run;
        if (p >= c->end) {
            c->err = "unterminated string";
            return false;
        }
        if (*p == q) {
            p++;
            break;
        }
        p++; /* backslash */
        if (p >= c->end) {
            c->err = "bad escape";
            return false;
        }
        char e = *p++;
        switch (e) {
        case 'n': *o++ = '\n'; break;
        case 't': *o++ = '\t'; break;
        case 'r': *o++ = '\r'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'u': {
            if (c->end - p < 4) {
                c->err = "bad \\u escape";
                return false;
            }
            uint32_t cp = 0;
            for (int i = 0; i < 4; i++) {
                int h = hexval(p[i]);
                if (h < 0) {
                    c->err = "bad \\u escape";
                    return false;
                }
                cp = cp * 16 + (uint32_t)h;
            }
            p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && c->end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
                uint32_t lo = 0;
                bool ok = true;
                for (int i = 0; i < 4; i++) {
                    int h = hexval(p[2 + i]);
                    if (h < 0)
                        ok = false;
                    lo = lo * 16 + (uint32_t)(h < 0 ? 0 : h);
                }
                if (ok && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                }
            }
            o = arena_put_utf8(o, cp);
            break;
        }
        default: *o++ = e; break; /* \" \\ \/ \' and fastjson's lenient others */
        }
    }
    *o++ = '\0';
    c->rb->arena_len = (size_t)(o - c->rb->arena);
    c->p = p;
    *out = start;
    return true;
}

static bool is_bare_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '$' || ch == '-' || ch == '+' || ch == '.' || ch == '%';
}

/* A bare token (number, literal or fastjson unquoted key) copied to the arena. */
static bool parse_bare(cursor *c, const char **out)
{
    const char *s = c->p;
    while (c->p < c->end && is_bare_char(*c->p))
        c->p++;
    if (c->p == s) {
        c->err = "unexpected character";
        return false;
    }
    char *o = c->rb->arena + c->rb->arena_len;
    size_t n = (size_t)(c->p - s);
    memcpy(o, s, n);
    o[n] = '\0';
    c->rb->arena_len += n + 1;
    *out = o;
    return true;
}

/* Any scalar as text: quoted string, number, literal. NULL for JSON null. */
static bool parse_scalar(cursor *c, const char **out)
{
    skip_ws(c);
    if (c->p >= c->end) {
        c->err = "unexpected end";
        return false;
    }
    if (*c->p == '"' || *c->p == '\'')
        return parse_quoted(c, out);
    if (!parse_bare(c, out))
        return false;
    if (strcmp(*out, "null") == 0)
        *out = NULL;
    return true;
}

static bool parse_key(cursor *c, const char **out)
{
    return parse_scalar(c, out);
}

static bool skip_value(cursor *c, int depth);

static bool skip_container(cursor *c, char open, char close, int depth)
{
    c->p++;
    skip_ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return true;
    }
    for (;;) {
        if (open == '{') {
            size_t mark = c->rb->arena_len;
            const char *k;
            if (!parse_key(c, &k) || !expect(c, ':'))
                return false;
            c->rb->arena_len = mark;
        }
        if (!skip_value(c, depth + 1))
            return false;
        skip_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        return expect(c, close);
    }
}

static bool skip_value(cursor *c, int depth)
{
    if (depth > 64) {
        c->err = "nesting too deep";
        return false;
    }
    skip_ws(c);
    if (c->p >= c->end) {
        c->err = "unexpected end";
        return false;
    }
    if (*c->p == '{')
        return skip_container(c, '{', '}', depth);
    if (*c->p == '[')
        return skip_container(c, '[', ']', depth);
    if (*c->p == '"' || *c->p == '\'') {
        /* a skipped string without escapes needs no copy; one with escapes
         * takes the full path so bad escapes are still refused */
        const char *p = c->p + 1;
        const char *qp = memchr(p, *c->p, (size_t)(c->end - p));
        if (qp && !memchr(p, '\\', (size_t)(qp - p))) {
            c->p = qp + 1;
            return true;
        }
    }
    size_t mark = c->rb->arena_len;
    const char *v;
    bool ok = parse_scalar(c, &v);
    c->rb->arena_len = mark;
    return ok;
}

static bool to_int64(const char *s, int64_t *v)
{
    if (!s || !*s)
        return false;
    char *e;
    long long x = strtoll(s, &e, 10);
    if (*e != '\0')
        return false;
    *v = x;
    return true;
}

static bool parse_int_field(cursor *c, int64_t *v)
{
    skip_ws(c);
    /* fast path: a plain decimal number followed by a delimiter */
    const char *p = c->p;
    bool neg = p < c->end && *p == '-';
    if (neg)
        p++;
    if (p < c->end && *p >= '0' && *p <= '9') {
        uint64_t x = 0;
        const char *digits = p;
        while (p < c->end && *p >= '0' && *p <= '9' && p - digits < 18)
            x = x * 10 + (uint64_t)(*p++ - '0');
        if (p < c->end && (*p == ',' || *p == '}' || *p == ']' || *p == ' ')) {
            *v = neg ? -(int64_t)x : (int64_t)x;
            c->p = p;
            return true;
        }
    }
    size_t mark = c->rb->arena_len;
    const char *s;
    if (!parse_scalar(c, &s))
        return false;
    bool ok = s == NULL || to_int64(s, v); /* null keeps the default */
    c->rb->arena_len = mark;
    if (!ok)
        c->err = "bad number";
    return ok;
}

static bool parse_bool_field(cursor *c, bool *v)
{
    skip_ws(c);
    /* fast path: the bare literals Java writes */
    if (c->end - c->p >= 6 && memcmp(c->p, "false", 5) == 0 && !is_bare_char(c->p[5])) {
        *v = false;
        c->p += 5;
        return true;
    }
    if (c->end - c->p >= 5 && memcmp(c->p, "true", 4) == 0 && !is_bare_char(c->p[4])) {
        *v = true;
        c->p += 4;
        return true;
    }
    size_t mark = c->rb->arena_len;
    const char *s;
    if (!parse_scalar(c, &s))
        return false;
    if (s)
        *v = strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0;
    c->rb->arena_len = mark;
    return true;
}

/* Iterates the members of an object; `member` parses the value of each key. */
typedef bool (*member_fn)(cursor *c, const char *key, size_t klen, void *ud);

/* Exact key match; the literal's size is a compile-time constant. */
#define KEY_IS(lit) (klen == sizeof(lit) - 1 && memcmp(key, lit, sizeof(lit) - 1) == 0)

static bool topic_table_member(cursor *c, const char *key, size_t klen, void *ud);

static bool parse_object(cursor *c, member_fn member, void *ud)
{
    skip_ws(c);
    if (c->p < c->end && c->p[0] == 'n' && c->end - c->p >= 4 && memcmp(c->p, "null", 4) == 0) {
        c->p += 4;
        return true;
    }
    if (!expect(c, '{'))
        return false;
    skip_ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        return true;
    }
    for (;;) {
        const char *k;
        size_t klen;
        size_t mark = c->rb->arena_len;
        skip_ws(c);
        const char *q = c->p < c->end && *c->p == '"' && member != topic_table_member
                            ? memchr(c->p + 1, '"', (size_t)(c->end - c->p - 1))
                            : NULL;
        if (q && !memchr(c->p + 1, '\\', (size_t)(q - c->p - 1))) {
            /* a plain quoted key is compared where it lies: only the topic
             * table's keys (topic names) must outlive the parse */
            k = c->p + 1;
            klen = (size_t)(q - k);
            c->p = q + 1;
            if (!expect(c, ':'))
                return false;
        } else {
            if (!parse_key(c, &k) || !expect(c, ':'))
                return false;
            if (!k)
                k = "null";
            /* arena_len - mark - 1 is the unescaped key length (NUL excluded) */
            klen = k == c->rb->arena + mark ? c->rb->arena_len - mark - 1 : strlen(k);
        }
        if (!member(c, k, klen, ud))
            return false;
        skip_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        return expect(c, '}');
    }
}

static bool dv_member(cursor *c, const char *key, size_t klen, void *ud)
{
    data_version *dv = ud;
    if (KEY_IS("counter"))
        return parse_int_field(c, &dv->counter);
    if (KEY_IS("timestamp"))
        return parse_int_field(c, &dv->timestamp);
    if (KEY_IS("stateVersion")) {
        dv->has_state_version = true;
        return parse_int_field(c, &dv->state_version);
    }
    return skip_value(c, 1);
}

static bool topic_member(cursor *c, const char *key, size_t klen, void *ud)
{
    rb_topic *t = ud;
    int64_t v;
    switch (key[0]) {
    case 'r':
        if (KEY_IS("readQueueNums")) {
            v = t->read_queue_nums;
            if (!parse_int_field(c, &v))
                return false;
            t->read_queue_nums = (int32_t)v;
            return true;
        }
        break;
    case 'w':
        if (KEY_IS("writeQueueNums")) {
            v = t->write_queue_nums;
            if (!parse_int_field(c, &v))
                return false;
            t->write_queue_nums = (int32_t)v;
            return true;
        }
        break;
    case 'p':
        if (KEY_IS("perm")) {
            v = t->perm;
            if (!parse_int_field(c, &v))
                return false;
            t->perm = (int32_t)v;
            return true;
        }
        break;
    case 't':
        if (KEY_IS("topicSysFlag")) {
            v = t->topic_sys_flag;
            if (!parse_int_field(c, &v))
                return false;
            t->topic_sys_flag = (int32_t)v;
            return true;
        }
        if (KEY_IS("topicName"))
            return parse_scalar(c, &t->name);
        break;
    case 'o':
        if (KEY_IS("order"))
            return parse_bool_field(c, &t->order);
        break;
    default: break;
    }
    return skip_value(c, 1);
}

static bool topic_table_member(cursor *c, const char *key, size_t klen, void *ud)
{
    (void)ud;
    (void)klen;
    register_body *rb = c->rb;
    if (rb->ntopics == rb->topics_cap) {
        size_t nc = rb->topics_cap ? rb->topics_cap * 2 : 64;
        rb_topic *t = realloc(rb->topics, nc * sizeof(*t));
        if (!t) {
            c->err = "out of memory";
            return false;
        }
        rb->topics = t;
        rb->topics_cap = nc;
    }
    rb_topic *t = &rb->topics[rb->ntopics];
    /* TopicConfig defaults (protocol.md §4.2) */
    t->name = NULL;
    t->read_queue_nums = 16;
    t->write_queue_nums = 16;
    t->perm = 6;
    t->topic_sys_flag = 0;
    t->order = false;
    skip_ws(c);
    if (c->end - c->p >= 4 && memcmp(c->p, "null", 4) == 0) {
        c->p += 4;
        return true; /* a null TopicConfig registers nothing */
    }
    if (!parse_object(c, topic_member, t))
        return false;
    if (!t->name)
        t->name = key; /* Java reads topicName; the map key is the same name */
    rb->ntopics++;
    return true;
}

static bool wrapper_member(cursor *c, const char *key, size_t klen, void *ud)
{
    (void)ud;
    if (KEY_IS("topicConfigTable"))
        return parse_object(c, topic_table_member, NULL);
    if (KEY_IS("dataVersion")) {
        skip_ws(c);
        c->rb->dv_begin = (size_t)(c->p - c->start);
        c->rb->dv_count++;
        bool ok = parse_object(c, dv_member, &c->rb->dv);
        c->rb->dv_end = (size_t)(c->p - c->start);
        return ok;
    }
    return skip_value(c, 1);
}

static bool push_filter(register_body *rb, const char *s)
{
    if (rb->nfilters == rb->filters_cap) {
        size_t nc = rb->filters_cap ? rb->filters_cap * 2 : 4;
        const char **f = realloc(rb->filter_servers, nc * sizeof(*f));
        if (!f)
            return false;
        rb->filter_servers = f;
        rb->filters_cap = nc;
    }
    rb->filter_servers[rb->nfilters++] = s;
    return true;
}

static bool parse_filter_list(cursor *c)
{
    skip_ws(c);
    if (c->end - c->p >= 4 && memcmp(c->p, "null", 4) == 0) {
        c->p += 4;
        return true;
    }
    c->rb->has_filter_list = true;
    if (!expect(c, '['))
        return false;
    skip_ws(c);
    if (c->p < c->end && *c->p == ']') {
        c->p++;
        return true;
    }
    for (;;) {
        const char *s;
        if (!parse_scalar(c, &s))
            return false;
        if (s && !push_filter(c->rb, s)) {
            c->err = "out of memory";
            return false;
        }
        skip_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        return expect(c, ']');
    }
}

static bool body_member(cursor *c, const char *key, size_t klen, void *ud)
{
    (void)ud;
    if (KEY_IS("topicConfigSerializeWrapper"))
        return parse_object(c, wrapper_member, NULL);
    if (KEY_IS("filterServerList"))
        return parse_filter_list(c);
    return skip_value(c, 1);
}

int register_body_parse_json(const char *data, size_t len, bool wrapper_only, register_body *out,
                             char *err, size_t errlen)
{
    /* retained strings never outgrow the text they come from */
    if (arena_prepare(out, len + 64) != 0) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    cursor c = {.start = data, .p = data, .end = data + len, .rb = out, .err = NULL};
    const char *start = data;
    bool ok = parse_object(&c, wrapper_only ? wrapper_member : body_member, NULL);
    if (!ok) {
        if (err && errlen)
            snprintf(err, errlen, "%s at offset %ld", c.err ? c.err : "syntax error",
                     (long)(c.p - start));
        return -1;
    }
    return 0; /* trailing bytes are ignored, as fastjson does after the object */
}

int data_version_parse_json(const char *data, size_t len, data_version *out)
{
    register_body tmp;
    register_body_init(&tmp);
    if (arena_prepare(&tmp, len * 2 + 64) != 0)
        return -1;
    memset(out, 0, sizeof(*out));
    cursor c = {.start = data, .p = data, .end = data + len, .rb = &tmp, .err = NULL};
    skip_ws(&c);
    bool ok = c.p < c.end && *c.p == '{' && parse_object(&c, dv_member, out);
    register_body_free(&tmp);
    return ok ? 0 : -1;
}

/* ---- compressed form ------------------------------------------------------ */

bool register_body_looks_compressed(const uint8_t *data, size_t len)
{
    return len >= 2 && (data[0] & 0x0F) == 8 && (data[0] >> 4) <= 7 &&
           ((unsigned)data[0] * 256u + data[1]) % 31u == 0;
}

static int inflate_all(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (inflateInit(&zs) != Z_OK)
        return -1;
    /* A zip bomb is refused once the inflated content reaches this: 16 times
     * what a 100,000-topic registration inflates to. */
    const size_t max_inflated = (size_t)64 << 20;
    size_t cap = len < max_inflated / 4 ? len * 4 + 1024 : max_inflated, used = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        inflateEnd(&zs);
        return -1;
    }
    zs.next_in = (Bytef *)(uintptr_t)data;
    zs.avail_in = (uInt)len;
    int rc;
    do {
        if (used == cap) {
            if (cap >= max_inflated) {
                rc = Z_DATA_ERROR;
                break;
            }
            cap = cap * 2 < max_inflated ? cap * 2 : max_inflated;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) {
                rc = Z_MEM_ERROR;
                break;
            }
            buf = nb;
        }
        zs.next_out = buf + used;
        zs.avail_out = (uInt)(cap - used);
        rc = inflate(&zs, Z_NO_FLUSH);
        used = cap - zs.avail_out;
        if (rc == Z_BUF_ERROR && zs.avail_in == 0)
            break;
    } while (rc == Z_OK || (rc == Z_BUF_ERROR && zs.avail_out == 0));
    inflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = used;
    return 0;
}

typedef struct bin_reader {
    const uint8_t *p;
    const uint8_t *end;
} bin_reader;

static bool read_i32(bin_reader *r, int32_t *v)
{
    if (r->end - r->p < 4)
        return false;
    *v = (int32_t)(((uint32_t)r->p[0] << 24) | ((uint32_t)r->p[1] << 16) |
                   ((uint32_t)r->p[2] << 8) | r->p[3]);
    r->p += 4;
    return true;
}

static bool read_chunk(bin_reader *r, const uint8_t **s, size_t *n)
{
    int32_t l;
    if (!read_i32(r, &l) || l < 0 || r->end - r->p < l)
        return false;
    *s = r->p;
    *n = (size_t)l;
    r->p += l;
    return true;
}

/* "name read write perm filterType[ attributes]" split on single spaces. */
static bool decode_topic_line(register_body *rb, const uint8_t *s, size_t n, rb_topic *t)
{
    const char *tok[6];
    size_t tlen[6];
    size_t ntok = 0;
    size_t i = 0, start = 0;
    for (; i <= n && ntok < 6; i++) {
        if (i == n || s[i] == ' ') {
            tok[ntok] = (const char *)s + start;
            tlen[ntok] = i - start;
            ntok++;
            start = i + 1;
        }
    }
    if (ntok < 5)
        return false;
    char num[24];
    int64_t v[3];
    for (int k = 0; k < 3; k++) {
        if (tlen[k + 1] == 0 || tlen[k + 1] >= sizeof(num))
            return false;
        memcpy(num, tok[k + 1], tlen[k + 1]);
        num[tlen[k + 1]] = '\0';
        if (!to_int64(num, &v[k]))
            return false;
    }
    if (tlen[0] == 0)
        return false;
    char *name = rb->arena + rb->arena_len;
    memcpy(name, tok[0], tlen[0]);
    name[tlen[0]] = '\0';
    rb->arena_len += tlen[0] + 1;
    t->name = name;
    t->read_queue_nums = (int32_t)v[0];
    t->write_queue_nums = (int32_t)v[1];
    t->perm = (int32_t)v[2];
    t->topic_sys_flag = 0; /* the compressed form does not carry it */
    t->order = false;
    return true;
}

int register_body_inflate(const uint8_t *data, size_t len, uint8_t **raw, size_t *raw_len)
{
    return inflate_all(data, len, raw, raw_len);
}

int register_body_decode_compressed(const uint8_t *data, size_t len, int32_t request_version,
                                    register_body *out, char *err, size_t errlen)
{
    (void)request_version; /* the 5.x static-topic section is not needed: ignored */
    uint8_t *raw = NULL;
    size_t raw_len = 0;
    if (inflate_all(data, len, &raw, &raw_len) != 0) {
        if (err && errlen)
            snprintf(err, errlen, "not a zlib stream");
        return -1;
    }
    int rc = register_body_decode_inflated(raw, raw_len, out, err, errlen);
    free(raw);
    return rc;
}

int register_body_decode_inflated(const uint8_t *raw, size_t raw_len, register_body *out, char *err,
                                  size_t errlen)
{
    int rc = -1;
    const char *why = "truncated compressed body";
    if (arena_prepare(out, raw_len * 2 + 64) != 0) {
        why = "out of memory";
        goto done;
    }
    bin_reader r = {raw, raw + raw_len};
    const uint8_t *s;
    size_t n;
    if (!read_chunk(&r, &s, &n))
        goto done;
    if (data_version_parse_json((const char *)s, n, &out->dv) != 0) {
        why = "bad DataVersion";
        goto done;
    }
    int32_t count;
    if (!read_i32(&r, &count) || count < 0)
        goto done;
    if ((size_t)count > raw_len / 4)
        goto done;
    out->topics = calloc((size_t)count ? (size_t)count : 1, sizeof(rb_topic));
    out->topics_cap = (size_t)count;
    if (!out->topics) {
        why = "out of memory";
        goto done;
    }
    for (int32_t i = 0; i < count; i++) {
        if (!read_chunk(&r, &s, &n))
            goto done;
        if (!decode_topic_line(out, s, n, &out->topics[out->ntopics])) {
            why = "bad TopicConfig line";
            goto done;
        }
        out->ntopics++;
    }
    if (!read_chunk(&r, &s, &n))
        goto done;
    {
        cursor c = {.start = (const char *)s,
                    .p = (const char *)s,
                    .end = (const char *)s + n,
                    .rb = out,
                    .err = NULL};
        if (!parse_filter_list(&c)) {
            why = "bad filter server list";
            goto done;
        }
    }
    rc = 0;
done:
    if (rc != 0 && err && errlen)
        snprintf(err, errlen, "%s", why);
    return rc;
}
