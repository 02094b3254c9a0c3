/* group_queue_offsets.c — a group's committed offset on each queue of a
 * topic, the table GET_CONSUME_STATS and GET_BROKER_CONSUME_STATS both build
 * their rows from. */
#include "broker_context.h"

#include <stdlib.h>

int64_t *bcm_group_queue_offsets(bcm_ctx *c, const char *topic, const char *group, int queues)
{
    int64_t *off = calloc((size_t)queues + 1, sizeof *off);
    if (!off)
        return NULL;
    for (int q = 0; q < queues; q++)
        if (!bcm_offset_query(&c->offsets, topic, group, q, &off[q]))
            off[q] = -1;
    return off;
}
