/* str_map.c — chained string hash map used by the route table and KV store.
 * Owns its nodes, never the keys or values it indexes; never locks (its
 * callers serialise access). */
#include "str_map.h"

#include <stdlib.h>
#include <string.h>

uint32_t str_hash(const char *s)
{
    /* FNV-1a: cheap and good enough for topic and broker names. */
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return h;
}

void str_map_init(str_map *m)
{
    m->buckets = NULL;
    m->nbuckets = 0;
    m->count = 0;
}

void str_map_destroy(str_map *m)
{
    for (size_t i = 0; i < m->nbuckets; i++) {
        str_map_node *n = m->buckets[i];
        while (n) {
            str_map_node *next = n->next;
            free(n);
            n = next;
        }
    }
    free(m->buckets);
    str_map_init(m);
}

static str_map_node *find(const str_map *m, const char *key, uint32_t h)
{
    if (!m->nbuckets)
        return NULL;
    for (str_map_node *n = m->buckets[h & (m->nbuckets - 1)]; n; n = n->next)
        if (n->hash == h && strcmp(n->key, key) == 0)
            return n;
    return NULL;
}

void *str_map_get(const str_map *m, const char *key)
{
    str_map_node *n = find(m, key, str_hash(key));
    return n ? n->value : NULL;
}

static int grow(str_map *m)
{
    size_t nb = m->nbuckets ? m->nbuckets * 2 : 16;
    str_map_node **b = calloc(nb, sizeof(*b));
    if (!b)
        return -1;
    for (size_t i = 0; i < m->nbuckets; i++) {
        str_map_node *n = m->buckets[i];
        while (n) {
            str_map_node *next = n->next;
            size_t j = n->hash & (nb - 1);
            n->next = b[j];
            b[j] = n;
            n = next;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = nb;
    return 0;
}

void *str_map_put(str_map *m, const char *key, void *value, int *err)
{
    uint32_t h = str_hash(key);
    str_map_node *n = find(m, key, h);
    if (err)
        *err = 0;
    if (n) {
        void *old = n->value;
        n->value = value;
        n->key = key;
        return old;
    }
    if (m->count + 1 > m->nbuckets && grow(m) != 0) {
        if (!m->nbuckets) {
            if (err)
                *err = -1;
            return NULL;
        }
    }
    n = malloc(sizeof(*n));
    if (!n) {
        if (err)
            *err = -1;
        return NULL;
    }
    n->key = key;
    n->hash = h;
    n->value = value;
    size_t j = h & (m->nbuckets - 1);
    n->next = m->buckets[j];
    m->buckets[j] = n;
    m->count++;
    return NULL;
}

void *str_map_remove(str_map *m, const char *key)
{
    if (!m->nbuckets)
        return NULL;
    uint32_t h = str_hash(key);
    str_map_node **pp = &m->buckets[h & (m->nbuckets - 1)];
    for (; *pp; pp = &(*pp)->next) {
        str_map_node *n = *pp;
        if (n->hash == h && strcmp(n->key, key) == 0) {
            void *v = n->value;
            *pp = n->next;
            free(n);
            m->count--;
            return v;
        }
    }
    return NULL;
}

size_t str_map_count(const str_map *m)
{
    return m->count;
}

void str_map_iter_init(str_map_iter *it, const str_map *m)
{
    it->m = m;
    it->bucket = 0;
    it->next = m->nbuckets ? m->buckets[0] : NULL;
}

bool str_map_iter_next(str_map_iter *it, const char **key, void **value)
{
    while (!it->next) {
        if (++it->bucket >= it->m->nbuckets)
            return false;
        it->next = it->m->buckets[it->bucket];
    }
    str_map_node *n = it->next;
    it->next = n->next;
    if (key)
        *key = n->key;
    if (value)
        *value = n->value;
    return true;
}
