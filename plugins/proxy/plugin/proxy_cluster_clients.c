/* proxy_cluster_clients.c — cluster mode's registrations of 5.x clients at
 * the brokers: a client's HEART_BEAT (34) and UNREGISTER_CLIENT (35), built
 * as in local mode (proxy_clients.c), go oneway over the proxy's outgoing
 * remoting connection to the master of every broker that holds a queue of
 * one of the client's topics (its publishing topics, or its subscriptions'),
 * as Java's cluster-mode proxy sends its transaction heartbeats oneway to
 * the brokers of its groups' clusters. A broker then lists the client
 * (consumerConnection / producerConnection) under the proxy's connection
 * and sends that connection its CHECK_TRANSACTION_STATE for a producer
 * group (proxy_cluster_check.c answers it). Each 5.x Heartbeat (every 10 s
 * from the clients) and proxy_clients.c's pass every 30 s repeat the
 * registration, which keeps it inside the broker's 120 s channel expiry. */
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

int proxy_cluster_client_call(proxy *px, int code, const json_t *subs, const char *const *kv,
                              const char *body)
{
    const rmq_host_api *api = px->api;
    char addrs[MAX_BROKERS][128];
    size_t n = 0;
    size_t i;
    json_t *v;
    json_array_foreach(subs, i, v)
    {
        const char *topic = entry_topic(v);
        if (topic && *topic)
            topic_brokers(px, topic, addrs, &n);
    }
    int sent = 0;
    for (size_t k = 0; k < n; k++) {
        rmq_cmd *req = api->cmd_new_request(code);
        int rc = req ? 0 : RMQ_ENOMEM;
        for (size_t j = 0; rc >= 0 && kv && kv[j]; j += 2)
            rc = api->cmd_ext_set(req, kv[j], kv[j + 1]);
        if (rc >= 0 && body)
            rc = api->cmd_set_body(req, body, strlen(body), NULL, NULL);
        if (rc < 0) {
            if (req)
                api->cmd_free(req);
            return RMQ_ENOMEM;
        }
        rc = api->invoke_oneway_addr(px->ctx, addrs[k], req, px->local_timeout_ms);
        if (rc < 0)
            api->log(px->ctx, RMQ_LOG_WARN, "%s to broker %s: %s",
                     code == 34 ? "HEART_BEAT" : "UNREGISTER_CLIENT", addrs[k], rmq_strerror(rc));
        else
            sent++;
    }
    return sent;
}
