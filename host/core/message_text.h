/* message_text.h — the printf-style helpers for the error and report texts
 * that configuration loading and reloading hand back to their caller. */
#ifndef RMQ_HOST_MESSAGE_TEXT_H
#define RMQ_HOST_MESSAGE_TEXT_H

#include <stddef.h>

/* Appends to the text in msg (cap bytes in all); a full msg stays as is. */
void msg_append(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Writes the error text into err and returns -1, for `return msg_fail(...)`. */
int msg_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
