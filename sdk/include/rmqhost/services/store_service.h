/* store_service.h — what a message store plugin offers other plugins as
 * service "store.queues": consume-queue offsets and store times, so that
 * broker-client-mgr answers QUERY_CONSUMER_OFFSET (§10.2.12) and
 * GET_CONSUME_STATS (208) with real figures, and a message by commit-log
 * offset for the CONSUME_MESSAGE_DIRECTLY (309) relay.
 *
 * While the service exists, broker-client-mgr does not answer the storage
 * codes itself. Use as every SDK service: acquire, call with `ud` first,
 * release. Header-only. */
#ifndef RMQHOST_SERVICES_STORE_SERVICE_H
#define RMQHOST_SERVICES_STORE_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RMQ_STORE_QUEUES_SERVICE "store.queues"
#define RMQ_STORE_QUEUES_VERSION 1

typedef struct rmq_store_queues_service {
    uint32_t size; /* sizeof(rmq_store_queues_service) of the provider */

    /* All: any thread, never block on I/O beyond a page fault. An unknown
     * topic or queue is an empty queue (offsets 0, times -1). */
    /* Max offset = index of the next message of the queue. */
    int64_t (*max_offset)(void *svc_ud, const char *topic, int32_t queue_id);
    /* Min offset = first index still readable. */
    int64_t (*min_offset)(void *svc_ud, const char *topic, int32_t queue_id);
    /* STORETIMESTAMP of the message at `offset`, -1 if none. */
    int64_t (*store_time)(void *svc_ud, const char *topic, int32_t queue_id, int64_t offset);
    /* DefaultMessageStore.checkInDiskByConsumeOffset: the queue has an entry
     * at `offset` and its record lies more than accessMessageInMemoryMaxRatio
     * of RAM behind the commit log's end. */
    bool (*check_in_disk_by_consume_offset)(void *svc_ud, const char *topic, int32_t queue_id,
                                            int64_t offset);
    /* The stored record (§10.3.1 bytes) at commit-log offset `phys_offset`:
     * *rec malloc'd (caller frees). 0 or RMQ_ENOENT. */
    int (*message_by_offset)(void *svc_ud, int64_t phys_offset, void **rec, size_t *len);

    /* -- appended after version 1 shipped (check `size` before calling) -- */
    /* BrokerStatsManager.tpsGroupGetNums(group, topic): messages per second
     * the group pulled (FOUND) from the topic over about the last minute;
     * GET_CONSUME_STATS sums it into consumeTps. 0 when unknown. */
    double (*consume_tps)(void *svc_ud, const char *group, const char *topic);
    /* The store's settings (MessageStoreConfig names: flushDiskType,
     * fileReservedTime, maxMessageSize...) as "key=value\n" lines, the part
     * of GET_BROKER_CONFIG's answer the broker plugin does not hold, and the
     * other Java keys of that part with the value the store behaves as. Writes
     * at most cap bytes (NUL-terminated); returns the length of the whole
     * text, so a larger buffer can be retried. Any thread. */
    size_t (*config_text)(void *svc_ud, char *out, size_t cap);
    /* UPDATE_BROKER_CONFIG of one of the store's settings: 0 taken (kept
     * for the next start, applied now where the store reads it at run
     * time), RMQ_ENOENT not a setting an update may change, RMQ_EINVAL a
     * value it cannot take. May write a file: call from EXEC. */
    int (*config_update)(void *svc_ud, const char *key, const char *value);
    /* The port the store's replication (HA) listener is on: haListenPort,
     * or the broker server's port + 1 when unset (4.9.8's derivation), so
     * the broker plugin registers the haServerAddr slaves can reach. 0 when
     * the store does not listen for slaves. Any thread. */
    int32_t (*ha_listen_port)(void *svc_ud);
} rmq_store_queues_service;

#ifdef __cplusplus
}
#endif
#endif
