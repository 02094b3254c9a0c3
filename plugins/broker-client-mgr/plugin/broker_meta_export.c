/* broker_meta_export.c — owns the service "broker.meta" (the TopicConfigManager,
 * SubscriptionGroupManager, ConsumerManager, ConsumerOffsetManager and
 * ProducerManager views a message store needs) and the publication of the
 * event "broker.topic_deleted". Entries run on IO threads and on other
 * plugins' executors: each takes the tables lock for a copy only, and files
 * are written after the lock is released. */
#include "broker_context.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TBW102 "TBW102"
#define TOPIC_WRITE_WAIT_S 10

static void topic_from_fields(const bcm_topic_fields *f, rmq_topic_config *out)
{
    memset(out, 0, sizeof *out);
    memcpy(out->topic_name, f->topic_name, sizeof out->topic_name);
    out->read_queue_nums = f->read_queue_nums;
    out->write_queue_nums = f->write_queue_nums;
    out->perm = f->perm;
    out->topic_filter_type = f->topic_filter_type;
    out->topic_sys_flag = f->topic_sys_flag;
    out->order = f->order;
}

static void topic_from_json(const json_t *j, rmq_topic_config *out)
{
    bcm_topic_fields f;
    bcm_topic_fields_from_json(j, &f);
    topic_from_fields(&f, out);
}

static void group_from_json(const json_t *j, rmq_subscription_group_config *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->group_name, sizeof out->group_name, "%s",
             json_string_value(json_object_get(j, "groupName")));
    out->consume_enable = json_is_true(json_object_get(j, "consumeEnable"));
    out->consume_from_min_enable = json_is_true(json_object_get(j, "consumeFromMinEnable"));
    out->consume_broadcast_enable = json_is_true(json_object_get(j, "consumeBroadcastEnable"));
    out->retry_queue_nums = (int32_t)json_integer_value(json_object_get(j, "retryQueueNums"));
    out->retry_max_times = (int32_t)json_integer_value(json_object_get(j, "retryMaxTimes"));
    out->broker_id = json_integer_value(json_object_get(j, "brokerId"));
    out->which_broker_when_consume_slowly =
        json_integer_value(json_object_get(j, "whichBrokerWhenConsumeSlowly"));
    out->notify_consumer_ids_changed_enable =
        json_is_true(json_object_get(j, "notifyConsumerIdsChangedEnable"));
}

static int meta_broker_config(void *ud, rmq_broker_config *out)
{
    bcm_ctx *c = ud;
    memset(out, 0, sizeof *out);
    snprintf(out->cluster_name, sizeof out->cluster_name, "%s", c->s.cluster_name);
    snprintf(out->broker_name, sizeof out->broker_name, "%s", c->s.broker_name);
    out->broker_id = __atomic_load_n(&c->s.broker_id, __ATOMIC_RELAXED);
    snprintf(out->broker_ip1, sizeof out->broker_ip1, "%s", c->s.advertised_ip);
    out->listen_port = c->s.listen_port;
    out->broker_permission = c->s.broker_permission;
    out->auto_create_topic_enable = c->s.auto_create_topic_enable;
    out->auto_create_subscription_group = c->s.auto_create_subscription_group;
    return 0;
}

/* With the tables lock held: a topic another thread has just created is not
 * answered before its journal record (or topics.json) is durable. Otherwise a second sender
 * would store and acknowledge a message while the creator is still in
 * fsync, and a kill -9 then would keep the message and lose its topic (the
 * next PULL answers TOPIC_NOT_EXIST). Java persists inside its creation
 * but reads the table without that lock, so it has this window too. Costs
 * one count test when nothing is pending. Returns whether it waited: then
 * the caller waits for the topic's registration too (bcm_topic_registration_wait,
 * after the lock is released), as its creator does. */
static bool wait_topic_written(bcm_ctx *c, const char *topic)
{
    if (!bcm_unwritten_topics_has(&c->unwritten, topic))
        return false;
    /* Bounded: every creator writes right after creating, but a disk that
     * hangs (or a creator's thread that calls back in here before its
     * write) must cost a late answer, not a stuck thread. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += TOPIC_WRITE_WAIT_S;
    int rc = 0;
    while (rc != ETIMEDOUT && bcm_unwritten_topics_has(&c->unwritten, topic))
        rc = pthread_cond_timedwait(&c->topics_written, &c->lock, &until);
    if (rc == ETIMEDOUT && bcm_unwritten_topics_has(&c->unwritten, topic))
        c->api->log(c->pctx, RMQ_LOG_WARN,
                    "topic %s: topics.json not written after %d s; answering its send anyway",
                    topic, TOPIC_WRITE_WAIT_S);
    return true;
}

static int meta_topic_get(void *ud, const char *topic, rmq_topic_config *out)
{
    bcm_ctx *c = ud;
    if (!topic)
        return RMQ_EINVAL;
    /* Every SEND asks: the table keeps configs as structs, so this is a
     * lookup and a copy. */
    bcm_topic_fields f;
    pthread_mutex_lock(&c->lock);
    bool fresh = wait_topic_written(c, topic);
    bool found = bcm_topic_table_get(&c->topics, topic, &f);
    pthread_mutex_unlock(&c->lock);
    if (fresh)
        bcm_topic_registration_wait(c);
    if (!found)
        return RMQ_ENOENT;
    topic_from_fields(&f, out);
    return 0;
}

/* A topic was created: the journal and the NameServers learn it (Java:
 * persist, then registerBrokerAll). The journal write (shared with every
 * creation meanwhile) is durable before the creator's send is stored and
 * answered, and releases the other senders waiting in wait_topic_written;
 * the incremental registration (shared likewise) is answered by the
 * NameServers before the send is, so its client finds the route. */
static void topic_created(bcm_ctx *c, const char *topic)
{
    c->api->log(c->pctx, RMQ_LOG_INFO, "topic %s created for a send", topic);
    bcm_topics_commit(c);
    bcm_topic_registration_wait(c);
}

static int meta_topic_create_in_send(void *ud, const char *topic, const char *default_topic,
                                     int32_t default_queue_nums, int32_t topic_sys_flag,
                                     rmq_topic_config *out)
{
    bcm_ctx *c = ud;
    if (!topic || !*topic)
        return RMQ_EINVAL;
    bool created = false;
    int rc = RMQ_ENOENT;
    pthread_mutex_lock(&c->lock);
    bool fresh = wait_topic_written(c, topic);
    bcm_topic_fields have, d;
    if (bcm_topic_table_get(&c->topics, topic, &have)) {
        topic_from_fields(&have, out);
        rc = 0;
    } else {
        if (default_topic && bcm_topic_table_get(&c->topics, default_topic, &d)) {
            int perm = d.perm;
            /* TBW102 without autoCreateTopicEnable is read-write only:
             * nothing inherits from it. */
            if (strcmp(default_topic, TBW102) == 0 && !c->s.auto_create_topic_enable)
                perm = RMQ_PERM_READ | RMQ_PERM_WRITE;
            if (perm & RMQ_PERM_INHERIT) {
                int dq = d.write_queue_nums;
                int q = default_queue_nums < dq ? default_queue_nums : dq;
                if (q < 0)
                    q = 0;
                const char *ft = d.topic_filter_type == 1 ? "MULTI_TAG" : "SINGLE_TAG";
                json_t *cfg = bcm_topic_config_new(topic, q, q, perm & ~RMQ_PERM_INHERIT,
                                                   topic_sys_flag, false, ft);
                if (cfg) {
                    topic_from_json(cfg, out);
                    if (bcm_topic_table_put(&c->topics, cfg, c->api->now_wall_ms()) == 0) {
                        /* on OOM the others may answer before the write */
                        (void)bcm_unwritten_topics_add(&c->unwritten, topic);
                        bcm_topics_note_locked(c, topic);
                        created = true;
                        rc = 0;
                    } else {
                        rc = RMQ_ENOMEM;
                    }
                } else {
                    rc = RMQ_ENOMEM;
                }
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (created)
        topic_created(c, topic);
    else if (fresh)
        bcm_topic_registration_wait(c);
    return rc;
}

static int meta_topic_create_in_send_back(void *ud, const char *topic, int32_t queue_nums,
                                          int32_t perm, int32_t topic_sys_flag,
                                          rmq_topic_config *out)
{
    bcm_ctx *c = ud;
    if (!topic || !*topic)
        return RMQ_EINVAL;
    pthread_mutex_lock(&c->lock);
    bool fresh = wait_topic_written(c, topic);
    bool created = bcm_topic_table_create_if_absent(&c->topics, topic, queue_nums, perm,
                                                    topic_sys_flag, c->api->now_wall_ms());
    if (created) {
        (void)bcm_unwritten_topics_add(&c->unwritten, topic);
        bcm_topics_note_locked(c, topic);
    }
    bcm_topic_fields f;
    bool found = bcm_topic_table_get(&c->topics, topic, &f);
    if (found)
        topic_from_fields(&f, out);
    pthread_mutex_unlock(&c->lock);
    if (created)
        topic_created(c, topic);
    else if (fresh)
        bcm_topic_registration_wait(c);
    return found ? 0 : RMQ_ENOMEM;
}

typedef struct topic_copy {
    rmq_topic_config *all;
    size_t n;
} topic_copy;

static void copy_one(void *ud, const char *name, const bcm_topic_cfg *cfg)
{
    topic_copy *tc = ud;
    bcm_topic_fields f;
    bcm_topic_fields_from_cfg(name, cfg, &f);
    topic_from_fields(&f, &tc->all[tc->n++]);
}

/* The callback may call back into this service: it runs on a copy, with
 * the lock released. */
static size_t meta_topic_for_each(void *ud, rmq_topic_config_fn fn, void *fn_ud)
{
    bcm_ctx *c = ud;
    pthread_mutex_lock(&c->lock);
    size_t n = bcm_topic_table_size(&c->topics), i = 0;
    topic_copy tc = {n ? malloc(n * sizeof *tc.all) : NULL, 0};
    if (tc.all)
        bcm_topic_table_for_each(&c->topics, copy_one, &tc);
    rmq_topic_config *all = tc.all;
    i = tc.n;
    pthread_mutex_unlock(&c->lock);
    for (size_t k = 0; k < i; k++)
        fn(fn_ud, &all[k]);
    free(all);
    return i;
}

static int meta_group_get(void *ud, const char *group, bool auto_create,
                          rmq_subscription_group_config *out)
{
    bcm_ctx *c = ud;
    if (!group)
        return RMQ_EINVAL;
    bool created = false;
    pthread_mutex_lock(&c->lock);
    const json_t *g;
    if (auto_create)
        g = bcm_subscription_groups_find(&c->groups, group, c->s.auto_create_subscription_group,
                                         c->api->now_wall_ms(), &created);
    else
        g = json_object_get(c->groups.groups, group);
    if (g)
        group_from_json(g, out);
    pthread_mutex_unlock(&c->lock);
    if (created)
        bcm_persist_groups(c);
    return g ? 0 : RMQ_ENOENT;
}

static int meta_consumer_subscription(void *ud, const char *group, const char *topic,
                                      rmq_consumer_sub_info *out)
{
    bcm_ctx *c = ud;
    if (!group || !topic)
        return RMQ_EINVAL;
    memset(out, 0, sizeof *out);
    int rc = RMQ_ENOENT;
    pthread_mutex_lock(&c->lock);
    const bcm_consumer_group *g = bcm_consumer_group_get(&c->consumers, group);
    if (g && g->nclients) {
        rc = 0;
        out->message_model =
            g->message_model && strcmp(g->message_model, "BROADCASTING") == 0 ? 1 : 0;
        const bcm_subscription *s = bcm_consumer_group_find_sub(g, topic);
        if (s) {
            out->has_subscription = true;
            const char *et = s->expression_type && *s->expression_type ? s->expression_type : "TAG";
            snprintf(out->expression_type, sizeof out->expression_type, "%s", et);
            snprintf(out->sub_string, sizeof out->sub_string, "%s",
                     s->sub_string ? s->sub_string : "*");
            out->sub_version = s->sub_version;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

static size_t meta_consumer_channels(void *ud, const char *group, rmq_consumer_channel *out,
                                     size_t max)
{
    bcm_ctx *c = ud;
    if (!group)
        return 0;
    size_t n = 0;
    pthread_mutex_lock(&c->lock);
    const bcm_consumer_group *g = bcm_consumer_group_get(&c->consumers, group);
    if (g) {
        n = g->nclients;
        for (size_t i = 0; i < n && i < max; i++) {
            memset(&out[i], 0, sizeof out[i]);
            out[i].channel = g->clients[i].channel;
            out[i].version = g->clients[i].version;
            snprintf(out[i].client_id, sizeof out[i].client_id, "%s",
                     g->clients[i].client_id ? g->clients[i].client_id : "");
        }
    }
    pthread_mutex_unlock(&c->lock);
    return n;
}

/* Java's getAvailableChannel: a shared counter modulo the group's size.
 * Every entry of the table is a live connection (closed ones are removed at
 * once), so the first pick is the answer. */
static uint64_t meta_producer_channel(void *ud, const char *group)
{
    bcm_ctx *c = ud;
    if (!group)
        return 0;
    unsigned turn = atomic_fetch_add(&c->producer_rr, 1) + 1;
    uint64_t ch = 0;
    pthread_mutex_lock(&c->lock);
    const bcm_producer_group *g = bcm_producer_group_get(&c->producers, group);
    if (g && g->n)
        ch = g->clients[turn % g->n].channel;
    pthread_mutex_unlock(&c->lock);
    return ch;
}

static uint64_t meta_producer_channel_by_client(void *ud, const char *client_id)
{
    bcm_ctx *c = ud;
    if (!client_id)
        return 0;
    pthread_mutex_lock(&c->lock);
    uint64_t ch = bcm_producer_find_channel(&c->producers, client_id);
    pthread_mutex_unlock(&c->lock);
    return ch;
}

static int meta_offset_commit(void *ud, const char *group, const char *topic, int32_t queue_id,
                              int64_t offset)
{
    bcm_ctx *c = ud;
    if (!group || !topic)
        return RMQ_EINVAL;
    pthread_mutex_lock(&c->lock);
    int rc = bcm_offset_commit(&c->offsets, topic, group, queue_id, offset);
    c->offsets_changes++;
    pthread_mutex_unlock(&c->lock);
    return rc == 0 ? 0 : RMQ_ENOMEM;
}

static int64_t meta_offset_query(void *ud, const char *group, const char *topic, int32_t queue_id)
{
    bcm_ctx *c = ud;
    if (!group || !topic)
        return -1;
    int64_t off = -1;
    pthread_mutex_lock(&c->lock);
    if (!bcm_offset_query(&c->offsets, topic, group, queue_id, &off))
        off = -1;
    pthread_mutex_unlock(&c->lock);
    return off;
}

int bcm_export_broker_meta(bcm_ctx *c)
{
    rmq_broker_meta_service *t = &c->meta_table;
    memset(t, 0, sizeof *t);
    t->size = sizeof *t;
    t->broker_config = meta_broker_config;
    t->topic_get = meta_topic_get;
    t->topic_create_in_send = meta_topic_create_in_send;
    t->topic_create_in_send_back = meta_topic_create_in_send_back;
    t->topic_for_each = meta_topic_for_each;
    t->group_get = meta_group_get;
    t->consumer_subscription = meta_consumer_subscription;
    t->consumer_channels = meta_consumer_channels;
    t->producer_channel = meta_producer_channel;
    t->offset_commit = meta_offset_commit;
    t->offset_query = meta_offset_query;
    t->producer_channel_by_client = meta_producer_channel_by_client;
    return c->api->export_service(c->pctx, RMQ_BROKER_META_SERVICE, RMQ_BROKER_META_VERSION, t, c);
}

void bcm_publish_topic_deleted(bcm_ctx *c, const char *topic)
{
    int rc =
        c->api->publish_event(c->pctx, RMQ_BROKER_TOPIC_DELETED_EVENT, topic, strlen(topic) + 1);
    if (rc != 0 && rc != RMQ_ENOENT)
        c->api->log(c->pctx, RMQ_LOG_WARN, "publishing %s for %s: %s",
                    RMQ_BROKER_TOPIC_DELETED_EVENT, topic, rmq_strerror(rc));
}
