/* data_version.h — DataVersion {counter, timestamp} (protocol.md §4.2). */
#ifndef BCM_DATA_VERSION_H
#define BCM_DATA_VERSION_H

#include <jansson.h>
#include <stdint.h>

typedef struct bcm_data_version {
    int64_t counter;
    int64_t timestamp;
} bcm_data_version;

/* nextVersion(): counter + 1, timestamp = now. */
static inline void bcm_data_version_next(bcm_data_version *dv, uint64_t now_wall_ms)
{
    dv->counter++;
    dv->timestamp = (int64_t)now_wall_ms;
}

static inline json_t *bcm_data_version_json(const bcm_data_version *dv)
{
    return json_pack("{sIsI}", "counter", (json_int_t)dv->counter, "timestamp",
                     (json_int_t)dv->timestamp);
}

static inline void bcm_data_version_from_json(bcm_data_version *dv, const json_t *j)
{
    if (json_is_integer(json_object_get(j, "counter")))
        dv->counter = (int64_t)json_integer_value(json_object_get(j, "counter"));
    if (json_is_integer(json_object_get(j, "timestamp")))
        dv->timestamp = (int64_t)json_integer_value(json_object_get(j, "timestamp"));
}

/* `{"dataVersion":{...},"<key>":<table>}` compact with sorted keys — the
 * layout of topics.json and subscriptionGroup.json. malloc'd, or NULL. */
static inline char *bcm_versioned_table_encode(const bcm_data_version *dv, const char *key,
                                               json_t *table)
{
    json_t *root = json_object();
    json_object_set_new(root, "dataVersion", bcm_data_version_json(dv));
    json_object_set(root, key, table);
    char *out = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(root);
    return out;
}

#endif
