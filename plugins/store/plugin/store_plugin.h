/* store_plugin.h — the store plugin's context (one per loaded generation) and
 * the functions its files share: settings, broker.meta access, answering a
 * request now or later, the slow-path worker, long polling. Plugin-private:
 * the plugin includes only SDK headers and the engine's. */
#ifndef STORE_PLUGIN_H
#define STORE_PLUGIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rmqhost/rmqhost.h>
#include <rmqhost/services/broker_meta_service.h>
#include <rmqhost/services/store_service.h>

#include "live_text.h"
#include "put_latency.h"
#include "store_engine.h"

/* Response codes of the message path (protocol.md §3.2). */
#define RC_SUCCESS 0
#define RC_SYSTEM_ERROR 1
#define RC_FLUSH_DISK_TIMEOUT 10
#define RC_SLAVE_NOT_AVAILABLE 11
#define RC_FLUSH_SLAVE_TIMEOUT 12
#define RC_MESSAGE_ILLEGAL 13
#define RC_SERVICE_NOT_AVAILABLE 14
#define RC_NO_PERMISSION 16
#define RC_TOPIC_NOT_EXIST 17
#define RC_PULL_NOT_FOUND 19
#define RC_PULL_RETRY_IMMEDIATELY 20
#define RC_PULL_OFFSET_MOVED 21
#define RC_QUERY_NOT_FOUND 22
#define RC_SUBSCRIPTION_PARSE_FAILED 23
#define RC_SUBSCRIPTION_NOT_EXIST 24
#define RC_SUBSCRIPTION_NOT_LATEST 25
#define RC_SUBSCRIPTION_GROUP_NOT_EXIST 26
#define RC_FILTER_DATA_NOT_EXIST 27
#define RC_FILTER_DATA_NOT_LATEST 28

/* The remark RemotingCommand.createResponseCommand gives a Java answer
 * until its processor sets one: processors that only set SUCCESS afterwards
 * (UPDATE_AND_CREATE_TOPIC, INVOKE_BROKER_TO_RESET_OFFSET,
 * QUERY_CONSUME_QUEUE, an END_TRANSACTION rollback) send it along. */
#define JAVA_UNSET_REMARK "not set any response code"
#define FAQ_SUFFIX "\nSee http://rocketmq.apache.org/docs/faq/ for further details."

typedef struct pull_hold_table pull_hold_table;
typedef struct slow_worker slow_worker;
typedef struct send_hooks send_hooks;

typedef enum ha_role { HA_ASYNC_MASTER = 0, HA_SYNC_MASTER = 1, HA_SLAVE = 2 } ha_role;
typedef struct ha_master ha_master;
typedef struct ha_slave ha_slave;

/* Settings read once in init (Java's names in comments). */
typedef struct store_settings {
    store_config engine;      /* MessageStoreConfig part, see store_settings.c */
    char root_dir[1024];      /* storePathRootDir */
    char commitlog_dir[1024]; /* storePathCommitLog */
    char delete_when[64];     /* deleteWhen */
    /* read per request, as Java reads them: UPDATE_BROKER_CONFIG stores
     * new values while workers read (store_settings_apply_live) */
    _Atomic bool trace_on;                   /* traceOn */
    _Atomic bool reject_transaction_message; /* rejectTransactionMessage */
    _Atomic int64_t start_accept_send_ts;    /* startAcceptSendRequestTimeStamp */
    _Atomic bool long_polling_enable;        /* longPollingEnable */
    _Atomic int64_t short_polling_ms;        /* shortPollingTimeMills */
    _Atomic int32_t default_query_max_num;   /* defaultQueryMaxNum */
    _Atomic bool filter_support_retry;       /* filterSupportRetry */
    _Atomic int64_t pop_polling_size;        /* popPollingSize: held POPs per polling key */
    _Atomic int64_t max_pop_polling_size;    /* maxPopPollingSize: held POPs in all */
    live_text region_id;                     /* regionId (MSG_REGION of send answers) */
    bool send_inline;                        /* sendMessageInline (rmqhost) */
    bool pull_inline;                        /* pullMessageInline (rmqhost) */
    bool auto_delete_unused_stats;           /* autoDeleteUnusedStats */
    /* replication (MessageStoreConfig / BrokerConfig names) */
    ha_role role;                       /* brokerRole */
    int32_t ha_listen_port;             /* haListenPort (0: server port + 1) */
    char ha_master_address[128];        /* haMasterAddress */
    int64_t ha_heartbeat_ms;            /* haSendHeartbeatInterval */
    int64_t ha_housekeeping_ms;         /* haHousekeepingInterval */
    int32_t ha_batch;                   /* haTransferBatchSize */
    _Atomic int64_t ha_fallbehind_max;  /* haSlaveFallbehindMax (per check, updatable) */
    int64_t slave_timeout_ms;           /* slaveTimeout */
    _Atomic bool offset_check_in_slave; /* offsetCheckInSlave (per pull, updatable) */
    _Atomic bool slave_read_enable;     /* slaveReadEnable (per pull, updatable) */
    int32_t send_threads, pull_threads, query_threads, admin_threads;
    int32_t send_queue, pull_queue, query_queue, admin_queue;
    int64_t put_stats_window_ms; /* putStatsWindowMillis (rmqhost; Java: 60 s) */
} store_settings;

typedef struct store_plugin {
    rmq_plugin_ctx *ctx;
    const rmq_host_api *api;
    store_settings set;
    store_engine *engine; /* NULL while a reload's new generation waits for the old
                           * one to close it, and in the old one after export */
    /* the "store.queues" service may be called from an I/O thread that reaches
     * an old generation after its export closed the engine (store_reload.c) */
    pthread_rwlock_t engine_rw;
    bool open_deferred; /* init found the store locked by this process's older generation */
    int handed_nlevels; /* delay levels whose progress export_state handed over */
    rmq_store_queues_service queues_svc; /* exported as "store.queues" */
    pull_hold_table *holds;
    slow_worker *worker;
    const send_hooks *hooks; /* retry/DLQ, delay, transactions (H3's files); NULL = none */
    atomic_bool quiescing;
    rmq_timer_id hold_timer;
    /* broker.meta's broker_config, refreshed at most every second: every
     * send needs it (CLUSTER, STOREHOST, permission) */
    pthread_mutex_t bc_mu;
    rmq_broker_config bc;
    store_addr bc_store_host;
    uint64_t bc_at_ms; /* monotonic; 0 = never fetched */
    bool bc_valid;
    put_latency put_lat; /* putMessageEntireTimeMax / putMessageDistributeTime (28) */
    /* replication (ha_master.c, ha_slave.c); role may change (promote/demote) */
    _Atomic int role;
    ha_master *ha_m;
    ha_slave *ha_s;
    pthread_mutex_t updates_mu; /* store_config_updates.c: one file rewrite at a time */
    /* queue choice of a send with queueId < 0 (Java: a shared Random) */
    atomic_uint_least32_t send_random;
} store_plugin;

/* ---- settings (store_settings.c) ---- */
extern const rmq_setting_decl STORE_SETTINGS[];
int store_settings_read(store_plugin *sp);
struct json_t;
/* Java reads it per request: an update applies at once. */
bool store_setting_is_live(const char *name);
/* Store the per-request settings from conf.d with the updates `u` over it. */
void store_settings_apply_live(store_plugin *sp, struct json_t *u);
/* The same for the engine's per-use settings (store_set_live_limits). */
bool store_setting_is_engine_live(const char *name);
void store_settings_apply_engine(store_plugin *sp, store_engine *e, struct json_t *u);

/* ---- UPDATE_BROKER_CONFIG (store_config_updates.c) ---- */
/* The persisted updates ({name: value text}, new reference; empty when
 * none), NULL when out of memory. */
struct json_t *store_updates_read(store_plugin *sp);
/* Take key=value: 0 (persisted; the retention and per-request settings also
 * applied now),
 * RMQ_ENOENT not a setting an update may change, RMQ_EINVAL a value the
 * setting cannot take. */
int store_config_update(store_plugin *sp, const char *key, const char *value);
/* The same file for a promotion / demotion (brokerRole, haMasterAddress):
 * the new role outlives a restart and a hot reload of the store, whose
 * settings read the file over conf.d. Same answers. */
int store_role_keep(store_plugin *sp, const char *key, const char *value);

/* ---- answering (store_reply.c) ---- */
/* Where the answer goes: the processor's request (now) or a deferred handle. */
typedef struct reply_target {
    rmq_request *req;
    rmq_deferred *d;
} reply_target;
/* Send resp (ownership passes) to t; NULL resp = no answer (oneway). */
int store_answer(store_plugin *sp, reply_target *t, rmq_cmd *resp);
bool store_cmd_is_oneway(store_plugin *sp, const rmq_cmd *cmd);
/* A response of `code` and `remark` (may be NULL) to req now, none when cmd
 * is oneway. RMQ_ENOMEM when the response cannot be made. */
int store_reply_code(store_plugin *sp, rmq_request *req, const rmq_cmd *cmd, int32_t code,
                     const char *remark);
/* ext_set of a number. */
void store_ext_i64(store_plugin *sp, rmq_cmd *c, const char *key, int64_t v);

/* ---- broker.meta (broker_meta_access.c); RMQ_ENOENT when absent ---- */
int meta_broker_config(store_plugin *sp, rmq_broker_config *out);
/* The cached copy (refreshed when older than a second); RMQ_ENOENT when
 * broker.meta is absent. store_host (may be NULL) gets STOREHOST. */
int meta_broker_config_cached(store_plugin *sp, rmq_broker_config *out, store_addr *store_host);
/* The cached copy, or (broker.meta absent) what pull and pop assume
 * then: read and write permitted, subscription groups auto-created. */
void meta_broker_config_or_default(store_plugin *sp, rmq_broker_config *out);
int meta_topic_get(store_plugin *sp, const char *topic, rmq_topic_config *out);
int meta_topic_create_in_send(store_plugin *sp, const char *topic, const char *default_topic,
                              int32_t default_queue_nums, int32_t sys_flag, rmq_topic_config *out);
int meta_topic_create_in_send_back(store_plugin *sp, const char *topic, int32_t queue_nums,
                                   int32_t perm, int32_t sys_flag, rmq_topic_config *out);
int meta_group_get(store_plugin *sp, const char *group, bool auto_create,
                   rmq_subscription_group_config *out);
int meta_consumer_subscription(store_plugin *sp, const char *group, const char *topic,
                               rmq_consumer_sub_info *out);
int meta_offset_commit(store_plugin *sp, const char *group, const char *topic, int32_t queue_id,
                       int64_t offset);
/* The committed offset (-1: none) into *out. */
int meta_offset_query(store_plugin *sp, const char *group, const char *topic, int32_t queue_id,
                      int64_t *out);
/* A channel of a producer of `group` / of the producer client `client_id`
 * (0: none) into *out; the latter RMQ_ENOENT also when the provider is too
 * old to have it. */
int meta_producer_channel(store_plugin *sp, const char *group, uint64_t *out);
int meta_producer_channel_by_client(store_plugin *sp, const char *client_id, uint64_t *out);
/* "RW-" etc. (PermName.perm2String) into buf[4]. */
const char *perm_string(int32_t perm, char buf[4]);

/* ---- slow-path worker (slow_worker.c): work that may block, moved off IO ---- */
int slow_worker_start(store_plugin *sp);
void slow_worker_stop(store_plugin *sp);
/* Run fn(arg) on the worker thread. 0 or RMQ_ENOMEM / RMQ_ESHUTDOWN. */
int slow_worker_post(store_plugin *sp, void (*fn)(store_plugin *sp, void *arg), void *arg);

/* ---- processors ---- */
int send_processors_register(store_plugin *sp);
int pull_processor_register(store_plugin *sp);
int query_processors_register(store_plugin *sp);
int queue_admin_processors_register(store_plugin *sp);
int store_queues_service_export(store_plugin *sp);

/* ---- hot reload (store_reload.c) ---- */
/* 2: the runtime statistics section (store_reload.c); 1 is still read */
#define STORE_STATE_VERSION 2u
/* Open the engine with sp->set (the arrival callback names sp). */
int store_engine_open(store_plugin *sp, char *err, size_t errlen);
int store_export_state(rmq_plugin_ctx *ctx, void **blob, size_t *len);
int store_import_state(rmq_plugin_ctx *ctx, uint32_t version, const void *blob, size_t len);

/* ---- long polling (pull_hold.c) ---- */
int pull_holds_create(store_plugin *sp);
void pull_holds_destroy(store_plugin *sp);
/* Engine on_arrival (any appending thread). */
void pull_holds_on_arrival(void *ud, const char *topic, int32_t queue_id, int64_t max_offset,
                           int64_t tags_code, const char *props, size_t props_len,
                           int64_t store_ts);
/* Answer every held pull now (quiesce). */
void pull_holds_release_all(store_plugin *sp);

/* java_config_equivalents.c: append to out[n..cap) the "key=value\n" lines
 * of Java's MessageStoreConfig / store-side BrokerConfig keys the store has
 * no setting of that name for, with the value it behaves as; returns the
 * new length (as snprintf: may exceed cap). */
size_t store_java_config_text(store_plugin *sp, char *out, size_t cap, size_t n);

#endif
