/* recall_handle.h — the recall handle of a 5.x timer message (Java 5.3's
 * RecallMessageHandle.HandleV1): "v1 topic brokerName timestamp uniqKey",
 * base64url with padding. SEND answers it for a message the timer wheel
 * holds; RECALL_MESSAGE (370) takes it back. No store dependency. */
#ifndef STORE_RECALL_HANDLE_H
#define STORE_RECALL_HANDLE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct recall_handle {
    char topic[256];
    char broker_name[128];
    char timestamp[32]; /* as written: Java parses it leniently (-1 when not a number) */
    char uniq_key[128];
} recall_handle;

/* Encodes the handle of (topic, broker, ts, uniq) into out; false when it
 * does not fit. */
bool recall_handle_build(const char *topic, const char *broker, const char *ts, const char *uniq,
                         char *out, size_t cap);
/* Decodes `text`; false when it is not a v1 handle (Java: "recall handle is
 * invalid"). */
bool recall_handle_parse(const char *text, recall_handle *out);

#endif
