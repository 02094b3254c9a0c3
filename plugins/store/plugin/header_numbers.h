/* header_numbers.h — Java's Integer.parseInt / Long.parseLong /
 * Boolean.parseBoolean for ext-field values, and the SYSTEM_ERROR remark a FastCodesHeader decode
 * failure produces (protocol-messages.md §10 intro). */
#ifndef STORE_HEADER_NUMBERS_H
#define STORE_HEADER_NUMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 0 on success; -1 when `s` is not a valid decimal number in range. */
int java_parse_int(const char *s, int32_t *out);
int java_parse_long(const char *s, int64_t *out);
/* Boolean.parseBoolean: "true" in any case; NULL/anything else false. */
bool java_parse_bool(const char *s);

/* Remark of the NumberFormatException thrown for `s` (NULL: null). */
void number_format_remark(const char *s, char *buf, size_t cap);

/* A required number of a FastCodesHeader: 0 with *out set, or -1 with the
 * NullPointerException remark (absent) or the NumberFormatException one. */
int header_required_int(const char *s, int32_t *out, char *remark, size_t cap);
int header_required_long(const char *s, int64_t *out, char *remark, size_t cap);

#endif
