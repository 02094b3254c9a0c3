/* topic_table.h — TopicConfigManager: topic → TopicConfig plus a DataVersion
 * (protocol.md §4.2, §5.16.5); persisted as topics.json. Not thread-safe. */
#ifndef BCM_TOPIC_TABLE_H
#define BCM_TOPIC_TABLE_H

#include "data_version.h"
#include "str_map.h"

#include <stdbool.h>
#include <stdint.h>

/* One TopicConfig decoded from its JSON (the fields of rmq_topic_config). */
typedef struct bcm_topic_fields {
    char topic_name[256];
    int32_t read_queue_nums;
    int32_t write_queue_nums;
    int32_t perm;
    int32_t topic_filter_type; /* 0 SINGLE_TAG, 1 MULTI_TAG */
    int32_t topic_sys_flag;
    bool order;
} bcm_topic_fields;

/* One topic's config as the table keeps it: a fixed struct instead of a
 * JSON object (1,150 bytes a topic with jansson, ~120 here: 100,000 topics). */
typedef struct bcm_topic_cfg {
    int32_t read_queue_nums;
    int32_t write_queue_nums;
    int32_t perm;
    int32_t topic_sys_flag;
    uint8_t topic_filter_type; /* 0 SINGLE_TAG, 1 MULTI_TAG */
    bool order;
    json_t *attributes; /* 5.x files: kept as loaded (NULL mostly) */
} bcm_topic_cfg;

typedef struct bcm_topic_table {
    str_map cfgs; /* name → bcm_topic_cfg * */
    bcm_data_version dv;
} bcm_topic_table;

/* One topic of a snapshot. */
typedef struct bcm_topic_snap_entry {
    const char *name;  /* in the snapshot's name block */
    bcm_topic_cfg cfg; /* attributes referenced */
} bcm_topic_snap_entry;

/* The table's configs copied (under the caller's lock) to be encoded
 * without it: registration bodies and topics.json at 100,000 topics take
 * tens of ms to encode. The encoders sort it by name first (strcmp: the
 * order of jansson's JSON_SORT_KEYS, so the texts stay what they were) and
 * drop duplicates. Names that are not valid UTF-8 are left out: jansson
 * refused them, which failed the whole document. */
typedef struct bcm_topic_snapshot {
    size_t n;
    bcm_topic_snap_entry *v;
    char *names; /* one block holding every name */
    bcm_data_version dv;
    bool sorted;
} bcm_topic_snapshot;

typedef struct bcm_system_topic_opts {
    const char *cluster_name;
    const char *broker_name;
    bool auto_create_topic_enable;
    int default_topic_queue_nums;
    bool cluster_topic_enable;
    bool broker_topic_enable;
    bool trace_topic_enable;
    const char *trace_topic_name;
} bcm_system_topic_opts;

int bcm_topic_table_init(bcm_topic_table *t, uint64_t now_wall_ms);
void bcm_topic_table_free(bcm_topic_table *t);
/* A TopicConfig object with Java's field set. New reference. */
json_t *bcm_topic_config_new(const char *name, int read_q, int write_q, int perm, int sys_flag,
                             bool order, const char *filter_type);
/* Java's system topics (TopicConfigManager constructor, 4.9.8). */
int bcm_topic_table_add_system(bcm_topic_table *t, const bcm_system_topic_opts *o);
/* Load a TopicConfigSerializeWrapper (topics.json): its topics replace ours
 * by name and its DataVersion is taken. 0 or -1 with err. */
int bcm_topic_table_load(bcm_topic_table *t, const char *text, size_t len, char *err,
                         size_t errlen);
/* TopicConfigSerializeWrapper text (compact, sorted keys). malloc'd. */
char *bcm_topic_table_encode(const bcm_topic_table *t);
size_t bcm_topic_table_size(const bcm_topic_table *t);
/* `name`'s TopicConfig object (Java's field set), new reference, or NULL. */
json_t *bcm_topic_table_config_json(const bcm_topic_table *t, const char *name);
/* name → TopicConfig of every topic: a new object. */
json_t *bcm_topic_table_json(const bcm_topic_table *t);
/* 0, or -1 when out of memory (s zeroed). */
int bcm_topic_table_snapshot(const bcm_topic_table *t, bcm_topic_snapshot *s);
/* The same for the listed names (duplicates and absent ones ignored). */
int bcm_topic_table_snapshot_of(const bcm_topic_table *t, const char *const *names, size_t n,
                                bcm_topic_snapshot *s);
/* By name, one entry per name (outside the table's lock: 100,000 names). */
void bcm_topic_snapshot_sort(bcm_topic_snapshot *s);
/* name → TopicConfig as a jansson object (tests compare the streamed texts
 * with it). */
json_t *bcm_topic_snapshot_json(const bcm_topic_snapshot *s);
/* topics.json text streamed from the snapshot (sorted first;
 * topic_config_json.c). malloc'd, or NULL. */
char *bcm_topic_snapshot_encode(bcm_topic_snapshot *s);
void bcm_topic_snapshot_free(bcm_topic_snapshot *s);
/* Calls fn for every topic (the table must not change meanwhile). */
void bcm_topic_table_for_each(const bcm_topic_table *t,
                              void (*fn)(void *ud, const char *name, const bcm_topic_cfg *cfg),
                              void *ud);
/* The fields of a config as SEND reads them. */
void bcm_topic_fields_from_cfg(const char *name, const bcm_topic_cfg *c, bcm_topic_fields *out);
/* Insert or replace (reference stolen) and bump the DataVersion. */
int bcm_topic_table_put(bcm_topic_table *t, json_t *cfg, uint64_t now_wall_ms);
/* The same from a struct (a copy; attributes referenced, not stolen). */
int bcm_topic_table_put_cfg(bcm_topic_table *t, const char *name, const bcm_topic_cfg *c,
                            uint64_t now_wall_ms);
/* Create `name` if absent (retry topics): true when created (version bumped). */
bool bcm_topic_table_create_if_absent(bcm_topic_table *t, const char *name, int queues, int perm,
                                      int sys_flag, uint64_t now_wall_ms);
bool bcm_topic_table_delete(bcm_topic_table *t, const char *name, uint64_t now_wall_ms);
bool bcm_topic_table_has(const bcm_topic_table *t, const char *name);
/* Decode a TopicConfig JSON object. */
void bcm_topic_fields_from_json(const json_t *j, bcm_topic_fields *out);
/* The current config of `name` (one hash lookup and a copy): false when
 * absent. */
bool bcm_topic_table_get(bcm_topic_table *t, const char *name, bcm_topic_fields *out);
/* REGISTER_BROKER result: ORDER_TOPIC_CONFIG KVTable {"table":{topic:...}}
 * sets order=true for listed topics, false for the rest; bumps the version
 * when anything changed. Returns true when changed. */
bool bcm_topic_table_apply_order_conf(bcm_topic_table *t, const json_t *kv_table,
                                      uint64_t now_wall_ms);

#endif
