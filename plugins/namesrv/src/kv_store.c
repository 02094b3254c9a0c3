/* kv_store.c — KV namespaces and their JSON forms. Owns the strings it
 * stores; must not do file I/O or locking (the plugin glue does). */
#include "kv_store.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route_encoder.h"

typedef struct kv_pair {
    char *key;
    char *value;
} kv_pair;

typedef struct kv_namespace {
    char *name;
    rmq_str_map pairs; /* key -> kv_pair */
} kv_namespace;

void kv_store_init(kv_store *kv)
{
    rmq_str_map_init(&kv->namespaces);
}

static void ns_free(kv_namespace *ns)
{
    rmq_str_map_iter it;
    void *v;
    rmq_str_map_iter_init(&it, &ns->pairs);
    while (rmq_str_map_iter_next(&it, NULL, &v)) {
        kv_pair *p = v;
        free(p->key);
        free(p->value);
        free(p);
    }
    rmq_str_map_destroy(&ns->pairs);
    free(ns->name);
    free(ns);
}

void kv_store_destroy(kv_store *kv)
{
    rmq_str_map_iter it;
    void *v;
    rmq_str_map_iter_init(&it, &kv->namespaces);
    while (rmq_str_map_iter_next(&it, NULL, &v))
        ns_free(v);
    rmq_str_map_destroy(&kv->namespaces);
}

static kv_namespace *ns_get_or_create(kv_store *kv, const char *name)
{
    kv_namespace *ns = rmq_str_map_get(&kv->namespaces, name);
    if (ns)
        return ns;
    ns = calloc(1, sizeof(*ns));
    if (!ns || !(ns->name = strdup(name))) {
        free(ns);
        return NULL;
    }
    rmq_str_map_init(&ns->pairs);
    int err;
    rmq_str_map_put(&kv->namespaces, ns->name, ns, &err);
    if (err) {
        ns_free(ns);
        return NULL;
    }
    return ns;
}

int kv_store_put(kv_store *kv, const char *nsname, const char *key, const char *value)
{
    kv_namespace *ns = ns_get_or_create(kv, nsname);
    if (!ns)
        return -1;
    if (!value) {
        kv_store_delete(kv, nsname, key);
        return 0;
    }
    kv_pair *p = rmq_str_map_get(&ns->pairs, key);
    if (p) {
        char *nv = strdup(value);
        if (!nv)
            return -1;
        free(p->value);
        p->value = nv;
        return 0;
    }
    p = calloc(1, sizeof(*p));
    if (!p)
        return -1;
    p->key = strdup(key);
    p->value = strdup(value);
    int err = !p->key || !p->value;
    if (!err)
        rmq_str_map_put(&ns->pairs, p->key, p, &err);
    if (err) {
        free(p->key);
        free(p->value);
        free(p);
        return -1;
    }
    return 0;
}

const char *kv_store_get(const kv_store *kv, const char *nsname, const char *key)
{
    if (!nsname || !key)
        return NULL;
    kv_namespace *ns = rmq_str_map_get(&kv->namespaces, nsname);
    kv_pair *p = ns ? rmq_str_map_get(&ns->pairs, key) : NULL;
    return p ? p->value : NULL;
}

bool kv_store_delete(kv_store *kv, const char *nsname, const char *key)
{
    if (!nsname || !key)
        return false;
    kv_namespace *ns = rmq_str_map_get(&kv->namespaces, nsname);
    kv_pair *p = ns ? rmq_str_map_remove(&ns->pairs, key) : NULL;
    if (!p)
        return false;
    free(p->key);
    free(p->value);
    free(p);
    return true;
}

bool kv_store_has_namespace(const kv_store *kv, const char *nsname)
{
    return nsname && rmq_str_map_get(&kv->namespaces, nsname) != NULL;
}

static void put_pairs(const kv_namespace *ns, text_buf *out)
{
    size_t n;
    const char **keys = sorted_keys(&ns->pairs, &n);
    tb_putc(out, '{');
    for (size_t i = 0; i < n; i++) {
        const kv_pair *p = rmq_str_map_get(&ns->pairs, keys[i]);
        if (i)
            tb_putc(out, ',');
        tb_json_str(out, p->key, false);
        tb_putc(out, ':');
        tb_json_str(out, p->value, false);
    }
    tb_putc(out, '}');
    free(keys);
}

bool kv_store_encode_table(const kv_store *kv, const char *nsname, text_buf *out)
{
    kv_namespace *ns = nsname ? rmq_str_map_get(&kv->namespaces, nsname) : NULL;
    if (!ns)
        return false;
    tb_puts(out, "{\"table\":");
    put_pairs(ns, out);
    tb_putc(out, '}');
    return true;
}

void kv_store_encode_file(const kv_store *kv, text_buf *out)
{
    size_t n;
    const char **names = sorted_keys(&kv->namespaces, &n);
    tb_puts(out, "{\"configTable\":{");
    for (size_t i = 0; i < n; i++) {
        if (i)
            tb_putc(out, ',');
        tb_json_str(out, names[i], false);
        tb_putc(out, ':');
        put_pairs(rmq_str_map_get(&kv->namespaces, names[i]), out);
    }
    tb_puts(out, "}}");
    free(names);
}

int kv_store_load(kv_store *kv, const char *text, size_t len, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_ALLOW_NUL, &je);
    if (!root) {
        snprintf(err, errlen, "line %d: %s", je.line, je.text);
        return -1;
    }
    json_t *table = json_object_get(root, "configTable");
    if (!json_is_object(root) || (table && !json_is_object(table) && !json_is_null(table))) {
        snprintf(err, errlen, "configTable is not an object");
        json_decref(root);
        return -1;
    }
    const char *nsname;
    json_t *nsobj;
    int rc = 0;
    json_object_foreach(table, nsname, nsobj)
    {
        if (!json_is_object(nsobj))
            continue;
        if (!ns_get_or_create(kv, nsname)) {
            rc = -1;
            break;
        }
        const char *k;
        json_t *v;
        json_object_foreach(nsobj, k, v)
        {
            const char *s = json_string_value(v);
            char num[32];
            if (!s && json_is_integer(v)) {
                snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
                s = num;
            }
            if (s && kv_store_put(kv, nsname, k, s) != 0)
                rc = -1;
        }
    }
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    json_decref(root);
    return rc;
}
