/* store_queues_client.c — owns broker-client-mgr's use of the service
 * "store.queues" (a message store plugin's queue offsets, store times and
 * records). One acquire per operation, so the store can be hot-reloaded;
 * without a store every queue is empty, as on a broker that stores nothing. */
#include "broker_context.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

bool bcm_store_acquire(bcm_ctx *c, bcm_store *s)
{
    const void *t = NULL;
    memset(s, 0, sizeof *s);
    if (c->api->service_acquire(c->pctx, RMQ_STORE_QUEUES_SERVICE, RMQ_STORE_QUEUES_VERSION, &t,
                                &s->ud, &s->ref) != 0 ||
        !t)
        return false;
    s->t = t;
    return true;
}

void bcm_store_release(bcm_ctx *c, bcm_store *s)
{
    if (s->t)
        c->api->service_release(c->pctx, s->ref);
    memset(s, 0, sizeof *s);
}

int64_t bcm_store_max_offset(const bcm_store *s, const char *topic, int32_t queue_id)
{
    return s->t && s->t->max_offset ? s->t->max_offset(s->ud, topic, queue_id) : 0;
}

int64_t bcm_store_min_offset(const bcm_store *s, const char *topic, int32_t queue_id)
{
    return s->t && s->t->min_offset ? s->t->min_offset(s->ud, topic, queue_id) : 0;
}

int64_t bcm_store_time(const bcm_store *s, const char *topic, int32_t queue_id, int64_t offset)
{
    return s->t && s->t->store_time ? s->t->store_time(s->ud, topic, queue_id, offset) : -1;
}

bool bcm_store_in_disk(const bcm_store *s, const char *topic, int32_t queue_id, int64_t offset)
{
    return s->t && s->t->check_in_disk_by_consume_offset &&
           s->t->check_in_disk_by_consume_offset(s->ud, topic, queue_id, offset);
}

char *bcm_store_config_text(const bcm_store *s)
{
    if (!s->t ||
        s->t->size < offsetof(rmq_store_queues_service, config_text) + sizeof(s->t->config_text) ||
        !s->t->config_text)
        return NULL;
    size_t need = s->t->config_text(s->ud, NULL, 0);
    char *text = malloc(need + 1);
    if (text)
        s->t->config_text(s->ud, text, need + 1);
    return text;
}

int bcm_store_config_update(const bcm_store *s, const char *key, const char *value)
{
    if (!s->t ||
        s->t->size <
            offsetof(rmq_store_queues_service, config_update) + sizeof(s->t->config_update) ||
        !s->t->config_update)
        return RMQ_ENOENT;
    return s->t->config_update(s->ud, key, value);
}

double bcm_store_consume_tps(const bcm_store *s, const char *group, const char *topic)
{
    if (!s->t ||
        s->t->size < offsetof(rmq_store_queues_service, consume_tps) + sizeof(s->t->consume_tps) ||
        !s->t->consume_tps)
        return 0;
    return s->t->consume_tps(s->ud, group, topic);
}

int32_t bcm_store_ha_listen_port(const bcm_store *s)
{
    if (!s->t ||
        s->t->size <
            offsetof(rmq_store_queues_service, ha_listen_port) + sizeof(s->t->ha_listen_port) ||
        !s->t->ha_listen_port)
        return 0;
    return s->t->ha_listen_port(s->ud);
}
