/* conformance_case.h — one row of the filter expression conformance table:
 * an expression, the message it is evaluated against, and the outcome Java's
 * filter module gives (protocol.md §6.4–6.5, §6.5.7). */
#ifndef RMQ_TEST_FILTER_CONFORMANCE_CASE_H
#define RMQ_TEST_FILTER_CONFORMANCE_CASE_H

#include <stddef.h>

/* Which grammar the row holds for. */
#define M49 0x1u /* RocketMQ 4.9.8 (sql92Operators5x = false, the default) */
#define M5X 0x2u /* RocketMQ 5.3.3 operators on (sql92Operators5x = true) */
#define MB (M49 | M5X)

typedef enum expected_outcome {
    R_F = 0,   /* FALSE */
    R_T = 1,   /* TRUE: the only outcome that delivers */
    R_N = 2,   /* null (unknown) */
    R_ERR = 3, /* evaluation error */
    R_CE = 4   /* does not compile (CHECK_CLIENT_CONFIG answers 23) */
} expected_outcome;

typedef struct conformance_case {
    int line;
    unsigned modes;
    const char *type;
    const char *expr;
    const char *const *props; /* {key, value, ..., NULL}; NULL = no properties */
    const char *tag;          /* TAG rows: the message tag (NULL = untagged) */
    expected_outcome want;
} conformance_case;

#define P(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NOPROPS NULL
#define SQL(modes, expr, props, want)                                                              \
    {                                                                                              \
        __LINE__, modes, "SQL92", expr, props, NULL, want                                          \
    }
#define TAGROW(expr, tag, want)                                                                    \
    {                                                                                              \
        __LINE__, MB, "TAG", expr, NULL, tag, want                                                 \
    }

extern const conformance_case conformance_cases[];
extern const size_t conformance_case_count;

#endif
