/* byte_buf.c — the growable byte buffer used for connection I/O and for
 * text the host builds (admin answers). Grows by doubling; on OOM the buffer
 * is left as it was. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "host.h"

int byte_buf_reserve(byte_buf *b, size_t extra)
{
    if (b->len + extra <= b->cap)
        return 0;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap < b->len + extra)
        ncap *= 2;
    uint8_t *nd = realloc(b->data, ncap);
    if (!nd)
        return RMQ_ENOMEM;
    b->data = nd;
    b->cap = ncap;
    return 0;
}

void byte_buf_free(byte_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int byte_buf_vappendf(byte_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0 || byte_buf_reserve(b, (size_t)n + 1) != 0) {
        va_end(ap2);
        return RMQ_ENOMEM;
    }
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    b->len += (size_t)n; /* the NUL after the text stays, uncounted */
    return 0;
}

int byte_buf_appendf(byte_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = byte_buf_vappendf(b, fmt, ap);
    va_end(ap);
    return rc;
}
