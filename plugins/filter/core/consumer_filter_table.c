/* consumer_filter_table.c — owns ConsumerFilterData entries: the register /
 * unregister / clean rules of Java's ConsumerFilterManager and the
 * consumerFilter.json encoding (protocol.md §6.6). Does no file I/O. */
#include "consumer_filter_table.h"

#include "compiled_expr.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void consumer_filter_table_init(consumer_filter_table *t, const bloom_params *bloom,
                                const rmq_fx_options *opt)
{
    memset(t, 0, sizeof(*t));
    pthread_mutex_init(&t->lock, NULL);
    t->bloom = *bloom;
    if (opt)
        t->opt = *opt;
}

static void data_free(consumer_filter_data *d)
{
    free(d->topic);
    free(d->group);
    free(d->expression);
    free(d->expression_type);
    free(d->compiled);
    memset(d, 0, sizeof(*d));
}

static void clear_all(consumer_filter_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        data_free(&t->v[i]);
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}

void consumer_filter_table_dispose(consumer_filter_table *t)
{
    clear_all(t);
    pthread_mutex_destroy(&t->lock);
}

bool consumer_filter_is_dead(const consumer_filter_data *d)
{
    return d->dead_time >= d->born_time;
}

static consumer_filter_data *find(consumer_filter_table *t, const char *topic, const char *group)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i].topic, topic) == 0 && strcmp(t->v[i].group, group) == 0)
            return &t->v[i];
    return NULL;
}

static void remove_entry(consumer_filter_table *t, consumer_filter_data *d)
{
    size_t i = (size_t)(d - t->v);
    data_free(d);
    memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(t->v[0]));
    t->n--;
}

static bool is_tag_type(const char *type)
{
    return !type || !type[0] || strcmp(type, "TAG") == 0;
}

static void set_bloom(consumer_filter_table *t, consumer_filter_data *d)
{
    char key[1024];
    int n = snprintf(key, sizeof key, "%s#%s", d->group, d->topic);
    d->bloom_bit_num = t->bloom.m;
    d->bloom_k = t->bloom.k;
    if (n >= 0 && (size_t)n < sizeof key) {
        bloom_positions(&t->bloom, key, (size_t)n, d->bloom_pos);
    } else {
        char *big = malloc(strlen(d->group) + strlen(d->topic) + 2);
        if (!big)
            return;
        sprintf(big, "%s#%s", d->group, d->topic);
        bloom_positions(&t->bloom, big, strlen(big), d->bloom_pos);
        free(big);
    }
}

/* ConsumerFilterManager.build: compile; NULL compiled → no entry. */
static bool build(consumer_filter_table *t, consumer_filter_data *d, const char *topic,
                  const char *group, const char *expr, const char *type, int64_t version,
                  int64_t now)
{
    memset(d, 0, sizeof(*d));
    char err[256];
    if (rmq_fx_compile(type, expr, strlen(expr), &t->opt, &d->compiled, err, sizeof err, NULL) != 0)
        return false;
    d->topic = strdup(topic);
    d->group = strdup(group);
    d->expression = strdup(expr);
    d->expression_type = strdup(type);
    if (!d->topic || !d->group || !d->expression || !d->expression_type) {
        data_free(d);
        return false;
    }
    d->born_time = now;
    d->dead_time = 0;
    d->client_version = version;
    set_bloom(t, d);
    return true;
}

static bool append(consumer_filter_table *t, const consumer_filter_data *d)
{
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 8;
        consumer_filter_data *nv = realloc(t->v, nc * sizeof(*nv));
        if (!nv)
            return false;
        t->v = nv;
        t->cap = nc;
    }
    t->v[t->n++] = *d;
    return true;
}

static void register_one(consumer_filter_table *t, const char *group,
                         const rmq_consumer_subscription *s, int64_t now)
{
    if (is_tag_type(s->expression_type) || !s->sub_string || !s->sub_string[0] || !s->topic)
        return;
    consumer_filter_data *old = find(t, s->topic, group);
    consumer_filter_data fresh;
    if (!old) {
        if (build(t, &fresh, s->topic, group, s->sub_string, s->expression_type, s->sub_version,
                  now)) {
            if (append(t, &fresh))
                t->dirty = true;
            else
                data_free(&fresh);
        }
        return;
    }
    if (s->sub_version <= old->client_version) {
        /* older or same version: keep; the same version revives a dead entry */
        if (s->sub_version == old->client_version && consumer_filter_is_dead(old)) {
            old->dead_time = 0;
            t->dirty = true;
        }
        return;
    }
    /* Bloom data is derived from group#topic with the table's parameters, so
     * it changes only when the parameters changed (a loaded entry). */
    bool changed = strcmp(old->expression, s->sub_string) != 0 ||
                   strcmp(old->expression_type, s->expression_type) != 0 ||
                   old->bloom_bit_num != t->bloom.m || old->bloom_k != t->bloom.k;
    if (changed) {
        if (build(t, &fresh, s->topic, group, s->sub_string, s->expression_type, s->sub_version,
                  now)) {
            data_free(old);
            *old = fresh;
        } else {
            /* new expression does not compile: drop the old one, the client reports */
            remove_entry(t, old);
        }
    } else {
        old->client_version = s->sub_version;
        if (consumer_filter_is_dead(old))
            old->dead_time = 0;
    }
    t->dirty = true;
}

void consumer_filter_table_register(consumer_filter_table *t, const char *group,
                                    const rmq_consumer_subscription *subs, size_t n, int64_t now)
{
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < n; i++)
        register_one(t, group, &subs[i], now);
    /* the group's topics it no longer subscribes to die now */
    for (size_t i = 0; i < t->n; i++) {
        consumer_filter_data *d = &t->v[i];
        if (strcmp(d->group, group) != 0 || consumer_filter_is_dead(d))
            continue;
        bool exists = false;
        for (size_t k = 0; k < n && !exists; k++)
            exists = subs[k].topic && strcmp(subs[k].topic, d->topic) == 0;
        if (!exists) {
            d->dead_time = now;
            t->dirty = true;
        }
    }
    pthread_mutex_unlock(&t->lock);
}

void consumer_filter_table_unregister(consumer_filter_table *t, const char *group, int64_t now)
{
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n; i++) {
        consumer_filter_data *d = &t->v[i];
        if (strcmp(d->group, group) == 0 && !consumer_filter_is_dead(d)) {
            d->dead_time = now;
            t->dirty = true;
        }
    }
    pthread_mutex_unlock(&t->lock);
}

size_t consumer_filter_table_clean(consumer_filter_table *t, int64_t now, int64_t span)
{
    size_t removed = 0;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n;) {
        consumer_filter_data *d = &t->v[i];
        if (consumer_filter_is_dead(d) && now - d->dead_time >= span) {
            remove_entry(t, d);
            removed++;
        } else {
            i++;
        }
    }
    if (removed)
        t->dirty = true;
    pthread_mutex_unlock(&t->lock);
    return removed;
}

bool consumer_filter_table_get(consumer_filter_table *t, const char *topic, const char *group,
                               consumer_filter_view *out)
{
    pthread_mutex_lock(&t->lock);
    consumer_filter_data *d = find(t, topic, group);
    if (d) {
        memset(out, 0, sizeof(*out));
        out->born_time = d->born_time;
        out->dead_time = d->dead_time;
        out->client_version = d->client_version;
        out->dead = consumer_filter_is_dead(d);
        out->compiled = d->compiled != NULL;
        out->bloom_bit_num = d->bloom_bit_num;
        out->bloom_k = d->bloom_k;
        memcpy(out->bloom_pos, d->bloom_pos, sizeof out->bloom_pos);
        snprintf(out->expression, sizeof out->expression, "%s", d->expression);
        snprintf(out->expression_type, sizeof out->expression_type, "%s", d->expression_type);
    }
    pthread_mutex_unlock(&t->lock);
    return d != NULL;
}

int consumer_filter_table_get_compiled(consumer_filter_table *t, const char *topic,
                                       const char *group, int64_t *client_version, bool *dead,
                                       char *type, size_t type_cap,
                                       struct rmq_filter_expr **compiled)
{
    int rc = 0;
    *compiled = NULL;
    pthread_mutex_lock(&t->lock);
    consumer_filter_data *d = find(t, topic, group);
    if (d) {
        rc = 1;
        *client_version = d->client_version;
        *dead = consumer_filter_is_dead(d);
        snprintf(type, type_cap, "%s", d->expression_type);
        if (d->compiled) {
            /* one block without pointers: a byte copy is a complete expression */
            *compiled = malloc(d->compiled->total_size);
            if (*compiled)
                memcpy(*compiled, d->compiled, d->compiled->total_size);
            else
                rc = -1;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

size_t consumer_filter_table_count(consumer_filter_table *t)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->n;
    pthread_mutex_unlock(&t->lock);
    return n;
}

static json_t *data_to_json(const consumer_filter_data *d)
{
    json_t *o = json_object();
    json_t *bloom = json_object();
    json_t *pos = json_array();
    for (int i = 0; i < d->bloom_k; i++)
        json_array_append_new(pos, json_integer(d->bloom_pos[i]));
    json_object_set_new(bloom, "bitNum", json_integer(d->bloom_bit_num));
    json_object_set_new(bloom, "bitPos", pos);
    json_object_set_new(o, "bloomFilterData", bloom);
    json_object_set_new(o, "bornTime", json_integer(d->born_time));
    json_object_set_new(o, "clientVersion", json_integer(d->client_version));
    json_object_set_new(o, "consumerGroup", json_string(d->group));
    json_object_set_new(o, "dead", json_boolean(consumer_filter_is_dead(d)));
    json_object_set_new(o, "deadTime", json_integer(d->dead_time));
    json_object_set_new(o, "expression", json_string(d->expression));
    json_object_set_new(o, "expressionType", json_string(d->expression_type));
    json_object_set_new(o, "topic", json_string(d->topic));
    return o;
}

char *consumer_filter_table_to_json(consumer_filter_table *t, bool clear_dirty)
{
    json_t *root = json_object();
    json_t *by_topic = json_object();
    json_object_set_new(root, "filterDataByTopic", by_topic);
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n; i++) {
        const consumer_filter_data *d = &t->v[i];
        json_t *tm = json_object_get(by_topic, d->topic);
        if (!tm) {
            tm = json_object();
            json_object_set_new(tm, "groupFilterData", json_object());
            json_object_set_new(tm, "topic", json_string(d->topic));
            json_object_set_new(by_topic, d->topic, tm);
        }
        json_object_set_new(json_object_get(tm, "groupFilterData"), d->group, data_to_json(d));
    }
    if (clear_dirty)
        t->dirty = false;
    pthread_mutex_unlock(&t->lock);
    char *text = json_dumps(root, JSON_SORT_KEYS | JSON_INDENT(1));
    json_decref(root);
    return text;
}

static const char *str_field(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

int consumer_filter_table_load(consumer_filter_table *t, const char *text, size_t len,
                               bool at_start, int64_t now, bool *discarded, char *err,
                               size_t errlen)
{
    if (discarded)
        *discarded = false;
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    json_t *by_topic = json_object_get(root, "filterDataByTopic");
    if (!json_is_object(root) || (by_topic && !json_is_object(by_topic))) {
        snprintf(err, errlen, "consumerFilter.json: %s",
                 root ? "not a ConsumerFilterManager object" : je.text);
        json_decref(root);
        return -1;
    }
    consumer_filter_data *v = NULL;
    size_t n = 0, cap = 0;
    bool bloom_changed = false;
    const char *topic;
    json_t *tm;
    json_object_foreach(by_topic, topic, tm)
    {
        const char *group;
        json_t *o;
        json_object_foreach(json_object_get(tm, "groupFilterData"), group, o)
        {
            json_t *bloom = json_object_get(o, "bloomFilterData");
            json_t *pos = json_object_get(bloom, "bitPos");
            if (at_start && (!json_is_object(bloom) ||
                             json_integer_value(json_object_get(bloom, "bitNum")) != t->bloom.m ||
                             !json_is_array(pos) || (int)json_array_size(pos) != t->bloom.k)) {
                bloom_changed = true;
                break;
            }
            consumer_filter_data d;
            memset(&d, 0, sizeof d);
            const char *g = str_field(o, "consumerGroup");
            const char *tp = str_field(o, "topic");
            d.group = strdup(*g ? g : group);
            d.topic = strdup(*tp ? tp : topic);
            d.expression = strdup(str_field(o, "expression"));
            d.expression_type = strdup(str_field(o, "expressionType"));
            d.born_time = json_integer_value(json_object_get(o, "bornTime"));
            d.dead_time = json_integer_value(json_object_get(o, "deadTime"));
            d.client_version = json_integer_value(json_object_get(o, "clientVersion"));
            d.bloom_bit_num = (int)json_integer_value(json_object_get(bloom, "bitNum"));
            size_t k = json_array_size(pos);
            d.bloom_k = (int)(k > BLOOM_MAX_K ? BLOOM_MAX_K : k);
            for (int i = 0; i < d.bloom_k; i++)
                d.bloom_pos[i] = (int)json_integer_value(json_array_get(pos, (size_t)i));
            if (!d.group || !d.topic || !d.expression || !d.expression_type) {
                data_free(&d);
                continue;
            }
            char cerr[128];
            /* a stored expression that no longer compiles is kept uncompiled */
            if (rmq_fx_compile(d.expression_type, d.expression, strlen(d.expression), &t->opt,
                               &d.compiled, cerr, sizeof cerr, NULL) != 0)
                d.compiled = NULL;
            if (at_start && d.dead_time == 0) {
                int64_t dead = now - 30000;
                d.dead_time = dead <= d.born_time ? d.born_time : dead;
            }
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 8;
                consumer_filter_data *nv = realloc(v, nc * sizeof(*nv));
                if (!nv) {
                    data_free(&d);
                    continue;
                }
                v = nv;
                cap = nc;
            }
            v[n++] = d;
        }
        if (bloom_changed)
            break;
    }
    json_decref(root);
    if (bloom_changed) {
        for (size_t i = 0; i < n; i++)
            data_free(&v[i]);
        free(v);
        if (discarded)
            *discarded = true;
        return 0;
    }
    pthread_mutex_lock(&t->lock);
    clear_all(t);
    t->v = v;
    t->n = n;
    t->cap = cap;
    t->dirty = false;
    pthread_mutex_unlock(&t->lock);
    return 0;
}
