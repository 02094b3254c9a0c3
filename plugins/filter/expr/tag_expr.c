/* tag_expr.c — TAG subscriptions (protocol.md §6.4, §6.5.7 #15): Java's
 * FilterAPI split/trim rules, String.hashCode tag codes, and matching one
 * message tag the way broker (code set) and client (tag set) together do.
 * Must not allocate while matching. */
#include <stdio.h>
#include <string.h>

#include "expr_builder.h"
#include "filter_engine.h"

int32_t rmq_java_string_hash(const char *utf8, size_t len)
{
    const unsigned char *u = (const unsigned char *)utf8;
    uint32_t h = 0;
    size_t i = 0;
    while (i < len) {
        uint32_t cp;
        unsigned char c = u[i];
        size_t n = 1;
        if (c < 0x80)
            cp = c;
        else if (c >= 0xC2 && c < 0xE0)
            cp = c & 0x1F, n = 2;
        else if (c >= 0xE0 && c < 0xF0)
            cp = c & 0x0F, n = 3;
        else if (c >= 0xF0 && c < 0xF5)
            cp = c & 0x07, n = 4;
        else
            cp = 0xFFFD;
        if (n > 1) {
            bool ok = i + n <= len;
            for (size_t k = 1; ok && k < n; k++) {
                if ((u[i + k] & 0xC0) != 0x80)
                    ok = false;
                else
                    cp = (cp << 6) | (u[i + k] & 0x3F);
            }
            /* overlong, surrogate or out-of-range forms are malformed too */
            if (ok && ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
                       (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))))
                ok = false;
            if (!ok)
                cp = 0xFFFD, n = 1;
        }
        i += n;
        if (cp > 0xFFFF) {
            cp -= 0x10000;
            h = 31u * h + (0xD800u + (cp >> 10));
            h = 31u * h + (0xDC00u + (cp & 0x3FF));
        } else {
            h = 31u * h + cp;
        }
    }
    return (int32_t)h;
}

/* Java String.trim(): strip chars <= ' ' at both ends. */
static void trim(const char **s, size_t *n)
{
    while (*n && (unsigned char)(*s)[0] <= ' ')
        (*s)++, (*n)--;
    while (*n && (unsigned char)(*s)[*n - 1] <= ' ')
        (*n)--;
}

int rmq_fx_compile_tag(const char *text, size_t len, struct rmq_filter_expr **out, char *err,
                       size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    rmq_fx_builder b;
    rmq_fxb_init(&b);
    rmq_fx_str src = rmq_fxb_string(&b, text, len);
    bool all = len == 0 || (len == 1 && text[0] == '*');
    if (!all) {
        /* String.split("\\|\\|") drops trailing empty pieces; only a text made
         * of nothing but "||" leaves no piece at all, which Java refuses. */
        bool only_bars = len % 2 == 0;
        for (size_t i = 0; only_bars && i < len; i++)
            only_bars = text[i] == '|';
        if (only_bars) {
            if (err && errlen)
                snprintf(err, errlen, "java.lang.Exception: subString split error");
            rmq_fxb_dispose(&b);
            return RMQ_EINVAL;
        }
        size_t start = 0;
        for (size_t i = 0; i <= len; i++) {
            bool sep = i + 1 < len && text[i] == '|' && text[i + 1] == '|';
            if (!sep && i < len)
                continue;
            const char *piece = text + start;
            size_t n = i - start;
            trim(&piece, &n);
            if (n) {
                bool dup = false;
                for (uint32_t k = 0; k < b.list_count && !dup; k++)
                    dup = b.lists[k].len == n && memcmp(b.pool + b.lists[k].off, piece, n) == 0;
                if (!dup)
                    rmq_fxb_list(&b, rmq_fxb_string(&b, piece, n));
            }
            if (sep) {
                start = i + 2;
                i++;
            }
        }
    }
    *out = rmq_fxb_pack(&b, RMQ_FX_TYPE_TAG, all, 0, src);
    rmq_fxb_dispose(&b);
    if (!*out) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return RMQ_ENOMEM;
    }
    return 0;
}

/* Deliver iff the broker's code check and the client's tag check both pass:
 * an empty tag set still filters out every tagged message on the broker. */
static rmq_filter_result tag_match(const struct rmq_filter_expr *e, const char *tag)
{
    if (e->match_all)
        return RMQ_FILTER_TRUE;
    const rmq_fx_str *l = rmq_fx_lists(e);
    if (!tag)
        return e->list_count == 0 ? RMQ_FILTER_TRUE : RMQ_FILTER_FALSE;
    size_t n = strlen(tag);
    for (uint32_t k = 0; k < e->list_count; k++)
        if (l[k].len == n && memcmp(rmq_fx_pool(e) + l[k].off, tag, n) == 0)
            return RMQ_FILTER_TRUE;
    return RMQ_FILTER_FALSE;
}

int rmq_fx_compile(const char *type, const char *text, size_t len, const rmq_fx_options *opt,
                   struct rmq_filter_expr **out, char *err, size_t errlen, int *err_pos)
{
    if (err_pos)
        *err_pos = 0;
    if (!text)
        text = "", len = 0;
    if (!type || !type[0] || strcmp(type, "TAG") == 0)
        return rmq_fx_compile_tag(text, len, out, err, errlen);
    if (strcmp(type, "SQL92") == 0)
        return rmq_fx_compile_sql92(text, len, opt, out, err, errlen, err_pos);
    /* FilterFactory has no filter for the type: Java dereferences null. */
    if (err && errlen)
        snprintf(err, errlen, "java.lang.NullPointerException");
    return RMQ_ENOENT;
}

rmq_filter_result rmq_fx_evaluate(const struct rmq_filter_expr *e, const char *tag,
                                  rmq_filter_lookup_fn lookup, void *lookup_ud, char *err,
                                  size_t errlen)
{
    if (!e || e->magic != RMQ_FX_MAGIC || e->format != RMQ_FX_FORMAT) {
        if (err && errlen)
            snprintf(err, errlen, "stale compiled expression");
        return RMQ_FILTER_EVAL_ERROR;
    }
    if (e->type == RMQ_FX_TYPE_TAG) {
        if (err && errlen)
            err[0] = '\0';
        return tag_match(e, tag);
    }
    return rmq_fx_evaluate_sql92(e, lookup, lookup_ud, err, errlen);
}

const char *rmq_fx_text(const struct rmq_filter_expr *e)
{
    return rmq_fx_string(e, e->text);
}

bool rmq_fx_is_sql92(const struct rmq_filter_expr *e)
{
    return e->type == RMQ_FX_TYPE_SQL92;
}
