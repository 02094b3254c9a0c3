/* proxy_clients.c — 5.x clients in the broker role's client housekeeping,
 * so `mqadmin consumerConnection` / `producerConnection` and the consumer
 * group listings see them, as Java's proxy (ClientActivity) registers them:
 * a client's Settings (Telemetry) say what it is; each Heartbeat registers
 * it through an in-process HEART_BEAT (34) — a producer under every topic it
 * publishes to (the topic is its producer group, as SendMessage's PGROUP), a
 * simple consumer CONSUME_ACTIVELY and a push consumer CONSUME_PASSIVELY
 * under its group with its subscriptions, CLUSTERING,
 * CONSUME_FROM_LAST_OFFSET; NotifyClientTermination, the end of its
 * Telemetry stream or the close of its connection unregister it
 * (UNREGISTER_CLIENT, 35). The broker role knows the client by a channel
 * of its own (PROXY_CHANNEL_BIT | the gRPC connection's channel) and the
 * client's address, passed as proxyClientChannel / proxyClientAddr on the
 * in-process request: no connection has such an id, so the broker's pushes
 * to it (NOTIFY_CONSUMER_IDS_CHANGED, running-info relays) find no channel
 * instead of writing remoting frames into an HTTP/2 connection.
 * Clients are few per proxy: a locked array, searched linearly. */
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_backend.h"
#include "proxy_internal.h"

#define HEART_BEAT 34
#define UNREGISTER_CLIENT 35
#define PROXY_CHANNEL_BIT (1ULL << 62)

typedef struct px_client {
    char *id;
    Apache__Rocketmq__V2__ClientType type;
    char *group;  /* consumers */
    json_t *subs; /* consumers: SubscriptionData array; producers: topic names */
    bool have_settings;
    rmq_channel_id channel; /* the gRPC connection's */
    char addr[64];
} px_client;

struct proxy_clients {
    pthread_mutex_t mu;
    px_client *v;
    size_t n, cap;
};

static void client_free(px_client *c)
{
    free(c->id);
    free(c->group);
    json_decref(c->subs);
}

/* Caller holds mu. NULL when absent and !create (or out of memory). */
static px_client *find(proxy_clients *t, const char *id, bool create)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i].id, id) == 0)
            return &t->v[i];
    if (!create)
        return NULL;
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 16;
        px_client *nv = realloc(t->v, ncap * sizeof *nv);
        if (!nv)
            return NULL;
        t->v = nv;
        t->cap = ncap;
    }
    px_client *c = &t->v[t->n];
    memset(c, 0, sizeof *c);
    if (!(c->id = strdup(id)))
        return NULL;
    t->n++;
    return c;
}

/* Java's FilterAPI.buildSubscriptionData: tags split on "||", trimmed,
 * with their String.hashCode. */
static json_t *subscription_data(const char *topic, const char *expr, bool sql, int64_t version)
{
    json_t *tags = json_array(), *codes = json_array();
    const char *sub = expr && *expr ? expr : "*";
    if (!sql && strcmp(sub, "*") != 0) {
        char *copy = strdup(sub);
        char *p = copy;
        while (p && *p) {
            char *bar = strstr(p, "||");
            if (bar)
                *bar = '\0';
            while (*p == ' ')
                p++;
            size_t l = strlen(p);
            while (l > 0 && p[l - 1] == ' ')
                p[--l] = '\0';
            if (*p) {
                json_array_append_new(tags, json_string(p));
                json_array_append_new(codes, json_integer(proxy_java_string_hash(p)));
            }
            p = bar ? bar + 2 : NULL;
        }
        free(copy);
    }
    return json_pack("{sbsosssssIsoss}", "classFilterMode", 0, "codeSet", codes, "expressionType",
                     sql ? "SQL92" : "TAG", "subString", sub, "subVersion", (json_int_t)version,
                     "tagsSet", tags, "topic", topic);
}

void proxy_clients_settings(proxy *px, rmq_grpc_call *call, const char *client_id,
                            const Apache__Rocketmq__V2__Settings *s)
{
    proxy_clients *t = px->clients;
    json_t *subs = json_array();
    int64_t now = (int64_t)px->api->now_wall_ms();
    const char *group = NULL;
    if (s->pub_sub_case == APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_PUBLISHING && s->publishing) {
        for (size_t i = 0; i < s->publishing->n_topics; i++)
            if (s->publishing->topics[i]->name)
                json_array_append_new(subs, json_string(s->publishing->topics[i]->name));
    } else if (s->pub_sub_case == APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_SUBSCRIPTION &&
               s->subscription) {
        group = s->subscription->group ? s->subscription->group->name : NULL;
        for (size_t i = 0; i < s->subscription->n_subscriptions; i++) {
            const Apache__Rocketmq__V2__SubscriptionEntry *e = s->subscription->subscriptions[i];
            if (!e->topic || !e->topic->name)
                continue;
            bool sql =
                e->expression && e->expression->type == APACHE__ROCKETMQ__V2__FILTER_TYPE__SQL;
            json_array_append_new(
                subs,
                subscription_data(e->topic->name, e->expression ? e->expression->expression : NULL,
                                  sql, now));
        }
    }
    pthread_mutex_lock(&t->mu);
    px_client *c = find(t, client_id, true);
    if (c) {
        c->type = s->client_type;
        free(c->group);
        c->group = group ? strdup(group) : NULL;
        json_decref(c->subs);
        c->subs = json_incref(subs);
        c->have_settings = true;
        c->channel = px->api->grpc_call_channel(call);
        const char *peer = px->api->grpc_call_peer(call);
        snprintf(c->addr, sizeof c->addr, "%s", peer ? peer : "");
    }
    pthread_mutex_unlock(&t->mu);
    json_decref(subs);
}

/* One in-process request carrying the client's broker-side identity. */
static int32_t call_broker(proxy *px, int code, rmq_channel_id ch, const char *addr,
                           const char *const *kv, const char *body, char *buf, size_t cap)
{
    const rmq_host_api *api = px->api;
    if (proxy_backend_is_cluster(px)) {
        /* cluster mode: the clients live in this proxy's table only, as in
         * Java's cluster-mode proxy (docs/compat.md) */
        snprintf(buf, cap, "%s", "");
        return 0;
    }
    rmq_cmd *req = api->cmd_new_request(code);
    char chs[32];
    snprintf(chs, sizeof chs, "%" PRIu64, (uint64_t)(PROXY_CHANNEL_BIT | ch));
    int rc = req ? 0 : RMQ_ENOMEM;
    if (rc == 0)
        rc = api->cmd_ext_set(req, "proxyClientChannel", chs);
    if (rc >= 0)
        rc = api->cmd_ext_set(req, "proxyClientAddr", addr);
    for (size_t i = 0; rc >= 0 && kv && kv[i]; i += 2)
        rc = api->cmd_ext_set(req, kv[i], kv[i + 1]);
    if (rc >= 0 && body)
        rc = api->cmd_set_body(req, body, strlen(body), NULL, NULL);
    if (rc < 0) {
        if (req)
            api->cmd_free(req);
        snprintf(buf, cap, "out of memory");
        return -1;
    }
    rmq_cmd *resp = NULL;
    rc = proxy_local(px, px->broker_server, req, &resp);
    if (rc < 0) {
        snprintf(buf, cap, "client registration on server %s: %s", px->broker_server,
                 rmq_strerror(rc));
        return -1;
    }
    int32_t code_out = api->cmd_code(resp);
    const char *remark = api->cmd_remark(resp);
    snprintf(buf, cap, "%s", remark ? remark : "");
    api->cmd_free(resp);
    return code_out;
}

void proxy_clients_heartbeat(proxy *px, rmq_grpc_call *call, const char *client_id,
                             const Apache__Rocketmq__V2__HeartbeatRequest *req,
                             Apache__Rocketmq__V2__Status *st, char *buf, size_t cap)
{
    proxy_clients *t = px->clients;
    rmq_channel_id ch = px->api->grpc_call_channel(call);
    const char *peer = px->api->grpc_call_peer(call);
    Apache__Rocketmq__V2__ClientType type = req->client_type;
    json_t *subs = NULL;
    char *group = NULL;
    pthread_mutex_lock(&t->mu);
    px_client *c = find(t, client_id, false);
    bool known = c && c->have_settings;
    if (known) {
        c->channel = ch;
        snprintf(c->addr, sizeof c->addr, "%s", peer ? peer : "");
        type = c->type;
        subs = json_incref(c->subs);
        group = c->group ? strdup(c->group) : NULL;
    }
    pthread_mutex_unlock(&t->mu);
    json_t *hb = NULL;
    if (!known) {
        /* Java's ClientActivity: no Settings from this client (none sent
         * yet, or its NotifyClientTermination already came: a heartbeat
         * still in flight then must not register it again) */
        proxy_status(st, APACHE__ROCKETMQ__V2__CODE__UNRECOGNIZED_CLIENT_TYPE,
                     "cannot find client settings for this client");
        goto out;
    }
    if (!group && req->group && req->group->name && req->group->name[0])
        group = strdup(req->group->name);
    hb = json_pack("{sss[]s[]}", "clientID", client_id, "producerDataSet", "consumerDataSet");
    size_t i;
    json_t *v;
    bool consumer = type == APACHE__ROCKETMQ__V2__CLIENT_TYPE__PUSH_CONSUMER ||
                    type == APACHE__ROCKETMQ__V2__CLIENT_TYPE__SIMPLE_CONSUMER;
    if (type == APACHE__ROCKETMQ__V2__CLIENT_TYPE__PRODUCER) {
        json_array_foreach(subs, i, v)
        {
            json_array_append_new(json_object_get(hb, "producerDataSet"),
                                  json_pack("{sO}", "groupName", v));
        }
    } else if (consumer && group) {
        json_array_append_new(json_object_get(hb, "consumerDataSet"),
                              json_pack("{sssssssssosb}", "groupName", group, "consumeType",
                                        type == APACHE__ROCKETMQ__V2__CLIENT_TYPE__SIMPLE_CONSUMER
                                            ? "CONSUME_ACTIVELY"
                                            : "CONSUME_PASSIVELY",
                                        "messageModel", "CLUSTERING", "consumeFromWhere",
                                        "CONSUME_FROM_LAST_OFFSET", "subscriptionDataSet",
                                        subs ? json_incref(subs) : json_array(), "unitMode", 0));
    } else if (consumer) {
        proxy_status(st, APACHE__ROCKETMQ__V2__CODE__ILLEGAL_CONSUMER_GROUP,
                     "consumer group cannot be empty");
        goto out;
    }
    char *body = json_dumps(hb, JSON_COMPACT);
    int32_t code =
        body ? call_broker(px, HEART_BEAT, ch, peer ? peer : "", NULL, body, buf, cap) : -1;
    free(body);
    if (code == 0)
        proxy_status(st, PX_OK, NULL);
    else
        proxy_status(st, code < 0 ? PX_INTERNAL_SERVER_ERROR : proxy_code_of_remoting(code),
                     buf[0] ? buf : NULL);
out:
    json_decref(hb);
    json_decref(subs);
    free(group);
}

/* Unregister one client (taken out of the table by the caller). */
static void unregister(proxy *px, px_client *c)
{
    char buf[256];
    size_t i;
    json_t *v;
    if (c->type == APACHE__ROCKETMQ__V2__CLIENT_TYPE__PRODUCER) {
        json_array_foreach(c->subs, i, v)
        {
            const char *kv[] = {"clientID", c->id, "producerGroup", json_string_value(v), NULL};
            (void)call_broker(px, UNREGISTER_CLIENT, c->channel, c->addr, kv, NULL, buf,
                              sizeof buf);
        }
    } else if (c->group) {
        const char *kv[] = {"clientID", c->id, "consumerGroup", c->group, NULL};
        (void)call_broker(px, UNREGISTER_CLIENT, c->channel, c->addr, kv, NULL, buf, sizeof buf);
    }
}

/* Take the clients matching id (or, id NULL, connection ch) out of the
 * table and unregister them. */
static void remove_where(proxy *px, const char *id, rmq_channel_id ch)
{
    proxy_clients *t = px->clients;
    for (;;) {
        px_client gone = {0};
        bool found = false;
        pthread_mutex_lock(&t->mu);
        for (size_t i = 0; i < t->n; i++)
            if (id ? strcmp(t->v[i].id, id) == 0 : t->v[i].channel == ch) {
                gone = t->v[i];
                t->v[i] = t->v[--t->n];
                found = true;
                break;
            }
        pthread_mutex_unlock(&t->mu);
        if (!found)
            return;
        unregister(px, &gone);
        client_free(&gone);
        if (id)
            return;
    }
}

void proxy_clients_terminate(proxy *px, const char *client_id)
{
    remove_where(px, client_id, 0);
}

static void on_channel(rmq_channel_event ev, rmq_channel_id ch, const char *peer, void *ud)
{
    (void)peer;
    if (ev == RMQ_CHANNEL_CLOSE || ev == RMQ_CHANNEL_EXCEPTION)
        remove_where(ud, NULL, ch);
}

int proxy_clients_init(proxy *px)
{
    proxy_clients *t = calloc(1, sizeof *t);
    if (!t)
        return RMQ_ENOMEM;
    pthread_mutex_init(&t->mu, NULL);
    px->clients = t;
    return px->api->add_channel_listener(px->ctx, on_channel, px);
}

void proxy_clients_fini(proxy *px)
{
    proxy_clients *t = px->clients;
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        client_free(&t->v[i]);
    free(t->v);
    pthread_mutex_destroy(&t->mu);
    free(t);
    px->clients = NULL;
}
