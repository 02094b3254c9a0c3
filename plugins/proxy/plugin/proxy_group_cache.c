/* proxy_group_cache.c — whether a consumer group is orderly (FIFO), from a
 * copy of the broker role's subscription-group table. ReceiveMessage and
 * QueryAssignment ask it on every call; fetching the table each time
 * (GET_ALL_SUBSCRIPTIONGROUP_CONFIG: a blocking invoke_local and a JSON
 * parse of every group) was most of a Receive's own cost on a busy
 * consumer. The copy is fetched again when it is older than
 * GROUP_CACHE_TTL_MS, or, for a group it does not hold (one just created),
 * when it is older than GROUP_CACHE_MISS_MS: a change of a group is seen
 * within GROUP_CACHE_TTL_MS (docs/compat.md). One thread refreshes at a
 * time; the others answer from the copy they have meanwhile. */
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>

#include "proxy_internal.h"

#define GET_ALL_SUBSCRIPTIONGROUP_CONFIG 201
#define GROUP_CACHE_TTL_MS 1000
#define GROUP_CACHE_MISS_MS 50

struct proxy_group_cache {
    pthread_mutex_t mu;
    json_t *groups;      /* subscriptionGroupTable of the last fetch; NULL: none yet */
    uint64_t fetched_ms; /* monotonic */
    bool refreshing;
};

int proxy_group_cache_init(proxy *px)
{
    proxy_group_cache *gc = calloc(1, sizeof(*gc));
    if (!gc)
        return RMQ_ENOMEM;
    pthread_mutex_init(&gc->mu, NULL);
    px->groups = gc;
    return 0;
}

void proxy_group_cache_fini(proxy *px)
{
    proxy_group_cache *gc = px->groups;
    if (!gc)
        return;
    json_decref(gc->groups);
    pthread_mutex_destroy(&gc->mu);
    free(gc);
    px->groups = NULL;
}

/* The broker role's subscriptionGroupTable (in-process; the SDK's group
 * config has no 5.x fields, broker-client-mgr keeps them in the table), or
 * NULL when it cannot be had. */
static json_t *fetch_groups(proxy *px)
{
    rmq_cmd *req = px->api->cmd_new_request(GET_ALL_SUBSCRIPTIONGROUP_CONFIG);
    rmq_cmd *resp = NULL;
    json_t *table = NULL;
    if (!req)
        return NULL;
    if (proxy_local(px, px->broker_server, req, &resp) == 0 && resp &&
        px->api->cmd_code(resp) == 0) {
        size_t len = 0;
        const char *body = px->api->cmd_body(resp, &len);
        json_t *root = body ? json_loadb(body, len, 0, NULL) : NULL;
        table = json_object_get(root, "subscriptionGroupTable");
        if (json_is_object(table))
            json_incref(table);
        else
            table = NULL;
        json_decref(root);
    }
    if (resp)
        px->api->cmd_free(resp);
    return table;
}

/* -1: the copy does not hold the group; else its consumeMessageOrderly.
 * Caller holds mu. */
static int lookup(const proxy_group_cache *gc, const char *group)
{
    const json_t *g = gc->groups ? json_object_get(gc->groups, group) : NULL;
    return g ? json_is_true(json_object_get(g, "consumeMessageOrderly")) : -1;
}

bool proxy_group_fifo(proxy *px, const char *group)
{
    proxy_group_cache *gc = px->groups;
    if (!gc || !group || !px->broker_server)
        return false;
    uint64_t now = px->api->now_monotonic_ms();
    pthread_mutex_lock(&gc->mu);
    int fifo = lookup(gc, group);
    uint64_t age = gc->groups ? now - gc->fetched_ms : UINT64_MAX;
    bool refresh =
        fifo < 0 ? age >= GROUP_CACHE_MISS_MS : age >= GROUP_CACHE_TTL_MS && !gc->refreshing;
    if (refresh)
        gc->refreshing = true;
    pthread_mutex_unlock(&gc->mu);
    if (!refresh)
        return fifo > 0;
    json_t *table = fetch_groups(px);
    pthread_mutex_lock(&gc->mu);
    gc->refreshing = false;
    if (table) {
        json_decref(gc->groups);
        gc->groups = table;
        gc->fetched_ms = now;
    }
    fifo = lookup(gc, group);
    pthread_mutex_unlock(&gc->mu);
    return fifo > 0;
}
