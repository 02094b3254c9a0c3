/* state_snapshot.c — the hot-reload blob of a NameServer (routes, liveness,
 * filter servers, KV) as JSON. Owns the blob format (state_version 1); must
 * not publish routes or touch the host. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "namesrv_core.h"

char *namesrv_core_export(const namesrv_core *core, uint64_t now_ms, size_t *len)
{
    const route_table *rt = &core->routes;
    json_t *root = json_object();
    json_t *topics = json_object(), *brokers = json_object(), *clusters = json_object(),
           *live = json_object(), *filters = json_object();
    rmq_str_map_iter it;
    const char *k;
    void *v;

    rmq_str_map_iter_init(&it, &rt->topics);
    while (rmq_str_map_iter_next(&it, &k, &v)) {
        const topic_entry *te = v;
        json_t *arr = json_array();
        for (size_t i = 0; i < te->nqd; i++) {
            const queue_data *q = &te->qds[i];
            json_array_append_new(
                arr, json_pack("{s:s,s:i,s:i,s:i,s:i}", "brokerName", q->broker_name, "perm",
                               q->perm, "readQueueNums", q->read_queue_nums, "writeQueueNums",
                               q->write_queue_nums, "topicSysFlag", q->topic_sys_flag));
        }
        json_object_set_new(topics, k, arr);
    }
    rmq_str_map_iter_init(&it, &rt->brokers);
    while (rmq_str_map_iter_next(&it, &k, &v)) {
        const broker_data *bd = v;
        json_t *addrs = json_array();
        for (size_t i = 0; i < bd->naddr; i++)
            json_array_append_new(
                addrs, json_pack("[I,s]", (json_int_t)bd->addrs[i].id, bd->addrs[i].addr));
        json_object_set_new(brokers, k,
                            json_pack("{s:s?,s:o}", "cluster", bd->cluster, "addrs", addrs));
    }
    rmq_str_map_iter_init(&it, &rt->clusters);
    while (rmq_str_map_iter_next(&it, &k, &v)) {
        const cluster_entry *ce = v;
        json_t *arr = json_array();
        for (size_t i = 0; i < ce->n; i++)
            json_array_append_new(arr, json_string(ce->brokers[i]));
        json_object_set_new(clusters, k, arr);
    }
    rmq_str_map_iter_init(&it, &rt->live);
    while (rmq_str_map_iter_next(&it, &k, &v)) {
        const live_info *li = v;
        json_int_t age =
            now_ms > li->last_update_ms ? (json_int_t)(now_ms - li->last_update_ms) : 0;
        json_object_set_new(
            live, k,
            json_pack("{s:I,s:I,s:I,s:I,s:b,s:I,s:s?,s:I}", "ageMs", age, "counter",
                      (json_int_t)li->dv.counter, "timestamp", (json_int_t)li->dv.timestamp,
                      "stateVersion", (json_int_t)li->dv.state_version, "hasStateVersion",
                      li->dv.has_state_version, "channel", (json_int_t)li->channel, "haServerAddr",
                      li->ha_addr, "timeoutMs", (json_int_t)li->timeout_ms));
    }
    rmq_str_map_iter_init(&it, &rt->filters);
    while (rmq_str_map_iter_next(&it, &k, &v)) {
        const filter_entry *fe = v;
        json_t *arr = json_array();
        for (size_t i = 0; i < fe->n; i++)
            json_array_append_new(arr, json_string(fe->servers[i]));
        json_object_set_new(filters, k, arr);
    }
    text_buf kvt;
    tb_init(&kvt);
    kv_store_encode_file(&core->kv, &kvt);
    char *kvs = tb_take(&kvt, NULL);
    json_t *kv = kvs ? json_loads(kvs, 0, NULL) : NULL;
    free(kvs);

    json_object_set_new(root, "topics", topics);
    json_object_set_new(root, "brokers", brokers);
    json_object_set_new(root, "clusters", clusters);
    json_object_set_new(root, "live", live);
    json_object_set_new(root, "filters", filters);
    json_object_set_new(root, "kv", kv ? kv : json_object());
    char *out = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (out && len)
        *len = strlen(out);
    return out;
}

int namesrv_core_import(namesrv_core *core, const char *blob, size_t len, uint64_t now_ms,
                        char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(blob, len, 0, &je);
    if (!json_is_object(root)) {
        snprintf(err, errlen, "state blob is not JSON: %s", je.text);
        json_decref(root);
        return -1;
    }
    route_table *rt = &core->routes;
    int rc = 0;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(root, "brokers"), k, v)
    {
        const char *cluster = json_string_value(json_object_get(v, "cluster"));
        rc |= route_table_restore_broker_addr(rt, k, cluster, 0, NULL);
        size_t i;
        json_t *pair;
        json_array_foreach(json_object_get(v, "addrs"), i, pair)
        {
            const char *addr = json_string_value(json_array_get(pair, 1));
            if (addr)
                rc |= route_table_restore_broker_addr(
                    rt, k, cluster, (int64_t)json_integer_value(json_array_get(pair, 0)), addr);
        }
    }
    json_object_foreach(json_object_get(root, "clusters"), k, v)
    {
        size_t i;
        json_t *b;
        json_array_foreach(v, i, b)
        {
            if (json_is_string(b))
                rc |= route_table_restore_cluster(rt, k, json_string_value(b));
        }
    }
    json_object_foreach(json_object_get(root, "topics"), k, v)
    {
        size_t i;
        json_t *q;
        json_array_foreach(v, i, q)
        {
            const char *bn = json_string_value(json_object_get(q, "brokerName"));
            if (!bn)
                continue;
            queue_data qd = {
                .broker_name = bn,
                .perm = (int32_t)json_integer_value(json_object_get(q, "perm")),
                .read_queue_nums = (int32_t)json_integer_value(json_object_get(q, "readQueueNums")),
                .write_queue_nums =
                    (int32_t)json_integer_value(json_object_get(q, "writeQueueNums")),
                .topic_sys_flag = (int32_t)json_integer_value(json_object_get(q, "topicSysFlag"))};
            rc |= route_table_restore_queue(rt, k, &qd);
        }
    }
    json_object_foreach(json_object_get(root, "live"), k, v)
    {
        uint64_t age = (uint64_t)json_integer_value(json_object_get(v, "ageMs"));
        live_info li = {
            .addr = (char *)(uintptr_t)k,
            .last_update_ms = now_ms > age ? now_ms - age : 0,
            .dv = {json_integer_value(json_object_get(v, "counter")),
                   json_integer_value(json_object_get(v, "timestamp")),
                   json_integer_value(json_object_get(v, "stateVersion")),
                   json_is_true(json_object_get(v, "hasStateVersion"))},
            .channel = (uint64_t)json_integer_value(json_object_get(v, "channel")),
            .ha_addr = (char *)(uintptr_t)json_string_value(json_object_get(v, "haServerAddr")),
            .timeout_ms = json_integer_value(json_object_get(v, "timeoutMs")),
        };
        rc |= route_table_restore_live(rt, &li);
    }
    json_object_foreach(json_object_get(root, "filters"), k, v)
    {
        size_t n = json_array_size(v), m = 0;
        const char **servers = calloc(n ? n : 1, sizeof(*servers));
        if (!servers) {
            rc = -1;
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            const char *s = json_string_value(json_array_get(v, i));
            if (s)
                servers[m++] = s;
        }
        rc |= route_table_restore_filter(rt, k, servers, m);
        free(servers);
    }
    json_t *kv = json_object_get(root, "kv");
    if (kv) {
        char *text = json_dumps(kv, JSON_COMPACT);
        if (!text || kv_store_load(&core->kv, text, strlen(text), err, errlen) != 0)
            rc = -1;
        free(text);
    }
    json_decref(root);
    if (rc != 0 && err[0] == '\0')
        snprintf(err, errlen, "out of memory while importing state");
    return rc == 0 ? 0 : -1;
}
