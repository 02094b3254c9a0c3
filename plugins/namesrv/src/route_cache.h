/* route_cache.h — encoded GET_ROUTEINFO_BY_TOPIC bodies per topic, in both
 * dialects, published with RCU so IO threads read them without locks.
 * Writers (one at a time: the caller's mutex) replace or remove entries;
 * readers take a reference to a body and release it when the response has
 * been written. */
#ifndef NAMESRV_ROUTE_CACHE_H
#define NAMESRV_ROUTE_CACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <urcu.h>

#include "route_entry_arena.h"

typedef struct route_entry {
    atomic_uint refs;
    uint32_t hash;
    struct rcu_head rcu;
    entry_block *block; /* NULL: malloc'd alone */
    const char *topic;
    const char *native_body; /* fastjson-native: bare brokerAddrs keys */
    size_t native_len;
    const char *std_body; /* standard JSON */
    size_t std_len;
    char data[]; /* topic \0 native std */
} route_entry;

typedef struct route_slots {
    size_t mask;
    size_t used; /* live entries + tombstones */
    size_t live;
    struct rcu_head rcu;
    route_entry *slot[];
} route_slots;

typedef struct route_cache {
    route_slots *table;     /* RCU-published */
    route_entry *tombstone; /* marks a deleted slot; only its address matters */
    entry_arena *arena;     /* where new entries are carved (writer side) */
} route_cache;

int route_cache_init(route_cache *c);
/* Waits for readers and pending reclamation; the cache must be idle. */
void route_cache_destroy(route_cache *c);

/* Writer side. Replaces (or inserts) the topic's bodies. 0 or -1 (OOM). */
int route_cache_put(route_cache *c, const char *topic, const char *native_body, size_t native_len,
                    const char *std_body, size_t std_len);
/* The same in two steps, for callers that write the bodies in place:
 * route_entry_new allocates an unpublished entry (topic copied, bodies
 * NUL-terminated, *native and *std pointing at native_len / std_len bytes to
 * fill), carved from `arena` when given (route_cache.arena);
 * route_cache_publish takes it over (freed on failure). hash must be
 * rmq_str_hash(topic). */
route_entry *route_entry_new(entry_arena *arena, const char *topic, size_t topic_len, uint32_t hash,
                             size_t native_len, size_t std_len, char **native, char **std);
int route_cache_publish(route_cache *c, route_entry *e);
void route_cache_remove(route_cache *c, const char *topic);
size_t route_cache_count(const route_cache *c);

/* Reader side, any registered RCU thread, never blocks. On hit returns the
 * entry with a reference held and the chosen body; release it with
 * route_entry_put (which is an rmq_free_fn-compatible callback target). */
route_entry *route_cache_get(route_cache *c, const char *topic, bool standard, const char **body,
                             size_t *len);
void route_entry_put(route_entry *e);

#endif
