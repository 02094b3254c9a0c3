/* broker_topic_index.h — for every broker name that has QueueData, the topics
 * holding them, so that removing a broker (UNREGISTER_BROKER, channel close,
 * expiry) or re-marking its routes costs O(its topics), not a walk of every
 * topic of the table. Owns the broker names the table's QueueData point at.
 * Not thread-safe: route_table's caller serialises. */
#ifndef NAMESRV_BROKER_TOPIC_INDEX_H
#define NAMESRV_BROKER_TOPIC_INDEX_H

#include <stdint.h>

#include "route_table.h"

typedef struct broker_topics {
    char *name;           /* the QueueData of this name point here */
    topic_entry **topics; /* unordered; a topic's QueueData of this name holds its slot */
    uint32_t n, cap;
} broker_topics;

/* Adds te under broker_name (te must not hold a QueueData of that name yet).
 * Returns the name the QueueData must point at and sets *slot; NULL on OOM
 * (nothing changed). */
const char *broker_topics_add(rmq_str_map *idx, const char *broker_name, topic_entry *te,
                              uint32_t *slot);

/* te's QueueData `qd` (still in te) leaves the index; the last topic of a
 * name frees the entry and its name, which qd->broker_name points at. */
void broker_topics_drop(rmq_str_map *idx, topic_entry *te, const queue_data *qd);

/* NULL when the name has no QueueData. */
const broker_topics *broker_topics_get(const rmq_str_map *idx, const char *broker_name);

/* Takes a name's entry out of the index; its QueueData still point at its
 * name until the caller removes them, then broker_topics_free. */
broker_topics *broker_topics_take(rmq_str_map *idx, const char *broker_name);
void broker_topics_free(broker_topics *bt);

/* Frees every entry (the table is going away). */
void broker_topics_clear(rmq_str_map *idx);

#endif
