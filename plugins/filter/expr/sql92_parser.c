/* sql92_parser.c — compiles SQL92 selector text into a block, mirroring the
 * JavaCC grammar and the compile-time checks of RocketMQ's filter module
 * (protocol.md §6.5.2–6.5.3, §6.5.7). Owns syntax and semantic errors; must
 * not evaluate messages. The top level reads no further than the grammar's
 * own lookahead, so trailing input is ignored exactly as Java ignores it. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_builder.h"
#include "filter_engine.h"
#include "java_number_parse.h"
#include "sql92_compare.h"
#include "sql92_lexer.h"

#define NO_NODE UINT32_MAX
#define PARSE_EXC "org.apache.rocketmq.filter.parser.ParseException: "
#define RUNTIME_EXC "java.lang.RuntimeException: "

typedef struct parser {
    sql92_lexer lx;
    sql92_token la[3]; /* lookahead: at most two tokens (after NOT / IS) plus one */
    int la_count;
    rmq_fx_builder *b;
    const char *src;
    bool ops5x;
    bool failed;
    int depth;
    char *err;
    size_t errlen;
    int *err_pos;
} parser;

static void fail(parser *p, int pos, const char *fmt, ...) RMQ_PRINTF(3, 4);
static void fail(parser *p, int pos, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    if (p->err && p->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err, p->errlen, fmt, ap);
        va_end(ap);
    }
    if (p->err_pos)
        *p->err_pos = pos;
}

/* Make sure `n` tokens are buffered. False after a lexical error. */
static bool fill(parser *p, int n)
{
    while (!p->failed && p->la_count < n) {
        if (!sql92_lexer_next(&p->lx, &p->la[p->la_count], p->err, p->errlen, p->err_pos)) {
            p->failed = true;
            return false;
        }
        p->la_count++;
    }
    return !p->failed;
}

static sql92_tok peek(parser *p, int k)
{
    if (!fill(p, k + 1))
        return T_LEX_ERROR;
    return p->la[k].kind;
}

static sql92_token take(parser *p)
{
    sql92_token t = p->la[0];
    memmove(&p->la[0], &p->la[1], sizeof(p->la[0]) * (size_t)(p->la_count - 1));
    p->la_count--;
    return t;
}

/* JavaCC's ParseException text for the next token. */
static void unexpected(parser *p, const char *expecting)
{
    if (!fill(p, 1))
        return;
    const sql92_token *t = &p->la[0];
    if (t->kind == T_EOF)
        fail(p, t->char_pos,
             PARSE_EXC
             "Encountered \"<EOF>\" at line %d, column %d.\nWas expecting one of:\n    %s",
             t->line, t->column, expecting);
    else
        fail(p, t->char_pos,
             PARSE_EXC "Encountered \" %s \"%.*s \"\" at line %d, column %d.\n"
                       "Was expecting one of:\n    %s",
             sql92_tok_name(t->kind), (int)(t->len > 80 ? 80 : t->len), p->src + t->start, t->line,
             t->column, expecting);
}

static bool expect(parser *p, sql92_tok kind, sql92_token *out)
{
    if (peek(p, 0) != kind) {
        unexpected(p, sql92_tok_name(kind));
        return false;
    }
    sql92_token t = take(p);
    if (out)
        *out = t;
    return true;
}

/* ---- node helpers ---- */

static const rmq_fx_node *N(parser *p, uint32_t i)
{
    return &p->b->nodes[i];
}

static bool is_constant(const rmq_fx_node *n)
{
    return n->kind >= FX_CONST_NULL && n->kind <= FX_CONST_STRING;
}

static bool is_boolean_typed(const rmq_fx_node *n)
{
    switch (n->kind) {
    case FX_CONST_NULL:
    case FX_CONST_TRUE:
    case FX_CONST_FALSE:
    case FX_BOOL_CAST:
    case FX_NOT:
    case FX_AND:
    case FX_OR:
    case FX_EQ:
    case FX_GT:
    case FX_GE:
    case FX_LT:
    case FX_LE:
    case FX_IN:
    case FX_CONTAINS:
    case FX_STARTSWITH:
    case FX_ENDSWITH: return true;
    default: return false;
    }
}

static uint32_t add(parser *p, rmq_fx_node n)
{
    if (p->failed)
        return NO_NODE;
    unsigned d = 1;
    if (n.left != NO_NODE && n.kind >= FX_NEGATE)
        d = N(p, n.left)->reserved + 1u;
    if (n.right != NO_NODE &&
        (n.kind == FX_AND || n.kind == FX_OR || (n.kind >= FX_EQ && n.kind <= FX_LE))) {
        unsigned r = N(p, n.right)->reserved + 1u;
        if (r > d)
            d = r;
    }
    if (d > RMQ_FX_MAX_DEPTH) {
        fail(p, 0, RUNTIME_EXC "expression tree deeper than %d levels", RMQ_FX_MAX_DEPTH);
        return NO_NODE;
    }
    n.reserved = (uint16_t)d;
    uint32_t i = rmq_fxb_node(p->b, &n);
    if (i == NO_NODE)
        fail(p, 0, "out of memory");
    return i;
}

static uint32_t add_simple(parser *p, uint8_t kind, uint32_t left, uint32_t right)
{
    rmq_fx_node n;
    memset(&n, 0, sizeof n);
    n.kind = kind;
    n.left = left;
    n.right = right;
    return add(p, n);
}

/* Java toString() of an expression, for messages. Returns chars written. */
static size_t to_string(parser *p, uint32_t i, char *buf, size_t len);

static size_t put(char *buf, size_t len, size_t at, const char *s, size_t n)
{
    if (at < len) {
        size_t room = len - at - 1;
        memcpy(buf + at, s, n < room ? n : room);
        buf[at + (n < room ? n : room)] = '\0';
    }
    return at + n;
}

static size_t put_quoted(char *buf, size_t len, size_t at, const char *s, size_t n)
{
    at = put(buf, len, at, "'", 1);
    for (size_t k = 0; k < n; k++)
        at = s[k] == '\'' ? put(buf, len, at, "''", 2) : put(buf, len, at, s + k, 1);
    return put(buf, len, at, "'", 1);
}

static size_t to_string(parser *p, uint32_t i, char *buf, size_t len)
{
    const rmq_fx_node *n = N(p, i);
    const char *pool = p->b->pool;
    char num[40];
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    switch (n->kind) {
    case FX_CONST_NULL: return put(buf, len, 0, "NULL", 4);
    case FX_CONST_TRUE: return put(buf, len, 0, "TRUE", 4);
    case FX_CONST_FALSE: return put(buf, len, 0, "FALSE", 5);
    case FX_CONST_INT:
    case FX_CONST_LONG:
        snprintf(num, sizeof num, "%" PRId64, n->v.i);
        return put(buf, len, 0, num, strlen(num));
    case FX_CONST_DOUBLE:
        java_double_to_string(n->v.d, num, sizeof num);
        return put(buf, len, 0, num, strlen(num));
    case FX_CONST_STRING: return put_quoted(buf, len, 0, pool + n->v.s.off, n->v.s.len);
    case FX_PROPERTY: return put(buf, len, 0, pool + n->v.s.off, n->v.s.len);
    case FX_BOOL_CAST: return to_string(p, n->left, buf, len);
    case FX_NEGATE:
    case FX_NOT: {
        const char *sym = n->kind == FX_NEGATE ? "(- " : "(NOT ";
        at = put(buf, len, 0, sym, strlen(sym));
        at += to_string(p, n->left, at < len ? buf + at : NULL, at < len ? len - at : 0);
        return put(buf, len, at, ")", 1);
    }
    case FX_IN: {
        at = to_string(p, n->left, buf, len);
        const char *sym = (n->flags & FX_FLAG_NOT) ? " NOT IN ( " : " IN ( ";
        at = put(buf, len, at, sym, strlen(sym));
        for (uint32_t k = 0; k < n->v.list.count; k++) {
            rmq_fx_str s = p->b->lists[n->v.list.first + k];
            if (k)
                at = put(buf, len, at, ", ", 2);
            at = put(buf, len, at, pool + s.off, s.len);
        }
        return put(buf, len, at, " )", 2);
    }
    case FX_CONTAINS:
    case FX_STARTSWITH:
    case FX_ENDSWITH: {
        static const char *names[] = {"CONTAINS", "STARTSWITH", "ENDSWITH"};
        at = put(buf, len, 0, "(", 1);
        at += to_string(p, n->left, at < len ? buf + at : NULL, at < len ? len - at : 0);
        at = put(buf, len, at, (n->flags & FX_FLAG_NOT) ? " NOT " : " ",
                 (n->flags & FX_FLAG_NOT) ? 5 : 1);
        const char *nm = names[n->kind - FX_CONTAINS];
        at = put(buf, len, at, nm, strlen(nm));
        at = put(buf, len, at, " ", 1);
        at = put_quoted(buf, len, at, pool + n->v.s.off, n->v.s.len);
        return put(buf, len, at, ")", 1);
    }
    default: {
        const char *sym = "?";
        switch (n->kind) {
        case FX_AND: sym = "AND"; break;
        case FX_OR: sym = "OR"; break;
        case FX_EQ: sym = "=="; break; /* Java's doCreateEqual symbol */
        case FX_GT: sym = ">"; break;
        case FX_GE: sym = ">="; break;
        case FX_LT: sym = "<"; break;
        case FX_LE: sym = "<="; break;
        default: break;
        }
        at = put(buf, len, 0, "(", 1);
        at += to_string(p, n->left, at < len ? buf + at : NULL, at < len ? len - at : 0);
        at = put(buf, len, at, " ", 1);
        at = put(buf, len, at, sym, strlen(sym));
        at = put(buf, len, at, " ", 1);
        at += to_string(p, n->right, at < len ? buf + at : NULL, at < len ? len - at : 0);
        return put(buf, len, at, ")", 1);
    }
    }
}

/* ---- Java factory methods with their checks ---- */

static uint32_t as_boolean(parser *p, uint32_t x, int pos)
{
    if (p->failed)
        return NO_NODE;
    if (is_boolean_typed(N(p, x)))
        return x;
    if (N(p, x)->kind == FX_PROPERTY)
        return add_simple(p, FX_BOOL_CAST, x, NO_NODE);
    char s[160];
    to_string(p, x, s, sizeof s);
    fail(p, pos, PARSE_EXC "Expression will not result in a boolean value: %s", s);
    return NO_NODE;
}

static bool check_less_than_operand(parser *p, uint32_t x, int pos)
{
    const rmq_fx_node *n = N(p, x);
    bool bad = is_constant(n) ? !(n->kind == FX_CONST_INT || n->kind == FX_CONST_LONG ||
                                  n->kind == FX_CONST_DOUBLE)
                              : is_boolean_typed(n);
    if (!bad)
        return true;
    char s[160];
    to_string(p, x, s, sizeof s);
    fail(p, pos, RUNTIME_EXC "Value '%s' cannot be compared.", s);
    return false;
}

static uint32_t create_ordering(parser *p, uint8_t kind, uint32_t l, uint32_t r, int pos)
{
    if (p->failed || !check_less_than_operand(p, l, pos) || !check_less_than_operand(p, r, pos))
        return NO_NODE;
    return add_simple(p, kind, l, r);
}

static uint32_t create_equal(parser *p, uint32_t l, uint32_t r, int pos)
{
    if (p->failed)
        return NO_NODE;
    char ls[160], rs[160];
    for (int k = 0; k < 2; k++) {
        uint32_t x = k ? r : l;
        if (N(p, x)->kind == FX_CONST_NULL) {
            to_string(p, x, ls, sizeof ls);
            fail(p, pos, RUNTIME_EXC "'%s' cannot be compared.", ls);
            return NO_NODE;
        }
    }
    /* Only a boolean constant on the LEFT is refused (§6.5.7 #8). */
    const rmq_fx_node *ln = N(p, l), *rn = N(p, r);
    if (is_constant(ln) && is_constant(rn) && is_boolean_typed(ln) && !is_boolean_typed(rn)) {
        to_string(p, l, ls, sizeof ls);
        to_string(p, r, rs, sizeof rs);
        fail(p, pos, RUNTIME_EXC "'%s' cannot be compared with '%s'", ls, rs);
        return NO_NODE;
    }
    return add_simple(p, FX_EQ, l, r);
}

static sql92_value const_value(parser *p, uint32_t x)
{
    const rmq_fx_node *n = N(p, x);
    sql92_value v;
    memset(&v, 0, sizeof v);
    switch (n->kind) {
    case FX_CONST_TRUE: v.type = V_BOOL, v.u.b = true; break;
    case FX_CONST_FALSE: v.type = V_BOOL, v.u.b = false; break;
    case FX_CONST_INT: v.type = V_INT, v.u.i = n->v.i; break;
    case FX_CONST_LONG: v.type = V_LONG, v.u.i = n->v.i; break;
    case FX_CONST_DOUBLE: v.type = V_DOUBLE, v.u.d = n->v.d; break;
    case FX_CONST_STRING:
        v.type = V_STRING, v.u.s.p = p->b->pool + n->v.s.off, v.u.s.n = n->v.s.len;
        break;
    default: v.type = V_NULL; break;
    }
    return v;
}

static void value_text(parser *p, uint32_t x, char *buf, size_t len)
{
    /* Java prints the raw value (lv + ""), not the quoted form. */
    const rmq_fx_node *n = N(p, x);
    if (n->kind == FX_CONST_STRING)
        snprintf(buf, len, "%s", p->b->pool + n->v.s.off);
    else if (n->kind == FX_CONST_TRUE || n->kind == FX_CONST_FALSE)
        snprintf(buf, len, "%s", n->kind == FX_CONST_TRUE ? "true" : "false");
    else
        to_string(p, x, buf, len);
}

static uint32_t create_between(parser *p, uint32_t v, uint32_t lo, uint32_t hi, bool negated,
                               int pos)
{
    if (p->failed)
        return NO_NODE;
    if (!negated && is_constant(N(p, lo)) && is_constant(N(p, hi))) {
        if (N(p, lo)->kind == FX_CONST_NULL || N(p, hi)->kind == FX_CONST_NULL) {
            fail(p, pos, RUNTIME_EXC "Illegal values of between, values can not be null!");
            return NO_NODE;
        }
        /* Java compares high against low (so conversions go that way round) */
        sql92_value a = const_value(p, lo), b = const_value(p, hi);
        int c = 0;
        char why[200];
        if (!sql92_compare(&b, &a, &c, why, sizeof why)) {
            fail(p, pos, "%s", why);
            return NO_NODE;
        }
        if (c < 0) {
            char ls[120], rs[120];
            value_text(p, lo, ls, sizeof ls);
            value_text(p, hi, rs, sizeof rs);
            fail(p, pos,
                 RUNTIME_EXC "Illegal values of between, left value(%s) must less than or equal "
                             "to right value(%s)",
                 ls, rs);
            return NO_NODE;
        }
    }
    if (negated) {
        uint32_t a = create_ordering(p, FX_LT, v, lo, pos);
        uint32_t b = create_ordering(p, FX_GT, v, hi, pos);
        return add_simple(p, FX_OR, a, b);
    }
    uint32_t a = create_ordering(p, FX_GE, v, lo, pos);
    uint32_t b = create_ordering(p, FX_LE, v, hi, pos);
    return add_simple(p, FX_AND, a, b);
}

/* ---- literals ---- */

static rmq_fx_str unquote(parser *p, const sql92_token *t)
{
    /* strip the quotes, '' → ' ; done in place in a scratch copy */
    const char *s = p->src + t->start + 1;
    size_t n = t->len - 2;
    char stack[256] = {0};
    char *tmp = n <= sizeof stack ? stack : malloc(n ? n : 1);
    if (!tmp) {
        p->b->oom = true;
        rmq_fx_str z = {0, 0};
        return z;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        tmp[o++] = s[i];
        if (s[i] == '\'')
            i++;
    }
    rmq_fx_str r = rmq_fxb_string(p->b, tmp, o);
    if (tmp != stack)
        free(tmp);
    return r;
}

static uint32_t decimal_literal(parser *p, const sql92_token *t)
{
    const char *s = p->src + t->start;
    size_t n = t->len;
    if (n && (s[n - 1] == 'l' || s[n - 1] == 'L'))
        n--;
    int64_t v;
    if (!java_parse_long(s, n, &v)) {
        fail(p, t->char_pos, "java.lang.NumberFormatException: For input string: \"%.*s\"",
             (int)(n > 80 ? 80 : n), s);
        return NO_NODE;
    }
    rmq_fx_node node;
    memset(&node, 0, sizeof node);
    node.kind = (v >= INT32_MIN && v <= INT32_MAX) ? FX_CONST_INT : FX_CONST_LONG;
    node.left = node.right = NO_NODE;
    node.v.i = v;
    return add(p, node);
}

static uint32_t float_literal(parser *p, const sql92_token *t)
{
    char stack[128] = {0};
    char *tmp = t->len < sizeof stack ? stack : malloc(t->len + 1);
    if (!tmp) {
        fail(p, 0, "out of memory");
        return NO_NODE;
    }
    memcpy(tmp, p->src + t->start, t->len);
    tmp[t->len] = '\0';
    double d = strtod(tmp, NULL);
    int len = (int)(t->len > 80 ? 80 : t->len);
    if (d > 1.7976931348623157e308)
        fail(p, t->char_pos, RUNTIME_EXC "%.*s is greater than 1.7976931348623157E308", len, tmp);
    else if (d < 4.9e-324)
        fail(p, t->char_pos, RUNTIME_EXC "%.*s is less than 4.9E-324", len, tmp);
    if (tmp != stack)
        free(tmp);
    if (p->failed)
        return NO_NODE;
    rmq_fx_node node;
    memset(&node, 0, sizeof node);
    node.kind = FX_CONST_DOUBLE;
    node.left = node.right = NO_NODE;
    node.v.d = d;
    return add(p, node);
}

/* ---- grammar ---- */

static uint32_t or_expr(parser *p);
static uint32_t unary_expr(parser *p);

#define EXPECT_PRIMARY                                                                             \
    "<STRING_LITERAL> ...\n    <DECIMAL_LITERAL> ...\n    <FLOATING_POINT_LITERAL> ...\n    "      \
    "\"TRUE\" ...\n    \"FALSE\" ...\n    \"NULL\" ...\n    <ID> ...\n    \"(\" ...\n    \"+\" "   \
    "...\n    \"-\" ...\n    \"NOT\" ..."

static uint32_t primary_expr(parser *p)
{
    sql92_tok k = peek(p, 0);
    if (p->failed)
        return NO_NODE;
    rmq_fx_node node;
    memset(&node, 0, sizeof node);
    node.left = node.right = NO_NODE;
    switch (k) {
    case T_STRING: {
        sql92_token t = take(p);
        node.kind = FX_CONST_STRING;
        node.v.s = unquote(p, &t);
        return add(p, node);
    }
    case T_DECIMAL: {
        sql92_token t = take(p);
        return decimal_literal(p, &t);
    }
    case T_FLOAT: {
        sql92_token t = take(p);
        return float_literal(p, &t);
    }
    case T_TRUE:
        take(p);
        node.kind = FX_CONST_TRUE;
        return add(p, node);
    case T_FALSE:
        take(p);
        node.kind = FX_CONST_FALSE;
        return add(p, node);
    case T_NULL:
        take(p);
        node.kind = FX_CONST_NULL;
        return add(p, node);
    case T_ID: {
        sql92_token t = take(p);
        node.kind = FX_PROPERTY;
        node.v.s = rmq_fxb_string(p->b, p->src + t.start, t.len);
        return add(p, node);
    }
    case T_LPAREN: {
        take(p);
        uint32_t x = or_expr(p);
        if (p->failed || !expect(p, T_RPAREN, NULL))
            return NO_NODE;
        return x;
    }
    default: unexpected(p, EXPECT_PRIMARY); return NO_NODE;
    }
}

static uint32_t unary_expr(parser *p)
{
    if (++p->depth > RMQ_FX_MAX_NESTING) {
        fill(p, 1);
        fail(p, p->la_count ? p->la[0].char_pos : 0,
             RUNTIME_EXC "expression nested deeper than %d levels", RMQ_FX_MAX_NESTING);
        return NO_NODE;
    }
    uint32_t r = NO_NODE;
    sql92_tok k = peek(p, 0);
    if (k == T_PLUS) {
        take(p);
        r = unary_expr(p); /* Java builds no node for unary plus */
    } else if (k == T_MINUS) {
        take(p);
        uint32_t x = unary_expr(p);
        r = p->failed ? NO_NODE : add_simple(p, FX_NEGATE, x, NO_NODE);
    } else if (k == T_NOT) {
        sql92_token t = take(p);
        uint32_t x = unary_expr(p);
        x = as_boolean(p, x, t.char_pos);
        r = p->failed ? NO_NODE : add_simple(p, FX_NOT, x, NO_NODE);
    } else if (!p->failed) {
        r = primary_expr(p);
    }
    p->depth--;
    return p->failed ? NO_NODE : r;
}

static bool string_literal(parser *p, rmq_fx_str *out)
{
    sql92_token t;
    if (!expect(p, T_STRING, &t))
        return false;
    *out = unquote(p, &t);
    return !p->b->oom;
}

static uint32_t in_list(parser *p, uint32_t left, bool negated, int pos)
{
    if (!expect(p, T_LPAREN, NULL))
        return NO_NODE;
    uint32_t first = p->b->list_count, count = 0;
    for (;;) {
        rmq_fx_str s;
        if (!string_literal(p, &s))
            return NO_NODE;
        if (rmq_fxb_list(p->b, s) == UINT32_MAX) {
            fail(p, 0, "out of memory");
            return NO_NODE;
        }
        count++;
        if (peek(p, 0) == T_COMMA) {
            take(p);
            continue;
        }
        if (p->failed || !expect(p, T_RPAREN, NULL))
            return NO_NODE;
        break;
    }
    if (N(p, left)->kind != FX_PROPERTY) {
        char s[160];
        to_string(p, left, s, sizeof s);
        fail(p, pos, RUNTIME_EXC "Expected a property for In expression, got: %s", s);
        return NO_NODE;
    }
    rmq_fx_node node;
    memset(&node, 0, sizeof node);
    node.kind = FX_IN;
    node.flags = negated ? FX_FLAG_NOT : 0;
    node.left = left;
    node.right = NO_NODE;
    node.v.list.first = first;
    node.v.list.count = count;
    return add(p, node);
}

static bool is_string_op(sql92_tok k)
{
    return k == T_CONTAINS || k == T_STARTSWITH || k == T_ENDSWITH;
}

static uint32_t string_op(parser *p, sql92_tok op, uint32_t left, bool negated)
{
    rmq_fx_str s;
    if (!string_literal(p, &s))
        return NO_NODE;
    rmq_fx_node node;
    memset(&node, 0, sizeof node);
    node.kind = op == T_CONTAINS ? FX_CONTAINS : op == T_STARTSWITH ? FX_STARTSWITH : FX_ENDSWITH;
    node.flags = negated ? FX_FLAG_NOT : 0;
    node.left = left;
    node.right = NO_NODE;
    node.v.s = s;
    return add(p, node);
}

static uint32_t comparison_expr(parser *p)
{
    uint32_t left = unary_expr(p);
    while (!p->failed) {
        sql92_tok k = peek(p, 0);
        int pos = p->la_count ? p->la[0].char_pos : 0;
        if (k == T_GT || k == T_GE || k == T_LT || k == T_LE) {
            take(p);
            uint32_t right = unary_expr(p);
            uint8_t kind = k == T_GT ? FX_GT : k == T_GE ? FX_GE : k == T_LT ? FX_LT : FX_LE;
            left = create_ordering(p, kind, left, right, pos);
        } else if (k == T_BETWEEN) {
            take(p);
            uint32_t lo = unary_expr(p);
            if (p->failed || !expect(p, T_AND, NULL))
                break;
            uint32_t hi = unary_expr(p);
            left = create_between(p, left, lo, hi, false, pos);
        } else if (k == T_IN) {
            take(p);
            left = in_list(p, left, false, pos);
        } else if (p->ops5x && is_string_op(k)) {
            take(p);
            left = string_op(p, k, left, false);
        } else if (k == T_NOT) {
            sql92_tok k2 = peek(p, 1);
            if (p->failed)
                break;
            if (k2 == T_BETWEEN) {
                take(p), take(p);
                uint32_t lo = unary_expr(p);
                if (p->failed || !expect(p, T_AND, NULL))
                    break;
                uint32_t hi = unary_expr(p);
                left = create_between(p, left, lo, hi, true, pos);
            } else if (k2 == T_IN) {
                take(p), take(p);
                left = in_list(p, left, true, pos);
            } else if (p->ops5x && is_string_op(k2)) {
                take(p), take(p);
                left = string_op(p, k2, left, true);
            } else {
                unexpected(p, p->ops5x ? "\"NOT\" \"BETWEEN\" ...\n    \"NOT\" \"IN\" ...\n    "
                                         "\"NOT\" \"CONTAINS\" ...\n    \"NOT\" \"STARTSWITH\" "
                                         "...\n    \"NOT\" \"ENDSWITH\" ..."
                                       : "\"NOT\" \"BETWEEN\" ...\n    \"NOT\" \"IN\" ...");
            }
        } else {
            break;
        }
    }
    return p->failed ? NO_NODE : left;
}

static uint32_t equality_expr(parser *p)
{
    uint32_t left = comparison_expr(p);
    while (!p->failed) {
        sql92_tok k = peek(p, 0);
        int pos = p->la_count ? p->la[0].char_pos : 0;
        if (k == T_EQ || k == T_NE) {
            take(p);
            uint32_t right = comparison_expr(p);
            left = create_equal(p, left, right, pos);
            if (k == T_NE && !p->failed)
                left = add_simple(p, FX_NOT, left, NO_NODE);
        } else if (k == T_IS) {
            sql92_tok k2 = peek(p, 1);
            if (p->failed)
                break;
            take(p);
            bool negated = false;
            if (k2 != T_NULL) {
                if (!expect(p, T_NOT, NULL))
                    break;
                negated = true;
            }
            if (!expect(p, T_NULL, NULL))
                break;
            uint32_t null_node = add_simple(p, FX_CONST_NULL, NO_NODE, NO_NODE);
            left = add_simple(p, FX_EQ, left, null_node);
            if (negated)
                left = add_simple(p, FX_NOT, left, NO_NODE);
        } else {
            break;
        }
    }
    return p->failed ? NO_NODE : left;
}

static uint32_t and_expr(parser *p)
{
    uint32_t left = equality_expr(p);
    while (!p->failed && peek(p, 0) == T_AND) {
        int pos = p->la[0].char_pos;
        take(p);
        uint32_t right = equality_expr(p);
        left = as_boolean(p, left, pos);
        right = as_boolean(p, right, pos);
        left = add_simple(p, FX_AND, left, right);
    }
    return p->failed ? NO_NODE : left;
}

static uint32_t or_expr(parser *p)
{
    if (++p->depth > RMQ_FX_MAX_NESTING) {
        fail(p, 0, RUNTIME_EXC "expression nested deeper than %d levels", RMQ_FX_MAX_NESTING);
        return NO_NODE;
    }
    uint32_t left = and_expr(p);
    while (!p->failed && peek(p, 0) == T_OR) {
        int pos = p->la[0].char_pos;
        take(p);
        uint32_t right = and_expr(p);
        left = as_boolean(p, left, pos);
        right = as_boolean(p, right, pos);
        left = add_simple(p, FX_OR, left, right);
    }
    p->depth--;
    return p->failed ? NO_NODE : left;
}

int rmq_fx_compile_sql92(const char *text, size_t len, const rmq_fx_options *opt,
                         struct rmq_filter_expr **out, char *err, size_t errlen, int *err_pos)
{
    rmq_fx_builder b;
    rmq_fxb_init(&b);
    parser p;
    memset(&p, 0, sizeof p);
    p.b = &b;
    p.src = text;
    p.ops5x = opt && opt->ops5x;
    p.err = err;
    p.errlen = errlen;
    p.err_pos = err_pos;
    if (err && errlen)
        err[0] = '\0';
    if (err_pos)
        *err_pos = 0;
    sql92_lexer_init(&p.lx, text, len, p.ops5x);

    rmq_fx_str src = rmq_fxb_string(&b, text, len);
    uint32_t root = or_expr(&p);
    if (!p.failed)
        root = as_boolean(&p, root, 1);
    int rc = 0;
    if (b.oom) {
        rc = RMQ_ENOMEM;
    } else if (p.failed) {
        rc = RMQ_EINVAL;
    } else {
        *out = rmq_fxb_pack(&b, RMQ_FX_TYPE_SQL92, false, root, src);
        if (!*out)
            rc = RMQ_ENOMEM;
    }
    if (rc == RMQ_ENOMEM && err && errlen)
        snprintf(err, errlen, "out of memory");
    rmq_fxb_dispose(&b);
    return rc;
}
