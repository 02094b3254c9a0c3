/* consumer_table.h — ConsumerManager: consumer group → subscriptions,
 * connections, consume type, message model, consume-from-where
 * (protocol.md §5.2, §5.3.1, §5.4, §5.13). Not thread-safe: the caller holds
 * the tables lock. Changes are reported as notices; the caller sends
 * NOTIFY_CONSUMER_IDS_CHANGED and publishes events after unlocking. */
#ifndef BCM_CONSUMER_TABLE_H
#define BCM_CONSUMER_TABLE_H

#include "client_info.h"
#include "str_map.h"

typedef struct bcm_consumer_group {
    char *name;
    const char *consume_type; /* static enum names */
    const char *message_model;
    const char *consume_from_where;
    uint64_t last_update_ms;
    bcm_client *clients; /* in arrival order */
    size_t nclients, client_cap;
    bcm_subscription *subs; /* per group: the last heartbeat wins */
    size_t nsubs, sub_cap;
} bcm_consumer_group;

typedef struct bcm_consumer_table {
    str_map groups; /* name → bcm_consumer_group* */
} bcm_consumer_table;

/* What one operation did to one group. */
typedef struct bcm_group_notice {
    char *group;
    bool removed;       /* group emptied and removed (UNREGISTER event) */
    bool changed;       /* membership / topic set changed (CHANGE event) */
    uint64_t *channels; /* connections to notify (remaining members) */
    size_t nchannels;
    bcm_subscription *subs; /* copy of the group's subscriptions after the change */
    size_t nsubs;
} bcm_group_notice;

typedef struct bcm_notices {
    bcm_group_notice *v;
    size_t n, cap;
} bcm_notices;

void bcm_notices_free(bcm_notices *ns);

void bcm_consumer_table_init(bcm_consumer_table *t);
void bcm_consumer_table_free(bcm_consumer_table *t);

/* registerConsumer (§5.3.1). Returns 1 when the group changed (new connection
 * or topic added/removed), 0 when not, -1 on OOM. The subscriptions are
 * copied. */
int bcm_consumer_register(bcm_consumer_table *t, const char *group, const bcm_client *info,
                          const char *consume_type, const char *message_model,
                          const char *consume_from_where, const bcm_subscription *subs,
                          size_t nsubs);

/* UNREGISTER_CLIENT(consumerGroup): remove the connection; a notice is
 * always added for the group (Java notifies even when the connection was not
 * a member), with removed=true when the group emptied. */
int bcm_consumer_unregister(bcm_consumer_table *t, const char *group, uint64_t channel,
                            bcm_notices *out);

/* Connection closed: one notice per group that contained it. */
int bcm_consumer_channel_closed(bcm_consumer_table *t, uint64_t channel, bcm_notices *out);

/* Expiry scan: silently remove entries older than now - timeout (no
 * notices, as 4.9.8); emptied groups are removed. Channels to close are
 * appended to *expired; removed group names to *removed_groups (for
 * logging), both malloc'd. Returns the number of entries removed. */
size_t bcm_consumer_expire(bcm_consumer_table *t, uint64_t now_ms, uint64_t timeout_ms,
                           uint64_t **expired, size_t *nexpired);

const bcm_consumer_group *bcm_consumer_group_get(const bcm_consumer_table *t, const char *group);
/* Channels of the group (for notifications). 0 or -1. */
int bcm_consumer_group_notice(const bcm_consumer_table *t, const char *group, bool changed,
                              bcm_notices *out);
/* Connection of (group, clientId): first match, 0 if none. */
const bcm_client *bcm_consumer_find_client(const bcm_consumer_table *t, const char *group,
                                           const char *client_id);
const bcm_subscription *bcm_consumer_group_find_sub(const bcm_consumer_group *g, const char *topic);
size_t bcm_consumer_connection_count(const bcm_consumer_table *t);

#endif
