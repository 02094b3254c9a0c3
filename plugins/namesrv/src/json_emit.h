/* json_emit.h — a growable text buffer and the two JSON string dialects the
 * NameServer writes: fastjson's native output and its "standard" mode. */
#ifndef NAMESRV_JSON_EMIT_H
#define NAMESRV_JSON_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct text_buf {
    char *data;
    size_t len;
    size_t cap;
    bool oom; /* sticky: once set every append is a no-op */
} text_buf;

void tb_init(text_buf *b);
void tb_free(text_buf *b);
/* Hands the NUL-terminated buffer to the caller (NULL after OOM). */
char *tb_take(text_buf *b, size_t *len);
void tb_reserve(text_buf *b, size_t extra);
void tb_putc(text_buf *b, char c);
void tb_puts(text_buf *b, const char *s);
void tb_putn(text_buf *b, const char *s, size_t n);
void tb_int(text_buf *b, int64_t v);

/* A quoted JSON string. standard=false: fastjson default (non-ASCII and '/'
 * raw); standard=true: BrowserCompatible (non-ASCII as uppercase \uXXXX,
 * '/' as "\/"). NULL writes `null`. */
void tb_json_str(text_buf *b, const char *s, bool standard);

#endif
