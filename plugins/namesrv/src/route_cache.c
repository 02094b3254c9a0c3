/* route_cache.c — lock-free read side of the route bodies: an open-addressing
 * table of RCU-published entry pointers. Owns entry lifetime (refcount plus
 * grace period); must never make a reader wait on a writer. */
#include "route_cache.h"

#include <stdlib.h>
#include <string.h>

#include <rmqhost/helpers.h>

static route_slots *slots_new(size_t cap)
{
    route_slots *s = calloc(1, sizeof(*s) + cap * sizeof(route_entry *));
    if (s)
        s->mask = cap - 1;
    return s;
}

int route_cache_init(route_cache *c)
{
    memset(c, 0, sizeof(*c));
    c->tombstone = calloc(1, sizeof(route_entry));
    c->arena = entry_arena_new();
    route_slots *s = slots_new(64);
    if (!s || !c->tombstone || !c->arena) {
        free(s);
        free(c->tombstone);
        entry_arena_close(c->arena);
        c->arena = NULL;
        return -1;
    }
    rcu_assign_pointer(c->table, s);
    return 0;
}

void route_entry_put(route_entry *e)
{
    if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (e->block)
        entry_block_put(e->block);
    else
        free(e);
}

static void entry_release_rcu(struct rcu_head *h)
{
    route_entry_put(caa_container_of(h, route_entry, rcu));
}

static void slots_free_rcu(struct rcu_head *h)
{
    free(caa_container_of(h, route_slots, rcu));
}

static bool is_entry(const route_cache *c, const route_entry *e)
{
    return e && e != c->tombstone;
}

void route_cache_destroy(route_cache *c)
{
    route_slots *s = c->table;
    if (!s)
        return;
    rcu_assign_pointer(c->table, NULL);
    synchronize_rcu();
    for (size_t i = 0; i <= s->mask; i++)
        if (is_entry(c, s->slot[i]))
            route_entry_put(s->slot[i]);
    free(s);
    free(c->tombstone);
    c->tombstone = NULL;
    /* callbacks queued by earlier writers must run before the caller frees
     * the memory (or unloads the code) they refer to */
    rcu_barrier();
    entry_arena_close(c->arena);
    c->arena = NULL;
}

/* Writer-only probe: index of the topic's slot, or of the first free slot. */
static size_t find_slot(const route_cache *c, const route_slots *s, const char *topic, uint32_t h,
                        bool *found)
{
    size_t i = h & s->mask;
    size_t first_free = SIZE_MAX;
    for (;;) {
        route_entry *e = s->slot[i];
        if (!e) {
            *found = false;
            return first_free != SIZE_MAX ? first_free : i;
        }
        if (e == c->tombstone) {
            if (first_free == SIZE_MAX)
                first_free = i;
        } else if (e->hash == h && strcmp(e->topic, topic) == 0) {
            *found = true;
            return i;
        }
        i = (i + 1) & s->mask;
    }
}

/* Rebuilds into a table sized for the live entries; the old array is freed
 * after a grace period (entries are shared, not copied). */
static int rehash(route_cache *c, size_t min_live)
{
    route_slots *old = c->table;
    size_t cap = 64;
    while (cap < (min_live + 1) * 3)
        cap *= 2;
    route_slots *s = slots_new(cap);
    if (!s)
        return -1;
    for (size_t i = 0; i <= old->mask; i++) {
        route_entry *e = old->slot[i];
        if (!is_entry(c, e))
            continue;
        size_t j = e->hash & s->mask;
        while (s->slot[j])
            j = (j + 1) & s->mask;
        s->slot[j] = e;
        s->used++;
        s->live++;
    }
    rcu_assign_pointer(c->table, s);
    call_rcu(&old->rcu, slots_free_rcu);
    return 0;
}

route_entry *route_entry_new(entry_arena *arena, const char *topic, size_t topic_len, uint32_t hash,
                             size_t native_len, size_t std_len, char **native, char **std)
{
    size_t size = sizeof(route_entry) + topic_len + 1 + native_len + 1 + std_len + 1;
    entry_block *blk = NULL;
    route_entry *e = entry_arena_alloc(arena, size, &blk);
    if (!e) {
        blk = NULL;
        e = malloc(size);
    }
    if (!e)
        return NULL;
    e->block = blk;
    atomic_init(&e->refs, 1); /* the table's reference */
    e->hash = hash;
    char *p = e->data;
    memcpy(p, topic, topic_len);
    p[topic_len] = '\0';
    e->topic = p;
    p += topic_len + 1;
    p[native_len] = '\0';
    e->native_body = p;
    e->native_len = native_len;
    *native = p;
    p += native_len + 1;
    p[std_len] = '\0';
    e->std_body = p;
    e->std_len = std_len;
    *std = p;
    return e;
}

int route_cache_publish(route_cache *c, route_entry *e)
{
    route_slots *s = c->table;
    if ((s->used + 1) * 2 > s->mask + 1) {
        if (rehash(c, s->live + 1) != 0) {
            route_entry_put(e);
            return -1;
        }
        s = c->table;
    }
    bool found;
    size_t i = find_slot(c, s, e->topic, e->hash, &found);
    route_entry *old = s->slot[i];
    rcu_assign_pointer(s->slot[i], e);
    if (found) {
        call_rcu(&old->rcu, entry_release_rcu);
    } else {
        if (old == NULL)
            s->used++;
        s->live++;
    }
    return 0;
}

int route_cache_put(route_cache *c, const char *topic, const char *native_body, size_t native_len,
                    const char *std_body, size_t std_len)
{
    char *n, *st;
    route_entry *e = route_entry_new(c->arena, topic, strlen(topic), rmq_str_hash(topic),
                                     native_len, std_len, &n, &st);
    if (!e)
        return -1;
    memcpy(n, native_body, native_len);
    memcpy(st, std_body, std_len);
    return route_cache_publish(c, e);
}

void route_cache_remove(route_cache *c, const char *topic)
{
    route_slots *s = c->table;
    bool found;
    size_t i = find_slot(c, s, topic, rmq_str_hash(topic), &found);
    if (!found)
        return;
    route_entry *old = s->slot[i];
    rcu_assign_pointer(s->slot[i], c->tombstone);
    s->live--;
    call_rcu(&old->rcu, entry_release_rcu);
}

size_t route_cache_count(const route_cache *c)
{
    return c->table ? c->table->live : 0;
}

route_entry *route_cache_get(route_cache *c, const char *topic, bool standard, const char **body,
                             size_t *len)
{
    uint32_t h = rmq_str_hash(topic);
    route_entry *hit = NULL;
    rcu_read_lock();
    route_slots *s = rcu_dereference(c->table);
    if (s) {
        size_t i = h & s->mask;
        for (size_t probes = 0; probes <= s->mask; probes++) {
            route_entry *e = rcu_dereference(s->slot[i]);
            if (!e)
                break;
            if (e != c->tombstone && e->hash == h && strcmp(e->topic, topic) == 0) {
                /* the table's reference is dropped only after a grace
                 * period, so the count is still >= 1 here */
                atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
                hit = e;
                break;
            }
            i = (i + 1) & s->mask;
        }
    }
    rcu_read_unlock();
    if (hit) {
        *body = standard ? hit->std_body : hit->native_body;
        *len = standard ? hit->std_len : hit->native_len;
    }
    return hit;
}
