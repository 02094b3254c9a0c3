/* route_entry_arena.c — blocks of route-cache entries: a block is carved by
 * the writer, counted down by whoever releases its entries (RCU callbacks,
 * IO threads after a zero-copy reply) and kept as a spare for the next
 * carving (up to SPARE_MAX), so registrations reuse warm pages. */
#include "route_entry_arena.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#define BLOCK_DATA (120u * 1024u) /* below any mmap threshold: heap pages */
#define BIG_ENTRY (BLOCK_DATA / 8u)
#define SPARE_MAX 128u /* 15 MiB kept for the next registrations */

struct entry_block {
    atomic_uint refs; /* entries carved and alive, +1 while current */
    entry_arena *arena;
    entry_block *next; /* spare list */
    size_t used;
    alignas(max_align_t) unsigned char data[];
};

struct entry_arena {
    pthread_mutex_t mu; /* the spare list: blocks come back on any thread */
    atomic_uint refs;   /* 1 for the owner + every block alive */
    atomic_size_t blocks;
    entry_block *spare;
    size_t nspare;
    bool closed;
    entry_block *cur; /* writer only */
};

entry_arena *entry_arena_new(void)
{
    entry_arena *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    if (pthread_mutex_init(&a->mu, NULL) != 0) {
        free(a);
        return NULL;
    }
    atomic_init(&a->refs, 1);
    atomic_init(&a->blocks, 0);
    return a;
}

static void arena_put(entry_arena *a)
{
    if (atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_destroy(&a->mu);
        free(a);
    }
}

static void block_free(entry_block *b)
{
    entry_arena *a = b->arena;
    atomic_fetch_sub(&a->blocks, 1);
    free(b);
    arena_put(a);
}

void entry_block_put(entry_block *b)
{
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    entry_arena *a = b->arena;
    pthread_mutex_lock(&a->mu);
    if (!a->closed && a->nspare < SPARE_MAX) {
        b->next = a->spare;
        a->spare = b;
        a->nspare++;
        pthread_mutex_unlock(&a->mu);
        return;
    }
    pthread_mutex_unlock(&a->mu);
    block_free(b);
}

static entry_block *take_block(entry_arena *a)
{
    pthread_mutex_lock(&a->mu);
    entry_block *b = a->spare;
    if (b) {
        a->spare = b->next;
        a->nspare--;
    }
    pthread_mutex_unlock(&a->mu);
    if (!b) {
        b = malloc(sizeof(*b) + BLOCK_DATA);
        if (!b)
            return NULL;
        b->arena = a;
        atomic_fetch_add(&a->refs, 1);
        atomic_fetch_add(&a->blocks, 1);
    }
    atomic_init(&b->refs, 1);
    b->next = NULL;
    b->used = 0;
    return b;
}

void *entry_arena_alloc(entry_arena *a, size_t size, entry_block **blk)
{
    size = (size + 15u) & ~(size_t)15u;
    if (!a || size > BIG_ENTRY)
        return NULL;
    if (!a->cur || a->cur->used + size > BLOCK_DATA) {
        if (a->cur)
            entry_block_put(a->cur);
        a->cur = take_block(a);
        if (!a->cur)
            return NULL;
    }
    void *p = a->cur->data + a->cur->used;
    a->cur->used += size;
    atomic_fetch_add_explicit(&a->cur->refs, 1, memory_order_relaxed);
    *blk = a->cur;
    return p;
}

void entry_arena_close(entry_arena *a)
{
    if (!a)
        return;
    if (a->cur)
        entry_block_put(a->cur);
    a->cur = NULL;
    pthread_mutex_lock(&a->mu);
    a->closed = true;
    entry_block *list = a->spare;
    a->spare = NULL;
    a->nspare = 0;
    pthread_mutex_unlock(&a->mu);
    while (list) {
        entry_block *next = list->next;
        block_free(list);
        list = next;
    }
    arena_put(a);
}

size_t entry_arena_blocks(const entry_arena *a)
{
    return a ? atomic_load(&a->blocks) : 0;
}
