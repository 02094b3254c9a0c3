/* broker_service.h — what the broker-client-mgr plugin offers other plugins:
 * the service "broker.info" (this broker's identity) and the event
 * "broker.consumer_group" (consumer-group membership and subscriptions,
 * Java's ConsumerGroupEvent REGISTER / CHANGE / UNREGISTER).
 * Header-only; include it next to rmqhost.h. */
#ifndef RMQHOST_SERVICES_BROKER_SERVICE_H
#define RMQHOST_SERVICES_BROKER_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- service "broker.info", version 1 ------------------------------------ */
#define RMQ_BROKER_INFO_SERVICE "broker.info"
#define RMQ_BROKER_INFO_VERSION 1

/* Identity as registered with the NameServers (BrokerConfig names). */
typedef struct rmq_broker_identity {
    char cluster_name[128];  /* brokerClusterName, e.g. "DefaultCluster" */
    char broker_name[128];   /* brokerName */
    int64_t broker_id;       /* 0 = master */
    char broker_addr[96];    /* "brokerIP1:listenPort" as sent in REGISTER_BROKER */
    char ha_server_addr[96]; /* haServerAddr as sent in REGISTER_BROKER */
} rmq_broker_identity;

/* The table exported under "broker.info". Obtain it with
 * api->service_acquire(ctx, RMQ_BROKER_INFO_SERVICE, RMQ_BROKER_INFO_VERSION,
 * &table, &table_ud, &ref) and pass table_ud back as the first argument.
 * Any thread; never blocks. */
typedef struct rmq_broker_info_v1 {
    uint32_t size; /* sizeof(rmq_broker_info_v1) of the provider */
    /* Copy this broker's identity into *out. 0, or a negative rmq error. */
    int (*identity)(void *table_ud, rmq_broker_identity *out);
    /* -- appended for replication (check `size` before calling) -- */
    /* The master's addresses from the last REGISTER_BROKER answer of a slave
     * (masterAddr, haServerAddr; "" when the NameServer named none). 0. */
    int (*master_addrs)(void *table_ud, char *master_addr, size_t master_len, char *ha_addr,
                        size_t ha_len);
    /* Change this broker's id (promotion: 0; demotion: >= 1) and register
     * with the NameServers again at once. 0 or a negative rmq error. */
    int (*set_broker_id)(void *table_ud, int64_t broker_id);
    /* -- appended for failover (check `size` before calling) -- */
    /* Register with the NameServers again at once, identity unchanged (a
     * master whose new slave just reported: a demoted former master's
     * registrations can have taken brokerId 0 out of the route). 0. */
    int (*register_now)(void *table_ud);
} rmq_broker_info_v1;

/* ---- event "broker.consumer_group" ------------------------------------------ */
#define RMQ_BROKER_CONSUMER_GROUP_EVENT "broker.consumer_group"

typedef enum rmq_consumer_group_event_kind {
    /* A HEART_BEAT registered the group's consumer; subs = the heartbeat's
     * subscription list for the group (Java fires it on every heartbeat). */
    RMQ_CONSUMER_GROUP_REGISTER = 0,
    /* Membership or the group's topic set changed; subs = the group's
     * current subscription table (after the change). */
    RMQ_CONSUMER_GROUP_CHANGE = 1,
    /* The group lost its last connection and was removed; subs empty. */
    RMQ_CONSUMER_GROUP_UNREGISTER = 2
} rmq_consumer_group_event_kind;

/* One SubscriptionData, as received from the client. */
typedef struct rmq_consumer_subscription {
    const char *topic;
    const char *expression_type; /* "TAG" (also for null/empty) or "SQL92" ... */
    const char *sub_string;      /* the expression; "*" = everything */
    int64_t sub_version;         /* subVersion (ms) */
} rmq_consumer_subscription;

/* Payload of api->publish_event(ctx, RMQ_BROKER_CONSUMER_GROUP_EVENT,
 * &ev, sizeof ev). Everything it points to is valid during the subscriber
 * call only (copy what you keep). Subscribers run on the publisher's thread
 * (EXEC or EVENT) and must not block for long. */
typedef struct rmq_consumer_group_event {
    uint32_t size; /* sizeof(rmq_consumer_group_event) of the publisher */
    rmq_consumer_group_event_kind kind;
    const char *group;     /* consumer group name */
    const char *client_id; /* client that caused it; NULL when unknown (close, expiry) */
    const rmq_consumer_subscription *subs;
    size_t sub_count;
} rmq_consumer_group_event;

#ifdef __cplusplus
}
#endif
#endif
