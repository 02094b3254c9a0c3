/* producer_table.h — ProducerManager: producer group → connections, and
 * client id → connection (protocol.md §5.2). Not thread-safe: the caller
 * holds the tables lock. */
#ifndef BCM_PRODUCER_TABLE_H
#define BCM_PRODUCER_TABLE_H

#include "client_info.h"
#include "str_map.h"

typedef struct bcm_producer_group {
    bcm_client *clients;
    size_t n, cap;
} bcm_producer_group;

typedef struct bcm_producer_table {
    str_map groups;          /* group → bcm_producer_group* */
    str_map client_channels; /* clientId → uint64_t* channel */
} bcm_producer_table;

void bcm_producer_table_init(bcm_producer_table *t);
void bcm_producer_table_free(bcm_producer_table *t);
/* HEART_BEAT: add the connection to the group, or refresh it. 0 or -1 (OOM). */
int bcm_producer_register(bcm_producer_table *t, const char *group, const bcm_client *info);
/* UNREGISTER_CLIENT(producerGroup): remove this connection from the group,
 * drop clientId's entry, drop the group once empty. */
void bcm_producer_unregister(bcm_producer_table *t, const char *group, uint64_t channel,
                             const char *client_id);
/* Connection closed: remove it from every group (4.9.8 keeps emptied groups,
 * so GET_PRODUCER_CONNECTION_LIST still answers an empty set). Returns how
 * many entries were removed. */
size_t bcm_producer_channel_closed(bcm_producer_table *t, uint64_t channel);
/* Expiry scan: remove entries older than now - timeout; the channels to
 * close are appended to *expired (malloc'd array, caller frees). */
size_t bcm_producer_expire(bcm_producer_table *t, uint64_t now_ms, uint64_t timeout_ms,
                           uint64_t **expired, size_t *nexpired);
const bcm_producer_group *bcm_producer_group_get(const bcm_producer_table *t, const char *group);
/* Connection that last heartbeated with clientId, 0 if none. */
uint64_t bcm_producer_find_channel(const bcm_producer_table *t, const char *client_id);
size_t bcm_producer_connection_count(const bcm_producer_table *t);

#endif
