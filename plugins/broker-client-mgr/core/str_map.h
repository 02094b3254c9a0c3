/* str_map.h — a string-keyed hash map (chained) for the client tables. */
#ifndef BCM_STR_MAP_H
#define BCM_STR_MAP_H

#include <stddef.h>

typedef struct str_map_entry {
    char *key;
    void *value;
    struct str_map_entry *next;
} str_map_entry;

typedef struct str_map {
    str_map_entry **buckets;
    size_t nbuckets;
    size_t count;
} str_map;

typedef struct str_map_iter {
    size_t bucket;
    str_map_entry *entry;
    str_map_entry *next;
} str_map_iter;

void str_map_init(str_map *m);
/* free_value may be NULL. */
void str_map_clear(str_map *m, void (*free_value)(void *));
void *str_map_get(const str_map *m, const char *key);
/* Inserts or replaces (the previous value is returned through *old when old
 * is non-NULL). The key is copied. 0 or -1 on OOM. */
int str_map_put(str_map *m, const char *key, void *value, void **old);
/* Removes and returns the value, NULL if absent. */
void *str_map_remove(str_map *m, const char *key);
/* Iteration that tolerates removing the current entry. */
void str_map_iter_init(const str_map *m, str_map_iter *it);
str_map_entry *str_map_iter_next(const str_map *m, str_map_iter *it);

#endif
