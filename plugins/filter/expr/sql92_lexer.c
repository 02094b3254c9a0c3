/* sql92_lexer.c — turns selector text into tokens, one at a time, with
 * JavaCC's longest-match rule and keyword priority. Owns line/column
 * bookkeeping and lexical error texts; knows nothing about the grammar. */
#include "sql92_lexer.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

void sql92_lexer_init(sql92_lexer *lx, const char *src, size_t len, bool ops5x)
{
    memset(lx, 0, sizeof(*lx));
    lx->src = src;
    lx->len = len;
    lx->line = 1;
    lx->column = 1;
    lx->char_pos = 1;
    lx->ops5x = ops5x;
}

/* Advance one byte, keeping line/column/char counters. UTF-8 continuation
 * bytes do not count as characters. */
static void advance(sql92_lexer *lx)
{
    unsigned char c = (unsigned char)lx->src[lx->pos++];
    if ((c & 0xC0) == 0x80)
        return;
    lx->char_pos++;
    if (c == '\n') {
        if (lx->prev_cr) {
            lx->prev_cr = false;
            return;
        }
        lx->line++;
        lx->column = 1;
    } else if (c == '\r') {
        lx->line++;
        lx->column = 1;
        lx->prev_cr = true;
        return;
    } else {
        lx->column++;
    }
    lx->prev_cr = false;
}

static int peek(const sql92_lexer *lx, size_t ahead)
{
    return lx->pos + ahead < lx->len ? (unsigned char)lx->src[lx->pos + ahead] : -1;
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}
static bool is_id_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
static bool is_id_part(int c)
{
    return is_id_start(c) || is_digit(c);
}
static bool is_blank(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* JavaCC's "Encountered: "x" (code), after : "prefix"". */
static void lex_error(sql92_lexer *lx, size_t token_start, char *err, size_t errlen, int *err_pos)
{
    char what[48];
    if (lx->pos >= lx->len) {
        snprintf(what, sizeof what, "<EOF>");
    } else {
        unsigned char c = (unsigned char)lx->src[lx->pos];
        /* Java reports the UTF-16 char; decode the UTF-8 sequence for the code. */
        unsigned cp = c;
        size_t n = 1;
        if (c >= 0xC0 && c < 0xE0)
            cp = c & 0x1F, n = 2;
        else if (c >= 0xE0 && c < 0xF0)
            cp = c & 0x0F, n = 3;
        else if (c >= 0xF0)
            cp = c & 0x07, n = 4;
        size_t k = 1;
        for (; k < n && lx->pos + k < lx->len; k++)
            cp = (cp << 6) | ((unsigned char)lx->src[lx->pos + k] & 0x3F);
        if (c < 0x20 || c == 0x7F)
            snprintf(what, sizeof what, "\"\\u%04x\" (%u)", cp, cp);
        else
            snprintf(what, sizeof what, "\"%.*s\" (%u)", (int)k, lx->src + lx->pos, cp);
    }
    size_t plen = lx->pos - token_start;
    if (err && errlen)
        snprintf(err, errlen,
                 "org.apache.rocketmq.filter.parser.TokenMgrError: Lexical error at line %d, "
                 "column %d.  Encountered: %s%safter : \"%.*s\"",
                 lx->line, lx->column, what, lx->pos >= lx->len ? " " : ", ",
                 (int)(plen > 64 ? 64 : plen), lx->src + token_start);
    if (err_pos)
        *err_pos = lx->char_pos;
}

/* Skips blanks and comments. Returns false on an unterminated block comment. */
static bool skip_ignorable(sql92_lexer *lx, char *err, size_t errlen, int *err_pos)
{
    for (;;) {
        int c = peek(lx, 0);
        if (c < 0)
            return true;
        if (is_blank(c)) {
            advance(lx);
            continue;
        }
        if (c == '-' && peek(lx, 1) == '-') {
            /* A line comment needs its line break (§6.5.7 #1); without one
             * the two characters are minus signs. */
            size_t i = lx->pos + 2;
            while (i < lx->len && lx->src[i] != '\n' && lx->src[i] != '\r')
                i++;
            if (i >= lx->len)
                return true;
            while (lx->pos < i)
                advance(lx);
            if (lx->src[lx->pos] == '\r' && peek(lx, 1) == '\n')
                advance(lx);
            advance(lx);
            continue;
        }
        if (c == '/' && peek(lx, 1) == '*') {
            size_t start = lx->pos;
            advance(lx);
            advance(lx);
            for (;;) {
                if (lx->pos >= lx->len) {
                    lex_error(lx, start, err, errlen, err_pos);
                    return false;
                }
                if (lx->src[lx->pos] == '*' && peek(lx, 1) == '/') {
                    advance(lx);
                    advance(lx);
                    break;
                }
                advance(lx);
            }
            continue;
        }
        return true;
    }
}

static sql92_tok keyword(const sql92_lexer *lx, const char *s, size_t n)
{
    static const struct {
        const char *w;
        sql92_tok t;
        bool v5;
    } kw[] = {
        {"NOT", T_NOT, false},
        {"AND", T_AND, false},
        {"OR", T_OR, false},
        {"BETWEEN", T_BETWEEN, false},
        {"IN", T_IN, false},
        {"TRUE", T_TRUE, false},
        {"FALSE", T_FALSE, false},
        {"NULL", T_NULL, false},
        {"IS", T_IS, false},
        {"CONTAINS", T_CONTAINS, true},
        {"STARTSWITH", T_STARTSWITH, true},
        {"ENDSWITH", T_ENDSWITH, true},
    };
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++) {
        if (kw[i].v5 && !lx->ops5x)
            continue;
        if (strlen(kw[i].w) == n && strncasecmp(kw[i].w, s, n) == 0)
            return kw[i].t;
    }
    return T_ID;
}

/* Length of the longest exponent `[eE][+-]?[0-9]+` at byte offset i, or 0. */
static size_t exponent_len(const sql92_lexer *lx, size_t i)
{
    if (i >= lx->len || (lx->src[i] != 'e' && lx->src[i] != 'E'))
        return 0;
    size_t j = i + 1;
    if (j < lx->len && (lx->src[j] == '+' || lx->src[j] == '-'))
        j++;
    size_t d = j;
    while (j < lx->len && is_digit((unsigned char)lx->src[j]))
        j++;
    return j > d ? j - i : 0;
}

/* Longest numeric literal at the current position: sets *kind and returns
 * its byte length, 0 when none starts here. */
static size_t number_len(const sql92_lexer *lx, sql92_tok *kind)
{
    size_t i = lx->pos, n = lx->len;
    const char *s = lx->src;
    size_t best = 0;
    if (i < n && is_digit((unsigned char)s[i])) {
        /* DECIMAL: "0" | [1-9][0-9]*[lL]? — the suffix never follows a lone 0 */
        size_t j = i + 1;
        if (s[i] != '0') {
            while (j < n && is_digit((unsigned char)s[j]))
                j++;
            if (j < n && (s[j] == 'l' || s[j] == 'L'))
                j++;
        }
        best = j - i;
        *kind = T_DECIMAL;
        /* FLOAT: [0-9]+ '.' [0-9]* exp? | [0-9]+ exp */
        size_t k = i;
        while (k < n && is_digit((unsigned char)s[k]))
            k++;
        size_t f = 0;
        if (k < n && s[k] == '.') {
            size_t m = k + 1;
            while (m < n && is_digit((unsigned char)s[m]))
                m++;
            f = m + exponent_len(lx, m) - i;
        } else {
            size_t e = exponent_len(lx, k);
            if (e)
                f = k + e - i;
        }
        if (f > best) {
            best = f;
            *kind = T_FLOAT;
        }
        return best;
    }
    if (i + 1 < n && s[i] == '.' && is_digit((unsigned char)s[i + 1])) {
        size_t m = i + 1;
        while (m < n && is_digit((unsigned char)s[m]))
            m++;
        *kind = T_FLOAT;
        return m + exponent_len(lx, m) - i;
    }
    return 0;
}

bool sql92_lexer_next(sql92_lexer *lx, sql92_token *out, char *err, size_t errlen, int *err_pos)
{
    if (!skip_ignorable(lx, err, errlen, err_pos))
        return false;
    out->start = lx->pos;
    out->line = lx->line;
    out->column = lx->column;
    out->char_pos = lx->char_pos;
    int c = peek(lx, 0);
    if (c < 0) {
        out->kind = T_EOF;
        out->len = 0;
        return true;
    }
    size_t n = 0;
    sql92_tok kind = T_EOF;
    if (is_id_start(c)) {
        n = 1;
        while (is_id_part(peek(lx, n)))
            n++;
        kind = keyword(lx, lx->src + lx->pos, n);
    } else if ((n = number_len(lx, &kind)) > 0) {
        /* kind set */
    } else if (c == '\'') {
        size_t start = lx->pos;
        advance(lx);
        for (;;) {
            if (lx->pos >= lx->len) {
                lex_error(lx, start, err, errlen, err_pos);
                return false;
            }
            if (lx->src[lx->pos] == '\'') {
                if (peek(lx, 1) == '\'') {
                    advance(lx);
                    advance(lx);
                    continue;
                }
                advance(lx);
                break;
            }
            advance(lx);
        }
        out->kind = T_STRING;
        out->len = lx->pos - start;
        return true;
    } else {
        int d = peek(lx, 1);
        switch (c) {
        case '=': kind = T_EQ, n = 1; break;
        case '<':
            if (d == '>')
                kind = T_NE, n = 2;
            else if (d == '=')
                kind = T_LE, n = 2;
            else
                kind = T_LT, n = 1;
            break;
        case '>':
            if (d == '=')
                kind = T_GE, n = 2;
            else
                kind = T_GT, n = 1;
            break;
        case '(': kind = T_LPAREN, n = 1; break;
        case ')': kind = T_RPAREN, n = 1; break;
        case ',': kind = T_COMMA, n = 1; break;
        case '+': kind = T_PLUS, n = 1; break;
        case '-': kind = T_MINUS, n = 1; break;
        default: lex_error(lx, lx->pos, err, errlen, err_pos); return false;
        }
    }
    for (size_t i = 0; i < n; i++)
        advance(lx);
    out->kind = kind;
    out->len = n;
    return true;
}

const char *sql92_tok_name(sql92_tok kind)
{
    switch (kind) {
    case T_EOF: return "<EOF>";
    case T_NOT: return "\"NOT\"";
    case T_AND: return "\"AND\"";
    case T_OR: return "\"OR\"";
    case T_BETWEEN: return "\"BETWEEN\"";
    case T_IN: return "\"IN\"";
    case T_TRUE: return "\"TRUE\"";
    case T_FALSE: return "\"FALSE\"";
    case T_NULL: return "\"NULL\"";
    case T_IS: return "\"IS\"";
    case T_CONTAINS: return "\"CONTAINS\"";
    case T_STARTSWITH: return "\"STARTSWITH\"";
    case T_ENDSWITH: return "\"ENDSWITH\"";
    case T_DECIMAL: return "<DECIMAL_LITERAL>";
    case T_FLOAT: return "<FLOATING_POINT_LITERAL>";
    case T_STRING: return "<STRING_LITERAL>";
    case T_ID: return "<ID>";
    case T_EQ: return "\"=\"";
    case T_NE: return "\"<>\"";
    case T_GT: return "\">\"";
    case T_GE: return "\">=\"";
    case T_LT: return "\"<\"";
    case T_LE: return "\"<=\"";
    case T_LPAREN: return "\"(\"";
    case T_RPAREN: return "\")\"";
    case T_COMMA: return "\",\"";
    case T_PLUS: return "\"+\"";
    case T_MINUS: return "\"-\"";
    case T_LEX_ERROR: break;
    }
    return "?";
}
