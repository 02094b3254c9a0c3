/* batch_body.h — the body of SEND_BATCH_MESSAGE (protocol-messages.md
 * §10.3.6, MessageDecoder.encodeMessages): records of TOTALSIZE, MAGICCODE,
 * BODYCRC, FLAG, BODYLENGTH, BODY, PROPERTIESLENGTH, PROPERTIES. Pure
 * functions, no SDK types. */
#ifndef STORE_BATCH_BODY_H
#define STORE_BATCH_BODY_H

#include <stddef.h>
#include <stdint.h>

typedef struct batch_item {
    int32_t flag;
    const uint8_t *body;
    size_t body_len;
    const char *props;
    size_t props_len;
} batch_item;

typedef enum batch_status {
    BATCH_OK = 0,
    BATCH_TRUNCATED,  /* a field runs past the end: Java's BufferUnderflowException */
    BATCH_BAD_LENGTH, /* negative BODYLENGTH or PROPERTIESLENGTH */
    BATCH_EMPTY,      /* no record at all */
    BATCH_TOO_MANY    /* more than `max` records */
} batch_status;

/* Walk the body as CommitLog.MessageExtEncoder.encode(MessageExtBatch)
 * does (TOTALSIZE, MAGICCODE and BODYCRC are skipped, not checked). Fills
 * items[0..*n) (pointers into body). */
batch_status batch_body_decode(const uint8_t *body, size_t len, batch_item *items, size_t max,
                               size_t *n);

/* Count the records (same walk); -1 when malformed. */
long batch_body_count(const uint8_t *body, size_t len);

/* Java's exception text for a malformed batch (the SYSTEM_ERROR remark). */
const char *batch_status_remark(batch_status st);

#endif
