/* assignment_processors.c — QUERY_ASSIGNMENT (400) and
 * SET_MESSAGE_REQUEST_MODE (401) of RocketMQ 5.x: the 5.x remoting push
 * consumer with clientRebalance=false asks the broker which queues it gets
 * and whether it consumes them by PULL or by POP. The mode of a
 * (topic, group) is set by 401 and kept in <config_dir>/messageRequestMode.json
 * (Java's file and layout); without one it is PULL (Java's
 * defaultMessageRequestMode), %RETRY% topics always PULL. In POP mode with
 * popShareQueueNum <= 0, or >= the number of clients - 1, every consumer
 * gets every queue as queueId -1 (POP over all queues); with more clients
 * than queues each POP client gets one queue (its index modulo the queue
 * count); otherwise the queues are split by the client's strategy (AVG /
 * AVG_BY_CIRCLE) over the group's sorted client ids and a POP client also
 * gets the queues of the popShareQueueNum clients after it, as Java's
 * QueryAssignmentProcessor (allocate4Pop) does. */
#include "broker_context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODES_FILE "messageRequestMode.json"
#define RC_NO_PERMISSION 16

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The modes table {"messageRequestModeMap":{topic:{group:{...}}}}, read
 * from disk the first time (under c->lock). */
static json_t *modes(bcm_ctx *c)
{
    if (c->request_modes)
        return c->request_modes;
    char path[800];
    snprintf(path, sizeof path, "%s/%s", c->config_dir, MODES_FILE);
    json_t *root = json_load_file(path, 0, NULL);
    if (!json_is_object(root) || !json_is_object(json_object_get(root, "messageRequestModeMap"))) {
        json_decref(root);
        root = json_pack("{s{}}", "messageRequestModeMap");
    }
    c->request_modes = root;
    return root;
}

/* Mode ("PULL"/"POP") and popShareQueueNum of (topic, group). */
static void mode_of(bcm_ctx *c, const char *topic, const char *group, char mode[8], int *share)
{
    snprintf(mode, 8, "PULL");
    *share = 0;
    if (strncmp(topic, "%RETRY%", 7) == 0)
        return;
    pthread_mutex_lock(&c->lock);
    json_t *m = json_object_get(json_object_get(modes(c), "messageRequestModeMap"), topic);
    json_t *e = json_object_get(m, group);
    const char *s = json_string_value(json_object_get(e, "mode"));
    if (s && (strcmp(s, "POP") == 0 || strcmp(s, "PULL") == 0)) {
        snprintf(mode, 8, "%s", s);
        json_t *n = json_object_get(e, "popShareQueueNum");
        *share = json_is_integer(n) ? (int)json_integer_value(n) : 0;
    } else {
        /* Java's defaultPopShareQueueNum when its default mode is POP */
        *share = -1;
    }
    pthread_mutex_unlock(&c->lock);
}

/* AllocateMessageQueueAveragely / ...ByCircle: the queue indexes of client
 * `index` among n clients over q queues into out; their count. */
static int allocate(const char *strategy, int index, int n, int q, int *out)
{
    int k = 0;
    if (strcmp(strategy, "AVG_BY_CIRCLE") == 0) {
        for (int i = 0; i < q; i++)
            if (i % n == index)
                out[k++] = i;
        return k;
    }
    int mod = q % n;
    int avg = q <= n ? 1 : (mod > 0 && index < mod ? q / n + 1 : q / n);
    int start = (mod > 0 && index < mod) ? index * avg : index * avg + mod;
    int range = avg < q - start ? avg : q - start;
    for (int i = 0; i < range; i++)
        out[k++] = (start + i) % q;
    return k;
}

static json_t *assignment(bcm_ctx *c, const char *topic, int qid, const char *mode)
{
    return json_pack("{s{sssiss}ss}", "messageQueue", "brokerName", c->s.broker_name, "queueId",
                     qid, "topic", topic, "mode", mode);
}

/* The JSON body both requests carry (NULL when none or unreadable) and its
 * topic and consumerGroup (NULL when absent). */
static json_t *topic_group_body(const rmq_host_api *a, const rmq_cmd *cmd, const char **topic,
                                const char **group)
{
    size_t len = 0;
    const char *body = a->cmd_body(cmd, &len);
    json_t *rb = body ? json_loadb(body, len, 0, NULL) : NULL;
    *topic = json_string_value(json_object_get(rb, "topic"));
    *group = json_string_value(json_object_get(rb, "consumerGroup"));
    return rb;
}

static int process_query_assignment(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const rmq_host_api *a = c->api;
    const char *topic, *group;
    json_t *rb = topic_group_body(a, cmd, &topic, &group);
    const char *client = json_string_value(json_object_get(rb, "clientId"));
    const char *strategy = json_string_value(json_object_get(rb, "strategyName"));
    const char *model = json_string_value(json_object_get(rb, "messageModel"));
    if (!topic || !group) {
        json_decref(rb);
        return bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR, "java.lang.NullPointerException");
    }
    char mode[8];
    int share = 0;
    mode_of(c, topic, group, mode, &share);
    bcm_topic_fields tf;
    pthread_mutex_lock(&c->lock);
    bool has_topic = bcm_topic_table_get(&c->topics, topic, &tf);
    size_t ncid = 0;
    char **cids = NULL;
    const bcm_consumer_group *g = bcm_consumer_group_get(&c->consumers, group);
    if (g && g->nclients)
        cids = calloc(g->nclients, sizeof *cids);
    for (size_t i = 0; cids && i < g->nclients; i++) {
        cids[ncid] = strdup(g->clients[i].client_id ? g->clients[i].client_id : "");
        if (cids[ncid])
            ncid++;
    }
    pthread_mutex_unlock(&c->lock);
    json_t *list = NULL; /* null: "no valid result", the client keeps what it has */
    int nq = has_topic ? tf.read_queue_nums : 0;
    if (has_topic && nq > 0 && model && strcmp(model, "BROADCASTING") == 0) {
        list = json_array();
        for (int i = 0; i < nq; i++)
            json_array_append_new(list, assignment(c, topic, i, mode));
    } else if (has_topic && nq > 0 && ncid > 0) {
        qsort(cids, ncid, sizeof *cids, cmp_str);
        int index = -1;
        for (size_t i = 0; i < ncid; i++)
            if (client && strcmp(cids[i], client) == 0)
                index = (int)i;
        bool known =
            strategy && (strcmp(strategy, "AVG") == 0 || strcmp(strategy, "AVG_BY_CIRCLE") == 0);
        int *qs = known ? calloc((size_t)nq * (ncid + 1), sizeof *qs) : NULL;
        if (qs) {
            list = json_array();
            bool pop = strcmp(mode, "POP") == 0;
            if (pop && (share <= 0 || share >= (int)ncid - 1)) {
                /* Java's allocate4Pop: no sharing asked, or every client would
                 * share every other one's queues: all queues to each */
                json_array_append_new(list, assignment(c, topic, -1, mode));
            } else if (index >= 0 && pop && ncid > (size_t)nq) {
                /* more clients than queues: one each, so every client pops */
                json_array_append_new(list, assignment(c, topic, index % nq, mode));
            } else if (index >= 0) {
                int k = allocate(strategy, index, (int)ncid, nq, qs);
                /* POP with popShareQueueNum N: also the queues of the N
                 * clients after this one */
                for (int s = 1; strcmp(mode, "POP") == 0 && s <= share && (size_t)s < ncid; s++)
                    k += allocate(strategy, (index + s) % (int)ncid, (int)ncid, nq, qs + k);
                for (int i = 0; i < k; i++) {
                    bool dup = false;
                    for (int j = 0; j < i; j++)
                        dup |= qs[j] == qs[i];
                    if (!dup)
                        json_array_append_new(list, assignment(c, topic, qs[i], mode));
                }
            }
            free(qs);
        }
    }
    for (size_t i = 0; i < ncid; i++)
        free(cids[i]);
    free(cids);
    json_decref(rb);
    json_t *resp = json_object();
    if (list)
        json_object_set_new(resp, "messageQueueAssignments", list);
    char *text = json_dumps(resp, JSON_COMPACT);
    json_decref(resp);
    if (!text)
        return RMQ_ENOMEM;
    return bcm_reply_body(c, req, cmd, text);
}

static int process_set_mode(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    const rmq_host_api *a = c->api;
    const char *topic, *group;
    json_t *rb = topic_group_body(a, cmd, &topic, &group);
    const char *mode = json_string_value(json_object_get(rb, "mode"));
    json_t *share = json_object_get(rb, "popShareQueueNum");
    if (!topic || !group) {
        json_decref(rb);
        return bcm_reply(c, req, cmd, RMQ_RESPONSE_SYSTEM_ERROR, "java.lang.NullPointerException");
    }
    if (strncmp(topic, "%RETRY%", 7) == 0) {
        json_decref(rb);
        return bcm_reply(c, req, cmd, RC_NO_PERMISSION, "retry topic is not allowed to set mode");
    }
    json_t *e = json_pack("{sssssssI}", "topic", topic, "consumerGroup", group, "mode",
                          mode && strcmp(mode, "POP") == 0 ? "POP" : "PULL", "popShareQueueNum",
                          (json_int_t)(json_is_integer(share) ? json_integer_value(share) : 0));
    json_decref(rb);
    if (!e)
        return RMQ_ENOMEM;
    pthread_mutex_lock(&c->persist_lock);
    pthread_mutex_lock(&c->lock);
    json_t *map = json_object_get(modes(c), "messageRequestModeMap");
    json_t *t = json_object_get(map, json_string_value(json_object_get(e, "topic")));
    if (!json_is_object(t)) {
        t = json_object();
        json_object_set_new(map, json_string_value(json_object_get(e, "topic")), t);
    }
    json_object_set_new(t, json_string_value(json_object_get(e, "consumerGroup")), e);
    char *text = json_dumps(c->request_modes, JSON_COMPACT);
    pthread_mutex_unlock(&c->lock);
    int rc = RMQ_ENOMEM;
    if (text) {
        char path[800];
        snprintf(path, sizeof path, "%s/%s", c->config_dir, MODES_FILE);
        rc = a->write_file_atomic(c->pctx, path, text, strlen(text));
        if (rc != 0)
            a->log(c->pctx, RMQ_LOG_ERROR, "writing %s: %s", path, rmq_strerror(rc));
        free(text);
    }
    pthread_mutex_unlock(&c->persist_lock);
    return bcm_reply(c, req, cmd, RMQ_RESPONSE_SUCCESS, NULL);
}

int bcm_register_assignment_processors(bcm_ctx *c)
{
    int rc = c->api->register_processor(c->pctx, 400, process_query_assignment, c, "consumer");
    if (rc == 0)
        rc = c->api->register_processor(c->pctx, 401, process_set_mode, c, "admin");
    return rc;
}
