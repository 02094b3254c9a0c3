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

/* The pieces of a route body, for route_assembler (which reuses them across
 * topics): one BrokerData object; the dialect-dependent head of a QueueData
 * (`{"brokerName":"b","perm":`) and its dialect-free integer tail; the
 * members of filterServerTable (without braces) for the given brokers. */
void encode_broker_data(const broker_data *bd, bool standard, text_buf *out);
void encode_queue_data_head(const char *broker_name, bool standard, text_buf *out);
void encode_queue_data_tail(const queue_data *q, text_buf *out);
void encode_filter_table_members(const route_table *rt, const broker_data *const *bds, size_t nbd,
                                 bool standard, text_buf *out);

void encode_cluster_info(const route_table *rt, text_buf *out);

typedef enum topic_list_kind {
    TOPIC_LIST_ALL = 0,                /* 206 */
    TOPIC_LIST_UNIT = 1,               /* 311 */
    TOPIC_LIST_HAS_UNIT_SUB = 2,       /* 312 */
    TOPIC_LIST_HAS_UNIT_SUB_UNUNIT = 3 /* 313 */
} topic_list_kind;

void encode_topic_list(const route_table *rt, topic_list_kind kind, text_buf *out);
/* 224: topics with a QueueData of any broker of the cluster (unknown: empty). */
void encode_topics_by_cluster(const route_table *rt, const char *cluster, text_buf *out);
/* 304: cluster names and broker names, plus one broker address. */
void encode_system_topic_list(const route_table *rt, text_buf *out);
/* 901 */
void encode_broker_member_group(const route_table *rt, const char *cluster, const char *broker_name,
                                text_buf *out);

/* Sorted keys of a map (malloc'd array of borrowed strings), NULL when empty. */
const char **sorted_keys(const rmq_str_map *m, size_t *n);

#endif
