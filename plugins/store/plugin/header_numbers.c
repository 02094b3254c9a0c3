/* header_numbers.c — strict decimal parsing with Java's accept set (optional
 * sign, ASCII digits, range) and the exception text of a failure. */
#include "header_numbers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (!s || !*s)
        return -1;
    bool neg = false;
    const char *p = s;
    if (*p == '-' || *p == '+') {
        neg = *p == '-';
        p++;
        if (!*p)
            return -1;
    }
    /* accumulate negatively so that the minimum value fits */
    int64_t acc = 0;
    int64_t limit = neg ? lo : -hi;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        int d = *p - '0';
        if (acc < limit / 10)
            return -1;
        acc *= 10;
        if (acc < limit + d)
            return -1;
        acc -= d;
    }
    *out = neg ? acc : -acc;
    return 0;
}

int java_parse_int(const char *s, int32_t *out)
{
    int64_t v;
    if (parse(s, INT32_MIN, INT32_MAX, &v) != 0)
        return -1;
    *out = (int32_t)v;
    return 0;
}

int java_parse_long(const char *s, int64_t *out)
{
    return parse(s, INT64_MIN, INT64_MAX, out);
}

bool java_parse_bool(const char *s)
{
    /* Boolean.parseBoolean, by hand: two of these run on every send */
    return s && (s[0] | 0x20) == 't' && (s[1] | 0x20) == 'r' && (s[2] | 0x20) == 'u' &&
           (s[3] | 0x20) == 'e' && s[4] == 0;
}

void number_format_remark(const char *s, char *buf, size_t cap)
{
    if (!s)
        snprintf(buf, cap,
                 "java.lang.NumberFormatException: null, "
                 "java.lang.Integer.parseInt(Integer.java:542)");
    else
        snprintf(buf, cap,
                 "java.lang.NumberFormatException: For input string: \"%.200s\", "
                 "java.lang.NumberFormatException.forInputString(NumberFormatException.java:65)",
                 s);
}

static int required(const char *s, int64_t lo, int64_t hi, int64_t *out, char *remark, size_t cap)
{
    if (!s) {
        snprintf(remark, cap, "java.lang.NullPointerException");
        return -1;
    }
    if (parse(s, lo, hi, out) != 0) {
        number_format_remark(s, remark, cap);
        return -1;
    }
    return 0;
}

int header_required_int(const char *s, int32_t *out, char *remark, size_t cap)
{
    int64_t v;
    if (required(s, INT32_MIN, INT32_MAX, &v, remark, cap) != 0)
        return -1;
    *out = (int32_t)v;
    return 0;
}

int header_required_long(const char *s, int64_t *out, char *remark, size_t cap)
{
    return required(s, INT64_MIN, INT64_MAX, out, remark, cap);
}
