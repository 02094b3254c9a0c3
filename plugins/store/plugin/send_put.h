/* send_put.h — the send path's internal API (owned by store-protocol), for
 * the files that route special messages (retry/DLQ, delay, transactions,
 * replies): the decoded send header, the message being built, the hooks the
 * send path calls, and helpers to store a message and build the answer. */
#ifndef STORE_SEND_PUT_H
#define STORE_SEND_PUT_H

#include "message_properties.h"
#include "store_plugin.h"

/* SendMessageRequestHeader (10/324 by name, 310/320/325 by letter). Strings
 * point into the request (valid until it is answered). */
typedef struct send_header {
    int32_t code;
    const char *producer_group;
    const char *topic;
    const char *default_topic;
    int32_t default_topic_queue_nums;
    int32_t queue_id;
    int32_t sys_flag;
    int64_t born_ts;
    int32_t flag;
    const char *properties; /* NULL = none */
    int32_t reconsume_times;
    bool unit_mode;
    bool batch;
    bool has_max_reconsume_times;
    int32_t max_reconsume_times;
    int32_t version;  /* request version (maxReconsumeTimes applies from 121) */
    unsigned present; /* SEND_HAS_* of the numbers the request carried */
} send_header;

/* Numbers of the header that may be missing (Java decodes them as null) */
#define SEND_HAS_DEFQ 0x01u
#define SEND_HAS_QUEUE_ID 0x02u
#define SEND_HAS_SYS_FLAG 0x04u
#define SEND_HAS_BORN_TS 0x08u
#define SEND_HAS_FLAG 0x10u
#define SEND_HAS_RECONSUME 0x20u
#define SEND_HAS_MAX_RECONSUME 0x40u

/* 0, or -1 with the SYSTEM_ERROR remark of a failed decode in remark (a
 * malformed number of a V2 header); missing numbers are not an error here. */
int send_header_decode(store_plugin *sp, const rmq_cmd *cmd, send_header *h, char *remark,
                       size_t cap);
/* Where Java unboxes a header number: true when every one of `bits` was
 * sent, else false with the NullPointerException remark. */
bool send_header_need(const send_header *h, unsigned bits, char *remark, size_t cap);

/* One single message on its way to the store; hooks may rewrite it. */
typedef struct send_message {
    char topic[256]; /* where it is stored */
    int32_t queue_id;
    int32_t resp_queue_id; /* queueId of the answer (the requested one, §10.5.4) */
    int32_t sys_flag;
    int32_t reconsume_times;
    int64_t prepared_tx_offset;
    props_view props; /* the header's properties, parsed */
    /* A hook that re-serialises the properties (delay, half messages) puts
     * the whole stored string here (malloc'd; freed by the send path) and
     * the tags code it implies. */
    char *props_override;
    size_t props_override_len;
    bool has_tags_code;
    int64_t tags_code;
} send_message;

/* Hooks into the send path. Each returns 0 to go on, a response code > 0
 * with remark set to refuse the send, SEND_CHECK_EXCEPTION with the remark of
 * the exception Java throws there (answered without ext fields), or another
 * value < 0 (SYSTEM_ERROR UNKNOWN_ERROR). Called on a
 * thread that may block (EXEC or the slow worker). */
struct send_hooks {
    /* §10.5.1 step 8 and §10.5.6: a single message to %RETRY%<group>. */
    int (*retry_send)(store_plugin *sp, const send_header *h, send_message *m, char *remark,
                      size_t cap);
    /* After step 9 (§10.6 DELAY, §10.10 TRAN_MSG): may redirect to the
     * schedule / half topic. */
    int (*special_send)(store_plugin *sp, const send_header *h, send_message *m, char *remark,
                        size_t cap);
};

/* msgCheck (§10.5.1 steps 2–6, shared by sends and replies): 0 with *tc
 * the topic (auto-created when absent), a response code > 0 with remark,
 * SEND_CHECK_EXCEPTION (remark: the exception Java throws, answered without
 * the send answer's ext fields) or SEND_CHECK_NEEDS_SLOW (creating the topic
 * may block and may_block is false). peer: the producer's address. */
#define SEND_CHECK_EXCEPTION (-2)
#define SEND_CHECK_NEEDS_SLOW (-3)
int32_t send_msg_check(store_plugin *sp, const send_header *h, const rmq_broker_config *bc,
                       const char *peer, bool may_block, rmq_topic_config *tc, char *remark,
                       size_t cap);

/* STOREHOST of this broker (brokerIP1:listenPort from broker.meta; the
 * server's bound address when broker.meta is absent). */
void send_store_host(store_plugin *sp, const rmq_broker_config *bc, store_addr *out);

/* Append one message (engine store_put); the hooks' way to store. */
int store_send_put(store_plugin *sp, const store_msg *m, store_put_result *out);
/* A due delayed or timer message stored again under its real topic: false
 * when the store cannot take it now (not available, no mapped file: retried
 * later), true when stored or refused for good (dropped); a failure is
 * logged as "<what> message to <topic> could not be stored". */
bool store_put_due(store_plugin *sp, const store_msg *m, const char *what, const char *topic);

/* Response code and remark for a put status (§10.5.1 steps 10–14). */
int32_t send_put_status_code(store_plugin *sp, store_put_status st, char *remark, size_t cap);

/* A send answer with MSG_REGION and TRACE_ON (every send answer has them). */
rmq_cmd *send_response_new(store_plugin *sp, const rmq_cmd *req, int32_t code, const char *remark);

#endif
