/* str_map.c — owns a chained string hash map used by every table of the
 * plugin. Knows nothing about RocketMQ; callers serialise access. */
#include "str_map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_key(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

void str_map_init(str_map *m)
{
    m->buckets = NULL;
    m->nbuckets = 0;
    m->count = 0;
}

void str_map_clear(str_map *m, void (*free_value)(void *))
{
    for (size_t i = 0; i < m->nbuckets; i++) {
        str_map_entry *e = m->buckets[i];
        while (e) {
            str_map_entry *n = e->next;
            if (free_value)
                free_value(e->value);
            free(e->key);
            free(e);
            e = n;
        }
    }
    free(m->buckets);
    str_map_init(m);
}

static int grow(str_map *m)
{
    size_t nb = m->nbuckets ? m->nbuckets * 2 : 16;
    str_map_entry **b = calloc(nb, sizeof *b);
    if (!b)
        return -1;
    for (size_t i = 0; i < m->nbuckets; i++) {
        str_map_entry *e = m->buckets[i];
        while (e) {
            str_map_entry *n = e->next;
            size_t j = hash_key(e->key) & (nb - 1);
            e->next = b[j];
            b[j] = e;
            e = n;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = nb;
    return 0;
}

static str_map_entry **find_slot(const str_map *m, const char *key)
{
    if (!m->nbuckets)
        return NULL;
    str_map_entry **p = &m->buckets[hash_key(key) & (m->nbuckets - 1)];
    while (*p && strcmp((*p)->key, key) != 0)
        p = &(*p)->next;
    return p;
}

void *str_map_get(const str_map *m, const char *key)
{
    str_map_entry **p = find_slot(m, key);
    return (p && *p) ? (*p)->value : NULL;
}

int str_map_put(str_map *m, const char *key, void *value, void **old)
{
    str_map_entry **p = find_slot(m, key);
    if (p && *p) {
        if (old)
            *old = (*p)->value;
        (*p)->value = value;
        return 0;
    }
    if (old)
        *old = NULL;
    if (m->count + 1 > m->nbuckets * 3 / 4 && grow(m) != 0)
        return -1;
    str_map_entry *e = malloc(sizeof *e);
    char *k = strdup(key);
    if (!e || !k) {
        free(e);
        free(k);
        return -1;
    }
    size_t j = hash_key(key) & (m->nbuckets - 1);
    e->key = k;
    e->value = value;
    e->next = m->buckets[j];
    m->buckets[j] = e;
    m->count++;
    return 0;
}

void *str_map_remove(str_map *m, const char *key)
{
    str_map_entry **p = find_slot(m, key);
    if (!p || !*p)
        return NULL;
    str_map_entry *e = *p;
    void *v = e->value;
    *p = e->next;
    free(e->key);
    free(e);
    m->count--;
    return v;
}

void str_map_iter_init(const str_map *m, str_map_iter *it)
{
    it->bucket = 0;
    it->entry = NULL;
    it->next = m->nbuckets ? m->buckets[0] : NULL;
}

str_map_entry *str_map_iter_next(const str_map *m, str_map_iter *it)
{
    while (!it->next) {
        if (++it->bucket >= m->nbuckets)
            return NULL;
        it->next = m->buckets[it->bucket];
    }
    it->entry = it->next;
    it->next = it->entry->next;
    return it->entry;
}
