/* lock_table.c — owns orderly-consumer queue locks. Locks are never released
 * on disconnect (Java lets them expire), so nothing here reacts to channel
 * events. */
#include "lock_table.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lock_entry {
    char *client_id;
    uint64_t last_update_ms;
} lock_entry;

static void free_entry(void *p)
{
    lock_entry *e = p;
    if (e) {
        free(e->client_id);
        free(e);
    }
}

static void free_group(void *p)
{
    str_map *m = p;
    if (m) {
        str_map_clear(m, free_entry);
        free(m);
    }
}

void bcm_lock_table_init(bcm_lock_table *t)
{
    str_map_init(&t->groups);
}

void bcm_lock_table_free(bcm_lock_table *t)
{
    str_map_clear(&t->groups, free_group);
}

static bool mq_key(const json_t *mq, char *buf, size_t len)
{
    const char *topic = json_string_value(json_object_get(mq, "topic"));
    const char *broker = json_string_value(json_object_get(mq, "brokerName"));
    json_t *q = json_object_get(mq, "queueId");
    if (!topic || !broker || !json_is_integer(q))
        return false;
    int n = snprintf(buf, len, "%s\x01%s\x01%lld", topic, broker, (long long)json_integer_value(q));
    return n > 0 && (size_t)n < len;
}

static json_t *mq_json(const json_t *mq)
{
    return json_pack("{sOsOsO}", "brokerName", json_object_get(mq, "brokerName"), "queueId",
                     json_object_get(mq, "queueId"), "topic", json_object_get(mq, "topic"));
}

json_t *bcm_lock_batch(bcm_lock_table *t, const char *group, const char *client_id,
                       const json_t *mq_set, uint64_t now_ms, uint64_t max_live_ms)
{
    json_t *ok = json_array();
    if (!ok || !group || !client_id)
        return ok;
    str_map *g = str_map_get(&t->groups, group);
    if (!g) {
        g = malloc(sizeof *g);
        if (!g)
            return ok;
        str_map_init(g);
        if (str_map_put(&t->groups, group, g, NULL) != 0) {
            free(g);
            return ok;
        }
    }
    size_t i;
    json_t *mq;
    char key[1024];
    json_array_foreach(mq_set, i, mq)
    {
        if (!mq_key(mq, key, sizeof key))
            continue;
        lock_entry *e = str_map_get(g, key);
        if (!e) {
            e = calloc(1, sizeof *e);
            if (!e || !(e->client_id = strdup(client_id)) || str_map_put(g, key, e, NULL) != 0) {
                free_entry(e);
                continue;
            }
        } else if (strcmp(e->client_id, client_id) != 0) {
            if (now_ms - e->last_update_ms <= max_live_ms)
                continue; /* held by another live client */
            char *id = strdup(client_id);
            if (!id)
                continue;
            free(e->client_id);
            e->client_id = id;
        }
        e->last_update_ms = now_ms;
        json_array_append_new(ok, mq_json(mq));
    }
    return ok;
}

void bcm_unlock_batch(bcm_lock_table *t, const char *group, const char *client_id,
                      const json_t *mq_set)
{
    str_map *g = group ? str_map_get(&t->groups, group) : NULL;
    if (!g || !client_id)
        return;
    size_t i;
    json_t *mq;
    char key[1024];
    json_array_foreach(mq_set, i, mq)
    {
        if (!mq_key(mq, key, sizeof key))
            continue;
        lock_entry *e = str_map_get(g, key);
        if (e && strcmp(e->client_id, client_id) == 0)
            free_entry(str_map_remove(g, key));
    }
}

const char *bcm_lock_holder(const bcm_lock_table *t, const char *group, const char *topic,
                            const char *broker, int32_t queue_id, uint64_t now_ms,
                            uint64_t max_live_ms)
{
    str_map *g = str_map_get(&t->groups, group);
    char key[1024];
    snprintf(key, sizeof key, "%s\x01%s\x01%d", topic, broker, queue_id);
    lock_entry *e = g ? str_map_get(g, key) : NULL;
    if (!e || now_ms - e->last_update_ms > max_live_ms)
        return NULL;
    return e->client_id;
}
