/* proxy_cluster.c — cluster mode (proxyMode = "cluster"): the proxy owns no
 * store and no NameServer; like Java's proxy in cluster mode it asks the
 * NameServers of namesrvAddr for routes (GET_ROUTEINFO_BY_TOPIC over
 * outgoing remoting) and sends every broker request to the master
 * (brokerId 0) of the broker the request is about, at the address the
 * latest route gave for it. The address book is filled from every route
 * the proxy reads, so a broker that restarted on another address is found
 * again with the next route; a broker name not seen yet (an ack after a
 * proxy restart) makes the proxy read the request topic's route first. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proxy_backend.h"
#include "proxy_cluster.h"

#define MASTER_ID "0"

typedef struct known_broker {
    char name[128];
    char addr[128];
} known_broker;

struct proxy_cluster {
    char **ns; /* the NameServers of namesrvAddr */
    size_t nns;
    atomic_size_t ns_pick; /* the one in use; the next after a failure */
    pthread_mutex_t mu;    /* guards b, nb, cap */
    known_broker *b;
    size_t nb, cap;
};

proxy_cluster *proxy_cluster_new(const char *namesrv_addr, const char **why)
{
    *why = NULL;
    if (!namesrv_addr || !*namesrv_addr) {
        *why = "namesrvAddr is required (host:port[;host:port...])";
        return NULL;
    }
    proxy_cluster *c = calloc(1, sizeof *c);
    char *copy = strdup(namesrv_addr);
    if (!c || !copy || pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        free(copy);
        return NULL;
    }
    char *save = NULL;
    for (char *t = strtok_r(copy, "; ,", &save); t; t = strtok_r(NULL, "; ,", &save)) {
        char **grown = realloc(c->ns, (c->nns + 1) * sizeof *grown);
        if (!grown || !(grown[c->nns] = strdup(t))) {
            if (grown)
                c->ns = grown;
            free(copy);
            proxy_cluster_free(c);
            return NULL;
        }
        c->ns = grown;
        c->nns++;
    }
    free(copy);
    if (c->nns == 0) {
        *why = "namesrvAddr names no NameServer";
        proxy_cluster_free(c);
        return NULL;
    }
    return c;
}

void proxy_cluster_free(proxy_cluster *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nns; i++)
        free(c->ns[i]);
    free(c->ns);
    free(c->b);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

int proxy_cluster_namesrv_call(proxy *px, proxy_cluster *c, rmq_cmd *req, rmq_cmd **resp)
{
    /* one NameServer per call, as Java's client keeps the one that answers;
     * a failure moves the next calls to the next one */
    size_t pick = atomic_load(&c->ns_pick) % c->nns;
    int rc = px->api->invoke_sync_addr(px->ctx, c->ns[pick], req, px->local_timeout_ms, resp);
    if (rc < 0 && c->nns > 1) {
        size_t expect = pick;
        atomic_compare_exchange_strong(&c->ns_pick, &expect, (pick + 1) % c->nns);
        px->api->log(px->ctx, RMQ_LOG_WARN, "NameServer %s: %s; next calls go to %s", c->ns[pick],
                     rmq_strerror(rc), c->ns[(pick + 1) % c->nns]);
    }
    return rc;
}

static known_broker *find_locked(proxy_cluster *c, const char *name)
{
    for (size_t i = 0; i < c->nb; i++)
        if (strcmp(c->b[i].name, name) == 0)
            return &c->b[i];
    return NULL;
}

void proxy_cluster_remember(proxy_cluster *c, const void *broker_datas)
{
    const json_t *bds = broker_datas;
    size_t i;
    json_t *bd;
    pthread_mutex_lock(&c->mu);
    json_array_foreach(bds, i, bd)
    {
        const char *name = json_string_value(json_object_get(bd, "brokerName"));
        const char *addr =
            json_string_value(json_object_get(json_object_get(bd, "brokerAddrs"), MASTER_ID));
        if (!name || !addr || strlen(name) >= sizeof c->b[0].name ||
            strlen(addr) >= sizeof c->b[0].addr)
            continue;
        known_broker *k = find_locked(c, name);
        if (!k && c->nb == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 8;
            known_broker *grown = realloc(c->b, cap * sizeof *grown);
            if (!grown)
                continue;
            c->b = grown;
            c->cap = cap;
        }
        if (!k) {
            k = &c->b[c->nb++];
            snprintf(k->name, sizeof k->name, "%s", name);
        }
        snprintf(k->addr, sizeof k->addr, "%s", addr);
    }
    pthread_mutex_unlock(&c->mu);
}

static bool lookup(proxy_cluster *c, const char *name, char *addr, size_t cap)
{
    pthread_mutex_lock(&c->mu);
    known_broker *k = find_locked(c, name);
    if (k)
        snprintf(addr, cap, "%s", k->addr);
    pthread_mutex_unlock(&c->mu);
    return k != NULL;
}

bool proxy_cluster_broker_name(proxy_cluster *c, const char *addr, char *name, size_t cap)
{
    bool found = false;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->nb && !found; i++)
        if (strcmp(c->b[i].addr, addr) == 0) {
            snprintf(name, cap, "%s", c->b[i].name);
            found = true;
        }
    pthread_mutex_unlock(&c->mu);
    return found;
}

int proxy_cluster_broker_addr(proxy *px, proxy_cluster *c, const char *topic, const char *broker,
                              char *addr, size_t cap)
{
    bool named = broker && *broker;
    if (named && lookup(c, broker, addr, cap))
        return 0;
    if (!topic || !*topic)
        return RMQ_ENOENT;
    /* reading the route learns its brokers' addresses (proxy_route_fetch) */
    proxy_route r;
    char why[256];
    int rc = proxy_route_fetch(px, topic, &r, why, sizeof why);
    if (rc != 0)
        return rc;
    char first[128] = "";
    for (size_t i = 0; i < r.nqd && !first[0]; i++)
        if (r.qd[i].nbroker_ids > 0)
            snprintf(first, sizeof first, "%s", r.qd[i].broker_name);
    proxy_route_free(&r);
    const char *want = named ? broker : first;
    return *want && lookup(c, want, addr, cap) ? 0 : RMQ_ENOENT;
}
