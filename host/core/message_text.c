/* message_text.c — see message_text.h. */
#include "message_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void msg_append(char *msg, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(msg);
    if (n + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, cap - n, fmt, ap);
    va_end(ap);
}

int msg_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}
