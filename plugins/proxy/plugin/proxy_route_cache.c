/* proxy_route_cache.c — the topic routes SendMessage uses, kept between
 * calls as Java's proxy keeps them (TopicRouteService: a cache refreshed
 * `topicRouteServiceCacheRefreshSeconds` after it was filled, dropped
 * `topicRouteServiceCacheExpiredSeconds` after its last use, at most
 * `topicRouteServiceCacheMaxNum` topics). Without it every send asked the
 * NameServer role for the route and parsed its JSON: two thirds of a send's
 * CPU. A topic with no route is not kept, so a topic created a moment ago is
 * found at once; a refresh that fails keeps serving the route it had until
 * the entry expires, as Java's cache does. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_backend.h"
#include "proxy_internal.h"

typedef struct route_entry {
    struct route_entry *next;
    uint64_t filled_ms, used_ms;
    proxy_route route;
    char topic[];
} route_entry;

struct proxy_route_cache {
    pthread_mutex_t mu;
    route_entry **slots;
    size_t nslots, count, max;
    uint64_t refresh_ms, expire_ms;
};

static size_t slot_of(const proxy_route_cache *c, const char *topic)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)topic; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (size_t)(h % c->nslots);
}

static int route_copy(proxy_route *dst, const proxy_route *src)
{
    dst->nqd = 0;
    dst->qd = calloc(src->nqd + 1, sizeof(*dst->qd));
    if (!dst->qd)
        return RMQ_ENOMEM;
    memcpy(dst->qd, src->qd, src->nqd * sizeof(*dst->qd));
    dst->nqd = src->nqd;
    memcpy(dst->msg_type, src->msg_type, sizeof(dst->msg_type));
    return 0;
}

static void entry_free(route_entry *e)
{
    proxy_route_free(&e->route);
    free(e);
}

/* every entry freed: the cache empty (at fini, or when a sweep leaves it full) */
static void drop_all(proxy_route_cache *c)
{
    for (size_t i = 0; i < c->nslots; i++) {
        while (c->slots[i]) {
            route_entry *e = c->slots[i];
            c->slots[i] = e->next;
            entry_free(e);
        }
    }
    c->count = 0;
}

/* Under mu: drop entries unused for expire_ms; when that frees nothing and
 * the cache is full, drop everything (a rare burst of new topics). */
static void sweep_locked(proxy_route_cache *c, uint64_t now)
{
    for (size_t i = 0; i < c->nslots; i++) {
        for (route_entry **pp = &c->slots[i]; *pp;) {
            route_entry *e = *pp;
            if (now - e->used_ms >= c->expire_ms) {
                *pp = e->next;
                entry_free(e);
                c->count--;
            } else {
                pp = &e->next;
            }
        }
    }
    if (c->count < c->max)
        return;
    drop_all(c);
}

int proxy_route_cache_init(proxy *px)
{
    const rmq_host_api *api = px->api;
    proxy_route_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return RMQ_ENOMEM;
    c->max = (size_t)api->setting_int(px->ctx, "topicRouteServiceCacheMaxNum");
    c->refresh_ms =
        (uint64_t)api->setting_int(px->ctx, "topicRouteServiceCacheRefreshSeconds") * 1000u;
    c->expire_ms =
        (uint64_t)api->setting_int(px->ctx, "topicRouteServiceCacheExpiredSeconds") * 1000u;
    c->nslots = c->max < 1024 ? 1024 : c->max;
    c->slots = calloc(c->nslots, sizeof(*c->slots));
    if (!c->slots) {
        free(c);
        return RMQ_ENOMEM;
    }
    pthread_mutex_init(&c->mu, NULL);
    px->routes = c;
    return 0;
}

void proxy_route_cache_fini(proxy *px)
{
    proxy_route_cache *c = px->routes;
    if (!c)
        return;
    drop_all(c);
    pthread_mutex_destroy(&c->mu);
    free(c->slots);
    free(c);
    px->routes = NULL;
}

/* Under mu: the entry of topic, or NULL. */
static route_entry *find_locked(proxy_route_cache *c, const char *topic, route_entry ***where)
{
    route_entry **pp = &c->slots[slot_of(c, topic)];
    for (; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->topic, topic) == 0)
            break;
    }
    if (where)
        *where = pp;
    return *pp;
}

/* A fresh cached copy of topic's route into out: true, with *rc the copy's
 * result; false when the route must be fetched. */
static bool cached(proxy_route_cache *c, const char *topic, uint64_t now, proxy_route *out, int *rc)
{
    pthread_mutex_lock(&c->mu);
    route_entry *e = find_locked(c, topic, NULL);
    bool fresh = e && now - e->filled_ms < c->refresh_ms;
    if (fresh) {
        e->used_ms = now;
        *rc = route_copy(out, &e->route);
    }
    pthread_mutex_unlock(&c->mu);
    return fresh;
}

/* After a fetch (rc, fetched, which is taken): the route the caller gets in
 * out, and its result. */
static int remember(proxy_route_cache *c, const char *topic, uint64_t now, int rc,
                    proxy_route *fetched, proxy_route *out)
{
    pthread_mutex_lock(&c->mu);
    route_entry **where;
    route_entry *e = find_locked(c, topic, &where);
    if (rc == RMQ_ENOENT) /* the type check still needs the topic's type */
        memcpy(out->msg_type, fetched->msg_type, sizeof(out->msg_type));
    if (rc == RMQ_ENOENT && e) {
        /* the topic is gone: forget it at once */
        *where = e->next;
        entry_free(e);
        c->count--;
        e = NULL;
    } else if (rc != 0 && e && now - e->used_ms < c->expire_ms) {
        /* the NameServer role did not answer: serve what was known */
        e->used_ms = now;
        int crc = route_copy(out, &e->route);
        pthread_mutex_unlock(&c->mu);
        return crc;
    }
    if (rc != 0) {
        pthread_mutex_unlock(&c->mu);
        return rc;
    }
    if (e) {
        proxy_route_free(&e->route);
        e->route = *fetched;
    } else {
        if (c->count >= c->max)
            sweep_locked(c, now);
        size_t tl = strlen(topic);
        e = malloc(sizeof(*e) + tl + 1);
        if (e) {
            memcpy(e->topic, topic, tl + 1);
            e->route = *fetched;
            route_entry **head = &c->slots[slot_of(c, topic)];
            e->next = *head;
            *head = e;
            c->count++;
        }
    }
    int crc = 0;
    if (e) {
        e->filled_ms = e->used_ms = now;
        crc = route_copy(out, &e->route);
    } else {
        *out = *fetched; /* no room for it: the caller has it uncached */
    }
    memset(fetched, 0, sizeof(*fetched));
    pthread_mutex_unlock(&c->mu);
    return crc;
}

int proxy_route_get(proxy *px, const char *topic, proxy_route *out, char *why, size_t whylen)
{
    proxy_route_cache *c = px->routes;
    memset(out, 0, sizeof(*out));
    if (!c || c->max == 0)
        return proxy_route_fetch(px, topic, out, why, whylen);
    uint64_t now = px->api->now_monotonic_ms();
    int rc = 0;
    if (cached(c, topic, now, out, &rc))
        return rc;
    /* Fetched without the lock: two callers may fetch the same topic at
     * once, the later one's copy replaces the earlier's. */
    proxy_route fetched;
    rc = proxy_route_fetch(px, topic, &fetched, why, whylen);
    if (px->validate_message_type && (rc == 0 || rc == RMQ_ENOENT))
        proxy_topic_type_name(px, topic, fetched.msg_type, sizeof(fetched.msg_type));
    return remember(c, topic, now, rc, &fetched, out);
}

typedef struct route_wait {
    proxy *px;
    proxy_route_cb cb;
    void *ud;
    uint64_t asked_ms;
    int rc; /* the route's, while its message type is asked */
    proxy_route fetched;
    char why[512];
    char topic[];
} route_wait;

/* The route (and its type) are in: cache them and tell the caller. */
static void route_done(route_wait *w)
{
    proxy *px = w->px;
    proxy_route out = {0};
    int rc = w->rc;
    if (px->routes && px->routes->max > 0) {
        rc = remember(px->routes, w->topic, w->asked_ms, rc, &w->fetched, &out);
    } else {
        out = w->fetched;
    }
    w->cb(rc, &out, w->why, w->ud);
    free(w);
}

static void type_answered(int err, const rmq_cmd *resp, void *ud)
{
    route_wait *w = ud;
    proxy_topic_type_parse(w->px, err, resp, w->fetched.msg_type, sizeof(w->fetched.msg_type));
    route_done(w);
}

static void route_answered(int err, const rmq_cmd *resp, void *ud)
{
    route_wait *w = ud;
    proxy *px = w->px;
    if (err < 0) {
        snprintf(w->why, sizeof(w->why), "route of %s from %s: %s", w->topic,
                 proxy_backend_namesrv_label(px), rmq_strerror(err));
        w->rc = err;
    } else {
        w->rc = proxy_route_parse(px, w->topic, resp, &w->fetched, w->why, sizeof(w->why));
    }
    if (px->validate_message_type && (w->rc == 0 || w->rc == RMQ_ENOENT)) {
        /* SendMessage checks the message's type against the topic's */
        rmq_cmd *req = proxy_topic_type_request(px, w->topic);
        if (req && proxy_broker_call_async(px, w->topic, NULL, req, 0, type_answered, w) == 0)
            return;
        snprintf(w->fetched.msg_type, sizeof(w->fetched.msg_type), "UNSPECIFIED");
    }
    route_done(w);
}

int proxy_route_get_async(proxy *px, const char *topic, proxy_route_cb cb, void *ud)
{
    proxy_route_cache *c = px->routes;
    uint64_t now = px->api->now_monotonic_ms();
    proxy_route out = {0};
    int rc = 0;
    if (c && c->max > 0 && cached(c, topic, now, &out, &rc)) {
        cb(rc, &out, "", ud);
        return 0;
    }
    if (proxy_backend_is_cluster(px)) {
        /* cluster mode runs the senders on the executor: a blocking fetch
         * from the NameServers of namesrvAddr is fine there */
        char why[512] = "";
        rc = proxy_route_get(px, topic, &out, why, sizeof(why));
        cb(rc, &out, why, ud);
        return 0;
    }
    size_t tl = strlen(topic);
    route_wait *w = calloc(1, sizeof(*w) + tl + 1);
    rmq_cmd *req = w ? proxy_route_request(px, topic) : NULL;
    if (!req) {
        free(w);
        return RMQ_ENOMEM;
    }
    w->px = px;
    w->cb = cb;
    w->ud = ud;
    w->asked_ms = now;
    memcpy(w->topic, topic, tl + 1);
    rc = px->api->invoke_local_async(px->ctx, px->namesrv_server, req, route_answered, w);
    if (rc != 0)
        free(w);
    return rc;
}
