/* topic_table.c — owns the broker's topic table and its DataVersion, the
 * topics.json format and the decoded configs SEND reads. Never registers
 * anything: callers decide when the NameServers must hear about a change. */
#include "topic_table.h"

#include "fastjson_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bcm_topic_table_init(bcm_topic_table *t, uint64_t now_wall_ms)
{
    t->topics = json_object();
    t->dv.counter = 0;
    t->dv.timestamp = (int64_t)now_wall_ms;
    str_map_init(&t->decoded);
    t->gen = 0;
    return t->topics ? 0 : -1;
}

void bcm_topic_table_free(bcm_topic_table *t)
{
    json_decref(t->topics);
    t->topics = NULL;
    str_map_clear(&t->decoded, free);
}

/* Called first by every function that changes t->topics: decoded entries
 * stamped before now are stale. */
static void topics_changing(bcm_topic_table *t)
{
    t->gen++;
}

json_t *bcm_topic_config_new(const char *name, int read_q, int write_q, int perm, int sys_flag,
                             bool order, const char *filter_type)
{
    return json_pack("{sbsisisssssisi}", "order", order, "perm", perm, "readQueueNums", read_q,
                     "topicFilterType", filter_type ? filter_type : "SINGLE_TAG", "topicName", name,
                     "topicSysFlag", sys_flag, "writeQueueNums", write_q);
}

static void put_quiet(bcm_topic_table *t, json_t *cfg)
{
    topics_changing(t);
    if (cfg)
        json_object_set_new(t->topics, json_string_value(json_object_get(cfg, "topicName")), cfg);
}

int bcm_topic_table_add_system(bcm_topic_table *t, const bcm_system_topic_opts *o)
{
    put_quiet(t, bcm_topic_config_new("SELF_TEST_TOPIC", 1, 1, 6, 0, false, NULL));
    if (o->auto_create_topic_enable)
        put_quiet(t, bcm_topic_config_new("TBW102", o->default_topic_queue_nums,
                                          o->default_topic_queue_nums, 7, 0, false, NULL));
    put_quiet(t, bcm_topic_config_new("BenchmarkTest", 1024, 1024, 6, 0, false, NULL));
    put_quiet(t, bcm_topic_config_new(o->cluster_name, 16, 16, o->cluster_topic_enable ? 7 : 1, 0,
                                      false, NULL));
    put_quiet(t, bcm_topic_config_new(o->broker_name, 1, 1, o->broker_topic_enable ? 7 : 1, 0,
                                      false, NULL));
    put_quiet(t, bcm_topic_config_new("OFFSET_MOVED_EVENT", 1, 1, 6, 0, false, NULL));
    put_quiet(t, bcm_topic_config_new("SCHEDULE_TOPIC_XXXX", 18, 18, 6, 0, false, NULL));
    if (o->trace_topic_enable && o->trace_topic_name && *o->trace_topic_name)
        put_quiet(t, bcm_topic_config_new(o->trace_topic_name, 1, 1, 6, 0, false, NULL));
    char reply[300];
    snprintf(reply, sizeof reply, "%s_REPLY_TOPIC", o->cluster_name);
    put_quiet(t, bcm_topic_config_new(reply, 1, 1, 6, 0, false, NULL));
    return 0;
}

static json_t *normalise_topic(const char *name, json_t *in)
{
    json_t *n = json_object_get(in, "topicName");
    const char *nm = json_is_string(n) ? json_string_value(n) : name;
    json_t *rq = json_object_get(in, "readQueueNums");
    json_t *wq = json_object_get(in, "writeQueueNums");
    json_t *perm = json_object_get(in, "perm");
    json_t *sf = json_object_get(in, "topicSysFlag");
    json_t *ft = json_object_get(in, "topicFilterType");
    json_t *cfg = bcm_topic_config_new(
        nm, rq ? (int)json_integer_value(rq) : 16, wq ? (int)json_integer_value(wq) : 16,
        perm ? (int)json_integer_value(perm) : 6, sf ? (int)json_integer_value(sf) : 0,
        json_is_true(json_object_get(in, "order")),
        json_is_string(ft) ? json_string_value(ft) : "SINGLE_TAG");
    json_t *attrs = json_object_get(in, "attributes"); /* 5.x files: keep, harmless */
    if (cfg && json_is_object(attrs))
        json_object_set(cfg, "attributes", attrs);
    return cfg;
}

int bcm_topic_table_load(bcm_topic_table *t, const char *text, size_t len, char *err, size_t errlen)
{
    json_t *root = fastjson_load_object(text, len, err, errlen);
    if (!root)
        return -1;
    json_t *table = json_object_get(root, "topicConfigTable");
    const char *k;
    json_t *v;
    json_object_foreach(table, k, v)
    {
        if (json_is_object(v))
            put_quiet(t, normalise_topic(k, v));
    }
    bcm_data_version_from_json(&t->dv, json_object_get(root, "dataVersion"));
    json_decref(root);
    return 0;
}

char *bcm_topic_table_encode(const bcm_topic_table *t)
{
    return bcm_versioned_table_encode(&t->dv, "topicConfigTable", t->topics);
}

int bcm_topic_table_put(bcm_topic_table *t, json_t *cfg, uint64_t now_wall_ms)
{
    const char *name = json_string_value(json_object_get(cfg, "topicName"));
    if (!name) {
        json_decref(cfg);
        return -1;
    }
    topics_changing(t);
    if (json_object_set_new(t->topics, name, cfg) != 0)
        return -1;
    bcm_data_version_next(&t->dv, now_wall_ms);
    return 0;
}

bool bcm_topic_table_create_if_absent(bcm_topic_table *t, const char *name, int queues, int perm,
                                      int sys_flag, uint64_t now_wall_ms)
{
    if (json_object_get(t->topics, name))
        return false;
    return bcm_topic_table_put(
               t, bcm_topic_config_new(name, queues, queues, perm, sys_flag, false, NULL),
               now_wall_ms) == 0;
}

bool bcm_topic_table_delete(bcm_topic_table *t, const char *name, uint64_t now_wall_ms)
{
    topics_changing(t);
    free(str_map_remove(&t->decoded, name)); /* keeps the cache within the table */
    if (json_object_del(t->topics, name) != 0)
        return false;
    bcm_data_version_next(&t->dv, now_wall_ms);
    return true;
}

bool bcm_topic_table_has(const bcm_topic_table *t, const char *name)
{
    return json_object_get(t->topics, name) != NULL;
}

bool bcm_topic_table_apply_order_conf(bcm_topic_table *t, const json_t *kv_table,
                                      uint64_t now_wall_ms)
{
    const json_t *table = json_object_get(kv_table, "table");
    if (!json_is_object(table))
        return false;
    bool changed = false;
    topics_changing(t);
    const char *k;
    json_t *v;
    json_object_foreach(t->topics, k, v)
    {
        bool want = json_object_get(table, k) != NULL;
        if (json_is_true(json_object_get(v, "order")) != want) {
            /* replaced, not changed in place: a copy of the table being
             * written out unlocked shares the config objects */
            json_t *nv = json_deep_copy(v);
            if (!nv)
                continue;
            json_object_set_new(nv, "order", json_boolean(want));
            json_object_set_new(t->topics, k, nv);
            changed = true;
        }
    }
    if (changed)
        bcm_data_version_next(&t->dv, now_wall_ms);
    return changed;
}

void bcm_topic_fields_from_json(const json_t *j, bcm_topic_fields *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->topic_name, sizeof out->topic_name, "%s",
             json_string_value(json_object_get(j, "topicName")));
    out->read_queue_nums = (int32_t)json_integer_value(json_object_get(j, "readQueueNums"));
    out->write_queue_nums = (int32_t)json_integer_value(json_object_get(j, "writeQueueNums"));
    out->perm = (int32_t)json_integer_value(json_object_get(j, "perm"));
    const char *ft = json_string_value(json_object_get(j, "topicFilterType"));
    out->topic_filter_type = ft && strcmp(ft, "MULTI_TAG") == 0 ? 1 : 0;
    out->topic_sys_flag = (int32_t)json_integer_value(json_object_get(j, "topicSysFlag"));
    out->order = json_is_true(json_object_get(j, "order"));
}

/* The numbers only: the name is the key (a table's key is always its
 * config's topicName), and 256 bytes per topic add up at 100,000 topics. */
typedef struct decoded_topic {
    uint64_t gen;
    int32_t read_queue_nums, write_queue_nums, perm, topic_filter_type, topic_sys_flag;
    bool order;
} decoded_topic;

bool bcm_topic_table_get(bcm_topic_table *t, const char *name, bcm_topic_fields *out)
{
    decoded_topic *d = str_map_get(&t->decoded, name);
    if (d && d->gen == t->gen) {
        memset(out, 0, sizeof *out);
        snprintf(out->topic_name, sizeof out->topic_name, "%s", name);
        out->read_queue_nums = d->read_queue_nums;
        out->write_queue_nums = d->write_queue_nums;
        out->perm = d->perm;
        out->topic_filter_type = d->topic_filter_type;
        out->topic_sys_flag = d->topic_sys_flag;
        out->order = d->order;
        return true;
    }
    const json_t *j = json_object_get(t->topics, name);
    if (!j) {
        free(str_map_remove(&t->decoded, name));
        return false;
    }
    bcm_topic_fields_from_json(j, out);
    if (!d) {
        d = malloc(sizeof *d);
        if (!d || str_map_put(&t->decoded, name, d, NULL) != 0) {
            free(d); /* answer without caching */
            return true;
        }
    }
    d->gen = t->gen;
    d->read_queue_nums = out->read_queue_nums;
    d->write_queue_nums = out->write_queue_nums;
    d->perm = out->perm;
    d->topic_filter_type = out->topic_filter_type;
    d->topic_sys_flag = out->topic_sys_flag;
    d->order = out->order;
    return true;
}
