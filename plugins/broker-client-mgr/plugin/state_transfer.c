/* state_transfer.c — owns export_state/import_state for hot reload: client
 * tables (connections keep their ids across a reload), offsets, topics,
 * subscription groups and the topics whose topics.json write is pending, as
 * one JSON blob of format BCM_STATE_VERSION. Runs on the control thread;
 * touches a file only to write the pending topics it received. */
#include "broker_context.h"

#include "heartbeat_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *client_json(const bcm_client *cl)
{
    return json_pack("{sIsssisisIss}", "channel", (json_int_t)cl->channel, "clientId",
                     cl->client_id, "language", cl->language, "version", cl->version, "lastUpdate",
                     (json_int_t)cl->last_update_ms, "addr", cl->addr);
}

static bcm_client client_from(const json_t *j)
{
    bcm_client cl = {
        .channel = (uint64_t)json_integer_value(json_object_get(j, "channel")),
        .client_id = (char *)json_string_value(json_object_get(j, "clientId")),
        .language = (int32_t)json_integer_value(json_object_get(j, "language")),
        .version = (int32_t)json_integer_value(json_object_get(j, "version")),
        .last_update_ms = (uint64_t)json_integer_value(json_object_get(j, "lastUpdate")),
    };
    const char *addr = json_string_value(json_object_get(j, "addr"));
    snprintf(cl.addr, sizeof cl.addr, "%s", addr ? addr : "");
    return cl;
}

int bcm_export_state(rmq_plugin_ctx *pctx, void **blob, size_t *len)
{
    bcm_ctx *c = bcm_from_ctx(pctx);
    if (!c)
        return RMQ_EINVAL;
    json_t *root = json_object(), *producers = json_array(), *consumers = json_array();
    pthread_mutex_lock(&c->lock);
    char *topics = bcm_topic_table_encode(&c->topics);
    char *groups = bcm_subscription_groups_encode(&c->groups);
    char *offsets = bcm_offset_table_encode(&c->offsets, false);
    json_t *unwritten = bcm_unwritten_topics_names(&c->unwritten);
    str_map_iter it;
    str_map_entry *e;
    str_map_iter_init(&c->producers.groups, &it);
    while ((e = str_map_iter_next(&c->producers.groups, &it))) {
        const bcm_producer_group *g = e->value;
        for (size_t i = 0; i < g->n; i++) {
            json_t *cj = client_json(&g->clients[i]);
            json_object_set_new(cj, "group", json_string(e->key));
            json_array_append_new(producers, cj);
        }
    }
    str_map_iter_init(&c->consumers.groups, &it);
    while ((e = str_map_iter_next(&c->consumers.groups, &it))) {
        const bcm_consumer_group *g = e->value;
        json_t *clients = json_array(), *subs = json_array();
        for (size_t i = 0; i < g->nclients; i++)
            json_array_append_new(clients, client_json(&g->clients[i]));
        for (size_t i = 0; i < g->nsubs; i++)
            json_array_append(subs, g->subs[i].json);
        json_array_append_new(
            consumers, json_pack("{sssssssssoso}", "group", g->name, "consumeType", g->consume_type,
                                 "messageModel", g->message_model, "consumeFromWhere",
                                 g->consume_from_where, "clients", clients, "subs", subs));
    }
    c->exported = true;
    pthread_mutex_unlock(&c->lock);
    json_object_set_new(root, "topics", json_string(topics ? topics : "{}"));
    json_object_set_new(root, "groups", json_string(groups ? groups : "{}"));
    json_object_set_new(root, "offsets", json_string(offsets ? offsets : "{}"));
    json_object_set_new(root, "producers", producers);
    json_object_set_new(root, "consumers", consumers);
    /* Absent from a blob of an older generation: nothing pending then. */
    json_object_set_new(root, "unwrittenTopics", unwritten ? unwritten : json_array());
    free(topics);
    free(groups);
    free(offsets);
    char *text = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (!text) {
        c->exported = false;
        return RMQ_ENOMEM;
    }
    *blob = text;
    *len = strlen(text);
    return 0;
}

static const char *enum_or(const json_t *v, const char *(*name)(const json_t *), const char *dflt)
{
    const char *n = name(v);
    return n ? n : dflt;
}

int bcm_import_state(rmq_plugin_ctx *pctx, uint32_t version, const void *blob, size_t len)
{
    bcm_ctx *c = bcm_from_ctx(pctx);
    if (!c || version != BCM_STATE_VERSION)
        return RMQ_EINVAL;
    json_t *root = json_loadb(blob, len, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return RMQ_EINVAL;
    }
    char err[256];
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    const char *t = json_string_value(json_object_get(root, "topics"));
    const char *g = json_string_value(json_object_get(root, "groups"));
    const char *o = json_string_value(json_object_get(root, "offsets"));
    if ((t && bcm_topic_table_load(&c->topics, t, strlen(t), err, sizeof err) != 0) ||
        (g && bcm_subscription_groups_load(&c->groups, g, strlen(g), err, sizeof err) != 0) ||
        (o && bcm_offset_table_load(&c->offsets, o, strlen(o), err, sizeof err) != 0))
        rc = RMQ_EINVAL;
    size_t i, carried = 0;
    json_t *v;
    json_array_foreach(json_object_get(root, "unwrittenTopics"), i, v)
    {
        const char *name = json_string_value(v);
        if (name && bcm_topic_table_has(&c->topics, name) &&
            bcm_unwritten_topics_add(&c->unwritten, name) == 0)
            carried++;
    }
    json_array_foreach(json_object_get(root, "producers"), i, v)
    {
        bcm_client cl = client_from(v);
        const char *group = json_string_value(json_object_get(v, "group"));
        if (group && cl.client_id && bcm_producer_register(&c->producers, group, &cl) != 0)
            rc = RMQ_ENOMEM;
    }
    json_array_foreach(json_object_get(root, "consumers"), i, v)
    {
        const char *group = json_string_value(json_object_get(v, "group"));
        json_t *subs_j = json_object_get(v, "subs");
        size_t nsubs = json_array_size(subs_j);
        bcm_subscription *subs = calloc(nsubs ? nsubs : 1, sizeof *subs);
        if (!group || !subs) {
            free(subs);
            continue;
        }
        for (size_t k = 0; k < nsubs; k++)
            bcm_subscription_from_json(&subs[k], json_array_get(subs_j, k));
        size_t j;
        json_t *cj;
        json_array_foreach(json_object_get(v, "clients"), j, cj)
        {
            bcm_client cl = client_from(cj);
            if (!cl.client_id)
                continue;
            if (bcm_consumer_register(&c->consumers, group, &cl,
                                      enum_or(json_object_get(v, "consumeType"),
                                              bcm_consume_type_name, "CONSUME_PASSIVELY"),
                                      enum_or(json_object_get(v, "messageModel"),
                                              bcm_message_model_name, "CLUSTERING"),
                                      enum_or(json_object_get(v, "consumeFromWhere"),
                                              bcm_consume_from_where_name,
                                              "CONSUME_FROM_LAST_OFFSET"),
                                      subs, nsubs) < 0)
                rc = RMQ_ENOMEM;
        }
        free(subs); /* the JSON objects belong to root */
    }
    pthread_mutex_unlock(&c->lock);
    json_decref(root);
    if (rc != 0) {
        c->api->log(c->pctx, RMQ_LOG_ERROR, "import_state failed: %s", err);
        return rc;
    }
    /* The old generation's write of these topics did not finish before the
     * export: this generation writes them before it serves (the reload swaps
     * after import), so no sender of theirs is answered ahead of the file. */
    if (carried > 0) {
        c->api->log(c->pctx, RMQ_LOG_INFO,
                    "%zu topic(s) handed over before their topics.json write; writing it", carried);
        bcm_persist_topics(c);
    }
    return 0;
}
