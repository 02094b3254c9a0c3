/* pull_request.h — one PULL_MESSAGE (11) being processed or held by long
 * polling: its decoded header (strings point into the request, which the
 * host keeps until it is answered), its compiled filter and its answer
 * target. Shared by pull_processor.c and pull_hold.c. */
#ifndef STORE_PULL_REQUEST_H
#define STORE_PULL_REQUEST_H

#include <rmqhost/services/filter_service.h>

#include "store_plugin.h"

#define PULL_FLAG_COMMIT_OFFSET 0x1
#define PULL_FLAG_SUSPEND 0x2
#define PULL_FLAG_SUBSCRIPTION 0x4

/* Header numbers Java decodes as null when absent: each is required only
 * where PullMessageProcessor unboxes it (a NullPointerException there). */
#define PULL_HAS_QUEUE_ID 0x01u
#define PULL_HAS_QUEUE_OFFSET 0x02u
#define PULL_HAS_MAX_MSGS 0x04u
#define PULL_HAS_SYS_FLAG 0x08u
#define PULL_HAS_COMMIT_OFFSET 0x10u
#define PULL_HAS_SUSPEND 0x20u
#define PULL_HAS_SUB_VERSION 0x40u

typedef struct pull_req {
    struct pull_req *next; /* hold-table chain */
    reply_target t;
    const rmq_cmd *cmd;
    bool oneway;
    char peer[80];
    const char *group;
    const char *topic;
    const char *subscription;
    const char *expression_type;
    int32_t queue_id;
    int32_t max_msgs;
    int32_t sys_flag;
    int64_t queue_offset;
    int64_t commit_offset;
    int64_t suspend_ms;
    int64_t sub_version;
    unsigned present; /* PULL_HAS_* of the numbers the request carried */
    /* filter, built by checks 7–8 at each execution */
    bool filter_ready;
    bool match_all; /* "*", class filter, retry topic... */
    bool is_sql;    /* SQL92 (sql NULL: match everything, as Java without filter data) */
    int32_t *codes; /* tag hash codes of a TAG subscription */
    size_t ncodes;
    int32_t codes_inline[8];
    rmq_filter_expr *sql; /* compiled with filter.expr; plain free() */
    uint64_t deadline_ms; /* monotonic: when the hold expires */
} pull_req;

/* filter_ud of store_get_messages. */
typedef struct pull_filter_ctx {
    store_plugin *sp;
    pull_req *p;
} pull_filter_ctx;
bool pull_filter_cq(void *ud, int64_t tags_code);
bool pull_filter_record(void *ud, const uint8_t *rec, size_t len);
/* Drop p's filter (codes, compiled SQL) so that checks 7–8 build it anew. */
void pull_filter_reset(pull_req *p);
/* TAG expression → p->codes / p->match_all. 0 or RMQ_ENOMEM. */
int pull_filter_parse_tags(pull_req *p, const char *sub);

/* Result of one execution. */
enum { PULL_ANSWERED = 0, PULL_HOLD = 1, PULL_NEEDS_SLOW = 2 };

/* Run §10.8.2 checks, the lookup and answer; `first`: the original request
 * (may commit the offset, may be held); may_block: off IO. */
int pull_execute(store_plugin *sp, pull_req *p, bool first, bool may_block);
/* Does an arriving message (tags code, stored properties) match p's filter? */
bool pull_req_matches(store_plugin *sp, pull_req *p, int64_t tags_code, const char *props,
                      size_t props_len);
void pull_req_free(pull_req *p);

/* Store the OFFSET_MOVED_EVENT message of a pull answered 21 (§10.8.7). */
void pull_offset_moved_event(store_plugin *sp, const pull_req *p, int64_t offset_new);

/* Insert into the hold table (long polling). */
void pull_holds_add(store_plugin *sp, pull_req *p);

#endif
