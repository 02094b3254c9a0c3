/* store_features.h — the store's message features beyond plain send/pull
 * (store-services' files): CONSUMER_SEND_MSG_BACK and %RETRY%/DLQ routing,
 * delay levels with the schedule topic, transactions with the check-back
 * loop, reply messages, broker admin codes (28, 222) and topic deletion.
 * Their state hangs off store_plugin.hooks (the send hooks come first). */
#ifndef STORE_FEATURES_H
#define STORE_FEATURES_H

#include <pthread.h>

#include "send_put.h"
#include "stored_record.h"

#define SCHEDULE_TOPIC "SCHEDULE_TOPIC_XXXX"
#define TIMER_TOPIC "rmq_sys_wheel_timer"
#define HALF_TOPIC "RMQ_SYS_TRANS_HALF_TOPIC"
#define OP_HALF_TOPIC "RMQ_SYS_TRANS_OP_HALF_TOPIC"
#define CHECK_MAX_TOPIC "TRANS_CHECK_MAX_TIME_TOPIC"
#define TRANS_GROUP "CID_RMQ_SYS_TRANS"
#define MAX_DELAY_LEVELS 64
/* endTransactionPoolQueueCapacity: the "transaction" executor's queue */
#define END_TRANSACTION_QUEUE_CAPACITY 100000

typedef struct store_features {
    send_hooks hooks; /* first: sp->hooks points here */
    store_plugin *sp;
    /* delay levels (schedule_service.c) */
    int nlevels;
    int64_t level_ms[MAX_DELAY_LEVELS + 1]; /* 1-based */
    pthread_mutex_t delay_mu;
    int64_t delay_offset[MAX_DELAY_LEVELS + 1];
    bool delay_dirty;
    uint64_t delay_flushed_ms;
    char delay_path[1100];
    /* timer messages (timer_service.c) */
    struct timer_service *timer;
    /* transactions (transaction_service.c) */
    int64_t tx_timeout_ms;
    int64_t tx_check_max;
    int64_t tx_check_interval_ms;
    int64_t tx_file_reserved_ms; /* fileReservedTime: older half messages are discarded */
    pthread_mutex_t tx_mu;       /* one check round at a time */
    /* replies (reply_processor.c) */
    bool store_reply;
    /* broker_admin_processors.c */
    void *admin;
    struct pull_stats *pull_stats;     /* owned by the admin state; NULL until it exists */
    struct broker_stats *broker_stats; /* broker_stats.c; NULL until it exists */
    _Atomic uint32_t uniq_counter;     /* op-record UNIQ_KEYs */
    _Atomic uint32_t retry_turn;       /* retry queue choice */
    void *pop;                         /* pop_service (pop_processors.c) */
} store_features;

static inline store_features *features_of(store_plugin *sp)
{
    return (store_features *)(void *)(uintptr_t)sp->hooks;
}

/* store_plugin.c calls these (init after the processors, fini before the
 * engine closes). */
int store_features_init(store_plugin *sp);
void store_features_fini(store_plugin *sp);

/* ---- schedule_service.c ---- */
int schedule_service_init(store_plugin *sp, store_features *f);
void schedule_service_fini(store_plugin *sp, store_features *f);
/* GET_ALL_DELAY_OFFSET body (malloc'd) / a slave taking the master's. */
char *schedule_offsets_encode(store_features *f);
void schedule_offsets_take(store_features *f, const char *text, size_t len);
/* special_send: TRAN_MSG → transaction_prepare, DELAY → the schedule topic. */
int features_special_send(store_plugin *sp, const send_header *h, send_message *m, char *remark,
                          size_t cap);
/* Level > 0 (clamped): rewrite `m` to the schedule topic, REAL_TOPIC /
 * REAL_QID added to the stored properties (which keep WAIT), the 5.x
 * TIMER_* properties removed (a delay level wins, as Java's hook). */
int schedule_route(store_plugin *sp, send_message *m, int32_t level, const char *cluster);

/* ---- timer_service.c ---- */
int timer_service_init(store_plugin *sp, store_features *f);
void timer_service_fini(store_plugin *sp, store_features *f);
/* A reload's export: checkpoint and close the wheel (reopened by the next
 * generation, or by this one's next tick when the reload is refused). */
void timer_service_handover(store_plugin *sp);
/* TIMER_DELIVER_MS, TIMER_DELAY_SEC or TIMER_DELAY_MS is set. */
bool timer_props_present(const props_view *v);
/* HookUtils.transformTimerMessage: a delivery time later than now (within
 * timerMaxDelaySec) rewrites `m` to rmq_sys_wheel_timer queue 0 with
 * TIMER_OUT_MS (rounded to timerPrecisionMs), REAL_TOPIC and REAL_QID; due
 * already: left as it is. 0 or a response code with remark. */
int timer_route(store_plugin *sp, send_message *m, const char *cluster, char *remark, size_t cap);
/* recall_processor.c: RECALL_MESSAGE (370), and the recall handle put on a
 * SEND answer for a message the timer wheel holds (props: the stored
 * properties with TIMER_OUT_MS, REAL_TOPIC, UNIQ_KEY). */
int recall_processor_register(store_plugin *sp);
void recall_handle_attach(store_plugin *sp, rmq_cmd *resp, const char *props, size_t len,
                          const char *broker_name);

/* ---- consumer_send_back.c ---- */
int consumer_send_back_register(store_plugin *sp);
int features_retry_send(store_plugin *sp, const send_header *h, send_message *m, char *remark,
                        size_t cap);

/* ---- transaction_service.c ---- */
int transaction_service_init(store_plugin *sp, store_features *f);
int transaction_prepare(store_plugin *sp, const send_header *h, send_message *m, char *remark,
                        size_t cap);

/* ---- reply_processor.c ---- */
int reply_processor_register(store_plugin *sp);

/* ---- broker_admin_processors.c ---- */
int broker_admin_processors_register(store_plugin *sp);
void broker_admin_state_free(void *admin);
/* Hot reload (store_reload.c): the runtime-info and pull statistics, written
 * by the serving generation before its engine closes, read by the new one
 * before it goes live. 0, RMQ_ENOMEM, RMQ_ENOENT (no admin state) or
 * RMQ_EINVAL (malformed). */
struct blob_writer;
struct blob_reader;
int broker_admin_export(store_plugin *sp, struct blob_writer *w);
int broker_admin_import(store_plugin *sp, struct blob_reader *r);

/* ---- helpers shared by these files (schedule_service.c) ---- */
/* The stored properties string of `base` with (name, value) pairs set
 * (replacing same-named entries) and `drop` names removed, CLUSTER last.
 * malloc'd into *out (caller frees). 0 or RMQ_ENOMEM. */
int props_rewrite(const props_view *base, const char *const *set_kv, const char *const *drop,
                  const char *cluster, char **out, size_t *len);
/* A record from the commit log, decoded (rec_buf malloc'd: free it). */
int features_read_record(store_plugin *sp, int64_t phys, uint8_t **rec_buf, stored_record *out);
/* features_read_record, then its properties parsed into a malloc'd *v:
 * 0 (free *v and *rec_buf), RMQ_ENOENT (gone) or RMQ_ENOMEM (the record
 * is there: try later); on error nothing is left to free. */
int features_read_record_props(store_plugin *sp, int64_t phys, uint8_t **rec_buf,
                               stored_record *out, props_view **v);
/* A store_msg copying a stored record's fields (addresses, body, flag...). */
void store_msg_from_record(const stored_record *r, store_msg *m);
/* *m = record r (its properties parsed into v) back in the queue its
 * REAL_TOPIC / REAL_QID name (the name copied into `topic`, which m points
 * at), tags code from TAGS. false when either property is missing or the
 * topic is over 255 bytes. */
bool store_msg_to_real_queue(const stored_record *r, const props_view *v, char topic[256],
                             store_msg *m);
/* Tag hash of the TAGS property of a props string. */
int64_t props_tags_code(const char *props, size_t len);
/* A new client-style message id (UNIQ_KEY), 32 hex characters. */
void features_uniq_key(store_plugin *sp, char out[33]);

#endif
