/* consumer_table.c — owns the consumer-group table with Java's
 * ConsumerManager semantics: identity is the connection, subscriptions are per
 * group. Never sends anything: it reports who must be told. */
#include "consumer_table.h"

#include <stdlib.h>
#include <string.h>

static void free_group(void *p)
{
    bcm_consumer_group *g = p;
    if (!g)
        return;
    for (size_t i = 0; i < g->nclients; i++)
        free(g->clients[i].client_id);
    for (size_t i = 0; i < g->nsubs; i++)
        bcm_subscription_release(&g->subs[i]);
    free(g->clients);
    free(g->subs);
    free(g->name);
    free(g);
}

void bcm_notices_free(bcm_notices *ns)
{
    for (size_t i = 0; i < ns->n; i++) {
        free(ns->v[i].group);
        free(ns->v[i].channels);
        for (size_t j = 0; j < ns->v[i].nsubs; j++)
            bcm_subscription_release(&ns->v[i].subs[j]);
        free(ns->v[i].subs);
    }
    free(ns->v);
    memset(ns, 0, sizeof *ns);
}

void bcm_consumer_table_init(bcm_consumer_table *t)
{
    str_map_init(&t->groups);
}

void bcm_consumer_table_free(bcm_consumer_table *t)
{
    str_map_clear(&t->groups, free_group);
}

static bcm_consumer_group *get_or_create(bcm_consumer_table *t, const char *name)
{
    bcm_consumer_group *g = str_map_get(&t->groups, name);
    if (g)
        return g;
    g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->name = strdup(name);
    if (!g->name || str_map_put(&t->groups, name, g, NULL) != 0) {
        free(g->name);
        free(g);
        return NULL;
    }
    return g;
}

/* updateChannel: true when the connection is new to the group. */
static int update_channel(bcm_consumer_group *g, const bcm_client *info)
{
    for (size_t i = 0; i < g->nclients; i++) {
        bcm_client *c = &g->clients[i];
        if (c->channel != info->channel)
            continue;
        if (info->client_id && strcmp(c->client_id, info->client_id) != 0) {
            char *id = strdup(info->client_id);
            if (!id)
                return -1;
            free(c->client_id);
            c->client_id = id;
        }
        c->language = info->language;
        c->version = info->version;
        c->last_update_ms = info->last_update_ms;
        if (info->addr[0])
            memcpy(c->addr, info->addr, sizeof c->addr);
        return 0;
    }
    if (bcm_client_append(&g->clients, &g->nclients, &g->client_cap, info) != 0)
        return -1;
    return 1;
}

static bool sub_in_list(const char *topic, const bcm_subscription *subs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(subs[i].topic, topic) == 0)
            return true;
    return false;
}

/* updateSubscription: true when a topic was added or removed; a newer
 * subVersion of an existing topic replaces it silently. */
static int update_subscription(bcm_consumer_group *g, const bcm_subscription *subs, size_t n)
{
    int changed = 0;
    for (size_t i = 0; i < n; i++) {
        bcm_subscription *cur = (bcm_subscription *)bcm_consumer_group_find_sub(g, subs[i].topic);
        if (cur) {
            if (subs[i].sub_version > cur->sub_version) {
                bcm_subscription copy;
                if (bcm_subscription_copy(&copy, &subs[i]) != 0)
                    return -1;
                bcm_subscription_release(cur);
                *cur = copy;
            }
            continue;
        }
        if (g->nsubs == g->sub_cap) {
            size_t nc = g->sub_cap ? g->sub_cap * 2 : 4;
            bcm_subscription *v = realloc(g->subs, nc * sizeof *v);
            if (!v)
                return -1;
            g->subs = v;
            g->sub_cap = nc;
        }
        if (bcm_subscription_copy(&g->subs[g->nsubs], &subs[i]) != 0)
            return -1;
        g->nsubs++;
        changed = 1;
    }
    for (size_t i = 0; i < g->nsubs;) {
        if (!sub_in_list(g->subs[i].topic, subs, n)) {
            bcm_subscription_release(&g->subs[i]);
            g->subs[i] = g->subs[--g->nsubs];
            changed = 1;
        } else {
            i++;
        }
    }
    return changed;
}

int bcm_consumer_register(bcm_consumer_table *t, const char *group, const bcm_client *info,
                          const char *consume_type, const char *message_model,
                          const char *consume_from_where, const bcm_subscription *subs,
                          size_t nsubs)
{
    bcm_consumer_group *g = get_or_create(t, group);
    if (!g)
        return -1;
    g->consume_type = consume_type;
    g->message_model = message_model;
    g->consume_from_where = consume_from_where;
    int r1 = update_channel(g, info);
    if (r1 < 0)
        return -1;
    g->last_update_ms = info->last_update_ms;
    int r2 = update_subscription(g, subs, nsubs);
    if (r2 < 0)
        return -1;
    return (r1 || r2) ? 1 : 0;
}

static int add_notice(bcm_notices *out, const bcm_consumer_group *g, const char *name, bool removed,
                      bool changed)
{
    if (out->n == out->cap) {
        size_t nc = out->cap ? out->cap * 2 : 4;
        bcm_group_notice *v = realloc(out->v, nc * sizeof *v);
        if (!v)
            return -1;
        out->v = v;
        out->cap = nc;
    }
    bcm_group_notice *n = &out->v[out->n];
    memset(n, 0, sizeof *n);
    n->group = strdup(name);
    n->removed = removed;
    n->changed = changed;
    if (!n->group)
        return -1;
    out->n++;
    if (g && g->nclients) {
        n->channels = malloc(g->nclients * sizeof *n->channels);
        if (!n->channels)
            return -1;
        for (size_t i = 0; i < g->nclients; i++)
            n->channels[i] = g->clients[i].channel;
        n->nchannels = g->nclients;
    }
    if (g && g->nsubs) {
        n->subs = calloc(g->nsubs, sizeof *n->subs);
        if (!n->subs)
            return -1;
        for (size_t i = 0; i < g->nsubs; i++) {
            if (bcm_subscription_copy(&n->subs[i], &g->subs[i]) != 0)
                return -1;
            n->nsubs++;
        }
    }
    return 0;
}

static bool remove_channel(bcm_consumer_group *g, uint64_t channel)
{
    for (size_t i = 0; i < g->nclients; i++) {
        if (g->clients[i].channel == channel) {
            free(g->clients[i].client_id);
            /* keep arrival order: connection lists and id lists follow it */
            memmove(&g->clients[i], &g->clients[i + 1], (g->nclients - i - 1) * sizeof *g->clients);
            g->nclients--;
            return true;
        }
    }
    return false;
}

int bcm_consumer_unregister(bcm_consumer_table *t, const char *group, uint64_t channel,
                            bcm_notices *out)
{
    bcm_consumer_group *g = str_map_get(&t->groups, group);
    bool removed = false;
    if (g) {
        remove_channel(g, channel);
        if (g->nclients == 0) {
            free_group(str_map_remove(&t->groups, group));
            g = NULL;
            removed = true;
        }
    }
    return add_notice(out, g, group, removed, true);
}

int bcm_consumer_channel_closed(bcm_consumer_table *t, uint64_t channel, bcm_notices *out)
{
    str_map_iter it;
    str_map_entry *e;
    int rc = 0;
    str_map_iter_init(&t->groups, &it);
    while ((e = str_map_iter_next(&t->groups, &it))) {
        bcm_consumer_group *g = e->value;
        if (!remove_channel(g, channel))
            continue;
        if (g->nclients == 0) {
            char *name = strdup(g->name);
            free_group(str_map_remove(&t->groups, g->name));
            if (!name || add_notice(out, NULL, name, true, true) != 0)
                rc = -1;
            free(name);
        } else if (add_notice(out, g, g->name, false, true) != 0) {
            rc = -1;
        }
    }
    return rc;
}

size_t bcm_consumer_expire(bcm_consumer_table *t, uint64_t now_ms, uint64_t timeout_ms,
                           uint64_t **expired, size_t *nexpired)
{
    size_t removed = 0;
    str_map_iter it;
    str_map_entry *e;
    str_map_iter_init(&t->groups, &it);
    while ((e = str_map_iter_next(&t->groups, &it))) {
        bcm_consumer_group *g = e->value;
        for (size_t i = 0; i < g->nclients;) {
            bcm_client *c = &g->clients[i];
            if (bcm_client_expired(c, now_ms, timeout_ms, expired, nexpired)) {
                remove_channel(g, c->channel);
                removed++;
            } else {
                i++;
            }
        }
        if (g->nclients == 0)
            free_group(str_map_remove(&t->groups, g->name));
    }
    return removed;
}

const bcm_consumer_group *bcm_consumer_group_get(const bcm_consumer_table *t, const char *group)
{
    return str_map_get(&t->groups, group);
}

int bcm_consumer_group_notice(const bcm_consumer_table *t, const char *group, bool changed,
                              bcm_notices *out)
{
    return add_notice(out, str_map_get(&t->groups, group), group, false, changed);
}

const bcm_client *bcm_consumer_find_client(const bcm_consumer_table *t, const char *group,
                                           const char *client_id)
{
    const bcm_consumer_group *g = str_map_get(&t->groups, group);
    if (!g || !client_id)
        return NULL;
    for (size_t i = 0; i < g->nclients; i++)
        if (strcmp(g->clients[i].client_id, client_id) == 0)
            return &g->clients[i];
    return NULL;
}

const bcm_subscription *bcm_consumer_group_find_sub(const bcm_consumer_group *g, const char *topic)
{
    for (size_t i = 0; i < g->nsubs; i++)
        if (strcmp(g->subs[i].topic, topic) == 0)
            return &g->subs[i];
    return NULL;
}

size_t bcm_consumer_connection_count(const bcm_consumer_table *t)
{
    size_t n = 0;
    str_map_iter it;
    str_map_entry *e;
    str_map_iter_init(&t->groups, &it);
    while ((e = str_map_iter_next(&t->groups, &it)))
        n += ((bcm_consumer_group *)e->value)->nclients;
    return n;
}
