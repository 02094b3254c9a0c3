/* route_table.h — the NameServer's route state, with the semantics of Java's
 * RouteInfoManager (protocol.md §4.1, §4.5, §4.7). Not thread-safe: the
 * caller serialises every call with its writer mutex. Readers on IO threads
 * never touch this; they read the encoded routes of route_cache. */
#ifndef NAMESRV_ROUTE_TABLE_H
#define NAMESRV_ROUTE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "body_fingerprint.h"
#include "register_body.h"
#include <rmqhost/helpers.h>

#define PERM_READ 4
#define PERM_WRITE 2
#define PERM_INHERIT 1

typedef struct queue_data {
    /* in the table: the broker_topic_index entry's copy, shared by every
     * QueueData of the name */
    const char *broker_name;
    int32_t perm;
    int32_t read_queue_nums;
    int32_t write_queue_nums;
    int32_t topic_sys_flag;
    uint32_t slot; /* in the table: this topic's place in its broker's index */
} queue_data;

typedef struct topic_entry {
    char *name;
    queue_data *qds; /* sorted by broker_name, one per broker name */
    size_t nqd;
    size_t qd_cap;
    bool dirty;
} topic_entry;

typedef struct broker_addr {
    int64_t id;
    char *addr;
} broker_addr;

typedef struct broker_data {
    char *name;
    char *cluster;      /* set when the BrokerData is created, never changed (Java) */
    broker_addr *addrs; /* sorted by id */
    size_t naddr;
    size_t addr_cap;
    /* The master body whose topics the QueueData of this name equal, while
     * fp_epoch == route_table.qd_epoch (fp.form 0: unknown). */
    body_fingerprint fp;
    uint64_t fp_epoch;
    /* Split registrations (5.x: the topics cut into frames of one
     * DataVersion): the frames whose topics equal their QueueData, while
     * frames_epoch == route_table.qd_epoch, so each can take the shortcut. */
    body_fingerprint *frames;
    size_t nframes, frames_cap;
    uint64_t frames_epoch;
} broker_data;

typedef struct cluster_entry {
    char *name;
    char **brokers; /* set of broker names, sorted */
    size_t n;
    size_t cap;
} cluster_entry;

typedef struct live_info {
    char *addr;
    uint64_t last_update_ms; /* monotonic */
    data_version dv;
    uint64_t channel;
    char *ha_addr;
    int64_t timeout_ms; /* 0 = the table's default expiry */
} live_info;

typedef struct filter_entry {
    char *addr;
    char **servers;
    size_t n;
} filter_entry;

typedef struct route_table {
    rmq_str_map topics;   /* name -> topic_entry */
    rmq_str_map brokers;  /* brokerName -> broker_data */
    rmq_str_map clusters; /* clusterName -> cluster_entry */
    rmq_str_map live;     /* brokerAddr -> live_info */
    rmq_str_map filters;  /* brokerAddr -> filter_entry */
    /* brokerName -> broker_topics (broker_topic_index.h): the topics holding
     * a QueueData of the name, for every name with one (BrokerData or not) */
    rmq_str_map broker_topics;
    char **dirty; /* topics whose encoded route must be rebuilt (copies) */
    size_t ndirty;
    size_t dirty_cap;
    bool all_dirty;             /* every topic (e.g. orderMessageEnable toggled) */
    uint64_t qd_epoch;          /* bumped when QueueData change other than by a registration */
    uint64_t qd_removed;        /* QueueData removed so far: what removals freed, roughly */
    int64_t default_timeout_ms; /* brokerChannelExpiredTime */
} route_table;

void route_table_init(route_table *rt, int64_t default_timeout_ms);
void route_table_destroy(route_table *rt);

typedef struct register_request {
    const char *cluster;
    const char *broker_name;
    const char *broker_addr;
    const char *ha_addr;
    int64_t broker_id;
    uint64_t channel;
    int64_t heartbeat_timeout_ms; /* 0 = default */
    const register_body *body;    /* NULL = no body: empty table, DataVersion {0,0} */
    /* The body's fingerprint (NULL or form 0: unknown). With topics_unparsed
     * the body was not parsed because the fingerprint matched what is stored
     * for the broker: `dv` is its DataVersion and body is NULL. */
    const body_fingerprint *fp;
    bool topics_unparsed;
    const data_version *dv;
} register_request;

typedef struct register_result {
    char *master_addr; /* malloc'd; NULL unless a slave with a live master */
    char *ha_addr;
} register_result;

void register_result_free(register_result *r);

/* REGISTER_BROKER (4.9.8 algorithm plus 5.3.3's per-topic rule). 0 or -1
 * (OOM); ROUTE_NEED_BODY (nothing changed) when req->topics_unparsed but the
 * stored fingerprint no longer matches: parse the body and call again. */
#define ROUTE_NEED_BODY 1
int route_table_register(route_table *rt, const register_request *req, uint64_t now_ms,
                         register_result *res);

/* UNREGISTER_BROKER (4.9.8: by id; cleans only the named cluster). */
void route_table_unregister(route_table *rt, const char *cluster, const char *broker_name,
                            const char *broker_addr, int64_t broker_id);

/* A broker's channel closed/idled/failed. Removes every live entry registered
 * on that channel; if none, falls back to `peer_addr` only when no live entry
 * of another channel holds that address. Returns the number of brokers removed. */
size_t route_table_channel_destroyed(route_table *rt, uint64_t channel, const char *peer_addr);

/* Expiry scan: entries with last_update + timeout < now are removed; for
 * each one close_channel(ud, channel) is called first. Returns the count. */
size_t route_table_scan_expired(route_table *rt, uint64_t now_ms,
                                void (*close_channel)(void *ud, uint64_t channel), void *ud);

/* QUERY_DATA_VERSION (4.9.8): changed = no live entry or versions differ;
 * refreshes liveness only when unchanged. *stored gets the stored version
 * (has_stored false when unknown). */
void route_table_query_data_version(route_table *rt, const char *broker_addr,
                                    const data_version *dv, uint64_t now_ms, bool *changed,
                                    data_version *stored, bool *has_stored);

/* BROKER_HEARTBEAT: refresh liveness if the broker is live. */
bool route_table_heartbeat(route_table *rt, const char *broker_addr, uint64_t now_ms);

/* WIPE (perm &= ~WRITE) or ADD (perm = READ|WRITE) for every topic of the
 * broker name. Returns the number of QueueData touched. */
int route_table_set_write_perm(route_table *rt, const char *broker_name, bool wipe);

/* DELETE_TOPIC_IN_NAMESRV. cluster NULL/empty: the whole topic. */
void route_table_delete_topic(route_table *rt, const char *topic, const char *cluster);

/* REGISTER_TOPIC_IN_NAMESRV: false (ignored) when a broker name is unknown. */
bool route_table_register_topic(route_table *rt, const char *topic, const queue_data *qds,
                                size_t n);

void route_table_mark_dirty(route_table *rt, const char *topic);
/* Takes the dirty list (caller frees each name and the array); clears flags. */
char **route_table_take_dirty(route_table *rt, size_t *n, bool *all);

/* The fingerprint a master body of `broker_name` must match to skip its
 * parse (false: none usable). */
bool route_table_broker_fingerprint(const route_table *rt, const char *broker_name,
                                    body_fingerprint *out);
/* The broker registers in split frames the table knows: a body's
 * fingerprint (body_fingerprint_of_frame, `like` from above) may match any. */
bool route_table_broker_has_frames(const route_table *rt, const char *broker_name);

/* Lookups for encoders and tests (NULL when absent). */
const topic_entry *route_table_topic(const route_table *rt, const char *topic);
const broker_data *route_table_broker(const route_table *rt, const char *broker_name);
const live_info *route_table_live(const route_table *rt, const char *broker_addr);
const cluster_entry *route_table_cluster(const route_table *rt, const char *cluster);
const filter_entry *route_table_filter(const route_table *rt, const char *broker_addr);
const char *broker_data_addr(const broker_data *bd, int64_t id);

/* ---- state restore (hot reload import); each marks all routes dirty ---- */
int route_table_restore_broker_addr(route_table *rt, const char *broker_name, const char *cluster,
                                    int64_t id, const char *addr);
int route_table_restore_cluster(route_table *rt, const char *cluster, const char *broker_name);
int route_table_restore_queue(route_table *rt, const char *topic, const queue_data *qd);
int route_table_restore_live(route_table *rt, const live_info *li);
int route_table_restore_filter(route_table *rt, const char *addr, const char *const *servers,
                               size_t n);

#endif
