/* consume_stats_processor.c — owns GET_CONSUME_STATS (208) with 4.9.8's
 * figures (AdminBrokerProcessor.getConsumeStats, protocol-messages.md
 * §10.2.11): per readable queue of each topic the group consumes, the
 * store's max offset, the group's committed offset and the store time of
 * the last consumed message. Without a store every queue is empty. */
#include "broker_context.h"

#include <rmqhost/helpers.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct text {
    char *s;
    size_t n, cap;
    bool oom;
} text;

static void add(text *t, const char *fmt, ...) RMQ_PRINTF(2, 3);
static void add(text *t, const char *fmt, ...)
{
    if (t->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
        va_end(ap);
        if (w < 0) {
            t->oom = true;
            return;
        }
        if (t->s && (size_t)w < t->cap - t->n) {
            t->n += (size_t)w;
            return;
        }
        size_t nc = (t->cap ? t->cap * 2 : 1024) + (size_t)w;
        char *v = realloc(t->s, nc);
        if (!v) {
            t->oom = true;
            return;
        }
        t->s = v;
        t->cap = nc;
    }
}

/* A JSON string literal (quotes included), malloc'd. */
static char *quoted(const char *s)
{
    json_t *j = json_string(s);
    char *q = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    return q;
}

typedef struct topic_plan {
    char *name;
    int read_queues;
    int64_t *consumer; /* committed offset per queue, -1 when none */
} topic_plan;

/* Which topics and queues, under the tables lock; no store call while held. */
static size_t plan_topics(bcm_ctx *c, const char *group, const char *topic, topic_plan **out)
{
    json_t *topics = json_array();
    size_t n = 0;
    topic_plan *plan = NULL;
    pthread_mutex_lock(&c->lock);
    if (topic && *topic)
        json_array_append_new(topics, json_string(topic));
    else
        bcm_offset_topics_of_group(&c->offsets, group, topics);
    const bcm_consumer_group *g = bcm_consumer_group_get(&c->consumers, group);
    plan = calloc(json_array_size(topics) + 1, sizeof *plan);
    size_t i;
    json_t *v;
    json_array_foreach(topics, i, v)
    {
        const char *t = json_string_value(v);
        bcm_topic_fields cfg;
        if (!bcm_topic_table_get(&c->topics, t, &cfg) || !plan)
            continue;
        /* an online group with subscriptions counts only what it subscribes */
        if (g && g->nsubs > 0 && !bcm_consumer_group_find_sub(g, t))
            continue;
        int rq = cfg.read_queue_nums;
        topic_plan *p = &plan[n];
        p->name = strdup(t);
        p->read_queues = rq > 0 ? rq : 0;
        p->consumer = bcm_group_queue_offsets(c, t, group, p->read_queues);
        if (!p->name || !p->consumer) {
            free(p->name);
            free(p->consumer);
            continue;
        }
        n++;
    }
    pthread_mutex_unlock(&c->lock);
    json_decref(topics);
    *out = plan;
    return n;
}

static int process_consume_stats(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const char *group = c->api->cmd_ext_get(cmd, "consumerGroup");
    if (!group) {
        c->api->request_fail(req, "java.lang.NullPointerException, ConsumeStatsRequestHeader");
        return RMQ_EINVAL;
    }
    topic_plan *plan = NULL;
    size_t n = plan_topics(c, group, c->api->cmd_ext_get(cmd, "topic"), &plan);
    char *broker = quoted(c->s.broker_name);
    bcm_store st;
    bcm_store_acquire(c, &st);
    text t = {0};
    /* consumeTps: the store's pulled-message rate of each counted topic */
    double tps = 0;
    for (size_t i = 0; i < n; i++)
        tps += bcm_store_consume_tps(&st, group, plan[i].name);
    char tps_text[40];
    add(&t, "{\"consumeTps\":%s,\"offsetTable\":{",
        rmq_java_double_text(tps, tps_text, sizeof tps_text));
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        char *qt = quoted(plan[i].name);
        for (int q = 0; q < plan[i].read_queues && qt && broker; q++) {
            int64_t bo = bcm_store_max_offset(&st, plan[i].name, q);
            int64_t co = plan[i].consumer[q];
            if (bo < 0)
                bo = 0;
            if (co < 0)
                co = 0;
            int64_t last = 0;
            if (co - 1 >= 0) {
                int64_t ts = bcm_store_time(&st, plan[i].name, q, co - 1);
                if (ts > 0)
                    last = ts;
            }
            add(&t,
                "%s{\"brokerName\":%s,\"queueId\":%d,\"topic\":%s}:{\"brokerOffset\":%lld,"
                "\"consumerOffset\":%lld,\"lastTimestamp\":%lld}",
                first ? "" : ",", broker, q, qt, (long long)bo, (long long)co, (long long)last);
            first = false;
        }
        free(qt);
        free(plan[i].name);
        free(plan[i].consumer);
    }
    add(&t, "}}");
    bcm_store_release(c, &st);
    free(plan);
    free(broker);
    if (t.oom) {
        free(t.s);
        return RMQ_ENOMEM;
    }
    return bcm_reply_body(c, req, cmd, t.s);
}

int bcm_register_consume_stats_processor(bcm_ctx *c)
{
    return c->api->register_processor(c->pctx, BCM_GET_CONSUME_STATS, process_consume_stats, c,
                                      "admin");
}
