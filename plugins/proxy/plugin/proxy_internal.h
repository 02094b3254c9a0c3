/* proxy_internal.h — what the proxy plugin's files share: the instance, the
 * gRPC status helpers and the in-process calls to the broker roles. The
 * plugin includes only SDK headers and the code generated from proto/. */
#ifndef PROXY_INTERNAL_H
#define PROXY_INTERNAL_H

#include <rmqhost/rmqhost.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apache/rocketmq/v2/service.pb-c.h"

#define PROXY_SERVICE "/apache.rocketmq.v2.MessagingService/"

/* rocketmq-apis' Code enum values the proxy answers with */
#define PX_OK APACHE__ROCKETMQ__V2__CODE__OK
#define PX_MULTIPLE_RESULTS APACHE__ROCKETMQ__V2__CODE__MULTIPLE_RESULTS
#define PX_BAD_REQUEST APACHE__ROCKETMQ__V2__CODE__BAD_REQUEST
#define PX_ILLEGAL_TOPIC APACHE__ROCKETMQ__V2__CODE__ILLEGAL_TOPIC
#define PX_ILLEGAL_MESSAGE_ID APACHE__ROCKETMQ__V2__CODE__ILLEGAL_MESSAGE_ID
#define PX_ILLEGAL_DELIVERY_TIME APACHE__ROCKETMQ__V2__CODE__ILLEGAL_DELIVERY_TIME
#define PX_ILLEGAL_PROPERTY_KEY APACHE__ROCKETMQ__V2__CODE__ILLEGAL_MESSAGE_PROPERTY_KEY
#define PX_MESSAGE_CORRUPTED APACHE__ROCKETMQ__V2__CODE__MESSAGE_CORRUPTED
#define PX_CLIENT_ID_REQUIRED APACHE__ROCKETMQ__V2__CODE__CLIENT_ID_REQUIRED
#define PX_TOPIC_NOT_FOUND APACHE__ROCKETMQ__V2__CODE__TOPIC_NOT_FOUND
#define PX_FORBIDDEN APACHE__ROCKETMQ__V2__CODE__FORBIDDEN
#define PX_BODY_TOO_LARGE APACHE__ROCKETMQ__V2__CODE__MESSAGE_BODY_TOO_LARGE
#define PX_TOO_MANY_REQUESTS APACHE__ROCKETMQ__V2__CODE__TOO_MANY_REQUESTS
#define PX_NOT_IMPLEMENTED APACHE__ROCKETMQ__V2__CODE__NOT_IMPLEMENTED
#define PX_INTERNAL_SERVER_ERROR APACHE__ROCKETMQ__V2__CODE__INTERNAL_SERVER_ERROR
#define PX_PROXY_TIMEOUT APACHE__ROCKETMQ__V2__CODE__PROXY_TIMEOUT
#define PX_MASTER_PERSISTENCE_TIMEOUT APACHE__ROCKETMQ__V2__CODE__MASTER_PERSISTENCE_TIMEOUT
#define PX_SLAVE_PERSISTENCE_TIMEOUT APACHE__ROCKETMQ__V2__CODE__SLAVE_PERSISTENCE_TIMEOUT
#define PX_HA_NOT_AVAILABLE APACHE__ROCKETMQ__V2__CODE__HA_NOT_AVAILABLE
#define PX_CONSUMER_GROUP_NOT_FOUND APACHE__ROCKETMQ__V2__CODE__CONSUMER_GROUP_NOT_FOUND

typedef struct proxy_clients proxy_clients;
typedef struct telemetry_table telemetry_table;
typedef struct proxy_route_cache proxy_route_cache;
typedef struct proxy_group_cache proxy_group_cache;
typedef struct proxy_cluster proxy_cluster;
typedef struct proxy_acl proxy_acl;

typedef struct proxy {
    const rmq_host_api *api;
    rmq_plugin_ctx *ctx;
    const char *namesrv_server; /* host-owned setting strings, valid until fini */
    const char *broker_server;
    int64_t max_message_size;
    uint32_t local_timeout_ms;
    int64_t min_poll_ms, max_poll_ms; /* ReceiveMessage long polling bounds */
    bool validate_message_type;       /* Java's enableTopicMessageTypeCheck */
    telemetry_table *tele;            /* open Telemetry streams (proxy_telemetry.c) */
    atomic_uint send_round;           /* round-robin over writable queues */
    proxy_clients *clients;           /* 5.x clients' settings and registrations */
    proxy_route_cache *routes;        /* the routes sends use (proxy_route_cache.c) */
    proxy_group_cache *groups;        /* the groups' FIFO flags (proxy_group_cache.c) */
    proxy_cluster *cluster;           /* cluster mode's NameServers and brokers; NULL: local */
    proxy_acl *acl;                   /* the guards of the handlers (proxy_acl.c) */
} proxy;

/* Register `method` of MessagingService with `fn` (ud = px) behind the ACL
 * guard of proxy_acl.c (service "acl.check") on `executor` (NULL: on the
 * I/O loop; the guard never blocks); proxy_acl_free at fini. */
int proxy_acl_register(proxy *px, const char *method, rmq_grpc_kind kind, rmq_grpc_handler_fn fn,
                       const char *executor);
void proxy_acl_free(proxy *px);

/* The hand-off between a handler that issues one asynchronous call at a
 * time (proxy_send.c, proxy_receive.c's acks) and that call's callback,
 * which runs either before the call returns (an inline processor on this
 * I/O thread) or later on another thread: proxy_step_issuing before each
 * call; after it returned, proxy_step_wait is true when the callback will
 * carry on; in the callback, proxy_step_answered is true when the issuer has
 * already returned and the callback must carry on itself. */
enum { PROXY_STEP_ISSUING, PROXY_STEP_ANSWERED, PROXY_STEP_WAITING };
static inline void proxy_step_issuing(atomic_int *phase)
{
    atomic_store(phase, PROXY_STEP_ISSUING);
}
static inline bool proxy_step_wait(atomic_int *phase)
{
    return atomic_exchange(phase, PROXY_STEP_WAITING) != PROXY_STEP_ANSWERED;
}
static inline bool proxy_step_answered(atomic_int *phase)
{
    return atomic_exchange(phase, PROXY_STEP_ANSWERED) == PROXY_STEP_WAITING;
}

/* A protobuf-c allocator over a caller's block (proxy_pb_arena.c): unpack
 * with &a->pc; everything unpacked goes with proxy_pb_arena_release (the
 * block itself stays the caller's; free_unpacked is not needed). */
typedef struct proxy_pb_arena {
    ProtobufCAllocator pc;
    uint8_t *block;
    size_t used, cap;
    struct spill *spills; /* what did not fit, malloc'd */
} proxy_pb_arena;
void proxy_pb_arena_init(proxy_pb_arena *a, uint8_t *block, size_t cap);
void proxy_pb_arena_release(proxy_pb_arena *a);

/* Answer a unary call with `msg` packed (protobuf-c). */
int proxy_reply(proxy *px, rmq_grpc_call *call, const ProtobufCMessage *msg);
/* proxy_reply, then the unpacked request freed: the tail every unary
 * handler shares (what each <type>__free_unpacked does for its type). */
int proxy_reply_free(proxy *px, rmq_grpc_call *call, const ProtobufCMessage *msg,
                     ProtobufCMessage *req);

/* Several answer messages handed to the host at once (proxy_replies.c):
 * zero-initialise, add (packed now; the first failure sticks in err and
 * is returned again), then flush, which sends them in order, finishes the
 * call with finish_status unless it is RMQ_GRPC_NO_FINISH, and frees. */
typedef struct proxy_replies {
    uint8_t *buf; /* the packed messages one after another */
    size_t used, cap;
    size_t *lens;
    size_t n, lens_cap;
    int err;
} proxy_replies;
int proxy_replies_add(proxy_replies *r, const ProtobufCMessage *msg);
/* Room for bytes more packed messages at once (one malloc instead of the
 * doublings and copies of a 32-message answer); 0 or r->err. */
int proxy_replies_reserve(proxy_replies *r, size_t bytes);
int proxy_replies_flush(proxy *px, rmq_grpc_call *call, proxy_replies *r, int finish_status);

/* A Status on the stack: code and message (a string that outlives the
 * pack, e.g. static or the caller's buffer). */
void proxy_status(Apache__Rocketmq__V2__Status *st, Apache__Rocketmq__V2__Code code,
                  const char *message);
/* Java's Code.name() for the codes the proxy uses ("OK", "TOPIC_NOT_FOUND"). */
const char *proxy_code_name(Apache__Rocketmq__V2__Code code);
/* ResponseBuilder.buildCode: a remoting response code to a gRPC Code. */
Apache__Rocketmq__V2__Code proxy_code_of_remoting(int32_t code);

/* A remoting request to a server of this process (invoke_local). 0 with
 * *resp (caller frees), or a negative rmq error. */
int proxy_local(proxy *px, const char *server, rmq_cmd *req, rmq_cmd **resp);

/* One topic's route from the NameServer role: its queue datas. */
typedef struct proxy_queue_data {
    char broker_name[128];
    int read_queue_nums, write_queue_nums, perm;
    long broker_ids[8]; /* from the brokerData of broker_name */
    int nbroker_ids;
} proxy_queue_data;

typedef struct proxy_route {
    proxy_queue_data *qd;
    size_t nqd;
    /* the topic's message type name (proxy_topic_type_name) when the route
     * came through the route cache with enableTopicMessageTypeCheck on;
     * "" otherwise */
    char msg_type[16];
} proxy_route;

/* 0; RMQ_ENOENT when the topic has no route (TOPIC_NOT_EXIST); other
 * errors with `why` set. */
int proxy_route_fetch(proxy *px, const char *topic, proxy_route *out, char *why, size_t whylen);
/* Whether the consumer group is orderly (SubscriptionGroupConfig's
 * consumeMessageOrderly, as a 5.x admin sets it): Java's proxy then assigns
 * every queue and pops with order=true (FIFO groups). From a copy of the
 * broker's group table at most 1 s old (proxy_group_cache.c). */
bool proxy_group_fifo(proxy *px, const char *group);
int proxy_group_cache_init(proxy *px);
void proxy_group_cache_fini(proxy *px);
void proxy_route_free(proxy_route *r);
/* The GET_ROUTEINFO_BY_TOPIC request of proxy_route_fetch, and its answer
 * read into `out` (same results). */
rmq_cmd *proxy_route_request(proxy *px, const char *topic);
int proxy_route_parse(proxy *px, const char *topic, const rmq_cmd *resp, proxy_route *out,
                      char *why, size_t whylen);
/* proxy_route_fetch through the route cache (proxy_route_cache.c): the same
 * answers, a route up to topicRouteServiceCacheRefreshSeconds old. */
int proxy_route_get(proxy *px, const char *topic, proxy_route *out, char *why, size_t whylen);
/* The same without blocking, from any thread (IO too): cb gets rc, the
 * route (cb owns it: proxy_route_free) and why, exactly once — at once when
 * the cache holds the route. 0, or an error when cb will not be called. */
typedef void (*proxy_route_cb)(int rc, proxy_route *route, const char *why, void *ud);
int proxy_route_get_async(proxy *px, const char *topic, proxy_route_cb cb, void *ud);
int proxy_route_cache_init(proxy *px);
void proxy_route_cache_fini(proxy *px);

/* A property name Java reserves (MessageConst.STRING_HASH_SET, the ones in
 * use): not a user property (proxy_send.c). */
bool proxy_is_system_key(const char *k);

/* Java's String.hashCode of a UTF-8 string (proxy_send.c). */
int32_t proxy_java_string_hash(const char *s);

/* The clients' registrations in the broker role's client housekeeping
 * (proxy_clients.c), as Java's ClientActivity: the Settings a client sent on
 * Telemetry, registered by each Heartbeat (producers under each publishing
 * topic, consumers under their group with their subscriptions) and
 * unregistered by NotifyClientTermination, the Telemetry stream's end or the
 * connection's close. */
int proxy_clients_init(proxy *px);
void proxy_clients_fini(proxy *px);
/* Cluster mode: every client registered again at its brokers every 30 s on
 * `executor` (no-op in local mode, where the broker role is in-process). */
int proxy_clients_start_heartbeats(proxy *px, const char *executor);
void proxy_clients_settings(proxy *px, rmq_grpc_call *call, const char *client_id,
                            const Apache__Rocketmq__V2__Settings *s);
/* Fills st (OK, or why the registration failed). */
void proxy_clients_heartbeat(proxy *px, rmq_grpc_call *call, const char *client_id,
                             const Apache__Rocketmq__V2__HeartbeatRequest *req,
                             Apache__Rocketmq__V2__Status *st, char *buf, size_t cap);
void proxy_clients_terminate(proxy *px, const char *client_id);
/* What the proxy knows of one client from its Settings. */
typedef struct proxy_client_view {
    Apache__Rocketmq__V2__ClientType type;
    char group[256];
    struct json_t *subs; /* SubscriptionData array (consumers), a reference the caller drops */
    int32_t version;     /* MQVersion ordinal from x-mq-client-version */
    int64_t since_ms;
    int64_t request_timeout_ms; /* 0 = none said */
    int32_t max_attempts;
    bool fifo;
} proxy_client_view;
/* false when the client sent no Settings, or (proxy_channel != 0) is not
 * registered under that broker-side channel. */
bool proxy_clients_view(proxy *px, const char *client_id, rmq_channel_id proxy_channel,
                        proxy_client_view *out);
/* x-mq-client-version as an MQVersion ordinal (V4_9_8 when unreadable). */
int32_t proxy_version_ordinal(const char *v);
/* The table across a hot reload (JSON text; export's is malloc'd). */
char *proxy_clients_export(proxy *px);
int proxy_clients_import(proxy *px, const char *text, size_t len);

/* The message types QueryRoute says `topic`'s queues accept (its
 * message.type attribute on the broker role; proxy_topic_type.c). */
const Apache__Rocketmq__V2__MessageType *proxy_topic_accept_types(proxy *px, const char *topic,
                                                                  size_t *n);
/* The topic's TopicMessageType name as Java's MetadataService reads it:
 * its message.type, "NORMAL" without one, "UNSPECIFIED" for no such topic. */
void proxy_topic_type_name(proxy *px, const char *topic, char *out, size_t cap);
/* Its GET_TOPIC_CONFIG request (to the broker role, or in cluster mode the
 * first broker of the topic's route), and the type name its answer gives
 * (err < 0 or resp NULL: UNSPECIFIED). */
rmq_cmd *proxy_topic_type_request(proxy *px, const char *topic);
void proxy_topic_type_parse(proxy *px, int err, const rmq_cmd *resp, char *out, size_t cap);
/* SendMessage's check of the first message's type against its topic's,
 * `expected` (proxy_topic_type_name's, as the route cache holds it; Java
 * 5's DefaultTopicMessageTypeValidator, enableTopicMessageTypeCheck):
 * true when it may be sent, else `why` holds Java's message
 * (proxy_message_type.c). */
bool proxy_message_type_ok(const char *expected, const Apache__Rocketmq__V2__Message *m,
                           const char *topic, char *why, size_t cap);

/* PullMessage and the offset RPCs (proxy_pull.c, proxy_offset.c). */
int proxy_pull_message(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
int proxy_get_offset(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
int proxy_update_offset(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
int proxy_query_offset(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
/* RecallMessage: a timer message cancelled by its handle (proxy_recall.c). */
int proxy_recall_message(rmq_grpc_call *call, const void *msg, size_t len, void *ud);

/* The consumer handlers (proxy_receive.c): POP through the store. */
int proxy_receive_message(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
int proxy_ack_message(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
int proxy_change_invisible_duration(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
int proxy_forward_to_dlq(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
/* A stored record (MessageDecoder layout) as a v2 Message, for the
 * commands the server pushes (proxy_receive.c); NULL when malformed. */
typedef struct proxy_built proxy_built;
proxy_built *proxy_message_build(const uint8_t *record, size_t len);
Apache__Rocketmq__V2__Message *proxy_message_of(proxy_built *pb);
void proxy_message_free(proxy_built *pb);

/* The POP answer (lrc < 0: none) to the ReceiveMessage client, in one
 * hand-off to the host, which ends the call with finish_status too
 * (RMQ_GRPC_NO_FINISH: left open) when every message could be built;
 * returns < 0 (the call then left open) otherwise. */
int proxy_receive_answer(proxy *px, rmq_grpc_call *call, int lrc, const rmq_cmd *resp,
                         int64_t invisible, const char *broker, int finish_status);

/* Long polling (proxy_receive_wait.c). The POP's pollTime as Java's proxy
 * computes it from long_polling_timeout and the deadline; -1 with *why
 * when the deadline leaves too little (ILLEGAL_POLLING_TIME). */
int proxy_polling_time(proxy *px, rmq_grpc_call *call,
                       const Apache__Rocketmq__V2__ReceiveMessageRequest *req, int64_t *poll_ms,
                       const char **why);
/* The code answering a refused polling time: ILLEGAL_POLLING_TIME, or
 * BAD_REQUEST for a client older than 5.0.3 (proxy_receive_wait.c). */
Apache__Rocketmq__V2__Code proxy_polling_refusal_code(proxy *px, rmq_grpc_call *call);
/* Hold the call and send the POP `pop` without waiting: the store's answer
 * finishes the call. 0, or an error with pop still the caller's. */
int proxy_receive_wait(proxy *px, rmq_grpc_call *call, rmq_cmd *pop, int64_t invisible,
                       const char *broker);

/* The handlers (proxy_route.c, proxy_send.c, proxy_client.c). */
int proxy_query_route(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
int proxy_query_assignment(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
int proxy_send_message(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
int proxy_heartbeat(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
int proxy_notify_client_termination(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
int proxy_telemetry(rmq_grpc_call *call, const void *msg, size_t len, void *ud);
int proxy_end_transaction(rmq_grpc_call *call, const void *msg, size_t len, void *ud);

/* The merged settings answered to a client's Settings (proxy_client.c). */
int proxy_answer_settings(proxy *px, rmq_grpc_call *call, Apache__Rocketmq__V2__Settings *s);

/* Telemetry streams (proxy_telemetry.c). init/fini/quiesce from the plugin's
 * own; push_to_group sends `cmd` to one producer client whose publishing
 * topics hold `group` (5.x producer group = topic) — the one whose
 * proxy_client_tag is prefer_tag when it is one of them (the client a
 * broker chose by its connection), else the next in turn — and names it in
 * client_id: 0, RMQ_ENOENT when none has a stream, or grpc_send's error. */
int proxy_telemetry_init(proxy *px);
void proxy_telemetry_quiesce(proxy *px);
void proxy_telemetry_fini(proxy *px);
int proxy_telemetry_push_to_group(proxy *px, const char *group, const char *prefer_tag,
                                  const Apache__Rocketmq__V2__TelemetryCommand *cmd,
                                  char *client_id, size_t cap);
/* The tag of a client's own connections to the brokers in cluster mode
 * ("ip:port#tag", proxy_cluster_clients.c): 16 hex digits of its id's
 * FNV-1a 64 hash (client ids can be longer than a tag may be). */
#define PROXY_CLIENT_TAG_LEN 16
void proxy_client_tag(const char *client_id, char out[PROXY_CLIENT_TAG_LEN + 1]);
int proxy_telemetry_admin(rmq_admin_call *ac, int argc, const char *const *argv, void *ud);
/* Push `cmd` (carrying `nonce`, from proxy_telemetry_nonce) on client_id's
 * stream and wait up to timeout_ms for the answer with that nonce: 0 with
 * *code (its Status) and *answer (malloc'd text: the thread stack trace, or
 * "CODE message" of a verify result); RMQ_ENOENT (no stream), RMQ_ETIMEDOUT. */
int proxy_telemetry_ask(proxy *px, const char *client_id,
                        const Apache__Rocketmq__V2__TelemetryCommand *cmd, const char *nonce,
                        uint32_t timeout_ms, int *code, char **answer);
void proxy_telemetry_nonce(proxy *px, char *out, size_t cap);

/* The broker role's relays to a 5.x client (event broker.proxy_client_call,
 * proxy_client_call.c): running info and consume-directly over Telemetry. */
int proxy_client_call_init(proxy *px);

/* Transactions (proxy_transaction.c). The transaction id a half message's
 * SendResultEntry carries, from the store's answer (offset msgId, queue
 * offset) and, in cluster mode, the name of the broker that holds the half
 * (NULL in local mode); init subscribes to the store's check-backs. */
void proxy_transaction_id(const char *broker, const char *offset_msg_id, int64_t queue_offset,
                          char *out, size_t cap);
int proxy_transaction_init(proxy *px);
/* A check-back of the half message `record` (MessageDecoder layout, its
 * real topic and queue) to one producer of `group` through its Telemetry
 * stream as a RecoverOrphanedTransactionCommand carrying tx_id (to the
 * client tagged prefer_tag when it is one; NULL: any): 0, or RMQ_ENOENT
 * when no producer of the group has a stream. Any thread. */
int proxy_transaction_push_check(proxy *px, const char *group, const char *prefer_tag,
                                 const uint8_t *record, size_t len, const char *tx_id,
                                 const char *msg_id);
/* The stored record at a commit-log offset (service store.queues): *rec
 * malloc'd. */
int proxy_message_by_offset(proxy *px, int64_t phys, void **rec, size_t *len);

#endif
