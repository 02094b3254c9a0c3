/* pull_stats.h — the pull figures Java's BrokerStatsManager and
 * StoreStatsService keep: messages pulled per topic@group (GROUP_GET_NUMS,
 * consumeTps of GET_CONSUME_STATS) and messages transferred in all
 * (getMessageTransferedMsgCount: getTransferedTps, msgGetTotalTodayNow). */
#ifndef STORE_PULL_STATS_H
#define STORE_PULL_STATS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct pull_stats pull_stats;

pull_stats *pull_stats_new(void);
void pull_stats_free(pull_stats *ps);
/* A FOUND pull of `msgs` messages at monotonic now_ms. Any thread. */
void pull_stats_found(pull_stats *ps, const char *group, const char *topic, int32_t msgs,
                      uint64_t now_ms);
uint64_t pull_stats_transferred(pull_stats *ps);
/* StoreStatsService.setGetMessageEntireTimeMax: the longest store lookup of
 * a pull so far, in ms. */
void pull_stats_lookup_ms(pull_stats *ps, uint64_t ms);
uint64_t pull_stats_lookup_max_ms(pull_stats *ps);
/* StatsItem.samplingInSeconds: one snapshot of every key (every 10 s). */
void pull_stats_sample(pull_stats *ps, uint64_t now_ms);
/* getStatsDataInMinute(topic@group).getTps(): messages per second from the
 * oldest snapshot of the last minute (monotonic ms) to now; 0 during the
 * key's first second. */
double pull_stats_group_tps(pull_stats *ps, const char *group, const char *topic, uint64_t now_ms);

/* Hot reload (store_reload.c): every counter and snapshot into w; into an
 * empty ps from r (false when r is malformed or memory ran out). The
 * snapshots' monotonic times stay valid: both generations run in one process. */
struct blob_writer;
struct blob_reader;
void pull_stats_export(pull_stats *ps, struct blob_writer *w);
bool pull_stats_import(pull_stats *ps, struct blob_reader *r);

#endif
