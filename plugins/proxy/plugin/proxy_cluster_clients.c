/* proxy_cluster_clients.c — cluster mode's registrations of 5.x clients at
 * the brokers: a client's HEART_BEAT (34) and UNREGISTER_CLIENT (35), built
 * as in local mode (proxy_clients.c), go oneway to the master of every
 * broker that holds a queue of one of the client's topics (its publishing
 * topics, or its subscriptions'), as Java's cluster-mode proxy sends its
 * transaction heartbeats oneway to the brokers of its groups' clusters.
 * Each client has its own connection to each broker ("ip:port#tag", host
 * ABI 1.14) and its requests carry its language and version in their
 * header: a broker keys clients by connection (Java's ConsumerGroupInfo /
 * ProducerManager keep one client per channel and group), so over one
 * shared connection it would list one client per group; this way it lists
 * every client, with its own id, language and version, at the proxy's
 * address (the connection's local port), drops exactly the client an
 * UNREGISTER_CLIENT names, and sends a CHECK_TRANSACTION_STATE on the
 * connection of the producer it chose (proxy_cluster_check.c relays it to
 * that client). Each 5.x Heartbeat (every 10 s from the clients) and
 * proxy_clients.c's pass every 30 s repeat the registration, which keeps it
 * inside the broker's 120 s channel expiry. Once a gone client's
 * UNREGISTER_CLIENTs are sent, its connections are closed (host ABI 1.15
 * close_outgoing), as a Java client's shutdown closes its channels; on an
 * older host they fall idle and the broker closes them after 120 s.
 * A HEART_BEAT decided before the client was removed (a periodic pass or a
 * relayed Heartbeat that copied it just before; both run on the grpc
 * executor, the removal there or on the server's event thread) must not
 * be posted after the UNREGISTER_CLIENT and the close: it would dial a new
 * tagged connection and register a gone client until the broker's 120 s
 * expiry. So HEART_BEATs are posted under the client's registration gate
 * (proxy_reg_gate.c), which its removal shuts before posting the
 * UNREGISTER_CLIENTs: the broker addresses are resolved (maybe a blocking
 * NameServer call, on the executor) and the requests built before it, and
 * the gate covers only the oneway posts, never I/O. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "proxy_backend.h"
#include "proxy_cluster.h"

#define MAX_BROKERS 64

/* The topic of one entry of a client's subs: a topic name (producers) or
 * a SubscriptionData (consumers). */
static const char *entry_topic(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v)
                             : json_string_value(json_object_get(v, "topic"));
}

/* Adds the master addresses of topic's brokers to addrs (deduplicated). */
static void topic_brokers(proxy *px, const char *topic, char (*addrs)[128], size_t *n)
{
    proxy_route r;
    char why[256];
    if (proxy_route_get(px, topic, &r, why, sizeof why) != 0)
        return;
    for (size_t i = 0; i < r.nqd && *n < MAX_BROKERS; i++) {
        char addr[128];
        if (proxy_cluster_broker_addr(px, px->cluster, topic, r.qd[i].broker_name, addr,
                                      sizeof addr) != 0)
            continue;
        bool seen = false;
        for (size_t k = 0; k < *n && !seen; k++)
            seen = strcmp(addrs[k], addr) == 0;
        if (!seen)
            snprintf(addrs[(*n)++], sizeof addrs[0], "%s", addr);
    }
    proxy_route_free(&r);
}

/* The masters of the brokers of every topic in subs (deduplicated). */
static void client_brokers(proxy *px, const json_t *subs, char (*addrs)[128], size_t *n)
{
    size_t i;
    json_t *v;
    json_array_foreach(subs, i, v)
    {
        const char *topic = entry_topic(v);
        if (topic && *topic)
            topic_brokers(px, topic, addrs, n);
    }
}

void proxy_client_tag(const char *client_id, char out[PROXY_CLIENT_TAG_LEN + 1])
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)client_id; p && *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    snprintf(out, PROXY_CLIENT_TAG_LEN + 1, "%016" PRIx64, h);
}

int proxy_cluster_client_call(proxy *px, int code, const char *client_id, int32_t language,
                              int32_t version, const json_t *subs, const char *const *kv,
                              const char *body, proxy_reg_gate *gate)
{
    const rmq_host_api *api = px->api;
    char addrs[MAX_BROKERS][128];
    size_t n = 0;
    /* may ask a NameServer: before the gate, which only ever covers posts */
    client_brokers(px, subs, addrs, &n);
    /* the client's own connections, when the host has them (ABI 1.14) */
    bool own = api->abi_minor >= 14 && api->cmd_set_language && client_id;
    char tag[PROXY_CLIENT_TAG_LEN + 1];
    proxy_client_tag(client_id, tag);
    rmq_cmd *reqs[MAX_BROKERS];
    for (size_t k = 0; k < n; k++) {
        rmq_cmd *req = reqs[k] = api->cmd_new_request(code);
        int rc = req ? 0 : RMQ_ENOMEM;
        if (rc == 0 && own && language >= 0)
            rc = api->cmd_set_language(req, language);
        if (rc >= 0 && own && version >= 0)
            rc = api->cmd_set_version(req, version);
        for (size_t j = 0; rc >= 0 && kv && kv[j]; j += 2)
            rc = api->cmd_ext_set(req, kv[j], kv[j + 1]);
        if (rc >= 0 && body)
            rc = api->cmd_set_body(req, body, strlen(body), NULL, NULL);
        if (rc < 0) {
            for (size_t j = 0; j <= k; j++)
                if (reqs[j])
                    api->cmd_free(reqs[j]);
            return RMQ_ENOMEM;
        }
    }
    /* a client gone since its registration was decided: nothing is posted
     * (its UNREGISTER_CLIENT and close may already be) */
    if (gate && !proxy_reg_gate_enter(gate)) {
        for (size_t k = 0; k < n; k++)
            api->cmd_free(reqs[k]);
        return 0;
    }
    int sent = 0;
    for (size_t k = 0; k < n; k++) {
        char to[160];
        if (own)
            snprintf(to, sizeof to, "%s#%s", addrs[k], tag);
        else
            snprintf(to, sizeof to, "%s", addrs[k]);
        int rc = api->invoke_oneway_addr(px->ctx, to, reqs[k], px->local_timeout_ms);
        if (rc < 0)
            api->log(px->ctx, RMQ_LOG_WARN, "%s to broker %s: %s",
                     code == 34 ? "HEART_BEAT" : "UNREGISTER_CLIENT", addrs[k], rmq_strerror(rc));
        else
            sent++;
    }
    if (gate)
        proxy_reg_gate_leave(gate);
    return sent;
}

int proxy_cluster_client_close(proxy *px, const char *client_id, const json_t *subs)
{
    const rmq_host_api *api = px->api;
    if (api->abi_minor < 15 || !api->close_outgoing || !client_id)
        return 0;
    char addrs[MAX_BROKERS][128];
    size_t n = 0;
    client_brokers(px, subs, addrs, &n);
    char tag[PROXY_CLIENT_TAG_LEN + 1];
    proxy_client_tag(client_id, tag);
    int closed = 0;
    for (size_t k = 0; k < n; k++) {
        char to[160];
        snprintf(to, sizeof to, "%s#%s", addrs[k], tag);
        int rc = api->close_outgoing(px->ctx, to);
        if (rc < 0)
            api->log(px->ctx, RMQ_LOG_WARN, "closing client %s's connection to broker %s: %s",
                     client_id, addrs[k], rmq_strerror(rc));
        else
            closed++;
    }
    return closed;
}
