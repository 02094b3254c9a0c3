/* broker_topic_index.c — broker name -> the topics holding its QueueData:
 * arrays with swap-removal, each QueueData knowing its slot, so adding and
 * dropping one (topic, broker) pair are O(1) and a broker's removal walks
 * only its own topics. Interning the name here also spares the table a copy
 * of the broker name per QueueData. */
#include "broker_topic_index.h"

#include <stdlib.h>
#include <string.h>

void broker_topics_free(broker_topics *bt)
{
    if (!bt)
        return;
    free(bt->topics);
    free(bt->name);
    free(bt);
}

const char *broker_topics_add(rmq_str_map *idx, const char *broker_name, topic_entry *te,
                              uint32_t *slot)
{
    broker_topics *bt = rmq_str_map_get(idx, broker_name);
    bool created = false;
    if (!bt) {
        bt = calloc(1, sizeof(*bt));
        if (!bt || !(bt->name = strdup(broker_name))) {
            free(bt);
            return NULL;
        }
        int err;
        rmq_str_map_put(idx, bt->name, bt, &err);
        if (err) {
            broker_topics_free(bt);
            return NULL;
        }
        created = true;
    }
    if (bt->n == bt->cap) {
        /* x1.5: a broker of 10,000 topics wastes less than with doubling */
        uint32_t nc = bt->cap ? bt->cap + bt->cap / 2 + 1 : 4;
        topic_entry **nt = realloc(bt->topics, (size_t)nc * sizeof(*nt));
        if (!nt) {
            if (created)
                broker_topics_free(rmq_str_map_remove(idx, bt->name));
            return NULL;
        }
        bt->topics = nt;
        bt->cap = nc;
    }
    *slot = bt->n;
    bt->topics[bt->n++] = te;
    return bt->name;
}

/* The QueueData of te whose name is bt's (compared by address: interned). */
static queue_data *qd_of(topic_entry *te, const broker_topics *bt)
{
    for (size_t i = 0; i < te->nqd; i++)
        if (te->qds[i].broker_name == bt->name)
            return &te->qds[i];
    return NULL;
}

void broker_topics_drop(rmq_str_map *idx, topic_entry *te, const queue_data *qd)
{
    broker_topics *bt = rmq_str_map_get(idx, qd->broker_name);
    if (!bt || qd->slot >= bt->n || bt->topics[qd->slot] != te)
        return; /* not indexed (the entry was taken by the caller) */
    uint32_t slot = qd->slot;
    topic_entry *last = bt->topics[--bt->n];
    if (slot != bt->n) {
        bt->topics[slot] = last;
        queue_data *moved = qd_of(last, bt);
        if (moved)
            moved->slot = slot;
    }
    if (bt->n == 0)
        broker_topics_free(rmq_str_map_remove(idx, bt->name));
}

const broker_topics *broker_topics_get(const rmq_str_map *idx, const char *broker_name)
{
    return broker_name ? rmq_str_map_get(idx, broker_name) : NULL;
}

broker_topics *broker_topics_take(rmq_str_map *idx, const char *broker_name)
{
    return broker_name ? rmq_str_map_remove(idx, broker_name) : NULL;
}

void broker_topics_clear(rmq_str_map *idx)
{
    rmq_str_map_iter it;
    void *v;
    rmq_str_map_iter_init(&it, idx);
    while (rmq_str_map_iter_next(&it, NULL, &v))
        broker_topics_free(v);
    rmq_str_map_destroy(idx);
}
