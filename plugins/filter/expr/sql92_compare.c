/* sql92_compare.c — owns the type conversions of RocketMQ's comparison
 * operators (protocol.md §6.5.4 steps 1–6, §6.5.7 #10–11). Used by the
 * evaluator and by the compile-time BETWEEN check. Must not allocate. */
#include "sql92_compare.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "java_number_parse.h"

bool sql92_java_boolean(const char *s, size_t n)
{
    return n == 4 && strncasecmp(s, "true", 4) == 0;
}

static int cmp_i64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b ? 1 : 0;
}

static bool is_number(sql92_vtype t)
{
    return t == V_INT || t == V_LONG || t == V_DOUBLE;
}

static double as_double(const sql92_value *v)
{
    return v->type == V_DOUBLE ? v->u.d : (double)v->u.i;
}

/* Parse a string as `as`'s number type (Integer/Long/Double.valueOf). */
static bool parse_as(const sql92_value *str, sql92_vtype as, sql92_value *out, char *why,
                     size_t whylen)
{
    bool ok;
    out->type = as;
    if (as == V_INT) {
        int32_t v;
        ok = java_parse_int(str->u.s.p, str->u.s.n, &v);
        out->u.i = v;
    } else if (as == V_LONG) {
        ok = java_parse_long(str->u.s.p, str->u.s.n, &out->u.i);
    } else {
        ok = java_parse_double(str->u.s.p, str->u.s.n, &out->u.d);
    }
    if (!ok && why && whylen) {
        bool blank = true;
        for (size_t i = 0; i < str->u.s.n; i++)
            if ((unsigned char)str->u.s.p[i] > ' ')
                blank = false;
        if (as == V_DOUBLE && blank)
            snprintf(why, whylen, "java.lang.NumberFormatException: empty String");
        else
            snprintf(why, whylen, "java.lang.NumberFormatException: For input string: \"%.*s\"",
                     (int)(str->u.s.n > 120 ? 120 : str->u.s.n), str->u.s.p);
    }
    return ok;
}

static int compare_numbers(const sql92_value *l, const sql92_value *r)
{
    if (l->type == V_DOUBLE || r->type == V_DOUBLE)
        return java_double_compare(as_double(l), as_double(r));
    return cmp_i64(l->u.i, r->u.i);
}

static int compare_strings(const sql92_value *l, const sql92_value *r)
{
    size_t n = l->u.s.n < r->u.s.n ? l->u.s.n : r->u.s.n;
    int c = memcmp(l->u.s.p, r->u.s.p, n);
    if (c)
        return c < 0 ? -1 : 1;
    return cmp_i64((int64_t)l->u.s.n, (int64_t)r->u.s.n);
}

bool sql92_compare(const sql92_value *l, const sql92_value *r, int *out, char *why, size_t whylen)
{
    if (l->type == r->type) {
        switch (l->type) {
        case V_BOOL: *out = (int)l->u.b - (int)r->u.b; return true;
        case V_STRING: *out = compare_strings(l, r); return true;
        default: *out = compare_numbers(l, r); return true;
        }
    }
    if (is_number(l->type) && is_number(r->type)) {
        *out = compare_numbers(l, r);
        return true;
    }
    sql92_value tmp;
    if (is_number(l->type) && r->type == V_STRING) {
        if (!parse_as(r, l->type, &tmp, why, whylen))
            goto wrapped;
        *out = compare_numbers(l, &tmp);
        return true;
    }
    if (l->type == V_STRING && is_number(r->type)) {
        if (!parse_as(l, r->type, &tmp, why, whylen))
            goto wrapped;
        *out = compare_numbers(&tmp, r);
        return true;
    }
    if (l->type == V_STRING && r->type == V_BOOL) {
        *out = (int)sql92_java_boolean(l->u.s.p, l->u.s.n) - (int)r->u.b;
        return true;
    }
    if (l->type == V_BOOL && r->type == V_STRING) {
        if (why && whylen)
            snprintf(why, whylen,
                     "java.lang.ClassCastException: java.lang.Boolean cannot be cast to "
                     "java.lang.String");
        return false;
    }
    *out = -1;
    return true;
wrapped:
    /* compare() wraps the NumberFormatException in a RuntimeException */
    if (why && whylen) {
        char inner[200];
        snprintf(inner, sizeof inner, "%s", why);
        snprintf(why, whylen, "java.lang.RuntimeException: %s", inner);
    }
    return false;
}
