/* topic_table.c — owns the broker's topic table and its DataVersion, the
 * topics.json format and the configs SEND reads. Configs are kept as fixed
 * structs and turned into Java's TopicConfig JSON only when encoded. Never
 * registers anything: callers decide when the NameServers must hear about a
 * change. */
#include "topic_table.h"

#include "json_writer.h"
#include "topics_json_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cfg_free(void *p)
{
    bcm_topic_cfg *c = p;
    if (c)
        json_decref(c->attributes);
    free(c);
}

int bcm_topic_table_init(bcm_topic_table *t, uint64_t now_wall_ms)
{
    str_map_init(&t->cfgs);
    t->dv.counter = 0;
    t->dv.timestamp = (int64_t)now_wall_ms;
    return 0;
}

void bcm_topic_table_free(bcm_topic_table *t)
{
    str_map_clear(&t->cfgs, cfg_free);
}

json_t *bcm_topic_config_new(const char *name, int read_q, int write_q, int perm, int sys_flag,
                             bool order, const char *filter_type)
{
    return json_pack("{sbsisisssssisi}", "order", order, "perm", perm, "readQueueNums", read_q,
                     "topicFilterType", filter_type ? filter_type : "SINGLE_TAG", "topicName", name,
                     "topicSysFlag", sys_flag, "writeQueueNums", write_q);
}

static json_t *cfg_json(const char *name, const bcm_topic_cfg *c)
{
    json_t *j = bcm_topic_config_new(name, c->read_queue_nums, c->write_queue_nums, c->perm,
                                     c->topic_sys_flag, c->order,
                                     c->topic_filter_type == 1 ? "MULTI_TAG" : "SINGLE_TAG");
    if (j && c->attributes)
        json_object_set(j, "attributes", c->attributes);
    return j;
}

/* A TopicConfig object (missing fields take Java's defaults) as a struct. */
static void cfg_from_json(const json_t *in, bcm_topic_cfg *c)
{
    json_t *rq = json_object_get(in, "readQueueNums");
    json_t *wq = json_object_get(in, "writeQueueNums");
    json_t *perm = json_object_get(in, "perm");
    json_t *sf = json_object_get(in, "topicSysFlag");
    const char *ft = json_string_value(json_object_get(in, "topicFilterType"));
    memset(c, 0, sizeof *c);
    c->read_queue_nums = rq ? (int32_t)json_integer_value(rq) : 16;
    c->write_queue_nums = wq ? (int32_t)json_integer_value(wq) : 16;
    c->perm = perm ? (int32_t)json_integer_value(perm) : 6;
    c->topic_sys_flag = sf ? (int32_t)json_integer_value(sf) : 0;
    c->topic_filter_type = ft && strcmp(ft, "MULTI_TAG") == 0 ? 1 : 0;
    c->order = json_is_true(json_object_get(in, "order"));
    json_t *attrs = json_object_get(in, "attributes"); /* 5.x files: keep, harmless */
    c->attributes = json_is_object(attrs) ? json_incref(attrs) : NULL;
}

/* Insert or replace name's config (a copy of *c, attributes reference taken). */
static int put_cfg(bcm_topic_table *t, const char *name, const bcm_topic_cfg *c)
{
    bcm_topic_cfg *v = malloc(sizeof *v);
    if (!v)
        return -1;
    *v = *c;
    void *old = NULL;
    if (str_map_put(&t->cfgs, name, v, &old) != 0) {
        free(v);
        return -1;
    }
    if (v->attributes)
        json_incref(v->attributes);
    cfg_free(old);
    return 0;
}

static void put_quiet(bcm_topic_table *t, json_t *cfg)
{
    if (!cfg)
        return;
    bcm_topic_cfg c;
    cfg_from_json(cfg, &c);
    put_cfg(t, json_string_value(json_object_get(cfg, "topicName")), &c);
    json_decref(c.attributes);
    json_decref(cfg);
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

static int load_one(void *ud, const char *key, const char *name, const bcm_topic_cfg *c)
{
    (void)key;
    return put_cfg(ud, name, c);
}

static void load_reset(void *ud)
{
    str_map_clear(&((bcm_topic_table *)ud)->cfgs, cfg_free);
}

/* Read straight into structs (topics_json_reader.c): a jansson tree of a
 * 15 MB file took most of a restart's CPU. All or nothing: a text that
 * fails leaves the table as it was. The start-up load goes into the empty
 * table directly; a load over a filled one (a slave's sync, a hand-over)
 * collects apart and moves the configs in on success. */
int bcm_topic_table_load(bcm_topic_table *t, const char *text, size_t len, char *err, size_t errlen)
{
    bool direct = t->cfgs.count == 0;
    bcm_topic_table tmp;
    bcm_topic_table *into = direct ? t : &tmp;
    if (!direct)
        bcm_topic_table_init(&tmp, 0);
    bcm_data_version dv = t->dv;
    if (bcm_topics_json_read(text, len, load_one, load_reset, into, &dv, err, errlen) != 0) {
        str_map_clear(&into->cfgs, cfg_free);
        return -1;
    }
    if (!direct) {
        str_map_iter it;
        str_map_iter_init(&tmp.cfgs, &it);
        for (str_map_entry *e; (e = str_map_iter_next(&tmp.cfgs, &it)) != NULL;) {
            void *old = NULL;
            if (str_map_put(&t->cfgs, e->key, e->value, &old) != 0) {
                snprintf(err, errlen, "out of memory");
                str_map_clear(&tmp.cfgs, cfg_free); /* the rest; those moved stay */
                return -1;
            }
            e->value = NULL;
            cfg_free(old);
        }
        str_map_clear(&tmp.cfgs, NULL);
    }
    t->dv = dv;
    return 0;
}

size_t bcm_topic_table_size(const bcm_topic_table *t)
{
    return t->cfgs.count;
}

json_t *bcm_topic_table_config_json(const bcm_topic_table *t, const char *name)
{
    const bcm_topic_cfg *c = str_map_get(&t->cfgs, name);
    return c ? cfg_json(name, c) : NULL;
}

void bcm_topic_table_for_each(const bcm_topic_table *t,
                              void (*fn)(void *ud, const char *name, const bcm_topic_cfg *cfg),
                              void *ud)
{
    str_map_iter it;
    str_map_iter_init(&t->cfgs, &it);
    for (str_map_entry *e; (e = str_map_iter_next(&t->cfgs, &it)) != NULL;)
        fn(ud, e->key, e->value);
}

json_t *bcm_topic_table_json(const bcm_topic_table *t)
{
    bcm_topic_snapshot s;
    if (bcm_topic_table_snapshot(t, &s) != 0)
        return NULL;
    json_t *j = bcm_topic_snapshot_json(&s);
    bcm_topic_snapshot_free(&s);
    return j;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const bcm_topic_snap_entry *)a)->name, ((const bcm_topic_snap_entry *)b)->name);
}

void bcm_topic_snapshot_sort(bcm_topic_snapshot *s)
{
    if (s->sorted)
        return;
    qsort(s->v, s->n, sizeof *s->v, by_name);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (k > 0 && strcmp(s->v[k - 1].name, s->v[i].name) == 0) {
            json_decref(s->v[i].cfg.attributes);
            continue;
        }
        s->v[k++] = s->v[i];
    }
    s->n = k;
    s->sorted = true;
}

static int snapshot_alloc(bcm_topic_snapshot *s, const bcm_topic_table *t, size_t n, size_t bytes)
{
    memset(s, 0, sizeof *s);
    s->dv = t->dv;
    s->v = malloc((n ? n : 1) * sizeof *s->v);
    s->names = malloc(bytes ? bytes : 1);
    if (!s->v || !s->names) {
        bcm_topic_snapshot_free(s);
        return -1;
    }
    return 0;
}

/* Appends name's config (its name copied at *at). */
static void snapshot_add(bcm_topic_snapshot *s, char **at, const char *name, const bcm_topic_cfg *c)
{
    size_t len = strlen(name);
    if (!bcm_utf8_valid(name, len))
        return;
    memcpy(*at, name, len + 1);
    s->v[s->n] = (bcm_topic_snap_entry){.name = *at, .cfg = *c};
    if (c->attributes)
        json_incref(c->attributes); /* atomic: freed unlocked */
    *at += len + 1;
    s->n++;
}

int bcm_topic_table_snapshot_of(const bcm_topic_table *t, const char *const *names, size_t n,
                                bcm_topic_snapshot *s)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += strlen(names[i]) + 1;
    if (snapshot_alloc(s, t, n, bytes) != 0)
        return -1;
    char *at = s->names;
    for (size_t i = 0; i < n; i++) {
        const bcm_topic_cfg *c = str_map_get(&t->cfgs, names[i]);
        if (c)
            snapshot_add(s, &at, names[i], c);
    }
    return 0;
}

int bcm_topic_table_snapshot(const bcm_topic_table *t, bcm_topic_snapshot *s)
{
    size_t bytes = 0;
    str_map_iter it;
    str_map_iter_init(&t->cfgs, &it);
    for (str_map_entry *e; (e = str_map_iter_next(&t->cfgs, &it)) != NULL;)
        bytes += strlen(e->key) + 1;
    if (snapshot_alloc(s, t, t->cfgs.count, bytes) != 0)
        return -1;
    char *at = s->names;
    str_map_iter_init(&t->cfgs, &it);
    for (str_map_entry *e; (e = str_map_iter_next(&t->cfgs, &it)) != NULL;)
        snapshot_add(s, &at, e->key, e->value);
    return 0;
}

json_t *bcm_topic_snapshot_json(const bcm_topic_snapshot *s)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < s->n; i++) {
        json_t *j = cfg_json(s->v[i].name, &s->v[i].cfg);
        if (!j || json_object_set_new(o, s->v[i].name, j) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

void bcm_topic_snapshot_free(bcm_topic_snapshot *s)
{
    for (size_t i = 0; s->v && i < s->n; i++)
        json_decref(s->v[i].cfg.attributes);
    free(s->v);
    free(s->names);
    memset(s, 0, sizeof *s);
}

char *bcm_topic_table_encode(const bcm_topic_table *t)
{
    bcm_topic_snapshot s;
    if (bcm_topic_table_snapshot(t, &s) != 0)
        return NULL;
    char *text = bcm_topic_snapshot_encode(&s);
    bcm_topic_snapshot_free(&s);
    return text;
}

int bcm_topic_table_put(bcm_topic_table *t, json_t *cfg, uint64_t now_wall_ms)
{
    const char *name = json_string_value(json_object_get(cfg, "topicName"));
    if (!name) {
        json_decref(cfg);
        return -1;
    }
    bcm_topic_cfg c;
    cfg_from_json(cfg, &c);
    int rc = put_cfg(t, name, &c);
    json_decref(c.attributes);
    json_decref(cfg);
    if (rc != 0)
        return -1;
    bcm_data_version_next(&t->dv, now_wall_ms);
    return 0;
}

int bcm_topic_table_put_cfg(bcm_topic_table *t, const char *name, const bcm_topic_cfg *c,
                            uint64_t now_wall_ms)
{
    if (put_cfg(t, name, c) != 0)
        return -1;
    bcm_data_version_next(&t->dv, now_wall_ms);
    return 0;
}

bool bcm_topic_table_create_if_absent(bcm_topic_table *t, const char *name, int queues, int perm,
                                      int sys_flag, uint64_t now_wall_ms)
{
    if (str_map_get(&t->cfgs, name))
        return false;
    return bcm_topic_table_put(
               t, bcm_topic_config_new(name, queues, queues, perm, sys_flag, false, NULL),
               now_wall_ms) == 0;
}

bool bcm_topic_table_delete(bcm_topic_table *t, const char *name, uint64_t now_wall_ms)
{
    bcm_topic_cfg *c = str_map_remove(&t->cfgs, name);
    if (!c)
        return false;
    cfg_free(c);
    bcm_data_version_next(&t->dv, now_wall_ms);
    return true;
}

bool bcm_topic_table_has(const bcm_topic_table *t, const char *name)
{
    return str_map_get(&t->cfgs, name) != NULL;
}

bool bcm_topic_table_apply_order_conf(bcm_topic_table *t, const json_t *kv_table,
                                      uint64_t now_wall_ms)
{
    const json_t *table = json_object_get(kv_table, "table");
    if (!json_is_object(table))
        return false;
    bool changed = false;
    str_map_iter it;
    str_map_iter_init(&t->cfgs, &it);
    for (str_map_entry *e; (e = str_map_iter_next(&t->cfgs, &it)) != NULL;) {
        bcm_topic_cfg *c = e->value;
        bool want = json_object_get(table, e->key) != NULL;
        if (c->order != want) {
            c->order = want; /* snapshots copy the struct: in place is safe */
            changed = true;
        }
    }
    if (changed)
        bcm_data_version_next(&t->dv, now_wall_ms);
    return changed;
}

void bcm_topic_fields_from_cfg(const char *name, const bcm_topic_cfg *c, bcm_topic_fields *out)
{
    memset(out, 0, sizeof *out);
    /* every SEND copies its topic's config: a bounded copy, not snprintf
     * (~600 instructions a send); a missing name reads as glibc's "%s" did */
    if (!name)
        name = "(null)";
    memcpy(out->topic_name, name, strnlen(name, sizeof out->topic_name - 1));
    out->read_queue_nums = c->read_queue_nums;
    out->write_queue_nums = c->write_queue_nums;
    out->perm = c->perm;
    out->topic_filter_type = c->topic_filter_type;
    out->topic_sys_flag = c->topic_sys_flag;
    out->order = c->order;
}

void bcm_topic_fields_from_json(const json_t *j, bcm_topic_fields *out)
{
    bcm_topic_cfg c;
    cfg_from_json(j, &c);
    json_decref(c.attributes);
    bcm_topic_fields_from_cfg(json_string_value(json_object_get(j, "topicName")), &c, out);
}

bool bcm_topic_table_get(bcm_topic_table *t, const char *name, bcm_topic_fields *out)
{
    const bcm_topic_cfg *c = str_map_get(&t->cfgs, name);
    if (!c)
        return false;
    bcm_topic_fields_from_cfg(name, c, out);
    return true;
}
