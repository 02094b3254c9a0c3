/* broker_meta_service.h — the broker metadata a message store needs, offered by
 * broker-client-mgr as service "broker.meta" (TopicConfigManager,
 * SubscriptionGroupManager, ConsumerManager, ConsumerOffsetManager,
 * ProducerManager of Java's broker), and the event "broker.topic_deleted".
 * A third-party store plugin written against the SDK alone uses exactly this.
 *
 * Use: api->service_acquire(ctx, RMQ_BROKER_META_SERVICE, RMQ_BROKER_META_VERSION,
 * &table, &ud, &ref); call through the table passing `ud` first; then
 * api->service_release(ref). Hold a ref for one operation only so the
 * provider can be hot-reloaded. Check `size` before calling an entry appended
 * after the version you were built with. Header-only. */
#ifndef RMQHOST_SERVICES_BROKER_META_SERVICE_H
#define RMQHOST_SERVICES_BROKER_META_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RMQ_BROKER_META_SERVICE "broker.meta"
#define RMQ_BROKER_META_VERSION 1

/* PermName bits. */
#define RMQ_PERM_PRIORITY 0x8
#define RMQ_PERM_READ 0x4
#define RMQ_PERM_WRITE 0x2
#define RMQ_PERM_INHERIT 0x1

/* TopicConfig (Java field names in comments). */
typedef struct rmq_topic_config {
    char topic_name[256];      /* topicName */
    int32_t read_queue_nums;   /* readQueueNums */
    int32_t write_queue_nums;  /* writeQueueNums */
    int32_t perm;              /* perm, RMQ_PERM_* bits */
    int32_t topic_filter_type; /* 0 SINGLE_TAG, 1 MULTI_TAG */
    int32_t topic_sys_flag;    /* topicSysFlag */
    bool order;                /* order */
} rmq_topic_config;

/* SubscriptionGroupConfig (4.9.8 fields). */
typedef struct rmq_subscription_group_config {
    char group_name[256];
    bool consume_enable;
    bool consume_from_min_enable;
    bool consume_broadcast_enable;
    int32_t retry_queue_nums;
    int32_t retry_max_times;
    int64_t broker_id;
    int64_t which_broker_when_consume_slowly;
    bool notify_consumer_ids_changed_enable;
} rmq_subscription_group_config;

/* The broker's own configuration as the message path needs it. */
typedef struct rmq_broker_config {
    char cluster_name[128];              /* brokerClusterName: the CLUSTER property */
    char broker_name[128];               /* brokerName */
    int64_t broker_id;                   /* 0 = master */
    char broker_ip1[64];                 /* brokerIP1: STOREHOST address, remarks */
    int32_t listen_port;                 /* listenPort: STOREHOST port */
    int32_t broker_permission;           /* brokerPermission, RMQ_PERM_* bits */
    bool auto_create_topic_enable;       /* autoCreateTopicEnable */
    bool auto_create_subscription_group; /* autoCreateSubscriptionGroup */
} rmq_broker_config;

/* What the consumer table knows of (group, topic) for PULL's checks 7b–7e
 * (protocol-messages.md §10.8.2). */
typedef struct rmq_consumer_sub_info {
    int32_t message_model;    /* 0 CLUSTERING, 1 BROADCASTING */
    bool has_subscription;    /* the group subscribes `topic` */
    char expression_type[16]; /* "TAG" (also for null/empty), "SQL92"... */
    char sub_string[4096];    /* the expression, "*" = everything; truncated past 4095 bytes */
    int64_t sub_version;      /* subVersion */
} rmq_consumer_sub_info;

/* One consumer connection of a group (RESET_CONSUMER_CLIENT_OFFSET fan-out). */
typedef struct rmq_consumer_channel {
    uint64_t channel; /* rmq_channel_id */
    int32_t version;  /* the client's remoting version (MQVersion ordinal) */
    char client_id[256];
} rmq_consumer_channel;

typedef void (*rmq_topic_config_fn)(void *ud, const rmq_topic_config *cfg);

typedef struct rmq_broker_meta_service {
    uint32_t size; /* sizeof(rmq_broker_meta_service) of the provider */

    /* Any thread, never blocks. */
    int (*broker_config)(void *svc_ud, rmq_broker_config *out);

    /* -- topics. get: any thread; 0 or RMQ_ENOENT. -- */
    int (*topic_get)(void *svc_ud, const char *topic, rmq_topic_config *out);
    /* TopicConfigManager.createTopicInSendMessageMethod (§10.5.2): existing
     * config, or created from `default_topic` (TBW102) with
     * min(default_queue_nums, template write queues) queues, perm & ~inherit;
     * persisted and re-registered with the NameServers. RMQ_ENOENT when it
     * cannot be created. May write a file: call from EXEC. */
    int (*topic_create_in_send)(void *svc_ud, const char *topic, const char *default_topic,
                                int32_t default_queue_nums, int32_t topic_sys_flag,
                                rmq_topic_config *out);
    /* createTopicInSendMessageBackMethod (%RETRY%, %DLQ%, system topics):
     * existing config, or created with these values. EXEC. */
    int (*topic_create_in_send_back)(void *svc_ud, const char *topic, int32_t queue_nums,
                                     int32_t perm, int32_t topic_sys_flag, rmq_topic_config *out);
    /* Every topic config, in no particular order; returns how many. Any thread. */
    size_t (*topic_for_each)(void *svc_ud, rmq_topic_config_fn fn, void *ud);

    /* -- subscription groups -- */
    /* findSubscriptionGroupConfig: existing config, or when `auto_create` and
     * autoCreateSubscriptionGroup (or a system group) a new default one
     * (persisted). 0 or RMQ_ENOENT. EXEC when auto_create may create. */
    int (*group_get)(void *svc_ud, const char *group, bool auto_create,
                     rmq_subscription_group_config *out);

    /* -- consumers (HEART_BEAT table). Any thread, never blocks. -- */
    /* RMQ_ENOENT: the group has no live consumer (no HEART_BEAT yet). */
    int (*consumer_subscription)(void *svc_ud, const char *group, const char *topic,
                                 rmq_consumer_sub_info *out);
    /* Live consumer connections of `group` into out[0..max); returns the
     * number of connections (may exceed max). */
    size_t (*consumer_channels)(void *svc_ud, const char *group, rmq_consumer_channel *out,
                                size_t max);

    /* -- producers -- */
    /* ProducerManager.getAvailableChannel: one live connection of producer
     * group `group` (round robin), or 0 when none. Any thread. */
    uint64_t (*producer_channel)(void *svc_ud, const char *group);

    /* -- consumer offsets (ConsumerOffsetManager). Any thread. -- */
    /* commitOffset: store `offset` for (group, topic, queue_id). */
    int (*offset_commit)(void *svc_ud, const char *group, const char *topic, int32_t queue_id,
                         int64_t offset);
    /* queryOffset: the stored offset or -1. */
    int64_t (*offset_query)(void *svc_ud, const char *group, const char *topic, int32_t queue_id);

    /* -- appended (check `size` before calling) -- */
    /* ProducerManager.findChannel: the connection that last heartbeated as
     * producer client `client_id`, or 0 (PUSH_REPLY_MESSAGE_TO_CLIENT). Any
     * thread. */
    uint64_t (*producer_channel_by_client)(void *svc_ud, const char *client_id);
} rmq_broker_meta_service;

/* ---- event "broker.topic_deleted" ----------------------------------------
 * Published by broker-client-mgr after DELETE_TOPIC_IN_BROKER (215) removed a
 * topic config (Java then runs cleanUnusedTopic). Payload: the topic name,
 * NUL-terminated, `len` = strlen + 1; valid during the call only. Published
 * from EXEC; a store subscriber deletes the topic's consume queues. */
#define RMQ_BROKER_TOPIC_DELETED_EVENT "broker.topic_deleted"

#ifdef __cplusplus
}
#endif
#endif
