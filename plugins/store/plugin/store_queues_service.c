/* store_queues_service.c — the "store.queues" service (store_service.h):
 * queue offsets, store times and records by commit-log offset for
 * broker-client-mgr (QUERY_CONSUMER_OFFSET, GET_CONSUME_STATS, the 309
 * relay). Thin wrappers over the engine; between a reload's export (the
 * engine closed) and the swap an I/O-thread caller may still reach this
 * generation, so each call holds engine_rw and finds the store gone. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "ha.h"
#include "pull_stats.h"
#include "store_features.h"
#include "store_plugin.h"

static store_engine *engine_in(store_plugin *sp)
{
    pthread_rwlock_rdlock(&sp->engine_rw);
    store_engine *e = sp->engine;
    if (!e) /* otherwise the caller unlocks */
        pthread_rwlock_unlock(&sp->engine_rw);
    return e;
}

/* One end of a queue (store_max_offset / store_min_offset); 0 without a store. */
static int64_t q_end(void *ud, const char *topic, int32_t q,
                     int64_t (*end)(store_engine *, const char *, int32_t))
{
    store_plugin *sp = ud;
    store_engine *e = engine_in(sp);
    if (!e)
        return 0;
    int64_t v = end(e, topic, q);
    pthread_rwlock_unlock(&sp->engine_rw);
    return v;
}

static int64_t q_max(void *ud, const char *topic, int32_t q)
{
    return q_end(ud, topic, q, store_max_offset);
}

static int64_t q_min(void *ud, const char *topic, int32_t q)
{
    return q_end(ud, topic, q, store_min_offset);
}

static int64_t q_time(void *ud, const char *topic, int32_t q, int64_t off)
{
    store_plugin *sp = ud;
    store_engine *e = engine_in(sp);
    if (!e)
        return -1;
    int64_t v = store_message_store_time(e, topic, q, off);
    pthread_rwlock_unlock(&sp->engine_rw);
    return v;
}

static bool q_in_disk(void *ud, const char *topic, int32_t q, int64_t off)
{
    store_plugin *sp = ud;
    store_engine *e = engine_in(sp);
    if (!e)
        return false;
    bool v = store_check_in_disk_by_consume_offset(e, topic, q, off);
    pthread_rwlock_unlock(&sp->engine_rw);
    return v;
}

static int q_record(void *ud, int64_t phys, void **rec, size_t *len)
{
    store_plugin *sp = ud;
    store_engine *e = engine_in(sp);
    if (!e)
        return RMQ_ENOENT;
    uint8_t *r = NULL;
    int rc = store_read_record(e, phys, &r, len);
    pthread_rwlock_unlock(&sp->engine_rw);
    if (rc != 0)
        return RMQ_ENOENT;
    *rec = r;
    return 0;
}

static double q_consume_tps(void *ud, const char *group, const char *topic)
{
    store_plugin *sp = ud;
    store_features *f = features_of(sp);
    return f ? pull_stats_group_tps(f->pull_stats, group, topic, sp->api->now_monotonic_ms()) : 0;
}

static size_t q_config_text(void *ud, char *out, size_t cap)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    size_t n = 0;
    if (cap)
        out[0] = 0;
    json_t *u = store_updates_read(sp); /* persisted updates show as the values */
    for (const rmq_setting_decl *d = STORE_SETTINGS; d->name; d++) {
        char v[1200];
        const char *upd = json_string_value(json_object_get(u, d->name));
        switch (upd ? -1 : (int)d->type) {
        case -1: snprintf(v, sizeof v, "%s", upd); break;
        case RMQ_SETTING_INT:
            snprintf(v, sizeof v, "%lld", (long long)a->setting_int(sp->ctx, d->name));
            break;
        case RMQ_SETTING_BOOL:
            snprintf(v, sizeof v, "%s", a->setting_bool(sp->ctx, d->name) ? "true" : "false");
            break;
        case RMQ_SETTING_DOUBLE:
            snprintf(v, sizeof v, "%g", a->setting_double(sp->ctx, d->name));
            break;
        default: {
            const char *s = a->setting_string(sp->ctx, d->name);
            snprintf(v, sizeof v, "%s", s ? s : "");
        }
        }
        /* where the store really is, not the empty "default" */
        if (strcmp(d->name, "storePathRootDir") == 0)
            snprintf(v, sizeof v, "%s", sp->set.root_dir);
        int w = snprintf(n < cap ? out + n : NULL, n < cap ? cap - n : 0, "%s=%s\n", d->name, v);
        if (w > 0)
            n += (size_t)w;
    }
    json_decref(u);
    return store_java_config_text(sp, out, cap, n);
}

static int q_config_update(void *ud, const char *key, const char *value)
{
    return store_config_update(ud, key, value);
}

static int32_t q_ha_listen_port(void *ud)
{
    return (int32_t)ha_master_port(ud);
}

int store_queues_service_export(store_plugin *sp)
{
    sp->queues_svc = (rmq_store_queues_service){
        .size = sizeof(rmq_store_queues_service),
        .max_offset = q_max,
        .min_offset = q_min,
        .store_time = q_time,
        .check_in_disk_by_consume_offset = q_in_disk,
        .message_by_offset = q_record,
        .consume_tps = q_consume_tps,
        .config_text = q_config_text,
        .config_update = q_config_update,
        .ha_listen_port = q_ha_listen_port,
    };
    return sp->api->export_service(sp->ctx, RMQ_STORE_QUEUES_SERVICE, RMQ_STORE_QUEUES_VERSION,
                                   &sp->queues_svc, sp);
}
