/* store_queues_service.c — the "store.queues" service (store_service.h):
 * queue offsets, store times and records by commit-log offset for
 * broker-client-mgr (QUERY_CONSUMER_OFFSET, GET_CONSUME_STATS, the 309
 * relay). Thin wrappers over the engine. */
#include "store_plugin.h"

static int64_t q_max(void *ud, const char *topic, int32_t q)
{
    return store_max_offset(((store_plugin *)ud)->engine, topic, q);
}

static int64_t q_min(void *ud, const char *topic, int32_t q)
{
    return store_min_offset(((store_plugin *)ud)->engine, topic, q);
}

static int64_t q_time(void *ud, const char *topic, int32_t q, int64_t off)
{
    return store_message_store_time(((store_plugin *)ud)->engine, topic, q, off);
}

static bool q_in_disk(void *ud, const char *topic, int32_t q, int64_t off)
{
    return store_check_in_disk_by_consume_offset(((store_plugin *)ud)->engine, topic, q, off);
}

static int q_record(void *ud, int64_t phys, void **rec, size_t *len)
{
    uint8_t *r = NULL;
    int rc = store_read_record(((store_plugin *)ud)->engine, phys, &r, len);
    if (rc != 0)
        return RMQ_ENOENT;
    *rec = r;
    return 0;
}

int store_queues_service_export(store_plugin *sp)
{
    sp->queues_svc = (rmq_store_queues_service){
        .size = sizeof(rmq_store_queues_service),
        .max_offset = q_max,
        .min_offset = q_min,
        .store_time = q_time,
        .check_in_disk_by_consume_offset = q_in_disk,
        .message_by_offset = q_record,
    };
    return sp->api->export_service(sp->ctx, RMQ_STORE_QUEUES_SERVICE, RMQ_STORE_QUEUES_VERSION,
                                   &sp->queues_svc, sp);
}
