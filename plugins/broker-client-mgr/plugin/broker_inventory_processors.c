/* broker_inventory_processors.c — owns three read-only admin codes that list
 * what the broker holds: GET_ALL_PRODUCER_INFO (328, mqadmin producer),
 * GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305, exportMetadata's filter) and
 * GET_BROKER_CONSUME_STATS (317, mqadmin brokerConsumeStats), with 4.9.8's
 * bodies (AdminBrokerProcessor). */
#include "broker_context.h"

#include <rmqhost/helpers.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *dump(json_t *root)
{
    char *s = root ? json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(root);
    return s;
}

/* ProducerManager.getProducerTable: {"data":{group:[ProducerInfo...]}};
 * remoteIP is Netty's remoteAddress().toString(), "/ip:port". */
static int process_all_producers(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    json_t *data = json_object();
    /* the table keeps monotonic times; Java answers wall-clock ones */
    int64_t wall_minus_mono = (int64_t)c->api->now_wall_ms() - (int64_t)c->api->now_monotonic_ms();
    pthread_mutex_lock(&c->lock);
    str_map_iter it;
    str_map_iter_init(&c->producers.groups, &it);
    for (str_map_entry *e; (e = str_map_iter_next(&c->producers.groups, &it));) {
        const bcm_producer_group *g = e->value;
        json_t *list = json_array();
        for (size_t i = 0; i < g->n; i++) {
            const bcm_client *cl = &g->clients[i];
            const char *lang = c->api->cmd_language_name(cl->language);
            char remote[80];
            snprintf(remote, sizeof remote, "/%s", cl->addr);
            json_array_append_new(
                list,
                json_pack("{sssssssisI}", "clientId", cl->client_id, "remoteIP", remote, "language",
                          lang ? lang : "OTHER", "version", cl->version, "lastUpdateTimestamp",
                          (json_int_t)((int64_t)cl->last_update_ms + wall_minus_mono)));
        }
        json_object_set_new(data, e->key, list);
    }
    pthread_mutex_unlock(&c->lock);
    return bcm_reply_body(c, req, cmd, dump(json_pack("{so}", "data", data)));
}

/* TopicValidator.getSystemTopicSet() of a broker that built its topic table
 * with these settings: the fixed system topics plus the ones
 * TopicConfigManager adds (cluster, broker, reply and trace topics). */
static int process_system_topics(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    json_t *set = json_object(); /* a set: each name once */
    for (const char *const *f = bcm_fixed_system_topics; *f; f++)
        json_object_set_new(set, *f, json_true());
    json_object_set_new(set, c->s.cluster_name, json_true());
    json_object_set_new(set, c->s.broker_name, json_true());
    char reply[160];
    snprintf(reply, sizeof reply, "%s_REPLY_TOPIC", c->s.cluster_name);
    json_object_set_new(set, reply, json_true());
    /* as the topic table was built at start: persisted updates first (the
     * overrides change under the tables lock) */
    pthread_mutex_lock(&c->lock);
    const char *on = bcm_setting_text(c, "traceTopicEnable");
    if (on ? strcasecmp(on, "true") == 0 : c->api->setting_bool(c->pctx, "traceTopicEnable")) {
        const char *t = bcm_setting_text(c, "msgTraceTopicName");
        if (!t)
            t = c->api->setting_string(c->pctx, "msgTraceTopicName");
        if (t && *t)
            json_object_set_new(set, t, json_true());
    }
    pthread_mutex_unlock(&c->lock);
    json_t *list = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(set, k, v) json_array_append_new(list, json_string(k));
    json_decref(set);
    return bcm_reply_body(c, req, cmd, dump(json_pack("{so}", "topicList", list)));
}

/* ---- GET_BROKER_CONSUME_STATS --------------------------------------------- */

typedef struct topic_rows {
    char *topic;
    int queues;        /* writeQueueNums */
    int64_t *consumer; /* committed offset per queue, -1 none */
} topic_rows;

typedef struct group_rows {
    char *group;
    topic_rows *t;
    size_t n;
} group_rows;

/* Under the tables lock: which groups, topics and queues, and the offsets. */
static group_rows *plan(bcm_ctx *c, bool order_only, size_t *ngroups)
{
    pthread_mutex_lock(&c->lock);
    size_t cap = json_object_size(c->groups.groups);
    group_rows *g = calloc(cap + 1, sizeof *g);
    size_t n = 0;
    const char *name;
    json_t *cfg;
    json_object_foreach(c->groups.groups, name, cfg)
    {
        if (!g || n >= cap)
            break;
        group_rows *r = &g[n++];
        r->group = strdup(name);
        json_t *topics = json_array();
        bcm_offset_topics_of_group(&c->offsets, name, topics);
        r->t = calloc(json_array_size(topics) + 1, sizeof *r->t);
        const bcm_consumer_group *cg = bcm_consumer_group_get(&c->consumers, name);
        size_t i;
        json_t *tv;
        json_array_foreach(topics, i, tv)
        {
            const char *t = json_string_value(tv);
            bcm_topic_fields f;
            if (!r->t || !bcm_topic_table_get(&c->topics, t, &f))
                continue; /* "topic config not exist" */
            if (order_only && !f.order)
                continue;
            if (cg && cg->nsubs > 0 && !bcm_consumer_group_find_sub(cg, t))
                continue; /* online, subscribes other topics */
            topic_rows *tr = &r->t[r->n];
            tr->topic = strdup(t);
            tr->queues = f.write_queue_nums > 0 ? f.write_queue_nums : 0;
            tr->consumer = bcm_group_queue_offsets(c, t, name, tr->queues);
            if (!tr->topic || !tr->consumer) {
                free(tr->topic);
                free(tr->consumer);
                continue;
            }
            r->n++;
        }
        json_decref(topics);
    }
    pthread_mutex_unlock(&c->lock);
    *ngroups = n;
    return g;
}

static void free_plan(group_rows *g, size_t n)
{
    for (size_t i = 0; g && i < n; i++) {
        for (size_t j = 0; j < g[i].n; j++) {
            free(g[i].t[j].topic);
            free(g[i].t[j].consumer);
        }
        free(g[i].t);
        free(g[i].group);
    }
    free(g);
}

/* One ConsumeStats as fastjson writes it: offsetTable keys are MessageQueue
 * objects, so the map is written as JSON text by hand. */
static json_t *consume_stats_text(bcm_ctx *c, const bcm_store *st, const char *group,
                                  const topic_rows *tr, int64_t *diff)
{
    json_t *jb = json_string(c->s.broker_name), *jt = json_string(tr->topic);
    char *qb = json_dumps(jb, JSON_ENCODE_ANY), *qt = json_dumps(jt, JSON_ENCODE_ANY);
    json_decref(jb);
    json_decref(jt);
    size_t cap = 64 + (size_t)tr->queues * (strlen(qb ? qb : "") + strlen(qt ? qt : "") + 160);
    char *s = malloc(cap);
    if (!s || !qb || !qt) {
        free(s);
        free(qb);
        free(qt);
        return NULL;
    }
    double tps = bcm_store_consume_tps(st, group, tr->topic);
    char num[40];
    size_t n = (size_t)snprintf(s, cap, "{\"consumeTps\":%s,\"offsetTable\":{",
                                rmq_java_double_text(tps, num, sizeof num));
    for (int q = 0; q < tr->queues; q++) {
        int64_t bo = bcm_store_max_offset(st, tr->topic, q);
        int64_t co = tr->consumer[q];
        if (bo < 0)
            bo = 0;
        if (co < 0)
            co = 0;
        int64_t last = 0;
        if (co - 1 >= 0) {
            int64_t ts = bcm_store_time(st, tr->topic, q, co - 1);
            if (ts > 0)
                last = ts;
        }
        *diff += bo - co;
        n += (size_t)snprintf(s + n, cap - n,
                              "%s{\"brokerName\":%s,\"queueId\":%d,\"topic\":%s}:{\"brokerOffset\":"
                              "%lld,\"consumerOffset\":%lld,\"lastTimestamp\":%lld}",
                              q ? "," : "", qb, q, qt, (long long)bo, (long long)co,
                              (long long)last);
    }
    snprintf(s + n, cap - n, "}}");
    free(qb);
    free(qt);
    /* kept as text: jansson cannot hold a non-string key */
    json_t *r = json_string(s);
    free(s);
    return r;
}

static int process_broker_consume_stats(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const char *order = c->api->cmd_ext_get(cmd, "isOrder");
    bool order_only = order && strcasecmp(order, "true") == 0;
    size_t ng = 0;
    group_rows *g = plan(c, order_only, &ng);
    if (!g)
        return RMQ_ENOMEM;
    bcm_store st;
    bcm_store_acquire(c, &st);
    int64_t total = 0;
    /* built as text: each ConsumeStats carries MessageQueue-keyed maps */
    size_t cap = 256, n = 0;
    char *out = malloc(cap);
    bool oom = !out;
    json_t *addr = json_string(c->broker_addr);
    char *qa = json_dumps(addr, JSON_ENCODE_ANY);
    json_decref(addr);
#define APPEND(str)                                                                                \
    do {                                                                                           \
        const char *a_ = (str);                                                                    \
        size_t l_ = strlen(a_);                                                                    \
        if (!oom && n + l_ + 1 > cap) {                                                            \
            size_t nc_ = (cap + l_) * 2;                                                           \
            char *b_ = realloc(out, nc_);                                                          \
            if (b_) {                                                                              \
                out = b_;                                                                          \
                cap = nc_;                                                                         \
            } else {                                                                               \
                oom = true;                                                                        \
            }                                                                                      \
        }                                                                                          \
        if (!oom) {                                                                                \
            memcpy(out + n, a_, l_ + 1);                                                           \
            n += l_;                                                                               \
        }                                                                                          \
    } while (0)
    APPEND("{\"brokerAddr\":");
    APPEND(qa ? qa : "null");
    APPEND(",\"consumeStatsList\":[");
    for (size_t i = 0; i < ng; i++) {
        json_t *jg = json_string(g[i].group);
        char *qg = json_dumps(jg, JSON_ENCODE_ANY);
        json_decref(jg);
        APPEND(i ? ",{" : "{");
        APPEND(qg ? qg : "\"\"");
        APPEND(":[");
        free(qg);
        for (size_t j = 0; j < g[i].n; j++) {
            json_t *cs = consume_stats_text(c, &st, g[i].group, &g[i].t[j], &total);
            if (j)
                APPEND(",");
            APPEND(cs ? json_string_value(cs) : "{}");
            json_decref(cs);
        }
        APPEND("]}");
    }
    char tail[64];
    snprintf(tail, sizeof tail, "],\"totalDiff\":%lld}", (long long)total);
    APPEND(tail);
#undef APPEND
    bcm_store_release(c, &st);
    free(qa);
    free_plan(g, ng);
    if (oom) {
        free(out);
        return RMQ_ENOMEM;
    }
    return bcm_reply_body(c, req, cmd, out);
}

int bcm_register_inventory_processors(bcm_ctx *c)
{
    static const bcm_processor_entry table[] = {
        {BCM_GET_ALL_PRODUCER_INFO, process_all_producers},
        {BCM_GET_SYSTEM_TOPIC_LIST_FROM_BROKER, process_system_topics},
        {BCM_GET_BROKER_CONSUME_STATS, process_broker_consume_stats},
    };
    return bcm_register_processor_table(c, table, sizeof table / sizeof table[0], "admin");
}
