/* offset_table.h — ConsumerOffsetManager: "topic@group" → (queueId →
 * offset), with consumerOffset.json in fastjson's form (bare numeric keys,
 * protocol.md §5.15). Not thread-safe. */
#ifndef BCM_OFFSET_TABLE_H
#define BCM_OFFSET_TABLE_H

#include "str_map.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct bcm_queue_offsets {
    int32_t *queue_ids; /* sorted ascending */
    int64_t *offsets;
    size_t n, cap;
} bcm_queue_offsets;

typedef struct bcm_offset_table {
    str_map table; /* "topic@group" → bcm_queue_offsets* */
} bcm_offset_table;

void bcm_offset_table_init(bcm_offset_table *t);
void bcm_offset_table_free(bcm_offset_table *t);
int bcm_offset_commit(bcm_offset_table *t, const char *topic, const char *group, int32_t queue_id,
                      int64_t offset);
/* true and *offset when stored. */
bool bcm_offset_query(const bcm_offset_table *t, const char *topic, const char *group,
                      int32_t queue_id, int64_t *offset);
/* Drop every key of `topic` (DELETE_TOPIC_IN_BROKER). */
size_t bcm_offset_remove_topic(bcm_offset_table *t, const char *topic);
/* Groups having offsets for `topic`, appended to the JSON array (no dups). */
void bcm_offset_groups_of_topic(const bcm_offset_table *t, const char *topic, json_t *groups);
/* Topics `group` has offsets for (whichTopicByConsumer), appended to the
 * JSON array (no dups). */
void bcm_offset_topics_of_group(const bcm_offset_table *t, const char *group, json_t *topics);
/* {"offsetTable":{"T@G":{0:10,1:12}}} — keys sorted; pretty = Java's tabbed
 * file layout. malloc'd; NULL on OOM. */
char *bcm_offset_table_encode(const bcm_offset_table *t, bool pretty);
/* Merge a consumerOffset.json text (bare or quoted keys). 0 or -1 with err. */
int bcm_offset_table_load(bcm_offset_table *t, const char *text, size_t len, char *err,
                          size_t errlen);
/* Slave offset sync (43): every TOPIC@GROUP of `text` replaces the table's
 * whole inner map for that key (queue ids the master lacks go); keys only
 * the table has stay. 4.9.8: SlaveSynchronize#syncConsumerOffset's putAll. */
int bcm_offset_table_take_keys(bcm_offset_table *t, const char *text, size_t len, char *err,
                               size_t errlen);
size_t bcm_offset_table_count(const bcm_offset_table *t);

#endif
