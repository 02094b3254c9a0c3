/* subscription_groups.c — owns the subscription-group configs and the
 * subscriptionGroup.json format (Java's and our own). Never writes files. */
#include "subscription_groups.h"

#include "fastjson_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const precreated[] = {
    "TOOLS_CONSUMER",  "FILTERSRV_CONSUMER",    "SELF_TEST_C_GROUP", "CID_ONS-HTTP-PROXY",
    "CID_ONSAPI_PULL", "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER",  NULL};
static const char *const system_groups[] = {"DEFAULT_CONSUMER",      "TOOLS_CONSUMER",
                                            "FILTERSRV_CONSUMER",    "__MONITOR_CONSUMER",
                                            "SELF_TEST_C_GROUP",     "CID_ONS-HTTP-PROXY",
                                            "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER",
                                            "CID_ONSAPI_PULL",       NULL};

json_t *bcm_subscription_group_default(const char *name)
{
    return json_pack("{sisbsbsbsssbsisisi}", "brokerId", 0, "consumeBroadcastEnable", 1,
                     "consumeEnable", 1, "consumeFromMinEnable", 1, "groupName", name,
                     "notifyConsumerIdsChangedEnable", 1, "retryMaxTimes", 16, "retryQueueNums", 1,
                     "whichBrokerWhenConsumeSlowly", 1);
}

bool bcm_is_system_consumer_group(const char *name)
{
    for (size_t i = 0; system_groups[i]; i++)
        if (strcmp(name, system_groups[i]) == 0)
            return true;
    return strncmp(name, "CID_RMQ_SYS_", 12) == 0;
}

int bcm_subscription_groups_init(bcm_subscription_groups *s, uint64_t now_wall_ms)
{
    s->groups = json_object();
    if (!s->groups)
        return -1;
    s->dv.counter = 0;
    s->dv.timestamp = (int64_t)now_wall_ms;
    for (size_t i = 0; precreated[i]; i++)
        json_object_set_new(s->groups, precreated[i],
                            bcm_subscription_group_default(precreated[i]));
    return 0;
}

void bcm_subscription_groups_free(bcm_subscription_groups *s)
{
    json_decref(s->groups);
    s->groups = NULL;
}

json_t *bcm_subscription_groups_find(bcm_subscription_groups *s, const char *name, bool auto_create,
                                     uint64_t now_wall_ms, bool *created)
{
    *created = false;
    json_t *g = json_object_get(s->groups, name);
    if (g || !(auto_create || bcm_is_system_consumer_group(name)))
        return g;
    g = bcm_subscription_group_default(name);
    if (!g || json_object_set_new(s->groups, name, g) != 0)
        return NULL;
    bcm_data_version_next(&s->dv, now_wall_ms);
    *created = true;
    return g;
}

static json_t *with_defaults(const char *name, const json_t *cfg)
{
    json_t *out = bcm_subscription_group_default(name);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)cfg, k, v) json_object_set(out, k, v);
    json_object_set_new(out, "groupName", json_string(name));
    return out;
}

int bcm_subscription_groups_update(bcm_subscription_groups *s, const json_t *cfg,
                                   uint64_t now_wall_ms)
{
    const char *name = json_string_value(json_object_get(cfg, "groupName"));
    if (!name)
        return -1;
    json_t *g = with_defaults(name, cfg);
    if (!g || json_object_set_new(s->groups, name, g) != 0)
        return -1;
    bcm_data_version_next(&s->dv, now_wall_ms);
    return 0;
}

bool bcm_subscription_groups_delete(bcm_subscription_groups *s, const char *name,
                                    uint64_t now_wall_ms)
{
    if (json_object_del(s->groups, name) != 0)
        return false;
    bcm_data_version_next(&s->dv, now_wall_ms);
    return true;
}

int bcm_subscription_groups_load(bcm_subscription_groups *s, const char *text, size_t len,
                                 char *err, size_t errlen)
{
    json_t *root = fastjson_load_object(text, len, err, errlen);
    if (!root)
        return -1;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(root, "subscriptionGroupTable"), k, v)
    {
        if (json_is_object(v))
            json_object_set_new(s->groups, k, with_defaults(k, v));
    }
    bcm_data_version_from_json(&s->dv, json_object_get(root, "dataVersion"));
    json_decref(root);
    return 0;
}

char *bcm_subscription_groups_encode(const bcm_subscription_groups *s)
{
    return bcm_versioned_table_encode(&s->dv, "subscriptionGroupTable", s->groups);
}
