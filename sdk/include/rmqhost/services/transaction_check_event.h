/* transaction_check_event.h — event "store.transaction_check": a store asks
 * a producer to resolve an unresolved half message and no remoting
 * producer of its group is connected (4.x producers get
 * CHECK_TRANSACTION_STATE, code 39, on their channel instead). A gRPC
 * endpoint (plugins/proxy) passes it to a 5.x client of the group through
 * its Telemetry stream (RecoverOrphanedTransactionCommand), as Java's proxy
 * relays the broker's check to its gRPC clients; the client's answer comes
 * back as END_TRANSACTION with the offsets below. Header-only. */
#ifndef RMQHOST_SERVICES_TRANSACTION_CHECK_EVENT_H
#define RMQHOST_SERVICES_TRANSACTION_CHECK_EVENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RMQ_STORE_TRANSACTION_CHECK_EVENT "store.transaction_check"

/* Payload of api->publish_event(ctx, RMQ_STORE_TRANSACTION_CHECK_EVENT, &ev,
 * sizeof ev); valid during the subscriber call only (copy what you keep).
 * Published from the store's check timer: subscribers must not block. */
typedef struct rmq_transaction_check_event {
    uint32_t size;              /* sizeof(rmq_transaction_check_event) of the publisher */
    const char *producer_group; /* the half message's PGROUP */
    const char *msg_id;         /* its UNIQ_KEY (the transaction id 4.x clients get) */
    /* END_TRANSACTION's commitLogOffset and tranStateTableOffset of the
     * half message as re-appended by this check */
    int64_t commit_log_offset;
    int64_t tran_state_table_offset;
    /* the half message as one stored record (MessageDecoder layout), its
     * topic and queue id set back to the real ones, as CHECK_TRANSACTION_STATE
     * carries it */
    const uint8_t *record;
    size_t record_len;
} rmq_transaction_check_event;

#ifdef __cplusplus
}
#endif
#endif
