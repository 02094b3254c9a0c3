/* broker_context.h — the plugin instance: settings, tables, registration
 * and pull-hold state, and the functions each file of plugin/ provides. */
#ifndef BCM_BROKER_CONTEXT_H
#define BCM_BROKER_CONTEXT_H

#include <rmqhost/rmqhost.h>
#include <rmqhost/services/broker_meta_service.h>
#include <rmqhost/services/broker_service.h>
#include <rmqhost/services/store_service.h>

#include <pthread.h>
#include <stdatomic.h>

#include "consumer_table.h"
#include "lock_table.h"
#include "offset_table.h"
#include "producer_table.h"
#include "subscription_groups.h"
#include "topic_table.h"
#include "unwritten_topics.h"

/* Request codes (protocol.md §4.3, §5). */
enum {
    BCM_PULL_MESSAGE = 11,
    BCM_QUERY_CONSUMER_OFFSET = 14,
    BCM_UPDATE_CONSUMER_OFFSET = 15,
    BCM_UPDATE_AND_CREATE_TOPIC = 17,
    BCM_GET_ALL_TOPIC_CONFIG = 21,
    BCM_UPDATE_BROKER_CONFIG = 25,
    BCM_GET_BROKER_CONFIG = 26,
    BCM_SEARCH_OFFSET_BY_TIMESTAMP = 29,
    BCM_GET_MAX_OFFSET = 30,
    BCM_GET_MIN_OFFSET = 31,
    BCM_HEART_BEAT = 34,
    BCM_UNREGISTER_CLIENT = 35,
    BCM_GET_CONSUMER_LIST_BY_GROUP = 38,
    BCM_NOTIFY_CONSUMER_IDS_CHANGED = 40,
    BCM_LOCK_BATCH_MQ = 41,
    BCM_UNLOCK_BATCH_MQ = 42,
    BCM_GET_ALL_CONSUMER_OFFSET = 43,
    BCM_CHECK_CLIENT_CONFIG = 46,
    BCM_REGISTER_BROKER = 103,
    BCM_UNREGISTER_BROKER = 104,
    BCM_UPDATE_AND_CREATE_SUBSCRIPTIONGROUP = 200,
    BCM_GET_ALL_SUBSCRIPTIONGROUP_CONFIG = 201,
    BCM_GET_CONSUMER_CONNECTION_LIST = 203,
    BCM_GET_PRODUCER_CONNECTION_LIST = 204,
    BCM_DELETE_SUBSCRIPTIONGROUP = 207,
    BCM_GET_CONSUME_STATS = 208,
    BCM_DELETE_TOPIC_IN_BROKER = 215,
    BCM_QUERY_TOPIC_CONSUME_BY_WHO = 300,
    BCM_GET_SYSTEM_TOPIC_LIST_FROM_BROKER = 305,
    BCM_GET_CONSUMER_RUNNING_INFO = 307,
    BCM_GET_BROKER_CONSUME_STATS = 317,
    BCM_GET_ALL_PRODUCER_INFO = 328,
    BCM_CONSUME_MESSAGE_DIRECTLY = 309,
    BCM_GET_TOPIC_CONFIG = 351, /* 5.x */
};

/* Response codes (protocol.md §3.2). */
enum {
    BCM_PULL_NOT_FOUND = 19,
    BCM_QUERY_NOT_FOUND = 22,
    BCM_SUBSCRIPTION_PARSE_FAILED = 23,
    BCM_CONSUMER_NOT_ONLINE = 206,
    BCM_CONSUME_MSG_TIMEOUT = 207,
};

typedef struct bcm_settings {
    char cluster_name[128];
    char broker_name[128];
    int64_t broker_id;
    char broker_ip1[64];
    char ha_server_addr[96];
    int64_t register_period_ms;
    /* the atomics change at run time (UPDATE_BROKER_CONFIG, as Java reads
     * them per use) while other threads read them */
    _Atomic int64_t register_timeout_ms; /* registerBrokerTimeoutMills */
    _Atomic bool compressed_register;    /* compressedRegister */
    _Atomic int broker_permission;
    bool enable_split_registration;
    int64_t split_registration_size;
    _Atomic bool auto_create_subscription_group;
    _Atomic bool notify_consumer_ids_changed_enable;
    int64_t channel_expired_timeout_ms;
    int64_t housekeeping_period_ms;
    int64_t flush_offset_interval_ms;
    int64_t lock_max_live_ms;
    bool answer_storage_codes;
    int64_t pull_suspend_max_ms;
    int64_t pull_hold_max_requests;
    int64_t pull_hold_check_ms;
    int64_t unregister_timeout_ms;
    int64_t call_client_timeout_ms; /* relays 307/309 (Java: 10000, fixed) */
    _Atomic bool auto_create_topic_enable;
    int64_t journal_compact_bytes;     /* topicsJournalCompactBytes */
    int64_t heap_trim_after_deletions; /* heapTrimAfterTopicDeletions, 0 = never */
    char advertised_ip[64];            /* brokerIP1, or the bound server's address */
    int listen_port;                   /* the bound server's port */
} bcm_settings;

typedef struct bcm_namesrv {
    char addr[128];
    uint64_t next_due_ms; /* monotonic */
    uint64_t backoff_ms;  /* after a failure: 1 s doubling up to the period */
    size_t outstanding;   /* requests of the current round still unanswered */
    bool round_failed;
    bool again; /* topics changed during the round: register again */
    bool last_ok;
    /* Incremental rounds (topic_registration.c) leave out a NameServer
     * whose last registration failed (inc_skip), unless a full round to it
     * is in flight after a successful one: a dead or hanging one must not
     * hold up every creator.
     * full_covers: the topic changes (reg_inc_noted) the full round's body
     * holds; inc_gap_upto: the changes up to which an incremental round
     * left it out or failed there. A full round's success clears inc_skip
     * only when it covers that gap, else another full round follows. */
    bool inc_skip;
    uint64_t full_covers, inc_gap_upto;
    /* Its own incremental rounds, one in flight at a time, so a slow one
     * never holds up the others: the topic changes put into a round for it
     * (or that it was left out of), those of the round in flight, those
     * answered or failed, and the round's unanswered calls. */
    uint64_t inc_sent, inc_upto, inc_done;
    size_t inc_outstanding;
    bool inc_in_flight;
} bcm_namesrv;

typedef struct bcm_pull_hold {
    rmq_deferred *d;
    uint64_t deadline_ms;
    int64_t queue_offset;
} bcm_pull_hold;

typedef struct bcm_ctx {
    rmq_plugin_ctx *pctx;
    const rmq_host_api *api;
    bcm_settings s;
    char broker_addr[96];
    char ha_addr[96];
    char config_dir[700];

    /* tables: one lock, short critical sections, no I/O while held */
    pthread_mutex_t lock;
    bcm_producer_table producers;
    bcm_consumer_table consumers;
    bcm_subscription_groups groups;
    bcm_topic_table topics;
    bcm_offset_table offsets;
    bcm_lock_table locks;
    uint64_t offsets_changes; /* bumped per commit; flush when it moved */
    uint64_t offsets_flushed;

    /* topics created but not yet in topics.json: their senders wait on
     * topics_written (with the tables lock) until the write is done */
    bcm_unwritten_topics unwritten;
    pthread_cond_t topics_written;

    /* topics.journal (topics_journal_file.c), under the tables lock:
     * records noted and not yet written, their count, how many are durable;
     * one commit (or compaction) in flight at a time */
    int journal_fd;
    char *jbuf;
    size_t jlen, jcap;
    uint64_t jseq, journal_durable;
    int64_t journal_bytes, journal_compact_at;
    bool journal_broken; /* a record could not be noted: compact next */
    bool topics_committing;
    /* topic deletions since the heap was last handed back (heap_return.c) */
    uint64_t deleted_since_trim;

    pthread_mutex_t persist_lock; /* one writer per file at a time */

    /* registration */
    pthread_mutex_t reg_lock;
    bcm_namesrv *namesrvs;
    size_t nnamesrvs;
    char master_addr[96];
    char ha_master_addr[96];
    pthread_cond_t reg_idle;
    size_t reg_calls_in_flight;
    bool reg_topics_dirty; /* a response changed order flags: persist on the tick */
    bool reg_stopping;
    _Atomic bool reg_soon;        /* topics changed: start a round within REGISTER_SOON_MS */
    uint64_t reg_soon_not_before; /* ... but not before this (monotonic ms, reg_lock) */
    /* Incremental registration of changed topics (topic_registration.c).
     * Under the tables lock: topic changes counted, and the created or
     * updated names by count, kept until every NameServer's rounds have
     * taken them (or it was left out). Waiters wait on reg_inc_cond
     * (reg_lock). */
    struct bcm_inc_change *reg_inc_log;
    size_t reg_inc_nlog, reg_inc_caplog;
    uint64_t reg_inc_noted;
    pthread_cond_t reg_inc_cond;

    /* held PULL_MESSAGE requests */
    pthread_mutex_t hold_lock;
    bcm_pull_hold *holds;
    size_t nholds, hold_cap;
    bool holds_closed; /* quiesced: answer PULLs at once (under hold_lock) */

    /* UPDATE_BROKER_CONFIG's keys (name -> value text), persisted in
     * <config_dir>/broker.properties; config_dv is Configuration's
     * DataVersion. Under the tables lock once running. */
    json_t *config_overrides;
    bcm_data_version config_dv;

    bool exported; /* export_state ran: this fini is a reload, stay registered */
    rmq_broker_info_v1 info_table;
    rmq_broker_meta_service meta_table;
    _Atomic unsigned producer_rr; /* ProducerManager.getAvailableChannel's counter */
    /* messageRequestMode.json (assignment_processors.c), read on first use;
     * under the tables lock */
    json_t *request_modes;
} bcm_ctx;

/* broker_plugin.c */
bcm_ctx *bcm_from_ctx(rmq_plugin_ctx *pctx);

/* settings_load.c */
extern const rmq_setting_decl bcm_setting_decls[];
int bcm_settings_load(bcm_ctx *c);
int bcm_settings_topics(bcm_ctx *c); /* settings `topics` into the table */
/* Java's fast failure of the heartbeat queue as configured now (an update
 * over conf.d): waitTimeMillsInHeartbeatQueue, or 0 when
 * brokerFastFailureEnable is off. Once running, under the tables lock. */
uint64_t bcm_heartbeat_queue_wait_ms(bcm_ctx *c);

/* broker_config_processors.c: GET_BROKER_CONFIG / UPDATE_BROKER_CONFIG */
int bcm_config_overrides_load(bcm_ctx *c); /* needs config_dir */
/* The persisted UPDATE_BROKER_CONFIG value of setting `name`, or NULL; once
 * running, call it under the tables lock (updates change the table). */
const char *bcm_setting_text(bcm_ctx *c, const char *name);
/* Keep name=value in broker.properties as an update would (read over
 * conf.d at the next start and by a hot reload): the store's role changes
 * keep brokerId this way. Takes the tables lock. */
int bcm_config_override_keep(bcm_ctx *c, const char *name, const char *value);
int bcm_register_config_processors(bcm_ctx *c);
/* java_config_keys.c: the Java getBrokerConfig keys this plugin has no
 * setting of that name for, with the value the broker behaves as. */
typedef struct bcm_java_facts {
    char broker_ip2[96];
    bool property_filter; /* SQL92 subscriptions accepted */
    bool use_tls_known, use_tls;
} bcm_java_facts;
void bcm_java_facts_read(bcm_ctx *c, bcm_java_facts *f); /* tables lock not held */
void bcm_java_config_keys(json_t *all, const bcm_java_facts *f);
/* assignment_processors.c: QUERY_ASSIGNMENT (400), SET_MESSAGE_REQUEST_MODE (401) */
int bcm_register_assignment_processors(bcm_ctx *c);
/* broker_inventory_processors.c: GET_ALL_PRODUCER_INFO,
 * GET_SYSTEM_TOPIC_LIST_FROM_BROKER, GET_BROKER_CONSUME_STATS */
int bcm_register_inventory_processors(bcm_ctx *c);

/* state_files.c */
int bcm_state_load(bcm_ctx *c);

/* topics_journal_file.c: topic changes are noted (tables lock held) and
 * committed (lock not held: returns once every change noted before is
 * durable, in topics.journal or topics.json). bcm_persist_topics rewrites
 * topics.json from the table and empties the journal. */
int bcm_topics_journal_open(bcm_ctx *c); /* at init, after topics.json is loaded */
int bcm_topics_journal_start(bcm_ctx *c);
void bcm_topics_journal_close(bcm_ctx *c);
void bcm_topics_note_locked(bcm_ctx *c, const char *name);
void bcm_topics_commit(bcm_ctx *c);
void bcm_persist_topics(bcm_ctx *c);
void bcm_persist_groups(bcm_ctx *c);
void bcm_persist_offsets(bcm_ctx *c, bool force);
void bcm_flush_timer(void *ud);

/* client_manage_processors.c */
int bcm_register_client_processors(bcm_ctx *c);
/* consumer_manage_processors.c */
int bcm_register_consumer_processors(bcm_ctx *c);
/* admin_processors.c */
int bcm_register_admin_processors(bcm_ctx *c);
/* topic_config_processor.c: 5.x GET_TOPIC_CONFIG (351), and the attributes
 * of UPDATE_AND_CREATE_TOPIC put into `cfg` (caller holds c->lock; 0, or
 * the response code Java answers with its remark). */
int bcm_process_get_topic_config(rmq_request *req, const rmq_cmd *cmd, void *ud);
int32_t bcm_topic_attributes_set(bcm_ctx *c, json_t *cfg, const char *topic,
                                 const char *modification, bool is_new, char *remark, size_t cap);
/* client_relay.c */
int bcm_register_relay_processors(bcm_ctx *c);
/* storage_stub_processors.c */
int bcm_register_storage_stub_processors(bcm_ctx *c);
void bcm_pull_holds_flush(bcm_ctx *c, bool all);
/* Quiesce: answer every held PULL now and hold no new one. */
void bcm_pull_holds_close(bcm_ctx *c);

/* consumer_notifier.c: NOTIFY_CONSUMER_IDS_CHANGED and SDK events */
void bcm_notify_group(bcm_ctx *c, const char *group, const uint64_t *channels, size_t n);
void bcm_publish_group_event(bcm_ctx *c, rmq_consumer_group_event_kind kind, const char *group,
                             const char *client_id, const bcm_subscription *subs, size_t nsubs);
/* Deliver what a table operation reported; `notify_flag_applies` = honour
 * the group's notifyConsumerIdsChangedEnable (false for channel close). */
void bcm_deliver_notices(bcm_ctx *c, bcm_notices *ns, bool notify_flag_applies,
                         const char *client_id);

/* client_housekeeping.c */
int bcm_register_housekeeping(bcm_ctx *c);

/* slave_sync.c: a slave copies its master's topics, offsets, groups */
int bcm_slave_sync_init(bcm_ctx *c);

/* nameserver_registration.c */
int bcm_registration_init(bcm_ctx *c, const char *namesrv_addr);
void bcm_registration_request_now(bcm_ctx *c);
void bcm_registration_shutdown(bcm_ctx *c);
void bcm_registration_free(bcm_ctx *c);
/* Shared with topic_registration.c: the filter server list of a body, and
 * a REGISTER_BROKER request carrying `b`. */
struct bcm_body;
json_t *bcm_filter_server_list(bcm_ctx *c);
rmq_cmd *bcm_register_request(bcm_ctx *c, const struct bcm_body *b);

/* topic_registration.c: every topic change is noted (tables lock held);
 * whoever created a topic then waits (lock not held) until an incremental
 * REGISTER_BROKER carrying every change noted so far was answered by every
 * NameServer (or failed, or it was left out after a failure), at most
 * min(registerBrokerTimeoutMills, 3 s). Per NameServer, one round at a time
 * carries every change noted since its previous one. */
void bcm_topic_registration_init(bcm_ctx *c);
void bcm_topic_registration_free(bcm_ctx *c);
void bcm_topic_registration_note_locked(bcm_ctx *c, const char *name);
void bcm_topic_registration_wait(bcm_ctx *c);

/* heap_return.c: after heapTrimAfterTopicDeletions deletions (counted in
 * deleted_since_trim), return freed heap to the OS; called by the
 * housekeeping timer of topics_journal_file.c, off the request path */
void bcm_heap_return_check(bcm_ctx *c);
/* After freeing a transient of `bytes` (>= 4 MiB): return the heap now. */
void bcm_heap_return_after(bcm_ctx *c, size_t bytes);

/* broker_meta_export.c: service "broker.meta" and event "broker.topic_deleted" */
int bcm_export_broker_meta(bcm_ctx *c);
void bcm_publish_topic_deleted(bcm_ctx *c, const char *topic);

/* store_queues_client.c: service "store.queues" when a store plugin offers
 * it. Acquire for one operation; the readers answer an empty queue (0, 0,
 * -1, false) without a store. */
typedef struct bcm_store {
    const rmq_store_queues_service *t; /* NULL: no store */
    void *ud;
    rmq_service_ref ref;
} bcm_store;
bool bcm_store_acquire(bcm_ctx *c, bcm_store *s);
void bcm_store_release(bcm_ctx *c, bcm_store *s);
int64_t bcm_store_max_offset(const bcm_store *s, const char *topic, int32_t queue_id);
int64_t bcm_store_min_offset(const bcm_store *s, const char *topic, int32_t queue_id);
int64_t bcm_store_time(const bcm_store *s, const char *topic, int32_t queue_id, int64_t offset);
bool bcm_store_in_disk(const bcm_store *s, const char *topic, int32_t queue_id, int64_t offset);
/* The store's settings as "key=value\n" lines (malloc'd), NULL without a
 * store (or an older one). */
char *bcm_store_config_text(const bcm_store *s);
/* The store's config_update (RMQ_ENOENT without a store or an older one). */
int bcm_store_config_update(const bcm_store *s, const char *key, const char *value);
/* The store's HA port (haListenPort or its port + 1); 0 without a store
 * (or an older one). */
int32_t bcm_store_ha_listen_port(const bcm_store *s);
/* tpsGroupGetNums(group, topic); 0 without a store (or an older one). */
double bcm_store_consume_tps(const bcm_store *s, const char *group, const char *topic);

/* admin_processors.c: TopicValidator's static set of system topics (4.9.8),
 * NULL-ended; the ones a broker adds from its settings come on top. */
extern const char *const bcm_fixed_system_topics[];

/* consume_stats_processor.c: GET_CONSUME_STATS (208) */
int bcm_register_consume_stats_processor(bcm_ctx *c);

/* group_queue_offsets.c: the committed offset of each of a topic's queues
 * 0..queues-1 for group, -1 where it has none; malloc'd (queues + 1 items,
 * so 0 queues still gives an array), NULL without memory. c->lock held. */
int64_t *bcm_group_queue_offsets(bcm_ctx *c, const char *topic, const char *group, int queues);

/* state_transfer.c */
int bcm_export_state(rmq_plugin_ctx *pctx, void **blob, size_t *len);
int bcm_import_state(rmq_plugin_ctx *pctx, uint32_t version, const void *blob, size_t len);
#define BCM_STATE_VERSION 1

/* Response helpers (processors). */
int bcm_reply(bcm_ctx *c, rmq_request *req, const rmq_cmd *cmd, int32_t code, const char *remark);
int bcm_reply_body(bcm_ctx *c, rmq_request *req, const rmq_cmd *cmd, char *json_owned);
/* As bcm_reply/bcm_reply_body (json_owned may be NULL) for the codes Java
 * answers with a response-header object: extFields present even if empty. */
int bcm_reply_header(bcm_ctx *c, rmq_request *req, const rmq_cmd *cmd, int32_t code,
                     const char *remark, char *json_owned);
bool bcm_is_oneway(bcm_ctx *c, const rmq_cmd *cmd);

/* A file's table of processors, all on one executor ("admin", ...). */
typedef struct bcm_processor_entry {
    int32_t code;
    rmq_processor_fn fn;
} bcm_processor_entry;
int bcm_register_processor_table(bcm_ctx *c, const bcm_processor_entry *table, size_t n,
                                 const char *executor);
bool bcm_ext_long(bcm_ctx *c, const rmq_cmd *cmd, const char *key, int64_t *out);

#endif
