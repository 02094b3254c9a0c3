/* java_number_parse.h — the Java parsers RocketMQ's filter applies to
 * property strings (Integer.valueOf, Long.valueOf, Double.valueOf) and
 * Java's Double.toString for messages. Pure functions, no allocation. */
#ifndef RMQ_FILTER_JAVA_NUMBER_PARSE_H
#define RMQ_FILTER_JAVA_NUMBER_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Integer.parseInt / Long.parseLong, radix 10, over UTF-8 text: optional
 * sign, then one or more Unicode decimal digits of the BMP (Java reads
 * UTF-16 units), no blanks, range-checked. */
bool java_parse_int(const char *s, size_t len, int32_t *out);
bool java_parse_long(const char *s, size_t len, int64_t *out);

/* Double.valueOf: trims chars <= ' ', accepts NaN, Infinity, hex floats,
 * ASCII decimal with optional exponent and one f/F/d/D suffix. s[len] must
 * be a byte that cannot continue a number (NUL is fine). */
bool java_parse_double(const char *s, size_t len, double *out);

/* Java's Double.compare: NaN above everything and equal to itself,
 * -0.0 below 0.0. */
int java_double_compare(double a, double b);

/* Double.toString-like text ("1.0", "1.0E10", "NaN"), for messages. */
void java_double_to_string(double d, char *buf, size_t len);

#endif
