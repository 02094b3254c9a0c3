/* heartbeat_data.h — HeartbeatData (HEART_BEAT body, protocol.md §5.3) parsed
 * leniently: Java, ali-ons and C++ dialects (Appendix B). */
#ifndef BCM_HEARTBEAT_DATA_H
#define BCM_HEARTBEAT_DATA_H

#include "client_info.h"

typedef struct bcm_consumer_data {
    const char *group;
    const char *consume_type; /* enum name (ordinals mapped) */
    const char *message_model;
    const char *consume_from_where;
    bool unit_mode;
    bcm_subscription *subs; /* owned by the heartbeat */
    size_t nsubs;
} bcm_consumer_data;

typedef struct bcm_heartbeat {
    const char *client_id;
    const char **producer_groups;
    size_t nproducers;
    bcm_consumer_data *consumers;
    size_t nconsumers;
    json_t *root; /* owns the strings above */
} bcm_heartbeat;

/* Parse `body` (may contain fastjson bare keys). 0, or -1 with a message in err. */
int bcm_heartbeat_parse(const char *body, size_t len, bcm_heartbeat *hb, char *err, size_t errlen);
void bcm_heartbeat_free(bcm_heartbeat *hb);

/* Normalise one SubscriptionData object as Java would re-serialise it
 * (missing expressionType → "TAG", subVersion as a number...). New reference. */
json_t *bcm_subscription_normalise(json_t *in);

/* Java enum name of a ConsumeType/MessageModel/ConsumeFromWhere JSON value
 * (name or ordinal); NULL when unknown. */
const char *bcm_consume_type_name(const json_t *v);
const char *bcm_message_model_name(const json_t *v);
const char *bcm_consume_from_where_name(const json_t *v);

#endif
