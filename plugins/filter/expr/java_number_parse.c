/* java_number_parse.c — owns the exact acceptance rules of Java's number
 * parsers as the filter module meets them (protocol.md §6.5.4, §6.5.7 #10).
 * Must not allocate: it runs inside message evaluation. */
#include "java_number_parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Zero code points of the BMP's decimal-digit (Nd) runs, Unicode 6.2 as in
 * Java 8, each followed by nine more digits. */
static const uint16_t nd_zeros[] = {
    0x0030, 0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6,
    0x0D66, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xAA50, 0xABF0, 0xFF10,
};

static int unicode_digit(uint32_t cp)
{
    if (cp < 0x80)
        return cp >= '0' && cp <= '9' ? (int)(cp - '0') : -1;
    for (size_t i = 0; i < sizeof nd_zeros / sizeof nd_zeros[0]; i++)
        if (cp >= nd_zeros[i] && cp < (uint32_t)nd_zeros[i] + 10)
            return (int)(cp - nd_zeros[i]);
    return -1;
}

/* Decode one UTF-8 code point; malformed input yields U+FFFD and one byte. */
static uint32_t utf8_next(const char *s, size_t len, size_t *i)
{
    const unsigned char *u = (const unsigned char *)s;
    unsigned char c = u[*i];
    uint32_t cp;
    size_t n;
    if (c < 0x80) {
        (*i)++;
        return c;
    } else if (c >= 0xC2 && c < 0xE0) {
        cp = c & 0x1F, n = 2;
    } else if (c >= 0xE0 && c < 0xF0) {
        cp = c & 0x0F, n = 3;
    } else if (c >= 0xF0 && c < 0xF5) {
        cp = c & 0x07, n = 4;
    } else {
        (*i)++;
        return 0xFFFD;
    }
    if (*i + n > len) {
        (*i)++;
        return 0xFFFD;
    }
    for (size_t k = 1; k < n; k++) {
        if ((u[*i + k] & 0xC0) != 0x80) {
            (*i)++;
            return 0xFFFD;
        }
        cp = (cp << 6) | (u[*i + k] & 0x3F);
    }
    *i += n;
    return cp;
}

static bool parse_signed(const char *s, size_t len, int64_t min, int64_t max, int64_t *out)
{
    if (len == 0)
        return false;
    size_t i = 0;
    bool neg = false;
    if (s[0] == '-' || s[0] == '+') {
        neg = s[0] == '-';
        if (len == 1)
            return false;
        i = 1;
    }
    /* Accumulate negatively as Java does, so MIN_VALUE parses. */
    int64_t limit = neg ? min : -max;
    int64_t result = 0;
    while (i < len) {
        int d = unicode_digit(utf8_next(s, len, &i));
        if (d < 0)
            return false;
        if (result < limit / 10)
            return false;
        result *= 10;
        if (result < limit + d)
            return false;
        result -= d;
    }
    *out = neg ? result : -result;
    return true;
}

bool java_parse_int(const char *s, size_t len, int32_t *out)
{
    int64_t v;
    if (!parse_signed(s, len, INT32_MIN, INT32_MAX, &v))
        return false;
    *out = (int32_t)v;
    return true;
}

bool java_parse_long(const char *s, size_t len, int64_t *out)
{
    return parse_signed(s, len, INT64_MIN, INT64_MAX, out);
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Clinger's fast path for validated plain decimals ("42", "0.75"): at most
 * 15 digits and no exponent make both the integer and the power of ten
 * exact doubles, so one IEEE division is correctly rounded, as strtod and
 * Java are. Anything else (exponents, long digit strings) goes to strtod. */
static bool fast_decimal(const char *s, size_t n, bool neg, double *out)
{
    static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    uint64_t m = 0;
    int digits = 0, frac = 0;
    bool dot = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '.') {
            dot = true;
            continue;
        }
        if (c < '0' || c > '9') {
            /* only a final f/F/d/D suffix may remain */
            if (i != n - 1)
                return false;
            break;
        }
        if (++digits > 15)
            return false;
        m = m * 10 + (uint64_t)(c - '0');
        if (dot)
            frac++;
    }
    double v = (double)m / pow10[frac];
    *out = neg ? -v : v;
    return true;
}

bool java_parse_double(const char *s, size_t len, double *out)
{
    size_t b = 0, e = len;
    while (b < e && (unsigned char)s[b] <= ' ')
        b++;
    while (e > b && (unsigned char)s[e - 1] <= ' ')
        e--;
    if (b == e)
        return false;
    size_t i = b;
    bool neg = false;
    if (s[i] == '+' || s[i] == '-') {
        neg = s[i] == '-';
        i++;
    }
    if (i < e && s[i] == 'N') {
        if (e - i == 3 && memcmp(s + i, "NaN", 3) == 0) {
            *out = NAN;
            return true;
        }
        return false;
    }
    if (i < e && s[i] == 'I') {
        if (e - i == 8 && memcmp(s + i, "Infinity", 8) == 0) {
            *out = neg ? -INFINITY : INFINITY;
            return true;
        }
        return false;
    }
    size_t num_start = b;
    if (i + 1 < e && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        /* 0x hexdigits? (. hexdigits?)? [pP] [+-]? digits, at least one hex digit */
        size_t j = i + 2, digits = 0;
        while (j < e && is_hex(s[j]))
            j++, digits++;
        if (j < e && s[j] == '.') {
            j++;
            while (j < e && is_hex(s[j]))
                j++, digits++;
        }
        if (!digits || j >= e || (s[j] != 'p' && s[j] != 'P'))
            return false;
        j++;
        if (j < e && (s[j] == '+' || s[j] == '-'))
            j++;
        size_t ed = j;
        while (j < e && s[j] >= '0' && s[j] <= '9')
            j++;
        if (j == ed)
            return false;
        if (j < e && j == e - 1 && strchr("fFdD", s[j]))
            j++;
        if (j != e)
            return false;
    } else {
        size_t j = i, digits = 0;
        while (j < e && s[j] >= '0' && s[j] <= '9')
            j++, digits++;
        if (j < e && s[j] == '.') {
            j++;
            while (j < e && s[j] >= '0' && s[j] <= '9')
                j++, digits++;
        }
        if (!digits)
            return false;
        if (j < e && (s[j] == 'e' || s[j] == 'E')) {
            j++;
            if (j < e && (s[j] == '+' || s[j] == '-'))
                j++;
            size_t ed = j;
            while (j < e && s[j] >= '0' && s[j] <= '9')
                j++;
            if (j == ed)
                return false;
        }
        if (j < e && j == e - 1 && strchr("fFdD", s[j]))
            j++;
        if (j != e)
            return false;
    }
    if (fast_decimal(s + i, e - i, neg, out))
        return true;
    /* Validated: strtod reads exactly the number and stops at a suffix,
     * a trimmed blank or the terminator. */
    *out = strtod(s + num_start, NULL);
    return true;
}

int java_double_compare(double a, double b)
{
    if (a < b)
        return -1;
    if (a > b)
        return 1;
    bool an = isnan(a), bn = isnan(b);
    if (an || bn)
        return an && bn ? 0 : (an ? 1 : -1);
    /* equal values: tell -0.0 from 0.0 */
    bool as = signbit(a) != 0, bs = signbit(b) != 0;
    return as == bs ? 0 : (as ? -1 : 1);
}

void java_double_to_string(double d, char *buf, size_t len)
{
    if (isnan(d)) {
        snprintf(buf, len, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(buf, len, d < 0 ? "-Infinity" : "Infinity");
        return;
    }
    if (d == 0) {
        snprintf(buf, len, signbit(d) ? "-0.0" : "0.0");
        return;
    }
    char tmp[40];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    /* tmp = [-]D.DDDe[+-]XX → mantissa digits and decimal exponent */
    char digits[24];
    size_t nd = 0;
    const char *p = tmp;
    bool neg = *p == '-';
    if (neg)
        p++;
    for (; *p && *p != 'e'; p++)
        if (*p != '.' && nd < sizeof digits - 1)
            digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    int exp10 = atoi(p + 1);
    double a = fabs(d);
    if (a >= 1e-3 && a < 1e7) {
        char out[64];
        size_t o = 0;
        if (neg)
            out[o++] = '-';
        if (exp10 < 0) {
            out[o++] = '0';
            out[o++] = '.';
            for (int k = -1; k > exp10; k--)
                out[o++] = '0';
            for (size_t k = 0; k < nd; k++)
                out[o++] = digits[k];
        } else {
            for (int k = 0; k <= exp10; k++)
                out[o++] = (size_t)k < nd ? digits[k] : '0';
            out[o++] = '.';
            if ((size_t)exp10 + 1 < nd)
                for (size_t k = (size_t)exp10 + 1; k < nd; k++)
                    out[o++] = digits[k];
            else
                out[o++] = '0';
        }
        out[o] = '\0';
        snprintf(buf, len, "%s", out);
    } else {
        snprintf(buf, len, "%s%c.%sE%d", neg ? "-" : "", digits[0], nd > 1 ? digits + 1 : "0",
                 exp10);
    }
}
