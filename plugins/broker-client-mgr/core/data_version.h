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

#endif
