/* storage_stub_processors.c — owns the answers of a broker without a message
 * store: PULL_MESSAGE held then PULL_NOT_FOUND, offset queries answering 0,
 * sends refused with SYSTEM_ERROR. Bound when answerStorageCodes is true, as
 * FALLBACK bindings (SDK 1.4): a store plugin registering these codes on the
 * same server takes them over whatever the load order. Never blocks: held
 * pulls are answered by a timer. */
#include "broker_context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PULL_SUSPEND_FLAG 0x2 /* PullSysFlag FLAG_SUSPEND */

static const int32_t send_codes[] = {10 /* SEND_MESSAGE */,        310 /* SEND_MESSAGE_V2 */,
                                     320 /* SEND_BATCH_MESSAGE */, 36 /* CONSUMER_SEND_MSG_BACK */,
                                     324 /* SEND_REPLY_MESSAGE */, 325 /* SEND_REPLY_MESSAGE_V2 */};

static rmq_cmd *pull_not_found(bcm_ctx *c, const rmq_cmd *cmd, int64_t queue_offset)
{
    rmq_cmd *resp = c->api->cmd_new_response(cmd, BCM_PULL_NOT_FOUND, "OFFSET_OVERFLOW_ONE");
    if (!resp)
        return NULL;
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)queue_offset);
    /* offsets echoed: the client pulls the same offset again, politely */
    c->api->cmd_ext_set(resp, "nextBeginOffset", num);
    c->api->cmd_ext_set(resp, "maxOffset", num);
    c->api->cmd_ext_set(resp, "minOffset", "0");
    c->api->cmd_ext_set(resp, "suggestWhichBrokerId", "0");
    return resp;
}

static int process_pull(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    int64_t offset = 0, sys_flag = 0, suspend = 0;
    bcm_ext_long(c, cmd, "queueOffset", &offset);
    bcm_ext_long(c, cmd, "sysFlag", &sys_flag);
    bcm_ext_long(c, cmd, "suspendTimeoutMillis", &suspend);
    if (bcm_is_oneway(c, cmd))
        return RMQ_OK;
    if ((sys_flag & PULL_SUSPEND_FLAG) && suspend > 0) {
        if (suspend > c->s.pull_suspend_max_ms)
            suspend = c->s.pull_suspend_max_ms;
        pthread_mutex_lock(&c->hold_lock);
        bool room = !c->holds_closed && c->nholds < (size_t)c->s.pull_hold_max_requests;
        if (room && c->nholds == c->hold_cap) {
            size_t nc = c->hold_cap ? c->hold_cap * 2 : 64;
            bcm_pull_hold *v = realloc(c->holds, nc * sizeof *v);
            if (v) {
                c->holds = v;
                c->hold_cap = nc;
            } else {
                room = false;
            }
        }
        if (room) {
            rmq_deferred *d = c->api->defer(req);
            if (d) {
                c->holds[c->nholds++] =
                    (bcm_pull_hold){d, c->api->now_monotonic_ms() + (uint64_t)suspend, offset};
                pthread_mutex_unlock(&c->hold_lock);
                return RMQ_DEFERRED;
            }
        }
        pthread_mutex_unlock(&c->hold_lock);
    }
    rmq_cmd *resp = pull_not_found(c, cmd, offset);
    if (!resp)
        return RMQ_ENOMEM;
    return c->api->reply(req, resp);
}

void bcm_pull_holds_flush(bcm_ctx *c, bool all)
{
    uint64_t now = c->api->now_monotonic_ms();
    bcm_pull_hold *due = NULL;
    size_t ndue = 0;
    pthread_mutex_lock(&c->hold_lock);
    for (size_t i = 0; i < c->nholds;) {
        if (all || c->holds[i].deadline_ms <= now) {
            bcm_pull_hold *v = realloc(due, (ndue + 1) * sizeof *v);
            if (!v)
                break;
            due = v;
            due[ndue++] = c->holds[i];
            c->holds[i] = c->holds[--c->nholds];
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&c->hold_lock);
    for (size_t i = 0; i < ndue; i++) {
        rmq_cmd *resp = pull_not_found(c, c->api->deferred_cmd(due[i].d), due[i].queue_offset);
        c->api->deferred_reply(due[i].d, resp);
    }
    free(due);
}

static void hold_timer(void *ud)
{
    bcm_pull_holds_flush(ud, false);
}

void bcm_pull_holds_close(bcm_ctx *c)
{
    pthread_mutex_lock(&c->hold_lock);
    c->holds_closed = true;
    pthread_mutex_unlock(&c->hold_lock);
    bcm_pull_holds_flush(c, true);
}

static int process_offset_zero(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    if (bcm_is_oneway(c, cmd))
        return RMQ_OK;
    rmq_cmd *resp = c->api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (!resp)
        return RMQ_ENOMEM;
    c->api->cmd_ext_set(resp, "offset", "0");
    return c->api->reply(req, resp);
}

static int process_send(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return bcm_reply(ud, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR,
                     "this broker stores no messages: no store plugin is loaded "
                     "(broker-client-mgr answerStorageCodes=true)");
}

/* A host older than SDK 1.4 has no fallback bindings: the stubs are then
 * plain ones and answerStorageCodes=false is the way to make room. */
static int register_stub(bcm_ctx *c, int32_t code, rmq_processor_fn fn, uint32_t flags)
{
    const rmq_host_api *a = c->api;
    if (a->abi_minor >= 4 && a->register_processor_flags)
        return a->register_processor_flags(c->pctx, code, fn, c, NULL, flags | RMQ_PROC_FALLBACK);
    return a->register_processor(c->pctx, code, fn, c, NULL);
}

int bcm_register_storage_stub_processors(bcm_ctx *c)
{
    if (!c->s.answer_storage_codes)
        return 0;
    const rmq_host_api *a = c->api;
    /* Java serves PULL on the main port only (protocol-messages.md §10.1). */
    int rc = register_stub(c, BCM_PULL_MESSAGE, process_pull, RMQ_PROC_NOT_ON_VIP);
    if (rc == 0)
        rc = register_stub(c, BCM_SEARCH_OFFSET_BY_TIMESTAMP, process_offset_zero, 0);
    if (rc == 0)
        rc = register_stub(c, BCM_GET_MAX_OFFSET, process_offset_zero, 0);
    if (rc == 0)
        rc = register_stub(c, BCM_GET_MIN_OFFSET, process_offset_zero, 0);
    for (size_t i = 0; rc == 0 && i < sizeof send_codes / sizeof send_codes[0]; i++)
        rc = register_stub(c, send_codes[i], process_send, 0);
    rmq_timer_id id;
    if (rc == 0)
        rc = a->add_timer(c->pctx, (uint64_t)c->s.pull_hold_check_ms,
                          (uint64_t)c->s.pull_hold_check_ms, hold_timer, c, NULL, &id);
    return rc;
}
