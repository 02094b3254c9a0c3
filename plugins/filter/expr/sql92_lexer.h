/* sql92_lexer.h — tokens of RocketMQ's SQL92 selector language
 * (protocol.md §6.5.1 with the §6.5.7 corrections). Lexing is lazy: the
 * parser asks for one token at a time, because input after the first
 * trailing token is never read (and may be garbage). */
#ifndef RMQ_FILTER_SQL92_LEXER_H
#define RMQ_FILTER_SQL92_LEXER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum sql92_tok {
    T_EOF = 0,
    T_NOT,
    T_AND,
    T_OR,
    T_BETWEEN,
    T_IN,
    T_TRUE,
    T_FALSE,
    T_NULL,
    T_IS,
    T_CONTAINS,
    T_STARTSWITH,
    T_ENDSWITH, /* keywords only with 5.x operators */
    T_DECIMAL,
    T_FLOAT,
    T_STRING,
    T_ID,
    T_EQ,
    T_NE,
    T_GT,
    T_GE,
    T_LT,
    T_LE,
    T_LPAREN,
    T_RPAREN,
    T_COMMA,
    T_PLUS,
    T_MINUS,
    T_LEX_ERROR /* never returned as a token: lexing failed */
} sql92_tok;

typedef struct sql92_token {
    sql92_tok kind;
    size_t start, len; /* byte range of the image in the input */
    int line, column;  /* 1-based, columns in characters */
    int char_pos;      /* 1-based character offset of the image in the input */
} sql92_token;

typedef struct sql92_lexer {
    const char *src;
    size_t len;
    size_t pos;
    int line, column, char_pos; /* of src[pos] */
    bool ops5x;
    bool prev_cr; /* a \r just ended a line: a following \n is the same break */
} sql92_lexer;

void sql92_lexer_init(sql92_lexer *lx, const char *src, size_t len, bool ops5x);

/* Next token. On a lexical error returns false and writes Java's
 * TokenMgrError text to err, its character position to *err_pos. */
bool sql92_lexer_next(sql92_lexer *lx, sql92_token *out, char *err, size_t errlen, int *err_pos);

/* Human-readable name of a token kind for "Was expecting" lists. */
const char *sql92_tok_name(sql92_tok kind);

#endif
