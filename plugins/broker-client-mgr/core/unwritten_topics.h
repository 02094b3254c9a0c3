/* unwritten_topics.h — the topics created in memory whose journal record
 * (topics.journal, or a rewrite of topics.json) is not durable yet. A SEND that finds its topic in
 * this set must wait: answering it before the write would let kill -9 keep the message and lose its
 * topic (the next PULL answers TOPIC_NOT_EXIST). Not thread-safe (kept under the tables lock, like
 * the topic table). */
#ifndef BCM_UNWRITTEN_TOPICS_H
#define BCM_UNWRITTEN_TOPICS_H

#include "str_map.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct bcm_unwritten_topics {
    str_map names;    /* topic → uint64_t *: the change that created it */
    uint64_t changes; /* last change number handed out */
} bcm_unwritten_topics;

void bcm_unwritten_topics_init(bcm_unwritten_topics *u);
void bcm_unwritten_topics_free(bcm_unwritten_topics *u);
/* `name` was just put into the table (same critical section): 0, -1 OOM. */
int bcm_unwritten_topics_add(bcm_unwritten_topics *u, const char *name);
/* Taken with the table's encoding: what a write of that text covers. */
uint64_t bcm_unwritten_topics_snapshot(const bcm_unwritten_topics *u);
/* The text encoded at `snapshot` is on disk: the topics created up to then
 * leave the set; those created after stay (an older snapshot's write never
 * releases a newer topic). */
void bcm_unwritten_topics_written(bcm_unwritten_topics *u, uint64_t snapshot);
/* One count test when nothing is pending (every SEND asks). */
bool bcm_unwritten_topics_has(const bcm_unwritten_topics *u, const char *name);
/* The pending names as a JSON array (a hot reload hands them to the next
 * generation); NULL when out of memory. */
json_t *bcm_unwritten_topics_names(const bcm_unwritten_topics *u);

#endif
