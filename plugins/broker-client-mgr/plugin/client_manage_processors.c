/* client_manage_processors.c — owns HEART_BEAT (34), UNREGISTER_CLIENT (35)
 * and CHECK_CLIENT_CONFIG (46) (protocol.md §5.3–§5.5, §6.7). Table rules
 * live in core/; this file sequences them, persists and notifies after
 * releasing the tables lock. Runs on the heartbeat/client executors. */
#include "broker_context.h"

#include <rmqhost/services/filter_service.h>

#include "heartbeat_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int heartbeat_consumer(bcm_ctx *c, const bcm_consumer_data *cd, const bcm_client *info,
                              bool *groups_dirty, bool *topics_dirty)
{
    uint64_t now = c->api->now_wall_ms();
    bool notify = true, created = false, topic_created = false;
    bcm_notices ns = {0};
    pthread_mutex_lock(&c->lock);
    json_t *sgc = bcm_subscription_groups_find(&c->groups, cd->group,
                                               c->s.auto_create_subscription_group, now, &created);
    if (sgc) {
        notify = !json_is_false(json_object_get(sgc, "notifyConsumerIdsChangedEnable"));
        char retry[512];
        snprintf(retry, sizeof retry, "%%RETRY%%%s", cd->group);
        json_t *rq = json_object_get(sgc, "retryQueueNums");
        int queues = json_is_integer(rq) ? (int)json_integer_value(rq) : 1;
        topic_created = bcm_topic_table_create_if_absent(&c->topics, retry, queues, 6,
                                                         cd->unit_mode ? 2 : 0, now);
        /* its senders wait for the persist below (see wait_topic_written) */
        if (topic_created) {
            (void)bcm_unwritten_topics_add(&c->unwritten, retry);
            bcm_topics_note_locked(c, retry);
        }
    }
    int r = bcm_consumer_register(
        &c->consumers, cd->group, info, cd->consume_type ? cd->consume_type : "CONSUME_PASSIVELY",
        cd->message_model ? cd->message_model : "CLUSTERING",
        cd->consume_from_where ? cd->consume_from_where : "CONSUME_FROM_LAST_OFFSET", cd->subs,
        cd->nsubs);
    if (r > 0)
        bcm_consumer_group_notice(&c->consumers, cd->group, true, &ns);
    pthread_mutex_unlock(&c->lock);
    if (r < 0)
        return RMQ_ENOMEM;
    *groups_dirty |= created;
    *topics_dirty |= topic_created;
    for (size_t i = 0; i < ns.n; i++) {
        if (notify && c->s.notify_consumer_ids_changed_enable)
            bcm_notify_group(c, ns.v[i].group, ns.v[i].channels, ns.v[i].nchannels);
        bcm_publish_group_event(c, RMQ_CONSUMER_GROUP_CHANGE, ns.v[i].group, info->client_id,
                                ns.v[i].subs, ns.v[i].nsubs);
    }
    bcm_notices_free(&ns);
    bcm_publish_group_event(c, RMQ_CONSUMER_GROUP_REGISTER, cd->group, info->client_id, cd->subs,
                            cd->nsubs);
    return 0;
}

/* The client's identity: its connection, or — for an in-process request of
 * the gRPC proxy (channel 0, peer "local", which no connection has) — the
 * channel and address the proxy names for its 5.x client, as Java's proxy
 * registers a GrpcClientChannel per client in local mode. */
static rmq_channel_id client_channel(bcm_ctx *c, rmq_request *req, const rmq_cmd *cmd, char *addr,
                                     size_t cap, int32_t *language, int32_t *version)
{
    const rmq_host_api *a = c->api;
    rmq_channel_id ch = a->request_channel(req);
    const char *peer = a->request_peer(req);
    snprintf(addr, cap, "%s", peer ? peer : "");
    if (ch == 0 && peer && strcmp(peer, "local") == 0) {
        const char *pc = a->cmd_ext_get(cmd, "proxyClientChannel");
        const char *pa = a->cmd_ext_get(cmd, "proxyClientAddr");
        if (pc)
            ch = (rmq_channel_id)strtoull(pc, NULL, 10);
        if (pa)
            snprintf(addr, cap, "%s", pa);
        /* the 5.x client's own (its gRPC metadata), not the request's */
        const char *pl = a->cmd_ext_get(cmd, "proxyClientLanguage");
        const char *pv = a->cmd_ext_get(cmd, "proxyClientVersion");
        if (pl && language)
            *language = (int32_t)strtol(pl, NULL, 10);
        if (pv && version)
            *version = (int32_t)strtol(pv, NULL, 10);
    }
    return ch;
}

static int process_heartbeat(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const rmq_host_api *a = c->api;
    size_t len = 0;
    const char *body = a->cmd_body(cmd, &len);
    bcm_heartbeat hb;
    char err[256];
    if (bcm_heartbeat_parse(body, len, &hb, err, sizeof err) != 0) {
        a->request_fail(req, err);
        return RMQ_EINVAL;
    }
    bcm_client info = {.client_id = (char *)(hb.client_id ? hb.client_id : ""),
                       .language = a->cmd_language(cmd),
                       .version = a->cmd_version(cmd),
                       .last_update_ms = a->now_monotonic_ms()};
    info.channel =
        client_channel(c, req, cmd, info.addr, sizeof info.addr, &info.language, &info.version);
    bool groups_dirty = false, topics_dirty = false;
    int rc = 0;
    for (size_t i = 0; i < hb.nconsumers && rc == 0; i++)
        rc = heartbeat_consumer(c, &hb.consumers[i], &info, &groups_dirty, &topics_dirty);
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < hb.nproducers && rc == 0; i++)
        if (bcm_producer_register(&c->producers, hb.producer_groups[i], &info) != 0)
            rc = RMQ_ENOMEM;
    pthread_mutex_unlock(&c->lock);
    bcm_heartbeat_free(&hb);
    if (groups_dirty)
        bcm_persist_groups(c);
    if (topics_dirty) {
        bcm_topics_commit(c);
        bcm_topic_registration_wait(c);
    }
    if (rc != 0)
        return rc;
    return bcm_reply(c, req, cmd, RMQ_RESPONSE_SUCCESS, NULL);
}

static const char *nonempty(const char *s)
{
    return (s && *s) ? s : NULL;
}

static int process_unregister_client(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const rmq_host_api *a = c->api;
    char addr[64];
    rmq_channel_id ch = client_channel(c, req, cmd, addr, sizeof addr, NULL, NULL);
    const char *client_id = a->cmd_ext_get(cmd, "clientID");
    const char *pg = nonempty(a->cmd_ext_get(cmd, "producerGroup"));
    const char *cg = nonempty(a->cmd_ext_get(cmd, "consumerGroup"));
    bcm_notices ns = {0};
    pthread_mutex_lock(&c->lock);
    if (pg)
        bcm_producer_unregister(&c->producers, pg, ch, client_id);
    int rc = cg ? bcm_consumer_unregister(&c->consumers, cg, ch, &ns) : 0;
    pthread_mutex_unlock(&c->lock);
    bcm_deliver_notices(c, &ns, true, client_id);
    bcm_notices_free(&ns);
    if (rc != 0)
        return RMQ_ENOMEM;
    return bcm_reply_header(c, req, cmd, RMQ_RESPONSE_SUCCESS, NULL, NULL);
}

/* CHECK_CLIENT_CONFIG: the filter plugin's expression service decides; when
 * it is not loaded this broker has property filtering disabled (§6.7 step 3). */
static int process_check_client_config(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const rmq_host_api *a = c->api;
    size_t len = 0;
    const char *body = a->cmd_body(cmd, &len);
    if (!body || !len) {
        a->request_fail(req, "java.lang.NullPointerException, CheckClientRequestBody is null");
        return RMQ_EINVAL;
    }
    json_error_t je;
    json_t *root = json_loadb(body, len, 0, &je);
    if (!json_is_object(root)) {
        json_decref(root);
        a->request_fail(req, "com.alibaba.fastjson.JSONException: bad CheckClientRequestBody");
        return RMQ_EINVAL;
    }
    json_t *sd = json_object_get(root, "subscriptionData");
    const char *type = json_string_value(json_object_get(sd, "expressionType"));
    const char *expr = json_string_value(json_object_get(sd, "subString"));
    int32_t code = RMQ_RESPONSE_SUCCESS;
    char remark[512] = "";
    if (json_is_object(sd) && type && *type && strcmp(type, "TAG") != 0) {
        const void *table = NULL;
        void *tud = NULL;
        rmq_service_ref ref = 0;
        if (a->service_acquire(c->pctx, RMQ_FILTER_EXPR_SERVICE, RMQ_FILTER_EXPR_VERSION, &table,
                               &tud, &ref) == 0) {
            const rmq_filter_expr_service *svc = table;
            code = svc->check(tud, type, expr ? expr : "", remark, sizeof remark);
            a->service_release(c->pctx, ref);
        } else {
            code = RMQ_RESPONSE_SYSTEM_ERROR;
            snprintf(remark, sizeof remark,
                     "The broker does not support consumer to filter message by %s", type);
        }
    }
    json_decref(root);
    return bcm_reply(c, req, cmd, code, code == RMQ_RESPONSE_SUCCESS ? NULL : remark);
}

int bcm_register_client_processors(bcm_ctx *c)
{
    int rc = c->api->register_processor(c->pctx, BCM_HEART_BEAT, process_heartbeat, c, "heartbeat");
    if (rc == 0)
        rc = c->api->register_processor(c->pctx, BCM_UNREGISTER_CLIENT, process_unregister_client,
                                        c, "client");
    if (rc == 0)
        rc = c->api->register_processor(c->pctx, BCM_CHECK_CLIENT_CONFIG,
                                        process_check_client_config, c, "client");
    return rc;
}
