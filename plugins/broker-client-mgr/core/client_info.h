/* client_info.h — ClientChannelInfo and SubscriptionData as the tables keep
 * them (protocol.md §5.2, §5.3). */
#ifndef BCM_CLIENT_INFO_H
#define BCM_CLIENT_INFO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct bcm_client {
    uint64_t channel; /* the connection: the identity of a client entry */
    char *client_id;
    int32_t language; /* request language byte of the heartbeat */
    int32_t version;  /* request version of the heartbeat */
    uint64_t last_update_ms;
    /* "ip:port" of the connection, kept from the heartbeat because the
     * host tells a channel's peer only on its own IO thread */
    char addr[64];
} bcm_client;

/* Append a copy of `info` (client_id duplicated) to a growable array of
 * clients. 0, or -1 on OOM with the array unchanged. */
int bcm_client_append(bcm_client **arr, size_t *n, size_t *cap, const bcm_client *info);

/* Whether the entry's last heartbeat is more than timeout_ms old (Java's
 * scanNotActiveChannel). If so its channel is appended to *expired for the
 * caller to close (left out on OOM: the entry goes all the same). */
bool bcm_client_expired(const bcm_client *c, uint64_t now_ms, uint64_t timeout_ms,
                        uint64_t **expired, size_t *nexpired);

/* One SubscriptionData. `json` is the normalised Java rendering
 * (classFilterMode, codeSet, expressionType, subString, subVersion, tagsSet,
 * topic); the scalar fields point into it. */
typedef struct bcm_subscription {
    const char *topic;
    const char *sub_string;
    const char *expression_type;
    int64_t sub_version;
    json_t *json;
} bcm_subscription;

/* Point the scalar fields at `json` (which the subscription then owns). */
void bcm_subscription_from_json(bcm_subscription *s, json_t *json);
/* Deep copy (new reference to a copied JSON object). 0 or -1. */
int bcm_subscription_copy(bcm_subscription *dst, const bcm_subscription *src);
void bcm_subscription_release(bcm_subscription *s);

#endif
