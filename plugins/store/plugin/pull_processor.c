/* pull_processor.c — PULL_MESSAGE (11): header decode (FastCodesHeader
 * number rules), the checks of protocol-messages.md §10.8.2 in order, the
 * store lookup and its codes (§10.8.3), the commit offset carried in the
 * pull (§10.8.9) and the hand-over to long polling (§10.8.8). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker_stats.h"
#include "coarse_clock.h"
#include "header_numbers.h"
#include "ha.h"
#include "pull_request.h"
#include "pull_stats.h"
#include "store_features.h"

static int answer(store_plugin *sp, pull_req *p, int32_t code, const char *remark)
{
    if (p->oneway)
        return store_answer(sp, &p->t, NULL);
    return store_answer(sp, &p->t, sp->api->cmd_new_response(p->cmd, code, remark));
}

#define NPE "java.lang.NullPointerException"

/* Java unboxes a header number here: false when the request lacked one */
static bool has(const pull_req *p, unsigned bits)
{
    return (p->present & bits) == bits;
}

static bool is_tag_type(const char *t)
{
    return !t || !*t || strcmp(t, "TAG") == 0;
}

static void free_body(void *ud, const void *data)
{
    (void)ud;
    free((void *)data);
}

/* Compile an SQL92 (or other non-TAG) expression. 0, or RMQ_EINVAL when it
 * does not compile (or the filter plugin is absent). */
static int compile_sql(store_plugin *sp, pull_req *p, const char *type, const char *expr)
{
    const void *tbl;
    void *ud;
    rmq_service_ref ref;
    if (sp->api->service_acquire(sp->ctx, RMQ_FILTER_EXPR_SERVICE, RMQ_FILTER_EXPR_VERSION, &tbl,
                                 &ud, &ref) != 0)
        return RMQ_EINVAL;
    const rmq_filter_expr_service *f = tbl;
    char err[256];
    int rc = f->compile(ud, type, expr, &p->sql, err, sizeof err, NULL);
    sp->api->service_release(sp->ctx, ref);
    if (rc != 0)
        p->sql = NULL;
    return rc == 0 ? 0 : RMQ_EINVAL;
}

/* Steps 7f/7g: the ConsumerFilterData of (topic, group) that the filter
 * plugin built from heartbeats (Java's ConsumerFilterManager.get). 0 with
 * p->sql set (NULL: match everything), or a code with remark. A filter
 * plugin older than the consumer_filter entry: compile the heartbeat's
 * expression instead (missing when it does not compile). */
static int32_t heartbeat_filter_data(store_plugin *sp, pull_req *p, const char *type,
                                     const char *expr, char *remark, size_t cap)
{
    const void *tbl;
    void *ud;
    rmq_service_ref ref;
    int rc = RMQ_ENOENT;
    rmq_consumer_filter_data fd;
    memset(&fd, 0, sizeof fd);
    bool has_entry = false;
    if (sp->api->service_acquire(sp->ctx, RMQ_FILTER_EXPR_SERVICE, RMQ_FILTER_EXPR_VERSION, &tbl,
                                 &ud, &ref) == 0) {
        const rmq_filter_expr_service *f = tbl;
        has_entry = f->size >= offsetof(rmq_filter_expr_service, consumer_filter) +
                                   sizeof(f->consumer_filter) &&
                    f->consumer_filter;
        if (has_entry)
            rc = f->consumer_filter(ud, p->topic, p->group, &fd);
        sp->api->service_release(sp->ctx, ref);
    }
    if (!has_entry) {
        if (compile_sql(sp, p, type, expr) == 0)
            return 0;
        rc = RMQ_ENOENT;
    }
    if (rc == RMQ_ENOMEM) {
        snprintf(remark, cap, "java.lang.OutOfMemoryError");
        return RC_SYSTEM_ERROR;
    }
    if (rc != 0) {
        snprintf(remark, cap,
                 "The broker's consumer filter data is not exist!Your expression may be wrong!");
        return RC_FILTER_DATA_NOT_EXIST;
    }
    if (fd.client_version < p->sub_version) {
        free(fd.compiled);
        snprintf(remark, cap, "the consumer's consumer filter data not latest");
        return RC_FILTER_DATA_NOT_LATEST;
    }
    if (has_entry)
        p->sql = fd.compiled;
    return 0;
}

/* Step 8: enablePropertyFilter of the filter plugin, through check(). */
static int32_t check_property_filter(store_plugin *sp, const char *type, const char *expr,
                                     char *remark, size_t cap)
{
    const void *tbl;
    void *ud;
    rmq_service_ref ref;
    if (sp->api->service_acquire(sp->ctx, RMQ_FILTER_EXPR_SERVICE, RMQ_FILTER_EXPR_VERSION, &tbl,
                                 &ud, &ref) != 0) {
        snprintf(remark, cap, "The broker does not support consumer to filter message by %s", type);
        return RC_SYSTEM_ERROR;
    }
    const rmq_filter_expr_service *f = tbl;
    int32_t rc = f->check(ud, type, expr ? expr : "", remark, cap);
    sp->api->service_release(sp->ctx, ref);
    if (rc == RMQ_FILTER_CHECK_SYSTEM_ERROR)
        return RC_SYSTEM_ERROR;
    return 0; /* a parse failure is not step 8's business (Java: no filter data, match all) */
}

/* Step 7: the subscription and its filter. 0 or a code with remark. */
static int32_t build_filter(store_plugin *sp, pull_req *p, const rmq_subscription_group_config *g,
                            const char **type_out, const char **expr_out, char *remark, size_t cap,
                            rmq_consumer_sub_info *info)
{
    const char *type, *expr;
    if (p->sys_flag & PULL_FLAG_SUBSCRIPTION) {
        type = p->expression_type;
        expr = p->subscription;
        if (!is_tag_type(type) && (!expr || !*expr)) {
            snprintf(remark, cap, "parse the consumer's subscription failed");
            return RC_SUBSCRIPTION_PARSE_FAILED;
        }
        if (!is_tag_type(type) && !has(p, PULL_HAS_SUB_VERSION)) {
            /* ConsumerFilterManager.build(..., subVersion) unboxes it inside
             * the try that turns any exception into 23 */
            snprintf(remark, cap, "parse the consumer's subscription failed");
            return RC_SUBSCRIPTION_PARSE_FAILED;
        }
    } else {
        if (meta_consumer_subscription(sp, p->group, p->topic, info) != 0) {
            snprintf(remark, cap, "the consumer's group info not exist" FAQ_SUFFIX);
            return RC_SUBSCRIPTION_NOT_EXIST;
        }
        if (info->message_model == 1 && !g->consume_broadcast_enable) {
            snprintf(remark, cap, "the consumer group[%s] can not consume by broadcast way",
                     p->group);
            return RC_NO_PERMISSION;
        }
        if (!info->has_subscription) {
            snprintf(remark, cap, "the consumer's subscription not exist" FAQ_SUFFIX);
            return RC_SUBSCRIPTION_NOT_EXIST;
        }
        if (!has(p, PULL_HAS_SUB_VERSION)) {
            snprintf(remark, cap, NPE);
            return RC_SYSTEM_ERROR;
        }
        if (info->sub_version < p->sub_version) {
            snprintf(remark, cap, "the consumer's subscription not latest");
            return RC_SUBSCRIPTION_NOT_LATEST;
        }
        type = info->expression_type;
        expr = info->sub_string;
    }
    *type_out = type;
    *expr_out = expr;
    bool retry = strncmp(p->topic, "%RETRY%", 7) == 0;
    if (is_tag_type(type)) {
        p->is_sql = false;
        if (pull_filter_parse_tags(p, expr) != 0) {
            snprintf(remark, cap, "java.lang.OutOfMemoryError");
            return RC_SYSTEM_ERROR;
        }
        return 0;
    }
    p->is_sql = true;
    if (!(p->sys_flag & PULL_FLAG_SUBSCRIPTION)) {
        int32_t code = heartbeat_filter_data(sp, p, type, expr, remark, cap);
        if (code != 0)
            return code;
    }
    if (retry && !sp->set.filter_support_retry) {
        p->match_all = true; /* ExpressionForRetryMessageFilter */
        free(p->sql);
        p->sql = NULL;
        return 0;
    }
    if (p->sys_flag & PULL_FLAG_SUBSCRIPTION)
        (void)compile_sql(sp, p, type, expr); /* does not compile: no filter data, match all */
    return 0;
}

static int32_t status_code(store_get_status st, int64_t req_offset)
{
    switch (st) {
    case STORE_GET_FOUND: return RC_SUCCESS;
    case STORE_GET_NO_MATCHED_MESSAGE:
    case STORE_GET_MESSAGE_WAS_REMOVING: return RC_PULL_RETRY_IMMEDIATELY;
    case STORE_GET_OFFSET_FOUND_NULL:
    case STORE_GET_OFFSET_OVERFLOW_ONE: return RC_PULL_NOT_FOUND;
    case STORE_GET_OFFSET_OVERFLOW_BADLY:
    case STORE_GET_OFFSET_TOO_SMALL: return RC_PULL_OFFSET_MOVED;
    case STORE_GET_NO_MATCHED_LOGIC_QUEUE:
    case STORE_GET_NO_MESSAGE_IN_QUEUE:
    default: return req_offset != 0 ? RC_PULL_OFFSET_MOVED : RC_PULL_NOT_FOUND;
    }
}

int pull_execute(store_plugin *sp, pull_req *p, bool first, bool may_block)
{
    const rmq_host_api *a = sp->api;
    char remark[1024];
    rmq_broker_config bc;
    meta_broker_config_or_default(sp, &bc);
    /* 1 */
    if (!(bc.broker_permission & RMQ_PERM_READ)) {
        snprintf(remark, sizeof remark, "the broker[%s] pulling message is forbidden",
                 bc.broker_ip1);
        return answer(sp, p, RC_NO_PERMISSION, remark), PULL_ANSWERED;
    }
    /* 2, 3: a null group throws in the group table's ConcurrentHashMap */
    if (!p->group)
        return answer(sp, p, RC_SYSTEM_ERROR, NPE), PULL_ANSWERED;
    rmq_subscription_group_config g;
    int grc = meta_group_get(sp, p->group, false, &g);
    if (grc != 0 && bc.auto_create_subscription_group) {
        if (!may_block)
            return PULL_NEEDS_SLOW;
        grc = meta_group_get(sp, p->group, true, &g);
    }
    if (grc != 0) {
        snprintf(remark, sizeof remark, "subscription group [%s] does not exist, " FAQ_SUFFIX,
                 p->group);
        return answer(sp, p, RC_SUBSCRIPTION_GROUP_NOT_EXIST, remark), PULL_ANSWERED;
    }
    if (!g.consume_enable) {
        snprintf(remark, sizeof remark, "subscription group no permission, %s", p->group);
        return answer(sp, p, RC_NO_PERMISSION, remark), PULL_ANSWERED;
    }
    /* sysFlag is unboxed next, then suspendTimeoutMillis when the flag asks */
    if (!has(p, PULL_HAS_SYS_FLAG) ||
        ((p->sys_flag & PULL_FLAG_SUSPEND) && !has(p, PULL_HAS_SUSPEND)))
        return answer(sp, p, RC_SYSTEM_ERROR, NPE), PULL_ANSWERED;
    /* 4, 5, 6 (a null topic throws in the topic table) */
    if (!p->topic)
        return answer(sp, p, RC_SYSTEM_ERROR, NPE), PULL_ANSWERED;
    rmq_topic_config tc;
    if (meta_topic_get(sp, p->topic, &tc) != 0) {
        snprintf(remark, sizeof remark, "topic[%s] not exist, apply first please! " FAQ_SUFFIX,
                 p->topic);
        return answer(sp, p, RC_TOPIC_NOT_EXIST, remark), PULL_ANSWERED;
    }
    if (!(tc.perm & RMQ_PERM_READ)) {
        snprintf(remark, sizeof remark, "the topic[%s] pulling message is forbidden", p->topic);
        return answer(sp, p, RC_NO_PERMISSION, remark), PULL_ANSWERED;
    }
    if (!has(p, PULL_HAS_QUEUE_ID))
        return answer(sp, p, RC_SYSTEM_ERROR, NPE), PULL_ANSWERED;
    if (p->queue_id < 0 || p->queue_id >= tc.read_queue_nums) {
        snprintf(remark, sizeof remark,
                 "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[/%s]",
                 p->queue_id, p->topic, tc.read_queue_nums, p->peer);
        return answer(sp, p, RC_SYSTEM_ERROR, remark), PULL_ANSWERED;
    }
    /* 7, 8: a woken pull runs them again (PullMessageProcessor.executeRequestWhenWakeup
     * re-processes the request): the subscription and filter data of this
     * moment decide, not those of its first execution */
    if (!first && p->filter_ready)
        pull_filter_reset(p);
    if (!p->filter_ready) {
        rmq_consumer_sub_info *info = malloc(sizeof *info);
        if (!info)
            return answer(sp, p, RC_SYSTEM_ERROR, "java.lang.OutOfMemoryError"), PULL_ANSWERED;
        const char *type = NULL, *expr = NULL;
        int32_t code = build_filter(sp, p, &g, &type, &expr, remark, sizeof remark, info);
        if (code == 0 && !is_tag_type(type))
            code = check_property_filter(sp, type, expr, remark, sizeof remark);
        free(info);
        if (code != 0) {
            free(p->sql);
            p->sql = NULL;
            return answer(sp, p, code, remark), PULL_ANSWERED;
        }
        p->filter_ready = true;
    }
    /* 9: getMessage takes queueOffset and maxMsgNums unboxed */
    if (!has(p, PULL_HAS_QUEUE_OFFSET | PULL_HAS_MAX_MSGS))
        return answer(sp, p, RC_SYSTEM_ERROR, NPE), PULL_ANSWERED;
    pull_filter_ctx fc = {sp, p};
    store_get_result res;
    memset(&res, 0, sizeof res);
    int32_t max = p->max_msgs > 0 ? p->max_msgs : 1;
    uint64_t began_ms = coarse_now_ms(); /* ms as Java's clock; a cheap read per pull */
    if (store_get_messages(sp->engine, p->topic, p->queue_id, p->queue_offset, max,
                           p->match_all ? NULL : pull_filter_cq,
                           (p->is_sql && p->sql) ? pull_filter_record : NULL, &fc, &res) != 0)
        return answer(sp, p, RC_SYSTEM_ERROR, "store getMessage return null"), PULL_ANSWERED;
    uint64_t done_ms = coarse_now_ms();
    store_features *f = features_of(sp);
    if (f && done_ms > began_ms)
        pull_stats_lookup_ms(f->pull_stats, done_ms - began_ms);
    int32_t code = status_code(res.status, p->queue_offset);
    bool slave = ha_current_role(sp) == HA_SLAVE;
    /* suggestWhichBrokerId (protocol-ha.md §5.3) */
    int64_t suggest = !sp->set.slave_read_enable ? 0
                      : res.suggest_slave        ? g.which_broker_when_consume_slowly
                                                 : g.broker_id;
    if (slave && !sp->set.offset_check_in_slave) {
        /* DefaultMessageStore#nextOffsetCorrection keeps the requested
         * offset, and a moved offset becomes a retry (§4.2) */
        if (res.status != STORE_GET_FOUND && res.status != STORE_GET_NO_MATCHED_MESSAGE &&
            res.status != STORE_GET_MESSAGE_WAS_REMOVING)
            res.next_begin_offset = p->queue_offset;
        if (code == RC_PULL_OFFSET_MOVED) {
            code = RC_PULL_RETRY_IMMEDIATELY;
            suggest = g.broker_id;
        }
    }
    if (code == RC_PULL_OFFSET_MOVED)
        pull_offset_moved_event(sp, p, res.next_begin_offset);

    /* §10.8.9: stored whatever the status, on the first execution only;
     * never by a slave (§4.2). Java unboxes commitOffset there and throws
     * when it is missing (it would also have held the pull: here the
     * exception answers it) */
    if (first && (p->sys_flag & PULL_FLAG_COMMIT_OFFSET) && !has(p, PULL_HAS_COMMIT_OFFSET)) {
        free(res.data);
        return answer(sp, p, RC_SYSTEM_ERROR, NPE), PULL_ANSWERED;
    }
    if (first && !slave && (p->sys_flag & PULL_FLAG_COMMIT_OFFSET))
        meta_offset_commit(sp, p->group, p->topic, p->queue_id, p->commit_offset);

    if (code == RC_PULL_NOT_FOUND && first && (p->sys_flag & PULL_FLAG_SUSPEND) &&
        !atomic_load(&sp->quiescing)) {
        free(res.data);
        int64_t hold = sp->set.long_polling_enable ? p->suspend_ms : sp->set.short_polling_ms;
        p->deadline_ms = a->now_monotonic_ms() + (uint64_t)(hold > 0 ? hold : 0);
        return PULL_HOLD;
    }
    if (p->oneway) {
        free(res.data);
        store_answer(sp, &p->t, NULL);
        return PULL_ANSWERED;
    }
    rmq_cmd *r = a->cmd_new_response(p->cmd, code, store_get_status_name(res.status));
    if (!r) {
        free(res.data);
        return answer(sp, p, RC_SYSTEM_ERROR, "java.lang.OutOfMemoryError"), PULL_ANSWERED;
    }
    store_ext_i64(sp, r, "suggestWhichBrokerId", suggest);
    store_ext_i64(sp, r, "nextBeginOffset", res.next_begin_offset);
    store_ext_i64(sp, r, "minOffset", res.min_offset);
    store_ext_i64(sp, r, "maxOffset", res.max_offset);
    if (code == RC_SUCCESS && f) /* incGroupGetNums + getMessageTransferedMsgCount */
    {
        pull_stats_found(f->pull_stats, p->group, p->topic, res.msg_count, done_ms);
        broker_stats_on_get(sp, p->group, p->topic, res.msg_count, (int64_t)res.len);
    }
    if (code == RC_SUCCESS && res.data && res.len)
        a->cmd_set_body(r, res.data, res.len, free_body, NULL);
    else
        free(res.data);
    store_answer(sp, &p->t, r);
    return PULL_ANSWERED;
}

static int pull_decode(store_plugin *sp, const rmq_cmd *cmd, pull_req *p, char *remark, size_t cap)
{
    const rmq_host_api *a = sp->api;
    p->group = a->cmd_ext_get(cmd, "consumerGroup");
    p->topic = a->cmd_ext_get(cmd, "topic");
    p->subscription = a->cmd_ext_get(cmd, "subscription");
    p->expression_type = a->cmd_ext_get(cmd, "expressionType");
    /* FastCodesHeader: a malformed number throws at decode, a missing one
     * is only logged (it is null until the processor unboxes it) */
    struct {
        const char *key;
        unsigned bit;
        bool is_int;
        void *out;
    } nums[] = {
        {"queueId", PULL_HAS_QUEUE_ID, true, &p->queue_id},
        {"queueOffset", PULL_HAS_QUEUE_OFFSET, false, &p->queue_offset},
        {"maxMsgNums", PULL_HAS_MAX_MSGS, true, &p->max_msgs},
        {"sysFlag", PULL_HAS_SYS_FLAG, true, &p->sys_flag},
        {"commitOffset", PULL_HAS_COMMIT_OFFSET, false, &p->commit_offset},
        {"suspendTimeoutMillis", PULL_HAS_SUSPEND, false, &p->suspend_ms},
        {"subVersion", PULL_HAS_SUB_VERSION, false, &p->sub_version},
    };
    p->present = 0;
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        const char *v = a->cmd_ext_get(cmd, nums[i].key);
        if (!v)
            continue;
        int rc = nums[i].is_int ? java_parse_int(v, nums[i].out) : java_parse_long(v, nums[i].out);
        if (rc != 0) {
            number_format_remark(v, remark, cap);
            return -1;
        }
        p->present |= nums[i].bit;
    }
    return 0;
}

static void pull_slow(store_plugin *sp, void *arg)
{
    pull_req *p = arg;
    if (pull_execute(sp, p, true, true) == PULL_HOLD) {
        pull_holds_add(sp, p); /* already deferred */
        return;
    }
    pull_req_free(p);
}

static int pull_process(rmq_request *req, const rmq_cmd *cmd, void *ud, bool inline_io)
{
    store_plugin *sp = ud;
    char remark[512];
    pull_req local;
    memset(&local, 0, sizeof local);
    pull_req *p = &local;
    p->t.req = req;
    p->cmd = cmd;
    p->oneway = store_cmd_is_oneway(sp, cmd);
    const char *peer = sp->api->request_peer(req);
    snprintf(p->peer, sizeof p->peer, "%s", peer ? peer : "");
    if (pull_decode(sp, cmd, p, remark, sizeof remark) != 0) {
        sp->api->request_fail(req, remark);
        return RMQ_EINVAL;
    }
    int r = pull_execute(sp, p, true, !inline_io);
    if (r == PULL_ANSWERED) {
        if (p->codes != p->codes_inline)
            free(p->codes);
        free(p->sql);
        return RMQ_OK;
    }
    /* held or moved to the slow worker: the request lives on the heap */
    pull_req *h = malloc(sizeof *h);
    if (!h) {
        if (p->codes != p->codes_inline)
            free(p->codes);
        free(p->sql);
        sp->api->request_fail(req, "java.lang.OutOfMemoryError");
        return RMQ_ENOMEM;
    }
    *h = local;
    if (local.codes == local.codes_inline)
        h->codes = h->codes_inline;
    h->t.d = sp->api->defer(req);
    h->t.req = NULL;
    if (!h->t.d) {
        pull_req_free(h);
        sp->api->request_fail(req, "store is shutting down");
        return RMQ_ESHUTDOWN;
    }
    if (r == PULL_HOLD) {
        pull_holds_add(sp, h);
    } else if (slow_worker_post(sp, pull_slow, h) != 0) {
        answer(sp, h, RC_SYSTEM_ERROR, "store is shutting down");
        pull_req_free(h);
    }
    return RMQ_DEFERRED;
}

static int pull_inline(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return pull_process(req, cmd, ud, true);
}

static int pull_exec(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return pull_process(req, cmd, ud, false);
}

int pull_processor_register(store_plugin *sp)
{
    const rmq_host_api *a = sp->api;
    int rc = a->declare_executor(sp->ctx, "pull", sp->set.pull_threads, sp->set.pull_queue);
    if (rc != 0)
        return rc;
    rmq_processor_fn fn = sp->set.pull_inline ? pull_inline : pull_exec;
    const char *ex = sp->set.pull_inline ? NULL : "pull";
    /* Java registers PULL on the main server only: its VIP port answers 3 */
    if (a->abi_minor >= 4 && a->size >= offsetof(rmq_host_api, register_processor_flags) +
                                            sizeof(a->register_processor_flags))
        return a->register_processor_flags(sp->ctx, 11, fn, sp, ex, RMQ_PROC_NOT_ON_VIP);
    return a->register_processor(sp->ctx, 11, fn, sp, ex);
}
