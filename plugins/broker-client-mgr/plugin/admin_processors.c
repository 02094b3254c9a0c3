/* admin_processors.c — owns the admin codes that read or change the client,
 * topic, subscription-group, offset and lock tables: 203, 204, 43, 17, 215,
 * 21, 200, 201, 207, 300, 41, 42 (protocol.md §5.9, §5.11). Runs on the
 * admin executor; persists after releasing the tables lock. */
#include "broker_context.h"

#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

static char *dump(json_t *root)
{
    char *s = root ? json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(root);
    return s;
}

static json_t *connection_json(bcm_ctx *c, const bcm_client *cl)
{
    const char *lang = c->api->cmd_language_name(cl->language);
    return json_pack("{sssssssi}", "clientAddr", cl->addr, "clientId", cl->client_id, "language",
                     lang ? lang : "OTHER", "version", cl->version);
}

static int process_consumer_connections(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const char *group = c->api->cmd_ext_get(cmd, "consumerGroup");
    json_t *root = NULL;
    pthread_mutex_lock(&c->lock);
    const bcm_consumer_group *g = group ? bcm_consumer_group_get(&c->consumers, group) : NULL;
    if (g && g->nclients) {
        json_t *conns = json_array(), *subs = json_object();
        for (size_t i = 0; i < g->nclients; i++)
            json_array_append_new(conns, connection_json(c, &g->clients[i]));
        for (size_t i = 0; i < g->nsubs; i++)
            json_object_set(subs, g->subs[i].topic, g->subs[i].json);
        root = json_pack("{sosssssssO}", "connectionSet", conns, "consumeFromWhere",
                         g->consume_from_where, "consumeType", g->consume_type, "messageModel",
                         g->message_model, "subscriptionTable", subs);
        json_decref(subs);
    }
    pthread_mutex_unlock(&c->lock);
    if (!root) {
        char remark[600];
        snprintf(remark, sizeof remark, "the consumer group[%s] not online",
                 group ? group : "null");
        return bcm_reply(c, req, cmd, BCM_CONSUMER_NOT_ONLINE, remark);
    }
    return bcm_reply_body(c, req, cmd, dump(root));
}

static int process_producer_connections(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const char *group = c->api->cmd_ext_get(cmd, "producerGroup");
    json_t *root = NULL;
    pthread_mutex_lock(&c->lock);
    const bcm_producer_group *g = group ? bcm_producer_group_get(&c->producers, group) : NULL;
    if (g) {
        json_t *conns = json_array();
        for (size_t i = 0; i < g->n; i++)
            json_array_append_new(conns, connection_json(c, &g->clients[i]));
        root = json_pack("{so}", "connectionSet", conns);
    }
    pthread_mutex_unlock(&c->lock);
    if (!root) {
        char remark[600];
        snprintf(remark, sizeof remark, "the producer group[%s] not exist", group ? group : "null");
        return bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR, remark);
    }
    return bcm_reply_body(c, req, cmd, dump(root));
}

static int process_all_offsets(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    pthread_mutex_lock(&c->lock);
    char *text = bcm_offset_table_encode(&c->offsets, false);
    pthread_mutex_unlock(&c->lock);
    if (!text)
        return bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR,
                         "No consumer offset in this broker");
    return bcm_reply_body(c, req, cmd, text);
}

/* TopicValidator.validateTopic (4.9.8): remark text and SYSTEM_ERROR. */
static bool topic_valid(const char *topic, char *remark, size_t len)
{
    if (!topic || !*topic) {
        snprintf(remark, len, "The specified topic is blank.");
        return false;
    }
    for (const char *p = topic; *p; p++) {
        char ch = *p;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '%' || ch == '|' || ch == '_' || ch == '-')) {
            snprintf(remark, len,
                     "The specified topic contains illegal characters, allowing only "
                     "^[%%|a-zA-Z0-9_-]+$");
            return false;
        }
    }
    if (strlen(topic) > 127) {
        snprintf(remark, len, "The specified topic is longer than topic max length.");
        return false;
    }
    return true;
}

const char *const bcm_fixed_system_topics[] = {"TBW102",
                                               "SCHEDULE_TOPIC_XXXX",
                                               "BenchmarkTest",
                                               "RMQ_SYS_TRANS_HALF_TOPIC",
                                               "RMQ_SYS_TRACE_TOPIC",
                                               "RMQ_SYS_TRANS_OP_HALF_TOPIC",
                                               "TRANS_CHECK_MAX_TIME_TOPIC",
                                               "SELF_TEST_TOPIC",
                                               "OFFSET_MOVED_EVENT",
                                               NULL};

/* TopicValidator.isSystemTopic (4.9.8): its static set, the topics the
 * broker's TopicConfigManager adds (cluster name, broker name,
 * <cluster>_REPLY_TOPIC) and the rmq_sys_ prefix. */
static bool system_topic(const bcm_ctx *c, const char *topic)
{
    for (const char *const *f = bcm_fixed_system_topics; *f; f++)
        if (strcmp(topic, *f) == 0)
            return true;
    if (strncmp(topic, "rmq_sys_", 8) == 0 || strcmp(topic, c->s.cluster_name) == 0 ||
        strcmp(topic, c->s.broker_name) == 0)
        return true;
    size_t cl = strlen(c->s.cluster_name);
    return strncmp(topic, c->s.cluster_name, cl) == 0 && strcmp(topic + cl, "_REPLY_TOPIC") == 0;
}

static int ext_int(bcm_ctx *c, const rmq_cmd *cmd, const char *key, int dflt)
{
    int64_t v;
    return bcm_ext_long(c, cmd, key, &v) ? (int)v : dflt;
}

/* AdminBrokerProcessor#validateSlave: a slave's tables are its master's
 * copies (slave_sync.c). True when answered. */
static bool refused_on_slave(bcm_ctx *c, rmq_request *req, const rmq_cmd *cmd)
{
    if (__atomic_load_n(&c->s.broker_id, __ATOMIC_RELAXED) == 0)
        return false;
    bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR,
              "Can't modify topic or subscription group from slave broker, please execute it "
              "from master broker.");
    return true;
}

static int process_create_topic(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    if (refused_on_slave(c, req, cmd))
        return RMQ_OK;
    const rmq_host_api *a = c->api;
    const char *topic = a->cmd_ext_get(cmd, "topic");
    char remark[600];
    /* CreateTopicRequestHeader.checkFields: TopicFilterType.valueOf */
    const char *ft = a->cmd_ext_get(cmd, "topicFilterType");
    if (!ft || (strcmp(ft, "SINGLE_TAG") != 0 && strcmp(ft, "MULTI_TAG") != 0)) {
        snprintf(remark, sizeof remark,
                 "org.apache.rocketmq.remoting.exception.RemotingCommandException: "
                 "topicFilterType = [%.200s] value invalid",
                 ft ? ft : "null");
        a->request_fail(req, remark);
        return RMQ_EINVAL;
    }
    if (!topic_valid(topic, remark, sizeof remark))
        return bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR, remark);
    if (system_topic(c, topic)) {
        snprintf(remark, sizeof remark, "The topic[%s] is conflict with system topic.", topic);
        return bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR, remark);
    }
    /* the queue numbers and perm are unboxed into the TopicConfig: a
     * missing (or, decoded by reflection, unparsable) one throws */
    int64_t rq, wq, perm;
    if (!bcm_ext_long(c, cmd, "readQueueNums", &rq) || rq < INT32_MIN || rq > INT32_MAX ||
        !bcm_ext_long(c, cmd, "writeQueueNums", &wq) || wq < INT32_MIN || wq > INT32_MAX ||
        !bcm_ext_long(c, cmd, "perm", &perm) || perm < INT32_MIN || perm > INT32_MAX) {
        a->request_fail(req, "java.lang.NullPointerException");
        return RMQ_EINVAL;
    }
    const char *order = a->cmd_ext_get(cmd, "order");
    json_t *cfg =
        bcm_topic_config_new(topic, (int)rq, (int)wq, (int)perm, ext_int(c, cmd, "topicSysFlag", 0),
                             order && strcasecmp(order, "true") == 0, ft);
    pthread_mutex_lock(&c->lock);
    bool is_new = !bcm_topic_table_has(&c->topics, topic);
    /* 5.x `attributes` ("+message.type=FIFO"): altered from the current ones */
    int32_t bad = bcm_topic_attributes_set(c, cfg, topic, a->cmd_ext_get(cmd, "attributes"), is_new,
                                           remark, sizeof remark);
    if (bad != 0) {
        pthread_mutex_unlock(&c->lock);
        json_decref(cfg);
        return bcm_reply(c, req, cmd, bad, remark);
    }
    int rc = bcm_topic_table_put(&c->topics, cfg, a->now_wall_ms());
    /* a sender must not be answered for it before topics.json holds it */
    if (rc == 0 && is_new)
        (void)bcm_unwritten_topics_add(&c->unwritten, topic);
    if (rc == 0)
        bcm_topics_note_locked(c, topic);
    pthread_mutex_unlock(&c->lock);
    if (rc != 0)
        return RMQ_ENOMEM;
    bcm_topics_commit(c);
    /* answered once the NameServers route it (Java registers inside) */
    bcm_topic_registration_wait(c);
    /* Java sets only the code: createResponseCommand's placeholder remark stays */
    return bcm_reply(c, req, cmd, RMQ_RESPONSE_SUCCESS, "not set any response code");
}

static int process_delete_topic(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    if (refused_on_slave(c, req, cmd))
        return RMQ_OK;
    const char *topic = c->api->cmd_ext_get(cmd, "topic");
    if (!topic) {
        c->api->request_fail(req, "java.lang.NullPointerException, DeleteTopicRequestHeader");
        return RMQ_EINVAL;
    }
    pthread_mutex_lock(&c->lock);
    bool removed = bcm_topic_table_delete(&c->topics, topic, c->api->now_wall_ms());
    if (removed) {
        bcm_topics_note_locked(c, topic);
        c->deleted_since_trim++;
    }
    pthread_mutex_unlock(&c->lock);
    if (removed)
        bcm_topics_commit(c);
    /* Java then runs cleanUnusedTopic whether or not the config existed:
     * a store drops the topic's consume queues. */
    bcm_publish_topic_deleted(c, topic);
    return bcm_reply(c, req, cmd, RMQ_RESPONSE_SUCCESS, NULL);
}

static int process_all_topics(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    pthread_mutex_lock(&c->lock);
    char *text = bcm_topic_table_encode(&c->topics);
    pthread_mutex_unlock(&c->lock);
    return bcm_reply_body(c, req, cmd, text);
}

static json_t *body_json(bcm_ctx *c, const rmq_cmd *cmd)
{
    size_t len = 0;
    const char *body = c->api->cmd_body(cmd, &len);
    return body && len ? json_loadb(body, len, 0, NULL) : NULL;
}

static int process_update_group(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    if (refused_on_slave(c, req, cmd))
        return RMQ_OK;
    json_t *cfg = body_json(c, cmd);
    if (!json_is_object(cfg) || !json_is_string(json_object_get(cfg, "groupName"))) {
        json_decref(cfg);
        c->api->request_fail(req, "java.lang.NullPointerException, SubscriptionGroupConfig");
        return RMQ_EINVAL;
    }
    pthread_mutex_lock(&c->lock);
    int rc = bcm_subscription_groups_update(&c->groups, cfg, c->api->now_wall_ms());
    pthread_mutex_unlock(&c->lock);
    json_decref(cfg);
    if (rc != 0)
        return RMQ_ENOMEM;
    bcm_persist_groups(c);
    return bcm_reply(c, req, cmd, RMQ_RESPONSE_SUCCESS, NULL);
}

static int process_all_groups(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    pthread_mutex_lock(&c->lock);
    char *text = bcm_subscription_groups_encode(&c->groups);
    pthread_mutex_unlock(&c->lock);
    return bcm_reply_body(c, req, cmd, text);
}

static int process_delete_group(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    if (refused_on_slave(c, req, cmd))
        return RMQ_OK;
    const char *group = c->api->cmd_ext_get(cmd, "groupName");
    if (!group) {
        c->api->request_fail(
            req, "java.lang.NullPointerException, DeleteSubscriptionGroupRequestHeader");
        return RMQ_EINVAL;
    }
    pthread_mutex_lock(&c->lock);
    bool removed = bcm_subscription_groups_delete(&c->groups, group, c->api->now_wall_ms());
    pthread_mutex_unlock(&c->lock);
    if (removed)
        bcm_persist_groups(c);
    return bcm_reply(c, req, cmd, RMQ_RESPONSE_SUCCESS, NULL);
}

static int process_consume_by_who(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const char *topic = c->api->cmd_ext_get(cmd, "topic");
    json_t *groups = json_array();
    pthread_mutex_lock(&c->lock);
    if (topic) {
        str_map_iter it;
        str_map_entry *e;
        str_map_iter_init(&c->consumers.groups, &it);
        while ((e = str_map_iter_next(&c->consumers.groups, &it)))
            if (bcm_consumer_group_find_sub(e->value, topic))
                json_array_append_new(groups, json_string(e->key));
        bcm_offset_groups_of_topic(&c->offsets, topic, groups);
    }
    pthread_mutex_unlock(&c->lock);
    return bcm_reply_body(c, req, cmd, dump(json_pack("{so}", "groupList", groups)));
}

static int process_lock_batch(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    json_t *body = body_json(c, cmd);
    if (!json_is_object(body)) {
        json_decref(body);
        c->api->request_fail(req, "java.lang.NullPointerException, LockBatchRequestBody");
        return RMQ_EINVAL;
    }
    pthread_mutex_lock(&c->lock);
    json_t *ok = bcm_lock_batch(
        &c->locks, json_string_value(json_object_get(body, "consumerGroup")),
        json_string_value(json_object_get(body, "clientId")), json_object_get(body, "mqSet"),
        c->api->now_monotonic_ms(), (uint64_t)c->s.lock_max_live_ms);
    pthread_mutex_unlock(&c->lock);
    json_decref(body);
    return bcm_reply_body(c, req, cmd, dump(json_pack("{so}", "lockOKMQSet", ok)));
}

static int process_unlock_batch(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    json_t *body = body_json(c, cmd);
    if (json_is_object(body)) {
        pthread_mutex_lock(&c->lock);
        bcm_unlock_batch(&c->locks, json_string_value(json_object_get(body, "consumerGroup")),
                         json_string_value(json_object_get(body, "clientId")),
                         json_object_get(body, "mqSet"));
        pthread_mutex_unlock(&c->lock);
    }
    json_decref(body);
    return bcm_reply(c, req, cmd, RMQ_RESPONSE_SUCCESS, NULL);
}

int bcm_register_admin_processors(bcm_ctx *c)
{
    static const bcm_processor_entry table[] = {
        {BCM_GET_CONSUMER_CONNECTION_LIST, process_consumer_connections},
        {BCM_GET_PRODUCER_CONNECTION_LIST, process_producer_connections},
        {BCM_GET_ALL_CONSUMER_OFFSET, process_all_offsets},
        {BCM_UPDATE_AND_CREATE_TOPIC, process_create_topic},
        {BCM_DELETE_TOPIC_IN_BROKER, process_delete_topic},
        {BCM_GET_ALL_TOPIC_CONFIG, process_all_topics},
        {BCM_GET_TOPIC_CONFIG, bcm_process_get_topic_config},
        {BCM_UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, process_update_group},
        {BCM_GET_ALL_SUBSCRIPTIONGROUP_CONFIG, process_all_groups},
        {BCM_DELETE_SUBSCRIPTIONGROUP, process_delete_group},
        {BCM_QUERY_TOPIC_CONSUME_BY_WHO, process_consume_by_who},
        {BCM_LOCK_BATCH_MQ, process_lock_batch},
        {BCM_UNLOCK_BATCH_MQ, process_unlock_batch},
    };
    return bcm_register_processor_table(c, table, sizeof table / sizeof table[0], "admin");
}
