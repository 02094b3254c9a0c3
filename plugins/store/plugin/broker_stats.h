/* broker_stats.h — BrokerStatsManager's per-topic and per-group counters
 * (TOPIC_PUT_NUMS, TOPIC_PUT_SIZE, GROUP_GET_NUMS, GROUP_GET_SIZE) served by
 * VIEW_BROKER_STATS_DATA (315, mqadmin statsAll / brokerConsumeStats' rates),
 * and the store maintenance codes CLEAN_EXPIRED_CONSUMEQUEUE (306),
 * CLEAN_UNUSED_TOPIC (316) and DELETE_EXPIRED_COMMITLOG (329). */
#ifndef STORE_BROKER_STATS_H
#define STORE_BROKER_STATS_H

#include <stdint.h>

#include "store_plugin.h"

typedef struct broker_stats broker_stats;

/* Processors 315, 306, 316, 329 on the "brokerAdmin" executor. */
int broker_stats_register(store_plugin *sp);
void broker_stats_free(broker_stats *bs);
/* A stored send of `msgs` messages, `bytes` written (SendMessageProcessor's
 * incTopicPutNums / incTopicPutSize). Any thread. */
void broker_stats_on_put(store_plugin *sp, const char *topic, int64_t msgs, int64_t bytes);
/* A FOUND pull (PullMessageProcessor's incGroupGetNums / incGroupGetSize). */
void broker_stats_on_get(store_plugin *sp, const char *group, const char *topic, int64_t msgs,
                         int64_t bytes);
/* BrokerStatsManager.onTopicDeleted (4.9.8, with autoDeleteUnusedStats):
 * the topic's put counters and its "topic@group" get counters go (the
 * latter by a walk over the group sets, as Java's delValueByPrefixKey). */
void broker_stats_on_topic_deleted(store_plugin *sp, const char *topic);
/* Every second from the admin sampler: `tick` counts seconds since start;
 * StatsItemSet samples every 10 s, 10 min and hour from its start. */
void broker_stats_tick(store_plugin *sp, unsigned tick, uint64_t now_wall_ms);

#endif
