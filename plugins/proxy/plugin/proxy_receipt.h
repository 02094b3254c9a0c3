/* proxy_receipt.h — a receipt handle as ReceiveMessage hands it out: Java's
 * extraInfo ("startOffset popTime invisibleTime reviveQid retryFlag
 * brokerName queueId offset") plus the record's commit-log offset. */
#ifndef PROXY_RECEIPT_H
#define PROXY_RECEIPT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pop_receipt {
    long long start_offset, pop_time, invisible_time, revive_qid;
    char retry[8], broker[256];
    int queue_id;
    long long offset;
    long long phys; /* -1 when the handle has no ninth field */
} pop_receipt;

/* false when h is not one of ours (fewer than the eight extraInfo fields) */
bool proxy_receipt_parse(const char *h, pop_receipt *r);
/* v in decimal into out (at least 21 bytes); its length. */
size_t proxy_ll_text(long long v, char *out);
/* A receipt as ReceiveMessage hands it out, into out (cap bytes, cut as
 * snprintf cuts): "start popTime invisible reviveQid retry broker queueId
 * offset phys" (retry: "0", or "1"/"2" for a POP retry topic's message);
 * per received message, so without printf. */
void proxy_receipt_format(char *out, size_t cap, long long start_offset, const char *pop_time,
                          long long invisible, const char *revive_qid, const char *retry,
                          const char *broker, int queue_id, long long offset, long long phys);

#endif
