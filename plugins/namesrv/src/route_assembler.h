/* route_assembler.h — builds a topic's cache entry (both route dialects) from
 * per-broker fragments rendered once per publication pass: a broker shared by
 * 10,000 topics has its BrokerData and QueueData head rendered twice (one per
 * dialect), not 20,000 times. Valid only while the table is unchanged (one
 * pass under the writer lock). */
#ifndef NAMESRV_ROUTE_ASSEMBLER_H
#define NAMESRV_ROUTE_ASSEMBLER_H

#include <stdbool.h>

#include "json_emit.h"
#include "route_cache.h"
#include "route_table.h"

typedef struct route_fragment {
    const char *name;      /* borrowed from the table for the pass */
    const broker_data *bd; /* NULL: the broker name has no BrokerData */
    char *bd_text[2];      /* [0] native, [1] standard; NULL when bd is NULL */
    size_t bd_len[2];
    char *qd_head[2]; /* {"brokerName":<name>,"perm": */
    size_t qd_head_len[2];
} route_fragment;

#define ROUTE_ASSEMBLER_HINTS 8

typedef struct route_assembler {
    const route_table *rt;
    entry_arena *arena;     /* where entries are carved; NULL: malloc */
    route_fragment **frags; /* pointers stay put while the array grows */
    size_t n, cap;
    rmq_str_map by_name;
    /* fragment of the previous topic's i-th QueueData: the next topic's is
     * usually the same broker, found with one strcmp instead of a hash */
    route_fragment *hint[ROUTE_ASSEMBLER_HINTS];
    text_buf tails;   /* QueueData integer tails of the current topic */
    size_t *tail_end; /* end offset of each tail in `tails` */
    size_t tail_cap;
    const broker_data **bds;
    size_t bds_cap;
    text_buf mid[2]; /* filterServerTable + orderTopicConf, when present */
} route_assembler;

void route_assembler_init(route_assembler *a, const route_table *rt);
void route_assembler_free(route_assembler *a);

/* The unpublished cache entry of te (both dialects, byte-identical to
 * encode_topic_route). NULL with *absent = true when Java would find no route
 * (no QueueData or none of its brokers has a BrokerData); NULL with *absent =
 * false on OOM. */
route_entry *route_assembler_build(route_assembler *a, const topic_entry *te,
                                   const char *order_conf, bool *absent);

#endif
