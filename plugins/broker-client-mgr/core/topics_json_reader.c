/* topics_json_reader.c — owns the one-pass reader of topics.json: a small
 * JSON tokenizer (strings with escapes and UTF-8 checks, numbers, literals,
 * skipping of any value) driven by the wrapper's known shape. Decides
 * nothing about the table: each TopicConfig goes to the caller's function.
 * The field rules are those of topic_table.c's cfg_from_json (jansson's
 * json_integer_value of a non-integer is 0, only `true` is true). */
#include "topics_json_reader.h"

#include "fastjson_text.h"
#include "json_writer.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH */

typedef struct str_buf {
    char *p;
    size_t n, cap;
} str_buf;

typedef struct reader {
    const char *text, *p, *end;
    char *err;
    size_t errlen;
    bool failed;
    str_buf s; /* the last string read (NUL-terminated) */
} reader;

static int fail(reader *r, const char *fmt, ...)
{
    if (r->failed)
        return -1;
    r->failed = true;
    int line = 1;
    const char *ls = r->text;
    for (const char *q = r->text; q < r->p && q < r->end; q++)
        if (*q == '\n') {
            line++;
            ls = q + 1;
        }
    int n = snprintf(r->err, r->errlen, "line %d column %d: ", line, (int)(r->p - ls) + 1);
    if (n >= 0 && (size_t)n < r->errlen) {
        va_list ap;
        va_start(ap, fmt);
        int m = vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
        va_end(ap);
        if (m >= 0 && r->p >= r->end && (size_t)(n + m) < r->errlen)
            snprintf(r->err + n + m, r->errlen - (size_t)(n + m), " (end of text)");
    }
    return -1;
}

static void ws(reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
        r->p++;
}

/* The next non-blank byte, or 0 at the end (a NUL byte is no token either). */
static char peek(reader *r)
{
    ws(r);
    return r->p < r->end ? *r->p : 0;
}

static int expect(reader *r, char ch)
{
    if (peek(r) != ch)
        return fail(r, "'%c' expected", ch);
    r->p++;
    return 0;
}

static int sb_reserve(reader *r, size_t more)
{
    if (r->s.n + more + 1 <= r->s.cap)
        return 0;
    size_t cap = r->s.cap ? r->s.cap : 256;
    while (cap < r->s.n + more + 1)
        cap *= 2;
    char *p = realloc(r->s.p, cap);
    if (!p)
        return fail(r, "out of memory");
    r->s.p = p;
    r->s.cap = cap;
    return 0;
}

static int hex4(reader *r, const char *q, uint32_t *out)
{
    if (r->end - q < 4)
        return fail(r, "truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = q[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return fail(r, "invalid escape");
    }
    *out = v;
    return 0;
}

static void put_utf8(str_buf *s, uint32_t cp)
{
    if (cp < 0x80) {
        s->p[s->n++] = (char)cp;
    } else if (cp < 0x800) {
        s->p[s->n++] = (char)(0xC0 | (cp >> 6));
        s->p[s->n++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        s->p[s->n++] = (char)(0xE0 | (cp >> 12));
        s->p[s->n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        s->p[s->n++] = (char)(0x80 | (cp & 0x3F));
    } else {
        s->p[s->n++] = (char)(0xF0 | (cp >> 18));
        s->p[s->n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        s->p[s->n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        s->p[s->n++] = (char)(0x80 | (cp & 0x3F));
    }
}

/* One \uXXXX escape (a surrogate pair taking two) at r->p (after the '\'). */
static int unicode_escape(reader *r)
{
    uint32_t cp;
    if (hex4(r, r->p + 2, &cp) != 0)
        return -1;
    r->p += 6;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        uint32_t lo;
        if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
            return fail(r, "invalid Unicode \\u%04X", (unsigned)cp);
        if (hex4(r, r->p + 2, &lo) != 0)
            return -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail(r, "invalid Unicode \\u%04X\\u%04X", (unsigned)cp, (unsigned)lo);
        r->p += 6;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return fail(r, "invalid Unicode \\u%04X", (unsigned)cp);
    } else if (cp == 0) {
        return fail(r, "\\u0000 is not allowed");
    }
    put_utf8(&r->s, cp);
    return 0;
}

/* A string at r->p (its '"') into r->s. */
static int read_string(reader *r)
{
    r->p++;
    r->s.n = 0;
    bool high = false; /* raw bytes >= 0x80 seen: checked as UTF-8 at the end */
    for (;;) {
        const char *q = r->p;
        while (q < r->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20) {
            high |= (unsigned char)*q >= 0x80;
            q++;
        }
        if (q > r->p) {
            if (sb_reserve(r, (size_t)(q - r->p)) != 0)
                return -1;
            memcpy(r->s.p + r->s.n, r->p, (size_t)(q - r->p));
            r->s.n += (size_t)(q - r->p);
            r->p = q;
        }
        if (r->p >= r->end)
            return fail(r, "premature end of text in a string");
        char c = *r->p;
        if (c == '"') {
            r->p++;
            break;
        }
        if (c != '\\')
            return fail(r, "control character 0x%x in a string", (unsigned)(unsigned char)c);
        if (r->end - r->p < 2)
            return fail(r, "premature end of text in a string");
        if (sb_reserve(r, 4) != 0)
            return -1;
        char e = r->p[1];
        const char *simple = "\"\\/bfnrt";
        const char *to = "\"\\/\b\f\n\r\t";
        const char *hit = strchr(simple, e);
        if (e != 0 && hit) {
            r->s.p[r->s.n++] = to[hit - simple];
            r->p += 2;
        } else if (e == 'u') {
            if (unicode_escape(r) != 0)
                return -1;
        } else {
            return fail(r, "invalid escape");
        }
    }
    if (sb_reserve(r, 0) != 0)
        return -1;
    r->s.p[r->s.n] = '\0';
    if (high && !bcm_utf8_valid(r->s.p, r->s.n))
        return fail(r, "invalid UTF-8 in a string");
    return 0;
}

static bool digit(const char *q, const char *end)
{
    return q < end && *q >= '0' && *q <= '9';
}

/* A number at r->p: *is_int and *iv for an integer without fraction or
 * exponent (jansson's integer), else a real (checked for overflow). */
static int read_number(reader *r, bool *is_int, int64_t *iv)
{
    const char *s = r->p, *q = r->p;
    if (q < r->end && *q == '-')
        q++;
    if (!digit(q, r->end))
        return fail(r, "invalid number");
    if (*q == '0') {
        q++;
        if (digit(q, r->end))
            return fail(r, "invalid number (leading zero)");
    } else {
        while (digit(q, r->end))
            q++;
    }
    bool real = false;
    if (q < r->end && *q == '.') {
        q++;
        if (!digit(q, r->end))
            return fail(r, "invalid number");
        while (digit(q, r->end))
            q++;
        real = true;
    }
    if (q < r->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < r->end && (*q == '+' || *q == '-'))
            q++;
        if (!digit(q, r->end))
            return fail(r, "invalid number");
        while (digit(q, r->end))
            q++;
        real = true;
    }
    size_t n = (size_t)(q - s);
    char small[64];
    char *copy = n < sizeof small ? small : malloc(n + 1);
    if (!copy)
        return fail(r, "out of memory");
    memcpy(copy, s, n);
    copy[n] = '\0';
    int rc = 0;
    errno = 0;
    if (real) {
        double d = strtod(copy, NULL);
        if (errno == ERANGE && isinf(d))
            rc = fail(r, "real number overflow");
        *is_int = false;
        *iv = 0;
    } else {
        long long v = strtoll(copy, NULL, 10);
        if (errno == ERANGE)
            rc = fail(r, s[0] == '-' ? "too big negative integer" : "too big integer");
        *is_int = true;
        *iv = (int64_t)v;
    }
    if (copy != small)
        free(copy);
    r->p = q;
    return rc;
}

static int literal(reader *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return fail(r, "invalid token");
    r->p += n;
    return 0;
}

/* An object key into r->s: a string, or (fastjson's maps of numbers) a
 * bare -?[0-9]* token, as fastjson_quote_bare_keys quoted it. Then ':'. */
static int read_key(reader *r)
{
    char c = peek(r);
    if (c == '"') {
        if (read_string(r) != 0)
            return -1;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        const char *q = r->p + 1;
        while (digit(q, r->end))
            q++;
        r->s.n = 0;
        if (sb_reserve(r, (size_t)(q - r->p)) != 0)
            return -1;
        memcpy(r->s.p, r->p, (size_t)(q - r->p));
        r->s.n = (size_t)(q - r->p);
        r->s.p[r->s.n] = '\0';
        r->p = q;
    } else {
        return fail(r, "string or '}' expected");
    }
    return expect(r, ':');
}

static int skip_value(reader *r, int depth);

/* Members of the object whose '{' was just read: each key is in r->s when
 * member() runs and must consume the value. */
typedef int (*member_fn)(reader *r, void *ud, int depth);

/* After an object's member or an array's item: 1 when a ',' announces
 * another, 0 when `close` ends it, -1 (failed) on anything else. */
static int next_item(reader *r, char close)
{
    char c = peek(r);
    if (c == ',') {
        r->p++;
        return 1;
    }
    if (c == close) {
        r->p++;
        return 0;
    }
    return fail(r, close == '}' ? "'}' or ',' expected" : "']' or ',' expected");
}

static int read_object(reader *r, int depth, member_fn member, void *ud)
{
    if (depth > MAX_DEPTH)
        return fail(r, "maximum parsing depth reached");
    if (peek(r) == '}') {
        r->p++;
        return 0;
    }
    for (;;) {
        if (read_key(r) != 0 || member(r, ud, depth) != 0)
            return -1;
        int more = next_item(r, '}');
        if (more <= 0)
            return more;
    }
}

/* An array's items after its '[', each read by item (a member_fn without
 * a key), to its ']'. */
static int read_array(reader *r, int depth, member_fn item, void *ud)
{
    if (peek(r) == ']') {
        r->p++;
        return 0;
    }
    for (;;) {
        if (item(r, ud, depth) != 0)
            return -1;
        int more = next_item(r, ']');
        if (more <= 0)
            return more;
    }
}

static int skip_member(reader *r, void *ud, int depth)
{
    (void)ud;
    return skip_value(r, depth + 1);
}

static int skip_value(reader *r, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(r, "maximum parsing depth reached");
    char c = peek(r);
    bool is_int;
    int64_t iv;
    switch (c) {
    case '{': r->p++; return read_object(r, depth, skip_member, NULL);
    case '[': r->p++; return read_array(r, depth, skip_member, NULL);
    case '"': return read_string(r);
    case 't': return literal(r, "true");
    case 'f': return literal(r, "false");
    case 'n': return literal(r, "null");
    case 0: return fail(r, r->p < r->end ? "invalid token" : "value expected");
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            return read_number(r, &is_int, &iv);
        return fail(r, "invalid token");
    }
}

/* An integer field: jansson's json_integer_value (0 for any other type). */
static int int_field(reader *r, int depth, int32_t *out)
{
    char c = peek(r);
    if (c == '-' || (c >= '0' && c <= '9')) {
        bool is_int;
        int64_t v;
        if (read_number(r, &is_int, &v) != 0)
            return -1;
        *out = is_int ? (int32_t)v : 0;
        return 0;
    }
    *out = 0;
    return skip_value(r, depth + 1);
}

/* A copy of the string just read (r->s, with its NUL) into b, which grows
 * as needed: the reader's own buffer is reused by the next string. */
static int keep_string(reader *r, str_buf *b)
{
    if (b->cap < r->s.n + 1) {
        char *p = realloc(b->p, r->s.n + 1);
        if (!p)
            return fail(r, "out of memory");
        b->p = p;
        b->cap = r->s.n + 1;
    }
    memcpy(b->p, r->s.p, r->s.n + 1);
    return 0;
}

/* One TopicConfig being read. */
typedef struct cfg_read {
    bcm_topic_cfg cfg;
    str_buf name; /* topicName when a string */
    str_buf key;  /* the table's key, in case topicName is not */
    bool has_name;
    bool has_rq, has_wq, has_perm;
} cfg_read;

static int cfg_member(reader *r, void *ud, int depth)
{
    cfg_read *cr = ud;
    const char *k = r->s.p;
    if (strcmp(k, "readQueueNums") == 0) {
        cr->has_rq = true;
        return int_field(r, depth, &cr->cfg.read_queue_nums);
    }
    if (strcmp(k, "writeQueueNums") == 0) {
        cr->has_wq = true;
        return int_field(r, depth, &cr->cfg.write_queue_nums);
    }
    if (strcmp(k, "perm") == 0) {
        cr->has_perm = true;
        return int_field(r, depth, &cr->cfg.perm);
    }
    if (strcmp(k, "topicSysFlag") == 0)
        return int_field(r, depth, &cr->cfg.topic_sys_flag);
    if (strcmp(k, "order") == 0) {
        cr->cfg.order = peek(r) == 't';
        return skip_value(r, depth + 1);
    }
    if (strcmp(k, "topicFilterType") == 0) {
        cr->cfg.topic_filter_type = 0;
        if (peek(r) != '"')
            return skip_value(r, depth + 1);
        if (read_string(r) != 0)
            return -1;
        cr->cfg.topic_filter_type = strcmp(r->s.p, "MULTI_TAG") == 0 ? 1 : 0;
        return 0;
    }
    if (strcmp(k, "topicName") == 0) {
        cr->has_name = false;
        if (peek(r) != '"')
            return skip_value(r, depth + 1);
        if (read_string(r) != 0)
            return -1;
        if (keep_string(r, &cr->name) != 0)
            return -1;
        cr->has_name = true;
        return 0;
    }
    if (strcmp(k, "attributes") == 0) {
        /* 5.x files only, small: kept as a jansson object */
        json_decref(cr->cfg.attributes);
        cr->cfg.attributes = NULL;
        bool obj = peek(r) == '{';
        const char *start = r->p;
        if (skip_value(r, depth + 1) != 0)
            return -1;
        if (obj) {
            char e[160];
            cr->cfg.attributes = fastjson_load_object(start, (size_t)(r->p - start), e, sizeof e);
            if (!cr->cfg.attributes)
                return fail(r, "attributes: %s", e);
        }
        return 0;
    }
    return skip_value(r, depth + 1);
}

typedef struct table_read {
    bcm_topics_json_fn fn;
    void *ud;
    cfg_read cr;
} table_read;

static int table_member(reader *r, void *ud, int depth)
{
    table_read *t = ud;
    if (peek(r) != '{')
        return skip_value(r, depth + 1); /* not a TopicConfig: ignored */
    r->p++;
    cfg_read *cr = &t->cr;
    if (keep_string(r, &cr->key) != 0)
        return -1;
    json_decref(cr->cfg.attributes);
    memset(&cr->cfg, 0, sizeof cr->cfg);
    cr->has_name = cr->has_rq = cr->has_wq = cr->has_perm = false;
    int rc = read_object(r, depth + 1, cfg_member, cr);
    if (rc == 0) {
        if (!cr->has_rq)
            cr->cfg.read_queue_nums = 16;
        if (!cr->has_wq)
            cr->cfg.write_queue_nums = 16;
        if (!cr->has_perm)
            cr->cfg.perm = 6;
        if (t->fn(t->ud, cr->key.p, cr->has_name ? cr->name.p : cr->key.p, &cr->cfg) != 0)
            rc = fail(r, "out of memory");
    }
    return rc;
}

typedef struct dv_read {
    bool has_counter, has_ts;
    int64_t counter, ts;
} dv_read;

static int dv_member(reader *r, void *ud, int depth)
{
    dv_read *d = ud;
    bool is_counter = strcmp(r->s.p, "counter") == 0;
    bool is_ts = strcmp(r->s.p, "timestamp") == 0;
    char c = peek(r);
    if ((is_counter || is_ts) && (c == '-' || (c >= '0' && c <= '9'))) {
        bool is_int;
        int64_t v;
        if (read_number(r, &is_int, &v) != 0)
            return -1;
        if (is_counter) {
            d->has_counter = is_int;
            d->counter = v;
        } else {
            d->has_ts = is_int;
            d->ts = v;
        }
        return 0;
    }
    if (is_counter)
        d->has_counter = false;
    if (is_ts)
        d->has_ts = false;
    return skip_value(r, depth + 1);
}

typedef struct root_read {
    table_read table;
    bcm_topics_json_reset_fn reset;
    bool tables_seen;
    dv_read dv;
} root_read;

static int root_member(reader *r, void *ud, int depth)
{
    root_read *rr = ud;
    if (strcmp(r->s.p, "topicConfigTable") == 0) {
        /* a duplicate key: jansson kept the last one only */
        if (rr->tables_seen && rr->reset)
            rr->reset(rr->table.ud);
        rr->tables_seen = true;
        if (peek(r) != '{')
            return skip_value(r, depth + 1);
        r->p++;
        return read_object(r, depth + 1, table_member, &rr->table);
    }
    if (strcmp(r->s.p, "dataVersion") == 0) {
        memset(&rr->dv, 0, sizeof rr->dv); /* the last one counts */
        if (peek(r) != '{')
            return skip_value(r, depth + 1);
        r->p++;
        return read_object(r, depth + 1, dv_member, &rr->dv);
    }
    return skip_value(r, depth + 1);
}

int bcm_topics_json_read(const char *text, size_t len, bcm_topics_json_fn fn,
                         bcm_topics_json_reset_fn reset, void *ud, bcm_data_version *dv_out,
                         char *err, size_t errlen)
{
    char dummy[1];
    reader r = {.text = text,
                .p = text,
                .end = text + len,
                .err = errlen ? err : dummy,
                .errlen = errlen ? errlen : sizeof dummy};
    root_read rr = {.table = {.fn = fn, .ud = ud}, .reset = reset};
    int rc = expect(&r, '{');
    if (rc == 0)
        rc = read_object(&r, 1, root_member, &rr);
    if (rc == 0 && peek(&r) != 0)
        rc = fail(&r, "end of text expected");
    if (rc == 0 && r.p < r.end) /* a NUL byte after the object */
        rc = fail(&r, "end of text expected");
    json_decref(rr.table.cr.cfg.attributes);
    free(rr.table.cr.name.p);
    free(rr.table.cr.key.p);
    free(r.s.p);
    if (rc != 0)
        return -1;
    if (rr.dv.has_counter)
        dv_out->counter = rr.dv.counter;
    if (rr.dv.has_ts)
        dv_out->timestamp = rr.dv.ts;
    return 0;
}

/* A journal record being read. */
typedef struct rec_read {
    bcm_journal_rec *out;
    cfg_read cr;
    size_t dv_items;
    bool put_obj, del_str;
} rec_read;

/* One item of "dv": the first is the counter, the second the timestamp. */
static int dv_item(reader *r, void *ud, int depth)
{
    rec_read *rr = ud;
    int32_t unused;
    int64_t v = 0;
    char c = peek(r);
    if (c == '-' || (c >= '0' && c <= '9')) {
        bool is_int;
        if (read_number(r, &is_int, &v) != 0)
            return -1;
        if (!is_int)
            v = 0;
    } else if (int_field(r, depth + 1, &unused) != 0) {
        return -1;
    }
    if (rr->dv_items == 0)
        rr->out->dv.counter = v;
    else if (rr->dv_items == 1)
        rr->out->dv.timestamp = v;
    rr->dv_items++;
    return 0;
}

static int dv_array(reader *r, rec_read *rr, int depth)
{
    rr->dv_items = 0;
    rr->out->dv = (bcm_data_version){0, 0};
    if (peek(r) != '[')
        return skip_value(r, depth + 1);
    r->p++;
    return read_array(r, depth, dv_item, rr);
}

static int rec_member(reader *r, void *ud, int depth)
{
    rec_read *rr = ud;
    bcm_journal_rec *o = rr->out;
    if (strcmp(r->s.p, "dv") == 0)
        return dv_array(r, rr, depth);
    if (strcmp(r->s.p, "put") == 0) {
        o->put = true;
        rr->put_obj = peek(r) == '{';
        cfg_read *cr = &rr->cr;
        json_decref(cr->cfg.attributes);
        memset(&cr->cfg, 0, sizeof cr->cfg);
        cr->has_name = cr->has_rq = cr->has_wq = cr->has_perm = false;
        if (!rr->put_obj)
            return skip_value(r, depth + 1);
        r->p++;
        return read_object(r, depth + 1, cfg_member, cr);
    }
    if (strcmp(r->s.p, "del") == 0) {
        rr->del_str = peek(r) == '"';
        if (!rr->del_str)
            return skip_value(r, depth + 1);
        if (read_string(r) != 0)
            return -1;
        free(o->name);
        o->name = strdup(r->s.p);
        return o->name ? 0 : fail(r, "out of memory");
    }
    return skip_value(r, depth + 1);
}

int bcm_journal_rec_read(const char *text, size_t len, bcm_journal_rec *out)
{
    memset(out, 0, sizeof *out);
    char err[8];
    reader r = {.text = text, .p = text, .end = text + len, .err = err, .errlen = sizeof err};
    rec_read rr = {.out = out};
    int rc = expect(&r, '{');
    if (rc == 0)
        rc = read_object(&r, 1, rec_member, &rr);
    if (rc == 0 && (peek(&r) != 0 || r.p < r.end))
        rc = -1;
    if (rc == 0 && (rr.dv_items != 2 || !(rr.put_obj || rr.del_str)))
        rc = -1;
    cfg_read *cr = &rr.cr;
    if (rc == 0 && out->put) {
        /* a put wins over a del, as the jansson replay read them */
        free(out->name);
        out->name = NULL;
        if (rr.put_obj && cr->has_name) {
            out->name = cr->name.p;
            cr->name.p = NULL;
            if (!cr->has_rq)
                cr->cfg.read_queue_nums = 16;
            if (!cr->has_wq)
                cr->cfg.write_queue_nums = 16;
            if (!cr->has_perm)
                cr->cfg.perm = 6;
            out->cfg = cr->cfg;
            cr->cfg.attributes = NULL;
            out->put_ok = true;
        }
    }
    json_decref(cr->cfg.attributes);
    free(cr->name.p);
    free(cr->key.p);
    free(r.s.p);
    if (rc != 0)
        bcm_journal_rec_free(out);
    return rc == 0 ? 0 : -1;
}

void bcm_journal_rec_free(bcm_journal_rec *r)
{
    free(r->name);
    json_decref(r->cfg.attributes);
    memset(r, 0, sizeof *r);
}
