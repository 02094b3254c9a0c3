/* pop_peek_notify.c — the POP side requests that look without taking
 * (RocketMQ 5.x RequestCode): PEEK_MESSAGE (200052) answers the messages a
 * POP would hand out next, changing nothing; NOTIFICATION (200054) answers
 * hasMsg (whether a POP of the group would find something, waiting up to
 * pollTime for it as a POP does); POLLING_INFO (200055) answers pollingNum,
 * the POPs of (topic, group, queueId) held waiting. Checks and remarks in
 * the order of Java's PeekMessageProcessor / NotificationProcessor /
 * PollingInfoProcessor. Runs on the pull executor. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "header_numbers.h"
#include "pop_service.h"
#include "store_features.h"

#define RC_INVALID_PARAMETER 29 /* ResponseCode.INVALID_PARAMETER (5.x) */
#define PEEK_MAX_MSGS 32

typedef struct look_req {
    const char *group, *topic;
    int32_t queue_id, max_msgs;
    int64_t poll_ms;
    bool order;
    const char *attempt_id; /* NOTIFICATION's attemptId (order: pop_attempt.c) */
} look_req;

/* The header fields a request of `code` needs (CFNotNull in Java). 0 or -1
 * with remark. */
static int look_parse(store_plugin *sp, const rmq_cmd *cmd, int32_t code, look_req *k, char *remark,
                      size_t cap)
{
    const rmq_host_api *a = sp->api;
    memset(k, 0, sizeof *k);
    k->group = a->cmd_ext_get(cmd, "consumerGroup");
    k->topic = a->cmd_ext_get(cmd, "topic");
    const char *qid = a->cmd_ext_get(cmd, "queueId");
    const char *max = code == POP_PEEK_MESSAGE ? a->cmd_ext_get(cmd, "maxMsgNums") : "0";
    const char *poll = code == POP_NOTIFICATION ? a->cmd_ext_get(cmd, "pollTime") : "0";
    const char *order = a->cmd_ext_get(cmd, "order");
    k->order = order && strcmp(order, "true") == 0;
    k->attempt_id = a->cmd_ext_get(cmd, "attemptId");
    const char *missing = !k->group   ? "consumerGroup"
                          : !k->topic ? "topic"
                          : !qid      ? "queueId"
                          : !max      ? "maxMsgNums"
                          : !poll     ? "pollTime"
                                      : NULL;
    if (missing) {
        snprintf(remark, cap, "the custom field <%s> is null", missing);
        return -1;
    }
    if (java_parse_int(qid, &k->queue_id) != 0 || java_parse_int(max, &k->max_msgs) != 0 ||
        java_parse_long(poll, &k->poll_ms) != 0) {
        snprintf(remark, cap, "the custom field has a malformed number");
        return -1;
    }
    if (k->queue_id < 0)
        k->queue_id = -1; /* NotificationRequestHeader.getQueueId */
    return 0;
}

/* The request's header fields (look_parse: SYSTEM_ERROR when one is
 * missing or malformed), then broker and topic permission, queue id,
 * group: 0 (with *k and *nqueues) or a response code with remark. */
static int32_t look_checks(store_plugin *sp, const rmq_cmd *cmd, int32_t code, look_req *k,
                           int32_t *nqueues, char *remark, size_t cap)
{
    if (look_parse(sp, cmd, code, k, remark, cap) != 0)
        return RC_SYSTEM_ERROR;
    rmq_broker_config bc;
    meta_broker_config_or_default(sp, &bc);
    if (!(bc.broker_permission & RMQ_PERM_READ)) {
        snprintf(remark, cap, "the broker[%s] peeking message is forbidden", bc.broker_ip1);
        return RC_NO_PERMISSION;
    }
    rmq_topic_config tc;
    if (!pop_name_ok(k->topic) || meta_topic_get(sp, k->topic, &tc) != 0) {
        snprintf(remark, cap, "topic[%s] not exist, apply first please! " FAQ_SUFFIX, k->topic);
        return RC_TOPIC_NOT_EXIST;
    }
    if (!(tc.perm & RMQ_PERM_READ)) {
        snprintf(remark, cap, "the topic[%s] peeking message is forbidden", k->topic);
        return RC_NO_PERMISSION;
    }
    if (k->queue_id >= tc.read_queue_nums) {
        snprintf(remark, cap,
                 "queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[]",
                 k->queue_id, k->topic, tc.read_queue_nums);
        return code == POP_PEEK_MESSAGE ? RC_INVALID_PARAMETER : RC_SYSTEM_ERROR;
    }
    rmq_subscription_group_config g;
    if (!pop_name_ok(k->group) ||
        meta_group_get(sp, k->group, bc.auto_create_subscription_group, &g) != 0) {
        snprintf(remark, cap, "subscription group [%s] does not exist, " FAQ_SUFFIX, k->group);
        return RC_SUBSCRIPTION_GROUP_NOT_EXIST;
    }
    if (!g.consume_enable) {
        snprintf(remark, cap, "subscription group no permission, %s", k->group);
        return RC_NO_PERMISSION;
    }
    *nqueues = tc.read_queue_nums;
    return 0;
}

/* Where the group's next POP of a queue starts (Java's getPopOffset: the
 * POP state's next offset, else the committed offset, else the minimum). */
static int64_t look_offset(store_plugin *sp, const pop_queue *q, const look_req *k, int32_t qid)
{
    if (q && q->next_offset >= 0)
        return q->next_offset;
    int64_t committed = -1;
    if (meta_offset_query(sp, k->group, k->topic, qid, &committed) == 0 && committed >= 0)
        return committed;
    return store_min_offset(sp->engine, k->topic, qid);
}

/* The state of the group's queue, if any (st->mu held): a look creates none. */
static const pop_queue *queue_of(pop_state *st, const look_req *k, int32_t qid)
{
    return pop_queue_find(st, k->group, k->topic, qid);
}

/* ---- PEEK_MESSAGE ---- */

static void free_body(void *ud, const void *data)
{
    (void)ud;
    free((void *)data);
}

/* After the queues, the group's POP retry topics as a non-order POP reads
 * them (Java's PeekMessageProcessor; it looks there first one time in
 * five): up to *room records appended to *body, their rest counted. */
static void peek_retry(store_plugin *sp, pop_service *ps, const look_req *k, int *room, char **body,
                       size_t *blen, int64_t *rest)
{
    for (int v2 = 0; v2 <= (ps->retry_v2 ? 1 : 0); v2++) {
        char topic[300];
        rmq_topic_config tc;
        if (pop_retry_topic_name(topic, sizeof topic, k->group, k->topic, v2) != 0 ||
            meta_topic_get(sp, topic, &tc) != 0)
            continue;
        look_req rk = *k;
        rk.topic = topic;
        for (int32_t qid = 0; qid < tc.read_queue_nums; qid++) {
            pthread_mutex_lock(&ps->st.mu);
            const pop_queue *q = ps->st.closed ? NULL : queue_of(&ps->st, &rk, qid);
            int64_t start = look_offset(sp, q, &rk, qid);
            pthread_mutex_unlock(&ps->st.mu);
            int64_t max = store_max_offset(sp->engine, topic, qid);
            if (max > start)
                *rest += max - start;
            store_get_result res;
            memset(&res, 0, sizeof res);
            if (*room <= 0 || store_get_messages(sp->engine, topic, qid, start, *room, NULL, NULL,
                                                 NULL, &res) != 0)
                continue;
            for (size_t at = 0; res.data && at + 4 <= res.len && *room > 0;) {
                size_t sz = stored_be32(res.data + at);
                char *nb = sz >= STORED_RECORD_MIN_SIZE && at + sz <= res.len
                               ? realloc(*body, *blen + sz)
                               : NULL;
                if (!nb)
                    break;
                *body = nb;
                memcpy(nb + *blen, res.data + at, sz);
                *blen += sz;
                at += sz;
                (*room)--;
            }
            free(res.data);
        }
    }
}

static int peek_process(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    char remark[600];
    look_req k;
    int32_t nqueues = 0;
    int32_t code = look_checks(sp, cmd, POP_PEEK_MESSAGE, &k, &nqueues, remark, sizeof remark);
    if (code != 0)
        return store_reply_code(sp, req, cmd, code, remark);
    pop_service *ps = pop_service_of(sp);
    if (!ps || !ps->opened)
        return store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "store is shutting down");
    int room = k.max_msgs > PEEK_MAX_MSGS ? PEEK_MAX_MSGS : k.max_msgs;
    int64_t starts[1024];
    int32_t first = k.queue_id >= 0 ? k.queue_id : 0;
    int32_t count = k.queue_id >= 0 ? 1 : (nqueues < 1024 ? nqueues : 1024);
    pthread_mutex_lock(&ps->st.mu);
    for (int32_t i = 0; i < count; i++) {
        const pop_queue *q = ps->st.closed ? NULL : queue_of(&ps->st, &k, first + i);
        starts[i] = look_offset(sp, q, &k, first + i);
    }
    pthread_mutex_unlock(&ps->st.mu);
    int64_t rest = 0;
    char *body = NULL;
    size_t blen = 0;
    for (int32_t i = 0; i < count; i++) {
        int32_t qid = first + i;
        int64_t max = store_max_offset(sp->engine, k.topic, qid);
        if (max > starts[i])
            rest += max - starts[i];
        if (room <= 0)
            continue;
        store_get_result res;
        memset(&res, 0, sizeof res);
        if (store_get_messages(sp->engine, k.topic, qid, starts[i], room, NULL, NULL, NULL, &res) !=
            0)
            continue;
        if ((res.status == STORE_GET_OFFSET_TOO_SMALL ||
             res.status == STORE_GET_OFFSET_OVERFLOW_BADLY) &&
            res.next_begin_offset != starts[i]) {
            /* Java reads once more from where the queue is */
            int64_t at = res.next_begin_offset;
            free(res.data);
            memset(&res, 0, sizeof res);
            if (store_get_messages(sp->engine, k.topic, qid, at, room, NULL, NULL, NULL, &res) != 0)
                continue;
        }
        size_t at = 0;
        while (res.data && at + 4 <= res.len && room > 0) {
            size_t sz = stored_be32(res.data + at);
            if (sz < STORED_RECORD_MIN_SIZE || at + sz > res.len)
                break;
            char *nb = realloc(body, blen + sz);
            if (!nb)
                break;
            body = nb;
            memcpy(body + blen, res.data + at, sz);
            blen += sz;
            at += sz;
            room--;
        }
        free(res.data);
    }
    if (!k.order)
        peek_retry(sp, ps, &k, &room, &body, &blen, &rest);
    rmq_cmd *r = a->cmd_new_response(cmd, blen ? RC_SUCCESS : RC_PULL_NOT_FOUND,
                                     blen ? "FOUND" : "NO_MESSAGE_IN_QUEUE");
    if (!r) {
        free(body);
        return RMQ_ENOMEM;
    }
    store_ext_i64(sp, r, "restNum", rest);
    if (blen)
        a->cmd_set_body(r, body, blen, free_body, NULL);
    else
        free(body);
    return store_answer(sp, &(reply_target){.req = req}, r);
}

/* ---- NOTIFICATION ---- */

/* Whether a POP of the group would find something in the queue now. */
static bool queue_has_msg(store_plugin *sp, pop_state *st, const look_req *k, int32_t qid,
                          int64_t now)
{
    int64_t start;
    pthread_mutex_lock(&st->mu);
    const pop_queue *q = st->closed ? NULL : queue_of(st, k, qid);
    if (q && k->order && q->n && pop_attempt_same(q, k->attempt_id)) {
        pthread_mutex_unlock(&st->mu);
        return true; /* the POP repeating this attempt gets the batch again */
    }
    if (q && k->order && pop_queue_order_locked(q, now)) {
        pthread_mutex_unlock(&st->mu);
        return false; /* Java: ConsumerOrderInfoManager.checkBlock */
    }
    /* an order POP's message visible again: the next order POP hands it out
     * (a non-order one comes back through the retry topic, retry_has_msg) */
    bool expired = false;
    if (q && q->n && q->next_visible <= now)
        for (size_t i = q->head; i < q->len && !expired; i++)
            expired = q->inflight[i].deliveries > 0 &&
                      ((q->inflight[i].flags & POP_INFLIGHT_ORDER) ||
                       POP_INFLIGHT_LEGACY(&q->inflight[i])) &&
                      q->inflight[i].pop_time + q->inflight[i].invisible <= now;
    start = look_offset(sp, q, k, qid);
    pthread_mutex_unlock(&st->mu);
    return expired || store_max_offset(sp->engine, k->topic, qid) > start;
}

/* A non-order POP also reads the group's POP retry topics (V1, and V2
 * with enableRetryTopicV2), as Java's NotificationProcessor looks at them. */
static bool retry_has_msg(store_plugin *sp, pop_service *ps, const look_req *k, int64_t now)
{
    for (int v2 = 0; v2 <= (ps->retry_v2 ? 1 : 0); v2++) {
        char topic[300];
        rmq_topic_config tc;
        if (pop_retry_topic_name(topic, sizeof topic, k->group, k->topic, v2) != 0 ||
            meta_topic_get(sp, topic, &tc) != 0)
            continue;
        look_req rk = *k;
        rk.topic = topic;
        for (int32_t qid = 0; qid < tc.read_queue_nums; qid++)
            if (queue_has_msg(sp, &ps->st, &rk, qid, now))
                return true;
    }
    return false;
}

rmq_cmd *pop_notification_run(store_plugin *sp, const rmq_cmd *cmd, bool may_hold, bool *hold)
{
    const rmq_host_api *a = sp->api;
    char remark[600];
    look_req k;
    int32_t nqueues = 0;
    *hold = false;
    int32_t code = look_checks(sp, cmd, POP_NOTIFICATION, &k, &nqueues, remark, sizeof remark);
    if (code != 0)
        return a->cmd_new_response(cmd, code, remark);
    pop_service *ps = pop_service_of(sp);
    if (!ps || !ps->opened)
        return a->cmd_new_response(cmd, RC_SYSTEM_ERROR, "store is shutting down");
    int64_t now = (int64_t)a->now_wall_ms();
    bool has = false;
    int32_t first = k.queue_id >= 0 ? k.queue_id : 0;
    int32_t count = k.queue_id >= 0 ? 1 : nqueues;
    for (int32_t i = 0; i < count && !has; i++)
        has = queue_has_msg(sp, &ps->st, &k, first + i, now);
    if (!has && !k.order)
        has = retry_has_msg(sp, ps, &k, now);
    if (!has && may_hold && k.poll_ms > 0 && !atomic_load(&sp->quiescing)) {
        *hold = true;
        return NULL;
    }
    /* after the wait too: SUCCESS with hasMsg false (Java answers the held
     * request through the processor again) */
    rmq_cmd *r = a->cmd_new_response(cmd, RC_SUCCESS, NULL);
    if (r) {
        a->cmd_ext_set(r, "hasMsg", has ? "true" : "false");
        a->cmd_ext_set(r, "pollingFull", "false"); /* Java's header always has it */
    }
    return r;
}

static int notification_process(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    bool hold = false;
    rmq_cmd *r = pop_notification_run(sp, cmd, true, &hold);
    if (hold) {
        int64_t poll = 0;
        (void)java_parse_long(sp->api->cmd_ext_get(cmd, "pollTime"), &poll);
        int counted = pop_poll_enter(sp, cmd);
        if (counted != 0 && counted != RMQ_EBUSY) {
            /* not counted (no memory): its release would take another
             * request's count; answered at once instead */
            sp->api->request_fail(req, "java.lang.OutOfMemoryError");
            return RMQ_ENOMEM;
        }
        if (counted != RMQ_EBUSY) {
            int rc = pop_hold_request(sp, req, poll);
            if (rc != RMQ_DEFERRED && counted == 0)
                pop_poll_leave(sp, cmd);
            return rc;
        }
        /* Java's NotificationProcessor: SUCCESS, hasMsg false, pollingFull */
        r = sp->api->cmd_new_response(cmd, RC_SUCCESS, NULL);
        if (r) {
            sp->api->cmd_ext_set(r, "hasMsg", "false");
            sp->api->cmd_ext_set(r, "pollingFull", "true");
        }
    }
    if (!r) {
        sp->api->request_fail(req, "java.lang.OutOfMemoryError");
        return RMQ_ENOMEM;
    }
    return store_answer(sp, &(reply_target){.req = req}, r);
}

/* ---- POLLING_INFO ---- */

static int polling_info_process(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    char remark[600];
    look_req k;
    int32_t nqueues = 0;
    int32_t code = look_checks(sp, cmd, POP_POLLING_INFO, &k, &nqueues, remark, sizeof remark);
    if (code != 0)
        return store_reply_code(sp, req, cmd, code, remark);
    rmq_cmd *r = a->cmd_new_response(cmd, RC_SUCCESS, NULL);
    if (!r)
        return RMQ_ENOMEM;
    store_ext_i64(sp, r, "pollingNum", (int64_t)pop_holds_count(sp, k.group, k.topic, k.queue_id));
    return store_answer(sp, &(reply_target){.req = req}, r);
}

int pop_peek_notify_register(store_plugin *sp)
{
    const rmq_host_api *a = sp->api;
    int rc = a->register_processor(sp->ctx, POP_PEEK_MESSAGE, peek_process, sp, "pull");
    if (rc == 0)
        rc = a->register_processor(sp->ctx, POP_NOTIFICATION, notification_process, sp, "pull");
    if (rc == 0)
        rc = a->register_processor(sp->ctx, POP_POLLING_INFO, polling_info_process, sp, "pull");
    return rc;
}
