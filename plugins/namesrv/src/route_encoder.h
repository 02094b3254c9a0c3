/* route_encoder.h — JSON bodies built from the route table: TopicRouteData in
 * both dialects, ClusterInfo, TopicList variants and BrokerMemberGroup
 * (protocol.md §4.2, §4.4). Caller holds the writer mutex. */
#ifndef NAMESRV_ROUTE_ENCODER_H
#define NAMESRV_ROUTE_ENCODER_H

#include <stdbool.h>

#include "json_emit.h"
#include "route_table.h"

/* false when Java's pickupTopicRouteData finds nothing (no topic, or none of
 * its brokers has a BrokerData). order_conf NULL = no orderTopicConf key. */
bool encode_topic_route(const route_table *rt, const char *topic, const char *order_conf,
                        bool standard, text_buf *out);

/* Encoded BrokerData of each broker met during one publication pass: a
 * broker shared by 10,000 topics is rendered once, not 10,000 times. Valid
 * only while the table is unchanged (one pass under the writer lock). */
typedef struct broker_fragment {
    const broker_data *bd;
    char *text[2]; /* [0] native, [1] standard */
    size_t len[2];
} broker_fragment;

typedef struct broker_fragments {
    broker_fragment *items;
    size_t n;
    size_t cap;
} broker_fragments;

void broker_fragments_init(broker_fragments *f);
void broker_fragments_free(broker_fragments *f);

/* Both dialects from one lookup (what the route cache stores). frags may be
 * NULL (no reuse across topics). */
bool encode_topic_route_both(const route_table *rt, const char *topic, const char *order_conf,
                             text_buf *native, text_buf *standard, broker_fragments *frags);

void encode_cluster_info(const route_table *rt, text_buf *out);

typedef enum topic_list_kind {
    TOPIC_LIST_ALL = 0,           /* 206 */
    TOPIC_LIST_UNIT = 1,          /* 311 */
    TOPIC_LIST_HAS_UNIT_SUB = 2,  /* 312 */
    TOPIC_LIST_HAS_UNIT_SUB_UNUNIT = 3 /* 313 */
} topic_list_kind;

void encode_topic_list(const route_table *rt, topic_list_kind kind, text_buf *out);
/* 224: topics with a QueueData of any broker of the cluster (unknown: empty). */
void encode_topics_by_cluster(const route_table *rt, const char *cluster, text_buf *out);
/* 304: cluster names and broker names, plus one broker address. */
void encode_system_topic_list(const route_table *rt, text_buf *out);
/* 901 */
void encode_broker_member_group(const route_table *rt, const char *cluster,
                                const char *broker_name, text_buf *out);

/* Sorted keys of a map (malloc'd array of borrowed strings), NULL when empty. */
const char **sorted_keys(const str_map *m, size_t *n);

#endif
