/* subscription_groups.h — SubscriptionGroupManager: group → config plus a
 * DataVersion, persisted as subscriptionGroup.json (protocol.md §5.15).
 * Not thread-safe. */
#ifndef BCM_SUBSCRIPTION_GROUPS_H
#define BCM_SUBSCRIPTION_GROUPS_H

#include "data_version.h"

#include <stdbool.h>

typedef struct bcm_subscription_groups {
    json_t *groups; /* name → SubscriptionGroupConfig JSON (4.9.8 fields) */
    bcm_data_version dv;
} bcm_subscription_groups;

int bcm_subscription_groups_init(bcm_subscription_groups *s, uint64_t now_wall_ms);
void bcm_subscription_groups_free(bcm_subscription_groups *s);
/* Default SubscriptionGroupConfig for `name`. New reference. */
json_t *bcm_subscription_group_default(const char *name);
/* MixAll.isSysConsumerGroup-like test: groups auto-created even when
 * autoCreateSubscriptionGroup is off. */
bool bcm_is_system_consumer_group(const char *name);
/* findSubscriptionGroupConfig: existing config, or (auto_create || system
 * group) → create with defaults, bump the version and set *created. Borrowed
 * reference or NULL. */
json_t *bcm_subscription_groups_find(bcm_subscription_groups *s, const char *name, bool auto_create,
                                     uint64_t now_wall_ms, bool *created);
/* Insert or replace from a (client-supplied) config object, filling Java's
 * defaults for missing fields; bumps the version. 0 or -1. */
int bcm_subscription_groups_update(bcm_subscription_groups *s, const json_t *cfg,
                                   uint64_t now_wall_ms);
bool bcm_subscription_groups_delete(bcm_subscription_groups *s, const char *name,
                                    uint64_t now_wall_ms);
int bcm_subscription_groups_load(bcm_subscription_groups *s, const char *text, size_t len,
                                 char *err, size_t errlen);
/* The whole file / GET_ALL_SUBSCRIPTIONGROUP_CONFIG body. malloc'd. */
char *bcm_subscription_groups_encode(const bcm_subscription_groups *s);

#endif
