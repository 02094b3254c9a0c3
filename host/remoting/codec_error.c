/* codec_error.c — formatting of decode/frame failure reasons into a caller
 * buffer. Owns no state; never allocates, never logs. */
#include <stdio.h>

#include "cmd_internal.h"

int rmq_codec_fail(char *errbuf, size_t errlen, const char *fmt, ...)
{
    if (errbuf && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}
