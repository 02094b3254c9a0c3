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
 * in-process request: no connection has such an id, so the broker sends no
 * remoting frames into an HTTP/2 connection — it drops
 * NOTIFY_CONSUMER_IDS_CHANGED for it and hands its relays (running info,
 * consume directly) to this plugin by event (proxy_client_call.c). The
 * request also carries the client's language and version from its gRPC
 * metadata (proxyClientLanguage / proxyClientVersion). In cluster mode the
 * same HEART_BEAT / UNREGISTER_CLIENT go oneway over the proxy's own
 * connections to the brokers of the client's topics
 * (proxy_cluster_clients.c). There a client's removal shuts its
 * registration gate (proxy_reg_gate.c) before its UNREGISTER_CLIENTs, so a
 * HEART_BEAT a periodic pass or a relayed Heartbeat decided from a copy
 * taken before the removal is posted before them or not at all, never
 * after (which would re-register a gone client on a new connection).
 * The table is the plugin's state across a hot reload (export / import):
 * the new generation knows every client's Settings at once.
 * Clients are few per proxy: a locked array, searched linearly. */
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/services/proxy_client_call_event.h>

#include "proxy_backend.h"
#include "proxy_cluster.h"
#include "proxy_internal.h"
#include "proxy_reg_gate.h"

#define HEART_BEAT 34
#define UNREGISTER_CLIENT 35
#define PROXY_CHANNEL_BIT RMQ_PROXY_CHANNEL_BIT
#define LANGUAGE_OTHER 7
#define V4_9_8 409
#define HEARTBEAT_PERIOD_MS 30000 /* Java's heartbeatBrokerInterval */

typedef struct px_client {
    char *id;
    Apache__Rocketmq__V2__ClientType type;
    char *group;  /* consumers */
    json_t *subs; /* consumers: SubscriptionData array; producers: topic names */
    bool have_settings;
    rmq_channel_id channel; /* the gRPC connection's */
    char addr[64];
    int32_t language, version;  /* LanguageCode byte, MQVersion ordinal */
    int64_t since_ms;           /* its first Settings (wall clock) */
    int64_t request_timeout_ms; /* Settings.request_timeout; 0 = none said */
    int32_t max_attempts;       /* Settings.backoff_policy.max_attempts; 0 = none */
    bool fifo;                  /* Settings.subscription.fifo */
    proxy_reg_gate *gate;       /* cluster mode's HEART_BEATs pass it; removal shuts it */
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
    proxy_reg_gate_unref(c->gate);
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
    if (!(c->id = strdup(id)) || !(c->gate = proxy_reg_gate_new())) {
        free(c->id);
        return NULL;
    }
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

/* x-mq-language (rocketmq-apis' Language names) as a remoting LanguageCode
 * byte (protocol.md §2.6): the same names, GOLANG as GO, DOT_NET as
 * DOTNET; a language remoting has no code for is OTHER. */
static int32_t language_code(const char *name)
{
    static const struct {
        const char *name;
        int32_t code;
    } map[] = {{"JAVA", 0},   {"CPP", 1},   {"DOT_NET", 2}, {"DOTNET", 2},
               {"PYTHON", 3}, {"RUBY", 6},  {"GOLANG", 9},  {"GO", 9},
               {"PHP", 10},   {"RUST", 12}, {"NODE_JS", 13}};
    for (size_t i = 0; name && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(name, map[i].name) == 0)
            return map[i].code;
    return LANGUAGE_OTHER;
}

/* x-mq-client-version as an MQVersion ordinal: Java's proxy takes the
 * enum name ("V5_2_0"); the clients send "5.2.0", read here as that same
 * release (Java's proxy falls back to its own version then). 3.x and
 * unreadable versions: V4_9_8, this server's. */
int32_t proxy_version_ordinal(const char *v)
{
    unsigned a = 0, b = 0, c = 0;
    int n = 0;
    if (v && (v[0] == 'V' || v[0] == 'v'))
        n = sscanf(v + 1, "%u_%u_%u", &a, &b, &c);
    else if (v)
        n = sscanf(v, "%u.%u.%u", &a, &b, &c);
    if (n != 3 || b > 9 || c > 9 || a < 4 || a > 5)
        return V4_9_8;
    /* MQVersion.Version: V4_0_0_SNAPSHOT is 212, then a SNAPSHOT and a
     * release per a.b.c, ten patch levels per minor, V5 right after V4_9_9 */
    return (int32_t)(212 + (a - 4) * 200 + b * 20 + c * 2 + 1);
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
        c->language = language_code(px->api->grpc_metadata(call, "x-mq-language"));
        c->version = proxy_version_ordinal(px->api->grpc_metadata(call, "x-mq-client-version"));
        if (!c->since_ms)
            c->since_ms = now;
        const Google__Protobuf__Duration *rt = s->request_timeout;
        c->request_timeout_ms = rt ? rt->seconds * 1000 + rt->nanos / 1000000 : 0;
        c->max_attempts = s->backoff_policy ? s->backoff_policy->max_attempts : 0;
        c->fifo = s->pub_sub_case == APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_SUBSCRIPTION &&
                  s->subscription && s->subscription->fifo;
    }
    pthread_mutex_unlock(&t->mu);
    json_decref(subs);
}

/* One in-process request carrying the client's broker-side identity (and,
 * language >= 0, its language and version). */
static int32_t call_broker_as(proxy *px, int code, const char *client_id, rmq_channel_id ch,
                              const char *addr, int32_t language, int32_t version,
                              const json_t *subs, const char *const *kv, const char *body,
                              proxy_reg_gate *gate, char *buf, size_t cap)
{
    const rmq_host_api *api = px->api;
    if (proxy_backend_is_cluster(px)) {
        /* cluster mode: oneway to the brokers of the client's topics over
         * the client's own connections (proxy_cluster_clients.c); the
         * client is answered from this proxy's table, as Java's
         * cluster-mode proxy answers it */
        snprintf(buf, cap, "%s", "");
        return proxy_cluster_client_call(px, code, client_id, language, version, subs, kv, body,
                                         gate) < 0
                   ? -1
                   : 0;
    }
    rmq_cmd *req = api->cmd_new_request(code);
    char chs[32], ls[16], vs[16];
    snprintf(chs, sizeof chs, "%" PRIu64, (uint64_t)(PROXY_CHANNEL_BIT | ch));
    snprintf(ls, sizeof ls, "%" PRId32, language);
    snprintf(vs, sizeof vs, "%" PRId32, version);
    int rc = req ? 0 : RMQ_ENOMEM;
    if (rc == 0)
        rc = api->cmd_ext_set(req, "proxyClientChannel", chs);
    if (rc >= 0)
        rc = api->cmd_ext_set(req, "proxyClientAddr", addr);
    if (rc >= 0 && language >= 0)
        rc = api->cmd_ext_set(req, "proxyClientLanguage", ls);
    if (rc >= 0 && language >= 0)
        rc = api->cmd_ext_set(req, "proxyClientVersion", vs);
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

static int32_t call_broker(proxy *px, int code, const char *client_id, rmq_channel_id ch,
                           const char *addr, const json_t *subs, const char *const *kv,
                           const char *body, char *buf, size_t cap)
{
    return call_broker_as(px, code, client_id, ch, addr, -1, -1, subs, kv, body, NULL, buf, cap);
}

static void unregister_as(proxy *px, const char *id, Apache__Rocketmq__V2__ClientType type,
                          const char *group, const json_t *subs, rmq_channel_id ch,
                          const char *addr);

/* The HEART_BEAT body of one client (NULL with *bad set when a consumer
 * names no group). */
static json_t *heartbeat_body(const char *client_id, Apache__Rocketmq__V2__ClientType type,
                              json_t *subs, const char *group, bool *bad)
{
    *bad = false;
    json_t *hb =
        json_pack("{sss[]s[]}", "clientID", client_id, "producerDataSet", "consumerDataSet");
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
        json_decref(hb);
        *bad = true;
        return NULL;
    }
    return hb;
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
    proxy_reg_gate *gate = NULL;
    int32_t language = LANGUAGE_OTHER, version = V4_9_8;
    pthread_mutex_lock(&t->mu);
    px_client *c = find(t, client_id, false);
    bool known = c && c->have_settings;
    if (known) {
        language = c->language;
        version = c->version;
        c->channel = ch;
        snprintf(c->addr, sizeof c->addr, "%s", peer ? peer : "");
        type = c->type;
        subs = json_incref(c->subs);
        group = c->group ? strdup(c->group) : NULL;
        gate = proxy_reg_gate_ref(c->gate);
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
    bool bad;
    hb = heartbeat_body(client_id, type, subs, group, &bad);
    if (bad) {
        proxy_status(st, APACHE__ROCKETMQ__V2__CODE__ILLEGAL_CONSUMER_GROUP,
                     "consumer group cannot be empty");
        goto out;
    }
    char *body = hb ? json_dumps(hb, JSON_COMPACT) : NULL;
    /* cluster mode: not posted once a termination removed the client since
     * the copy above (the gate) */
    int32_t code = body ? call_broker_as(px, HEART_BEAT, client_id, ch, peer ? peer : "", language,
                                         version, subs, NULL, body, gate, buf, cap)
                        : -1;
    free(body);
    /* local mode: the in-process HEART_BEAT is a synchronous call, not
     * posted under the gate; when the client's removal (and its
     * UNREGISTER_CLIENT) came while it ran, the broker may have applied it
     * after the UNREGISTER_CLIENT: unregister again, so a gone client is
     * not listed until the broker's channel expiry */
    if (code == 0 && !proxy_backend_is_cluster(px) && proxy_reg_gate_is_shut(gate))
        unregister_as(px, client_id, type, group, subs, ch, peer ? peer : "");
    if (code == 0)
        proxy_status(st, PX_OK, NULL);
    else
        proxy_status(st, code < 0 ? PX_INTERNAL_SERVER_ERROR : proxy_code_of_remoting(code),
                     buf[0] ? buf : NULL);
out:
    json_decref(hb);
    json_decref(subs);
    free(group);
    proxy_reg_gate_unref(gate);
}

/* Cluster mode, every HEARTBEAT_PERIOD_MS on the grpc executor: every
 * client with Settings registered again at the brokers of its topics, as
 * Java's client heartbeats its brokers every heartbeatBrokerInterval
 * (30 s): a broker that restarted, or a topic's route that gained a broker,
 * learns the clients without waiting for their next Heartbeat. */
typedef struct hb_copy {
    char *id, *body;
    json_t *subs;
    int32_t language, version;
    proxy_reg_gate *gate;
} hb_copy;

static void heartbeat_all(void *ud)
{
    proxy *px = ud;
    proxy_clients *t = px->clients;
    pthread_mutex_lock(&t->mu);
    size_t n = 0;
    hb_copy *all = t->n ? calloc(t->n, sizeof *all) : NULL;
    for (size_t i = 0; all && i < t->n; i++) {
        const px_client *c = &t->v[i];
        bool bad;
        json_t *hb =
            c->have_settings ? heartbeat_body(c->id, c->type, c->subs, c->group, &bad) : NULL;
        hb_copy *one = &all[n];
        one->body = hb ? json_dumps(hb, JSON_COMPACT) : NULL;
        json_decref(hb);
        if (!one->body)
            continue;
        one->id = strdup(c->id);
        one->subs = c->subs ? json_incref(c->subs) : json_array();
        one->language = c->language;
        one->version = c->version;
        one->gate = proxy_reg_gate_ref(c->gate);
        n++;
    }
    pthread_mutex_unlock(&t->mu);
    for (size_t i = 0; i < n; i++) {
        hb_copy *one = &all[i];
        /* a client removed since the copy (unregistered, its connections
         * closed or being closed) has its gate shut: nothing is posted */
        if (one->id)
            (void)proxy_cluster_client_call(px, HEART_BEAT, one->id, one->language, one->version,
                                            one->subs, NULL, one->body, one->gate);
        free(one->id);
        free(one->body);
        json_decref(one->subs);
        proxy_reg_gate_unref(one->gate);
    }
    free(all);
}

/* UNREGISTER_CLIENT for one client at the brokers: per producer group
 * (a producer's subs are its topics) or for its consumer group. */
static void unregister_as(proxy *px, const char *id, Apache__Rocketmq__V2__ClientType type,
                          const char *group, const json_t *subs, rmq_channel_id ch,
                          const char *addr)
{
    char buf[256];
    size_t i;
    json_t *v;
    if (type == APACHE__ROCKETMQ__V2__CLIENT_TYPE__PRODUCER) {
        json_array_foreach(subs, i, v)
        {
            const char *kv[] = {"clientID", id, "producerGroup", json_string_value(v), NULL};
            json_t *one = json_pack("[O]", v); /* the producer group's topic */
            (void)call_broker(px, UNREGISTER_CLIENT, id, ch, addr, one, kv, NULL, buf, sizeof buf);
            json_decref(one);
        }
    } else if (group) {
        const char *kv[] = {"clientID", id, "consumerGroup", group, NULL};
        (void)call_broker(px, UNREGISTER_CLIENT, id, ch, addr, subs, kv, NULL, buf, sizeof buf);
    }
}

/* Unregister one client (taken out of the table by the caller). */
static void unregister(proxy *px, px_client *c)
{
    unregister_as(px, c->id, c->type, c->group, c->subs, c->channel, c->addr);
    /* cluster mode: the client's own broker connections go with it, after
     * the UNREGISTER_CLIENTs they carry (proxy_cluster_clients.c) */
    if (proxy_backend_is_cluster(px))
        (void)proxy_cluster_client_close(px, c->id, c->subs);
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
                /* gone from here on: a HEART_BEAT decided before is either
                 * posted already or never (proxy_reg_gate.c) */
                proxy_reg_gate_shut(gone.gate);
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

int proxy_clients_start_heartbeats(proxy *px, const char *executor)
{
    if (!proxy_backend_is_cluster(px))
        return 0;
    rmq_timer_id id;
    return px->api->add_timer(px->ctx, HEARTBEAT_PERIOD_MS, HEARTBEAT_PERIOD_MS, heartbeat_all, px,
                              executor, &id);
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

bool proxy_clients_view(proxy *px, const char *client_id, rmq_channel_id proxy_channel,
                        proxy_client_view *out)
{
    proxy_clients *t = px->clients;
    bool found = false;
    pthread_mutex_lock(&t->mu);
    px_client *c = client_id ? find(t, client_id, false) : NULL;
    if (c && c->have_settings &&
        (proxy_channel == 0 || (PROXY_CHANNEL_BIT | c->channel) == proxy_channel)) {
        found = true;
        out->type = c->type;
        snprintf(out->group, sizeof out->group, "%s", c->group ? c->group : "");
        out->subs = json_incref(c->subs);
        out->version = c->version;
        out->since_ms = c->since_ms;
        out->request_timeout_ms = c->request_timeout_ms;
        out->max_attempts = c->max_attempts;
        out->fifo = c->fifo;
    }
    pthread_mutex_unlock(&t->mu);
    return found;
}

/* The table as JSON for the next generation (hot reload): the clients keep
 * their Settings, registrations and connections across it. */
char *proxy_clients_export(proxy *px)
{
    proxy_clients *t = px->clients;
    json_t *a = json_array();
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; a && i < t->n; i++) {
        const px_client *c = &t->v[i];
        json_array_append_new(a, json_pack("{sssisssOsIsssisisIsIsisb}", "id", c->id, "type",
                                           (int)c->type, "group", c->group ? c->group : "", "subs",
                                           c->subs ? c->subs : json_null(), "channel",
                                           (json_int_t)c->channel, "addr", c->addr, "language",
                                           (int)c->language, "version", (int)c->version, "since",
                                           (json_int_t)c->since_ms, "requestTimeout",
                                           (json_int_t)c->request_timeout_ms, "maxAttempts",
                                           (int)c->max_attempts, "fifo", c->fifo));
    }
    pthread_mutex_unlock(&t->mu);
    char *out = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return out;
}

int proxy_clients_import(proxy *px, const char *text, size_t len)
{
    proxy_clients *t = px->clients;
    json_t *a = json_loadb(text, len, 0, NULL);
    if (!json_is_array(a)) {
        json_decref(a);
        return RMQ_EINVAL;
    }
    size_t i;
    json_t *e;
    pthread_mutex_lock(&t->mu);
    json_array_foreach(a, i, e)
    {
        const char *id = NULL, *group = "", *addr = "";
        int type = 0, language = LANGUAGE_OTHER, version = V4_9_8, max_attempts = 0, fifo = 0;
        json_int_t channel = 0, since = 0, rt = 0;
        json_t *subs = NULL;
        if (json_unpack(e, "{sssisssosIsssisisIsIsisb}", "id", &id, "type", &type, "group", &group,
                        "subs", &subs, "channel", &channel, "addr", &addr, "language", &language,
                        "version", &version, "since", &since, "requestTimeout", &rt, "maxAttempts",
                        &max_attempts, "fifo", &fifo) != 0)
            continue;
        px_client *c = find(t, id, true);
        if (!c)
            break;
        c->type = (Apache__Rocketmq__V2__ClientType)type;
        free(c->group);
        c->group = group[0] ? strdup(group) : NULL;
        json_decref(c->subs);
        c->subs = json_is_array(subs) ? json_incref(subs) : json_array();
        c->have_settings = true;
        c->channel = (rmq_channel_id)channel;
        snprintf(c->addr, sizeof c->addr, "%s", addr);
        c->language = language;
        c->version = version;
        c->since_ms = since;
        c->request_timeout_ms = rt;
        c->max_attempts = max_attempts;
        c->fifo = fifo;
    }
    pthread_mutex_unlock(&t->mu);
    json_decref(a);
    return 0;
}
