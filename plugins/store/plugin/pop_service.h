/* pop_service.h — the store's POP consumption (pop_processors.c) and its
 * state (pop_state.c), hung off store_features.pop. */
#ifndef POP_SERVICE_H
#define POP_SERVICE_H

#include <stdatomic.h>

#include "pop_state.h"
#include "store_plugin.h"

struct pop_held;
struct pop_poll_counts;
struct store_features;

typedef struct pop_service {
    pop_state st;
    bool opened;
    atomic_uint turn; /* the first queue of a POP over all queues */
    pthread_mutex_t hold_mu;
    struct pop_held *held;   /* POPs waiting for messages (pollTime) */
    atomic_size_t nheld;     /* how many: an arrival looks at it without the lock */
    atomic_bool wake_posted; /* a retry of the held POPs is queued on the slow worker */
    rmq_timer_id hold_timer; /* 100 ms: held POPs, and the revive every POP_REVIVE_INTERVAL_MS */
    atomic_bool
        revive_running; /* one revive pass at a time (the pull executor has several threads) */
    _Atomic int64_t revive_due;          /* wall ms of the next revive pass */
    struct pop_poll_counts *poll_counts; /* held requests per polling key (pop_poll_limit.c) */
    bool retry_v2;                       /* enableRetryTopicV2: %RETRY%<group>+<topic> */
    bool retry_actual_topic;             /* popResponseReturnActualRetryTopic */
} pop_service;

/* RocketMQ 5.x RequestCode values of the POP family. */
#define POP_POP_MESSAGE 200050
#define POP_ACK_MESSAGE 200051
#define POP_PEEK_MESSAGE 200052
#define POP_CHANGE_INVISIBLETIME 200053
#define POP_NOTIFICATION 200054
#define POP_POLLING_INFO 200055
#define POP_BATCH_ACK_MESSAGE 200151

pop_service *pop_service_of(store_plugin *sp);
/* Whether an order POP of q must wait: a message of its last batch is
 * still invisible (st->mu held). */
bool pop_queue_order_locked(const pop_queue *q, int64_t now);
/* Hold a POP or NOTIFICATION request until something arrives or poll_ms
 * passes (pop_processors.c re-runs it then): RMQ_DEFERRED or an error. */
int pop_hold_request(store_plugin *sp, rmq_request *req, int64_t poll_ms);
/* POLLING_INFO: the POPs held for (group, topic, queueId as they asked). */
size_t pop_holds_count(store_plugin *sp, const char *group, const char *topic, int32_t queue_id);
/* pop_peek_notify.c: PEEK_MESSAGE, NOTIFICATION, POLLING_INFO. */
int pop_peek_notify_register(store_plugin *sp);
/* A NOTIFICATION's answer, or NULL with *hold when it may wait. */
rmq_cmd *pop_notification_run(store_plugin *sp, const rmq_cmd *cmd, bool may_hold, bool *hold);

/* The message at a queue offset (one stored record, malloc'd in res->data);
 * 0 or -1 when it is gone. */
int pop_read_at(store_plugin *sp, const char *topic, int32_t qid, int64_t offset,
                store_get_result *res);
/* A copy of the record in %DLQ%<q's group> queue 0 (st->mu may be held). */
void pop_to_dlq(store_plugin *sp, const pop_queue *q, const uint8_t *rec, size_t len,
                int32_t reconsume);

/* pop_revive.c: the background revive. In-flight messages of non-order
 * POPs whose invisible time passed go to the POP retry topic (pop_retry.c),
 * or past the group's retryMaxTimes to %DLQ%<group>; those of order POPs
 * past retryMaxTimes to the DLQ, the others wait, visible, for the group's
 * next order POP. Runs at most every POP_REVIVE_INTERVAL_MS from the POP
 * timer; on a master only. */
#define POP_REVIVE_INTERVAL_MS 1000
void pop_revive_tick(store_plugin *sp);
/* One pass at wall time now (tests and the tick); DLQ moves made. */
size_t pop_revive_run(store_plugin *sp, int64_t now);

/* pop_poll_limit.c: Java's popPollingSize / maxPopPollingSize. Before a
 * POP or NOTIFICATION is held: 0 (counted until pop_poll_leave), or
 * RMQ_EBUSY when its polling key or the total is full (POLLING_FULL). */
int pop_poll_counts_init(pop_service *ps);
void pop_poll_counts_fini(pop_service *ps);
int pop_poll_enter(store_plugin *sp, const rmq_cmd *cmd);
/* The held request is answered (before its command is freed). */
void pop_poll_leave(store_plugin *sp, const rmq_cmd *cmd);
/* A held POP's or NOTIFICATION's answer r at the end of its pollTime,
 * after pop_poll_leave: when it found nothing and maxPopPollingSize
 * waits in all, Java's re-poll (PopLongPollingService.polling checks the
 * total before the timeout) refuses it: POLLING_FULL instead of
 * POLLING_TIMEOUT, pollingFull true on a NOTIFICATION. r or its
 * replacement (r is freed then). */
rmq_cmd *pop_poll_answer_at_end(store_plugin *sp, const rmq_cmd *cmd, rmq_cmd *r);
/* A POP refused a wait: POLLING_FULL (209) as Java answers it. */
#define RC_POLLING_FULL 209
#define RC_POLLING_TIMEOUT 210
rmq_cmd *pop_polling_full_answer(store_plugin *sp, const rmq_cmd *cmd);

/* pop_attempt.c: the attemptId of each queue's last order batch (Java's
 * ConsumerOrderInfoManager OrderInfo.attemptId). An order POP repeating
 * that attemptId (a client retrying after a lost answer) gets the batch
 * still in flight again at once, with the same delivery counts. Kept in
 * the queue's state and journal (pop_state.c); callers hold the state's
 * mutex. */
bool pop_attempt_same(const pop_queue *q, const char *attempt_id);
/* The queue handed out a batch to attempt_id (NULL: none given): whether
 * its attemptId changed (the caller journals the queue's N line then). */
bool pop_attempt_note(pop_queue *q, const char *attempt_id);

/* pop_retry.c: the POP retry topics (%RETRY%<group>_<topic>, or with
 * enableRetryTopicV2 %RETRY%<group>+<topic>). */
bool pop_is_retry_topic(const char *topic);
/* The retry flag of receipts and offset infos: "0", "1" (V1) or "2" (V2). */
const char *pop_retry_flag(const char *topic);
/* 0, or -1 when it does not fit in cap. */
int pop_retry_topic_name(char *out, size_t cap, const char *group, const char *topic, bool v2);
/* The topic a receipt's retry flag names (ExtraInfoUtil.getRealTopic). */
int pop_retry_real_topic(char *out, size_t cap, const char *topic, const char *group,
                         const char *flag);
/* The topic a POP retry topic of group is for (KeyBuilder.parseNormalTopic);
 * topic itself when it is none. */
const char *pop_retry_normal_topic(const char *topic, const char *group);
/* Create the retry topic when absent (addRetryTopicIfNotExist). 0 or -1. */
int pop_retry_ensure_topic(store_plugin *sp, const char *retry_topic, const char *group);
/* An expired, unacknowledged message of a non-order POP (st->mu held):
 * its copy into the retry topic (reconsume times + 1), or past max to
 * %DLQ%<group>; then acknowledged in the state and jb. 0, or -1 when the
 * copy could not be stored (left in flight for the next pass). */
int pop_retry_revive(store_plugin *sp, pop_queue *q, const pop_inflight *slot, int32_t max, bool v2,
                     pop_journal_buf *jb);

/* Java's PopMessageProcessor with popResponseReturnActualRetryTopic false
 * (its default): a retry-topic record is answered re-encoded under the
 * topic the POP asked for, with its receipt in the POP_CK property
 * (ck_head: "startOffset popTime invisibleTime reviveQid retry brokerName";
 * queueId and offset are the record's). Its length with the record in
 * *out (malloc'd), 0 when it cannot be (the caller sends it as stored). */
size_t pop_retry_recode(store_plugin *sp, const uint8_t *rec, size_t len, const char *topic,
                        const char *ck_head, uint8_t **out);

/* store_features_init / _fini. */
int pop_service_init(store_plugin *sp, struct store_features *f);
void pop_service_fini(store_plugin *sp, struct store_features *f);
/* Open the state (init, or a reload's import / refused reload). 0 or RMQ_EIO. */
int pop_service_open(store_plugin *sp);
/* A hot reload's export: answer held POPs and close the journal so the new
 * generation replays everything this one wrote. */
void pop_service_handover(store_plugin *sp);
void pop_holds_release_all(store_plugin *sp);
/* A message arrived (engine on_arrival, any appending thread): retry the
 * held POPs soon on the slow worker instead of at the next 100 ms tick. */
void pop_holds_on_arrival(store_plugin *sp);

#endif
