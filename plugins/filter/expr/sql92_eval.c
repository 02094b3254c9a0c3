/* sql92_eval.c — evaluates a compiled SQL92 block against one message's
 * properties with Java's three-valued logic and error propagation
 * (protocol.md §6.5.4, §6.5.7 #6, #11, #12). Runs on the delivery path:
 * must never allocate; recursion is bounded by RMQ_FX_MAX_DEPTH. */
#include <stdio.h>
#include <string.h>

#include "compiled_expr.h"
#include "filter_engine.h"
#include "java_number_parse.h"
#include "sql92_compare.h"

typedef struct eval_ctx {
    const struct rmq_filter_expr *e;
    const rmq_fx_node *nodes;
    const rmq_fx_str *lists;
    const char *pool;
    rmq_filter_lookup_fn lookup;
    void *lookup_ud;
    char *err;
    size_t errlen;
} eval_ctx;

/* Returns false when Java would throw (message in ctx->err). */
static bool eval(const eval_ctx *c, uint32_t i, sql92_value *out);

static bool error(const eval_ctx *c, const char *msg)
{
    if (c->err && c->errlen)
        snprintf(c->err, c->errlen, "%s", msg);
    return false;
}

static bool eval_bool(const eval_ctx *c, uint32_t i, sql92_value *out)
{
    if (!eval(c, i, out))
        return false;
    if (out->type != V_NULL && out->type != V_BOOL)
        return error(c, "java.lang.ClassCastException: value cannot be cast to java.lang.Boolean");
    return true;
}

static void set_bool(sql92_value *out, bool b)
{
    out->type = V_BOOL;
    out->u.b = b;
}

static bool string_op(const rmq_fx_node *n, const sql92_value *v, const char *s, size_t sn)
{
    if (n->kind == FX_CONTAINS) {
        if (sn > v->u.s.n)
            return false;
        for (size_t k = 0; k + sn <= v->u.s.n; k++)
            if (memcmp(v->u.s.p + k, s, sn) == 0)
                return true;
        return false;
    }
    if (sn > v->u.s.n)
        return false;
    if (n->kind == FX_STARTSWITH)
        return memcmp(v->u.s.p, s, sn) == 0;
    return memcmp(v->u.s.p + v->u.s.n - sn, s, sn) == 0;
}

static bool eval(const eval_ctx *c, uint32_t i, sql92_value *out)
{
    const rmq_fx_node *n = &c->nodes[i];
    sql92_value l, r;
    int cmp;
    switch ((rmq_fx_kind)n->kind) {
    case FX_CONST_NULL: out->type = V_NULL; return true;
    case FX_CONST_TRUE: set_bool(out, true); return true;
    case FX_CONST_FALSE: set_bool(out, false); return true;
    case FX_CONST_INT: out->type = V_INT, out->u.i = n->v.i; return true;
    case FX_CONST_LONG: out->type = V_LONG, out->u.i = n->v.i; return true;
    case FX_CONST_DOUBLE: out->type = V_DOUBLE, out->u.d = n->v.d; return true;
    case FX_CONST_STRING:
        out->type = V_STRING, out->u.s.p = c->pool + n->v.s.off, out->u.s.n = n->v.s.len;
        return true;
    case FX_PROPERTY: {
        const char *v = c->lookup ? c->lookup(c->lookup_ud, c->pool + n->v.s.off) : NULL;
        if (!v) {
            out->type = V_NULL;
        } else {
            out->type = V_STRING;
            out->u.s.p = v;
            out->u.s.n = strlen(v);
        }
        return true;
    }
    case FX_NEGATE:
        if (!eval(c, n->left, &l))
            return false;
        if (l.type == V_INT)
            out->type = V_INT, out->u.i = (int32_t)(0u - (uint32_t)l.u.i);
        else if (l.type == V_LONG)
            out->type = V_LONG, out->u.i = (int64_t)(0u - (uint64_t)l.u.i);
        else if (l.type == V_DOUBLE)
            out->type = V_DOUBLE, out->u.d = -l.u.d;
        else
            out->type = V_NULL; /* strings, booleans and null negate to null */
        return true;
    case FX_BOOL_CAST:
        if (!eval(c, n->left, &l))
            return false;
        if (l.type == V_NULL)
            out->type = V_NULL;
        else
            set_bool(out, l.type == V_BOOL && l.u.b); /* a string is never TRUE */
        return true;
    case FX_NOT:
        if (!eval_bool(c, n->left, &l))
            return false;
        if (l.type == V_NULL)
            out->type = V_NULL;
        else
            set_bool(out, !l.u.b);
        return true;
    case FX_AND:
        if (!eval_bool(c, n->left, &l))
            return false;
        if (l.type == V_BOOL && !l.u.b)
            return set_bool(out, false), true;
        if (!eval_bool(c, n->right, &r))
            return false;
        if (r.type == V_BOOL && !r.u.b)
            return set_bool(out, false), true;
        if (l.type == V_NULL || r.type == V_NULL)
            out->type = V_NULL;
        else
            set_bool(out, true);
        return true;
    case FX_OR:
        if (!eval_bool(c, n->left, &l))
            return false;
        if (l.type == V_BOOL && l.u.b)
            return set_bool(out, true), true;
        if (!eval_bool(c, n->right, &r))
            return false;
        if (r.type == V_BOOL && r.u.b)
            return set_bool(out, true), true;
        if (l.type == V_NULL || r.type == V_NULL)
            out->type = V_NULL;
        else
            set_bool(out, false);
        return true;
    case FX_EQ:
        /* Both sides are evaluated before the null checks, as in Java. */
        if (!eval(c, n->left, &l) || !eval(c, n->right, &r))
            return false;
        if ((l.type == V_NULL) != (r.type == V_NULL)) {
            if (l.type == V_NULL)
                out->type = V_NULL;
            else
                set_bool(out, false);
            return true;
        }
        if (l.type == V_NULL)
            return set_bool(out, true), true;
        if (!sql92_compare(&l, &r, &cmp, c->err, c->errlen))
            return false;
        set_bool(out, cmp == 0);
        return true;
    case FX_GT:
    case FX_GE:
    case FX_LT:
    case FX_LE:
        if (!eval(c, n->left, &l))
            return false;
        if (l.type == V_NULL)
            return out->type = V_NULL, true;
        if (!eval(c, n->right, &r))
            return false;
        if (r.type == V_NULL)
            return out->type = V_NULL, true;
        if (l.type == V_STRING && r.type == V_STRING) {
            /* two strings compare as Double.valueOf numbers */
            double a, b;
            if (!java_parse_double(l.u.s.p, l.u.s.n, &a) ||
                !java_parse_double(r.u.s.p, r.u.s.n, &b)) {
                if (c->err && c->errlen)
                    snprintf(
                        c->err, c->errlen,
                        "java.lang.RuntimeException: It's illegal to compare string by '>=', '>', "
                        "'<', '<='. lv=%.*s, rv=%.*s",
                        (int)(l.u.s.n > 100 ? 100 : l.u.s.n), l.u.s.p,
                        (int)(r.u.s.n > 100 ? 100 : r.u.s.n), r.u.s.p);
                return false;
            }
            cmp = java_double_compare(a, b);
        } else if (!sql92_compare(&l, &r, &cmp, c->err, c->errlen)) {
            return false;
        }
        switch (n->kind) {
        case FX_GT: set_bool(out, cmp > 0); break;
        case FX_GE: set_bool(out, cmp >= 0); break;
        case FX_LT: set_bool(out, cmp < 0); break;
        default: set_bool(out, cmp <= 0); break;
        }
        return true;
    case FX_IN: {
        if (!eval(c, n->left, &l))
            return false;
        if (l.type != V_STRING)
            return out->type = V_NULL, true;
        bool found = false;
        for (uint32_t k = 0; k < n->v.list.count && !found; k++) {
            rmq_fx_str s = c->lists[n->v.list.first + k];
            found = s.len == l.u.s.n && memcmp(c->pool + s.off, l.u.s.p, s.len) == 0;
        }
        set_bool(out, found != ((n->flags & FX_FLAG_NOT) != 0));
        return true;
    }
    case FX_CONTAINS:
    case FX_STARTSWITH:
    case FX_ENDSWITH:
        if (!eval(c, n->left, &l))
            return false;
        /* empty search, null or non-string value: FALSE for both forms */
        if (n->v.s.len == 0 || l.type != V_STRING)
            return set_bool(out, false), true;
        set_bool(out, string_op(n, &l, c->pool + n->v.s.off, n->v.s.len) !=
                          ((n->flags & FX_FLAG_NOT) != 0));
        return true;
    }
    return error(c, "corrupt compiled expression");
}

rmq_filter_result rmq_fx_evaluate_sql92(const struct rmq_filter_expr *e,
                                        rmq_filter_lookup_fn lookup, void *lookup_ud, char *err,
                                        size_t errlen)
{
    eval_ctx c = {e,   rmq_fx_nodes(e), rmq_fx_lists(e), rmq_fx_pool(e), lookup, lookup_ud,
                  err, errlen};
    sql92_value v;
    if (err && errlen)
        err[0] = '\0';
    if (!eval(&c, e->root, &v))
        return RMQ_FILTER_EVAL_ERROR;
    if (v.type == V_NULL)
        return RMQ_FILTER_NULL;
    if (v.type != V_BOOL)
        return RMQ_FILTER_FALSE;
    return v.u.b ? RMQ_FILTER_TRUE : RMQ_FILTER_FALSE;
}
