/* topic_config_json.h — Java's TopicConfig JSON written straight from the
 * table's structs into a buffer (topics.json, GET_ALL_TOPIC_CONFIG, the
 * REGISTER_BROKER body), byte for byte what json_dumps(JSON_COMPACT |
 * JSON_SORT_KEYS) wrote from the jansson objects built before. */
#ifndef BCM_TOPIC_CONFIG_JSON_H
#define BCM_TOPIC_CONFIG_JSON_H

#include "json_writer.h"
#include "topic_table.h"

/* `"<name>":{"order":..,"perm":..,...}`; perm >= 0 replaces the config's
 * (a broker without write or read permission registers every topic with
 * its own). name must be valid UTF-8 (snapshots hold only such names). */
void bcm_topic_config_write(bcm_buf *b, const char *name, const bcm_topic_cfg *c, int perm);
/* The `{...}` alone (a topics.journal put record); len is strlen(name). */
void bcm_topic_config_object_write(bcm_buf *b, const char *name, size_t len, const bcm_topic_cfg *c,
                                   int perm);
/* About the bytes bcm_topic_config_write takes for v[0..n) (a little
 * more unless names need escaping): the buffer is sized once instead of
 * doubling through a 15 MB text. */
size_t bcm_topic_configs_size_hint(const bcm_topic_snap_entry *v, size_t n);
/* `{"counter":N,"timestamp":N}` */
void bcm_data_version_write(bcm_buf *b, const bcm_data_version *dv);

#endif
