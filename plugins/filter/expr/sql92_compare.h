/* sql92_compare.h — runtime values of SQL92 evaluation and Java's
 * "compare with conversion" between two of them (protocol.md §6.5.4). */
#ifndef RMQ_FILTER_SQL92_COMPARE_H
#define RMQ_FILTER_SQL92_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum sql92_vtype { V_NULL = 0, V_BOOL, V_INT, V_LONG, V_DOUBLE, V_STRING } sql92_vtype;

typedef struct sql92_value {
    sql92_vtype type;
    union {
        bool b;
        int64_t i; /* V_INT (int32 range) and V_LONG */
        double d;
        struct {
            const char *p; /* NUL-terminated */
            size_t n;
        } s;
    } u;
} sql92_value;

/* Compare two non-null values as ComparisonExpression.compare does:
 * *out < 0, 0, > 0. False (with Java's exception text in why) when Java
 * throws: a string that does not parse as the other side's number type, or
 * a Boolean on the left against a String. */
bool sql92_compare(const sql92_value *l, const sql92_value *r, int *out, char *why, size_t whylen);

/* Java Boolean.valueOf(String): "true" ignoring case. */
bool sql92_java_boolean(const char *s, size_t n);

#endif
