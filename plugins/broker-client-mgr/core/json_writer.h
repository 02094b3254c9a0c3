/* json_writer.h — a growing byte buffer and the compact JSON pieces the
 * broker's large documents are written with (topics.json, the
 * REGISTER_BROKER body): the same bytes json_dumps(JSON_COMPACT) writes,
 * without building a jansson tree first (100,000 topics cost ~120 MB of
 * jansson objects for one registration body). */
#ifndef BCM_JSON_WRITER_H
#define BCM_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bcm_buf {
    unsigned char *p;
    size_t n, cap;
    bool oom; /* an append failed: the content is incomplete */
} bcm_buf;

/* Room for `more` bytes past n (false, and oom set, when out of memory). */
bool bcm_buf_reserve(bcm_buf *b, size_t more);
void bcm_buf_add(bcm_buf *b, const void *d, size_t n);
void bcm_buf_str(bcm_buf *b, const char *s);
void bcm_buf_char(bcm_buf *b, char ch);
void bcm_buf_i64(bcm_buf *b, int64_t v);
/* Big-endian 4-byte length (Java's DataOutputStream.writeInt). */
void bcm_buf_be32(bcm_buf *b, uint32_t v);
void bcm_buf_free(bcm_buf *b);
/* The content NUL-terminated and handed over (the buffer is emptied);
 * NULL after an append failed. */
char *bcm_buf_take_string(bcm_buf *b, size_t *len);

/* True when s[0..n) is UTF-8 jansson accepts (no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
bool bcm_utf8_valid(const char *s, size_t n);
/* `"s"` escaped as jansson's dump does without JSON_ENSURE_ASCII and
 * JSON_ESCAPE_SLASH: \" \\ \b \f \n \r \t, other controls \u00XX
 * (upper-case hex), everything else verbatim. s must be valid UTF-8. */
void bcm_json_string(bcm_buf *b, const char *s, size_t n);

#endif
