/* offset_table.c — owns committed consumer offsets and their Java file
 * format. 4.9.8 semantics: any topic is accepted and a smaller offset still
 * replaces the stored one. Never writes files. */
#include "offset_table.h"

#include "fastjson_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_offsets(void *p)
{
    bcm_queue_offsets *q = p;
    if (!q)
        return;
    free(q->queue_ids);
    free(q->offsets);
    free(q);
}

void bcm_offset_table_init(bcm_offset_table *t)
{
    str_map_init(&t->table);
}

void bcm_offset_table_free(bcm_offset_table *t)
{
    str_map_clear(&t->table, free_offsets);
}

static char *make_key(const char *topic, const char *group)
{
    /* "topic@group", without snprintf: every POP acknowledgement's commit
     * and every query builds one */
    size_t tl = strlen(topic), gl = strlen(group);
    char *k = malloc(tl + gl + 2);
    if (k) {
        memcpy(k, topic, tl);
        k[tl] = '@';
        memcpy(k + tl + 1, group, gl + 1);
    }
    return k;
}

static int put_offset(bcm_offset_table *t, const char *key, int32_t qid, int64_t off)
{
    bcm_queue_offsets *q = str_map_get(&t->table, key);
    if (!q) {
        q = calloc(1, sizeof *q);
        if (!q || str_map_put(&t->table, key, q, NULL) != 0) {
            free(q);
            return -1;
        }
    }
    size_t i = 0;
    while (i < q->n && q->queue_ids[i] < qid)
        i++;
    if (i < q->n && q->queue_ids[i] == qid) {
        q->offsets[i] = off;
        return 0;
    }
    if (q->n == q->cap) {
        size_t nc = q->cap ? q->cap * 2 : 8;
        int32_t *a = realloc(q->queue_ids, nc * sizeof *a);
        if (!a)
            return -1;
        q->queue_ids = a;
        int64_t *b = realloc(q->offsets, nc * sizeof *b);
        if (!b)
            return -1;
        q->offsets = b;
        q->cap = nc;
    }
    memmove(&q->queue_ids[i + 1], &q->queue_ids[i], (q->n - i) * sizeof *q->queue_ids);
    memmove(&q->offsets[i + 1], &q->offsets[i], (q->n - i) * sizeof *q->offsets);
    q->queue_ids[i] = qid;
    q->offsets[i] = off;
    q->n++;
    return 0;
}

int bcm_offset_commit(bcm_offset_table *t, const char *topic, const char *group, int32_t queue_id,
                      int64_t offset)
{
    char *k = make_key(topic, group);
    if (!k)
        return -1;
    int rc = put_offset(t, k, queue_id, offset);
    free(k);
    return rc;
}

bool bcm_offset_query(const bcm_offset_table *t, const char *topic, const char *group,
                      int32_t queue_id, int64_t *offset)
{
    char *k = make_key(topic, group);
    if (!k)
        return false;
    const bcm_queue_offsets *q = str_map_get(&t->table, k);
    free(k);
    for (size_t i = 0; q && i < q->n; i++) {
        if (q->queue_ids[i] == queue_id) {
            *offset = q->offsets[i];
            return true;
        }
    }
    return false;
}

/* Split "topic@group" as Java does (exactly two parts), into a and b. */
static bool split_key(const char *key, const char **group_start, size_t *topic_len)
{
    const char *at = strchr(key, '@');
    if (!at || strchr(at + 1, '@'))
        return false;
    *topic_len = (size_t)(at - key);
    *group_start = at + 1;
    return true;
}

size_t bcm_offset_remove_topic(bcm_offset_table *t, const char *topic)
{
    size_t n = 0, tl;
    const char *g;
    str_map_iter it;
    str_map_entry *e;
    str_map_iter_init(&t->table, &it);
    while ((e = str_map_iter_next(&t->table, &it))) {
        if (split_key(e->key, &g, &tl) && tl == strlen(topic) && strncmp(e->key, topic, tl) == 0) {
            free_offsets(str_map_remove(&t->table, e->key));
            n++;
        }
    }
    return n;
}

void bcm_offset_groups_of_topic(const bcm_offset_table *t, const char *topic, json_t *groups)
{
    size_t tl;
    const char *g;
    str_map_iter it;
    str_map_entry *e;
    str_map_iter_init(&t->table, &it);
    while ((e = str_map_iter_next(&t->table, &it))) {
        if (!split_key(e->key, &g, &tl) || tl != strlen(topic) || strncmp(e->key, topic, tl) != 0)
            continue;
        bool dup = false;
        size_t i;
        json_t *v;
        json_array_foreach(groups, i, v) dup |= strcmp(json_string_value(v), g) == 0;
        if (!dup)
            json_array_append_new(groups, json_string(g));
    }
}

void bcm_offset_topics_of_group(const bcm_offset_table *t, const char *group, json_t *topics)
{
    size_t tl;
    const char *g;
    str_map_iter it;
    str_map_entry *e;
    str_map_iter_init(&t->table, &it);
    while ((e = str_map_iter_next(&t->table, &it))) {
        if (!split_key(e->key, &g, &tl) || strcmp(g, group) != 0)
            continue;
        bool dup = false;
        size_t i;
        json_t *v;
        json_array_foreach(topics, i, v) dup |=
            strlen(json_string_value(v)) == tl && strncmp(json_string_value(v), e->key, tl) == 0;
        if (!dup)
            json_array_append_new(topics, json_stringn(e->key, tl));
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct strbuf {
    char *s;
    size_t n, cap;
    bool oom;
} strbuf;

static void sb_add(strbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = (b->cap ? b->cap * 2 : 256);
        while (nc < b->n + n + 1)
            nc *= 2;
        char *p = realloc(b->s, nc);
        if (!p) {
            b->oom = true;
            return;
        }
        b->s = p;
        b->cap = nc;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_str(strbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_json_string(strbuf *b, const char *s)
{
    json_t *js = json_string(s);
    char *d = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
    json_decref(js);
    if (!d) {
        b->oom = true;
        return;
    }
    sb_str(b, d);
    free(d);
}

char *bcm_offset_table_encode(const bcm_offset_table *t, bool pretty)
{
    size_t n = t->table.count, i = 0;
    const char **keys = calloc(n ? n : 1, sizeof *keys);
    if (!keys)
        return NULL;
    str_map_iter it;
    str_map_entry *e;
    str_map_iter_init(&t->table, &it);
    while ((e = str_map_iter_next(&t->table, &it)))
        keys[i++] = e->key;
    qsort(keys, n, sizeof *keys, cmp_str);
    strbuf b = {0};
    sb_str(&b, pretty ? "{\n\t\"offsetTable\":{" : "{\"offsetTable\":{");
    for (i = 0; i < n; i++) {
        const bcm_queue_offsets *q = str_map_get(&t->table, keys[i]);
        if (i)
            sb_str(&b, ",");
        if (pretty)
            sb_str(&b, "\n\t\t");
        sb_json_string(&b, keys[i]);
        sb_str(&b, ":{");
        for (size_t j = 0; j < q->n; j++) {
            char num[64];
            snprintf(num, sizeof num, "%s%d:%lld", j ? "," : "", q->queue_ids[j],
                     (long long)q->offsets[j]);
            sb_str(&b, num);
        }
        sb_str(&b, pretty ? "\n\t\t}" : "}");
    }
    sb_str(&b, pretty ? "\n\t}\n}" : "}}");
    free(keys);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* An empty entry for `key`, replacing what was there (a slave taking the
 * master's inner map whole, SlaveSynchronize#syncConsumerOffset's putAll). */
static int reset_key(bcm_offset_table *t, const char *key)
{
    free_offsets(str_map_remove(&t->table, key));
    bcm_queue_offsets *q = calloc(1, sizeof *q);
    if (!q || str_map_put(&t->table, key, q, NULL) != 0) {
        free(q);
        return -1;
    }
    return 0;
}

static int load_table(bcm_offset_table *t, const char *text, size_t len, bool replace_keys,
                      char *err, size_t errlen)
{
    json_t *root = fastjson_load_object(text, len, err, errlen);
    if (!root)
        return -1;
    const char *k, *qk;
    json_t *v, *ov;
    json_object_foreach(json_object_get(root, "offsetTable"), k, v)
    {
        if (replace_keys && json_is_object(v) && reset_key(t, k) != 0) {
            json_decref(root);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        json_object_foreach(v, qk, ov)
        {
            char *end = NULL;
            long qid = strtol(qk, &end, 10);
            if (!end || *end || !json_is_integer(ov))
                continue;
            if (put_offset(t, k, (int32_t)qid, (int64_t)json_integer_value(ov)) != 0) {
                json_decref(root);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
        }
    }
    json_decref(root);
    return 0;
}

int bcm_offset_table_load(bcm_offset_table *t, const char *text, size_t len, char *err,
                          size_t errlen)
{
    return load_table(t, text, len, false, err, errlen);
}

int bcm_offset_table_take_keys(bcm_offset_table *t, const char *text, size_t len, char *err,
                               size_t errlen)
{
    return load_table(t, text, len, true, err, errlen);
}

size_t bcm_offset_table_count(const bcm_offset_table *t)
{
    return t->table.count;
}
