/* lock_table.h — RebalanceLockManager: per group, MessageQueue → holder
 * clientId + last refresh (protocol.md §5.11). Not thread-safe. */
#ifndef BCM_LOCK_TABLE_H
#define BCM_LOCK_TABLE_H

#include "str_map.h"

#include <jansson.h>
#include <stdint.h>

typedef struct bcm_lock_table {
    str_map groups; /* group → str_map* of "topic\x01broker\x01qid" → lock entry */
} bcm_lock_table;

void bcm_lock_table_init(bcm_lock_table *t);
void bcm_lock_table_free(bcm_lock_table *t);
/* LOCK_BATCH_MQ: returns a new JSON array of the queues now held by
 * client_id (the lockOKMQSet). Queues held by another client whose lock is
 * younger than max_live_ms are left out. */
json_t *bcm_lock_batch(bcm_lock_table *t, const char *group, const char *client_id,
                       const json_t *mq_set, uint64_t now_ms, uint64_t max_live_ms);
/* UNLOCK_BATCH_MQ: drop the listed queues held by client_id. */
void bcm_unlock_batch(bcm_lock_table *t, const char *group, const char *client_id,
                      const json_t *mq_set);
/* Holder of a queue if its lock is alive, else NULL. */
const char *bcm_lock_holder(const bcm_lock_table *t, const char *group, const char *topic,
                            const char *broker, int32_t queue_id, uint64_t now_ms,
                            uint64_t max_live_ms);

#endif
