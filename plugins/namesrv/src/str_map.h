/* str_map.h — a string-keyed hash map for the NameServer's writer-side
 * tables. Not thread-safe: callers hold the route-table mutex. */
#ifndef NAMESRV_STR_MAP_H
#define NAMESRV_STR_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct str_map_node {
    const char *key; /* borrowed: lives inside the value (or wherever the caller keeps it) */
    uint32_t hash;
    void *value;
    struct str_map_node *next;
} str_map_node;

typedef struct str_map {
    str_map_node **buckets;
    size_t nbuckets; /* power of two, 0 before the first insert */
    size_t count;
} str_map;

uint32_t str_hash(const char *s);

void str_map_init(str_map *m);
/* Frees the nodes only; values are the caller's. */
void str_map_destroy(str_map *m);
void *str_map_get(const str_map *m, const char *key);
/* Inserts or replaces; returns the previous value (NULL if none). *err set on OOM. */
void *str_map_put(str_map *m, const char *key, void *value, int *err);
/* Removes and returns the value, or NULL. */
void *str_map_remove(str_map *m, const char *key);
size_t str_map_count(const str_map *m);

/* Iteration that tolerates removing the current entry. */
typedef struct str_map_iter {
    const str_map *m;
    size_t bucket;
    str_map_node *next;
} str_map_iter;

void str_map_iter_init(str_map_iter *it, const str_map *m);
/* Next entry or false at the end. */
bool str_map_iter_next(str_map_iter *it, const char **key, void **value);

#endif
