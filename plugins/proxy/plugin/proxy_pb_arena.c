/* proxy_pb_arena.c — a protobuf-c allocator that takes a request's
 * unpacked structures from one block (bumped, 16-byte aligned) and goes to
 * malloc only past it: unpacking a SendMessageRequest was ~10 mallocs
 * (strings, nested messages, the body) and as many frees. Nothing is freed
 * one by one; proxy_pb_arena_release frees everything at once. */
#include <stdint.h>
#include <stdlib.h>

#include "proxy_internal.h"

typedef struct spill {
    struct spill *next;
    max_align_t align[]; /* the caller's bytes */
} spill;

static void *arena_alloc(void *data, size_t size)
{
    proxy_pb_arena *a = data;
    size_t at = (a->used + 15) & ~(size_t)15;
    if (at <= a->cap && size <= a->cap - at) {
        a->used = at + size;
        return a->block + at;
    }
    if (size > SIZE_MAX - sizeof(spill))
        return NULL;
    spill *s = malloc(sizeof(spill) + size);
    if (!s)
        return NULL;
    s->next = a->spills;
    a->spills = s;
    return s->align;
}

static void arena_free(void *data, void *p)
{
    (void)data; /* the whole arena goes at once */
    (void)p;
}

void proxy_pb_arena_init(proxy_pb_arena *a, uint8_t *block, size_t cap)
{
    a->pc.alloc = arena_alloc;
    a->pc.free = arena_free;
    a->pc.allocator_data = a;
    a->block = block;
    a->cap = block ? cap : 0;
    a->used = 0;
    a->spills = NULL;
}

void proxy_pb_arena_release(proxy_pb_arena *a)
{
    for (struct spill *s = a->spills; s;) {
        struct spill *n = s->next;
        free(s);
        s = n;
    }
    a->spills = NULL;
    a->used = 0;
}
