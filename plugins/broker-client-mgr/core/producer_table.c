/* producer_table.c — owns the producer-side client tables (Java's
 * ProducerManager). Knows nothing of sockets: the caller closes expired
 * connections. Producers never cause notifications. */
#include "producer_table.h"

#include <stdlib.h>
#include <string.h>

static void free_group(void *p)
{
    bcm_producer_group *g = p;
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        free(g->clients[i].client_id);
    free(g->clients);
    free(g);
}

void bcm_producer_table_init(bcm_producer_table *t)
{
    str_map_init(&t->groups);
    str_map_init(&t->client_channels);
}

void bcm_producer_table_free(bcm_producer_table *t)
{
    str_map_clear(&t->groups, free_group);
    str_map_clear(&t->client_channels, free);
}

static int set_client_channel(bcm_producer_table *t, const char *client_id, uint64_t ch)
{
    if (!client_id)
        return 0;
    uint64_t *cur = str_map_get(&t->client_channels, client_id);
    if (cur) {
        *cur = ch;
        return 0;
    }
    uint64_t *v = malloc(sizeof *v);
    if (!v)
        return -1;
    *v = ch;
    if (str_map_put(&t->client_channels, client_id, v, NULL) != 0) {
        free(v);
        return -1;
    }
    return 0;
}

int bcm_producer_register(bcm_producer_table *t, const char *group, const bcm_client *info)
{
    bcm_producer_group *g = str_map_get(&t->groups, group);
    if (!g) {
        g = calloc(1, sizeof *g);
        if (!g || str_map_put(&t->groups, group, g, NULL) != 0) {
            free(g);
            return -1;
        }
    }
    for (size_t i = 0; i < g->n; i++) {
        if (g->clients[i].channel == info->channel) {
            g->clients[i].last_update_ms = info->last_update_ms;
            return 0;
        }
    }
    if (bcm_client_append(&g->clients, &g->n, &g->cap, info) != 0)
        return -1;
    return set_client_channel(t, info->client_id, info->channel);
}

static void drop_client_id_if_channel(bcm_producer_table *t, const char *client_id, uint64_t ch)
{
    uint64_t *cur = client_id ? str_map_get(&t->client_channels, client_id) : NULL;
    if (cur && *cur == ch)
        free(str_map_remove(&t->client_channels, client_id));
}

static bool remove_from_group(bcm_producer_group *g, uint64_t ch, bcm_producer_table *t)
{
    for (size_t i = 0; i < g->n; i++) {
        if (g->clients[i].channel == ch) {
            drop_client_id_if_channel(t, g->clients[i].client_id, ch);
            free(g->clients[i].client_id);
            g->clients[i] = g->clients[--g->n];
            return true;
        }
    }
    return false;
}

void bcm_producer_unregister(bcm_producer_table *t, const char *group, uint64_t channel,
                             const char *client_id)
{
    bcm_producer_group *g = str_map_get(&t->groups, group);
    if (g && g->n > 0) {
        remove_from_group(g, channel, t);
        if (client_id)
            free(str_map_remove(&t->client_channels, client_id));
        if (g->n == 0)
            free_group(str_map_remove(&t->groups, group));
    }
}

size_t bcm_producer_channel_closed(bcm_producer_table *t, uint64_t channel)
{
    size_t removed = 0;
    str_map_iter it;
    str_map_entry *e;
    str_map_iter_init(&t->groups, &it);
    while ((e = str_map_iter_next(&t->groups, &it)))
        removed += remove_from_group(e->value, channel, t);
    return removed;
}

size_t bcm_producer_expire(bcm_producer_table *t, uint64_t now_ms, uint64_t timeout_ms,
                           uint64_t **expired, size_t *nexpired)
{
    size_t removed = 0;
    str_map_iter it;
    str_map_entry *e;
    str_map_iter_init(&t->groups, &it);
    while ((e = str_map_iter_next(&t->groups, &it))) {
        bcm_producer_group *g = e->value;
        for (size_t i = 0; i < g->n;) {
            if (bcm_client_expired(&g->clients[i], now_ms, timeout_ms, expired, nexpired)) {
                remove_from_group(g, g->clients[i].channel, t);
                removed++;
            } else {
                i++;
            }
        }
    }
    return removed;
}

const bcm_producer_group *bcm_producer_group_get(const bcm_producer_table *t, const char *group)
{
    return str_map_get(&t->groups, group);
}

uint64_t bcm_producer_find_channel(const bcm_producer_table *t, const char *client_id)
{
    uint64_t *v = str_map_get(&t->client_channels, client_id);
    return v ? *v : 0;
}

size_t bcm_producer_connection_count(const bcm_producer_table *t)
{
    size_t n = 0;
    str_map_iter it;
    str_map_entry *e;
    str_map_iter_init(&t->groups, &it);
    while ((e = str_map_iter_next(&t->groups, &it)))
        n += ((bcm_producer_group *)e->value)->n;
    return n;
}
