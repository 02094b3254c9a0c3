/* route_entry_arena.h — where route-cache entries live: bump allocation from
 * blocks of ~120 KiB that are reused once every entry carved from them is
 * released. A first registration of N topics then costs a few block grabs,
 * not N mallocs (and N frees on the RCU thread contending for the malloc
 * lock), and its memory is the memory the last removed broker gave back. */
#ifndef NAMESRV_ROUTE_ENTRY_ARENA_H
#define NAMESRV_ROUTE_ENTRY_ARENA_H

#include <stddef.h>

typedef struct entry_arena entry_arena;
typedef struct entry_block entry_block;

entry_arena *entry_arena_new(void);
/* The owner lets go: spare blocks are freed now, the arena itself when the
 * last block still holding entries is released (readers may hold some). */
void entry_arena_close(entry_arena *a);

/* Writer only (one thread at a time). size bytes, 16-aligned, in the current
 * block, which gains a reference (*blk); NULL when the size is better served
 * by malloc (large routes) or out of memory. */
void *entry_arena_alloc(entry_arena *a, size_t size, entry_block **blk);

/* Any thread: one entry of the block is gone. */
void entry_block_put(entry_block *b);

/* Blocks held (in use or spare), for memory figures. */
size_t entry_arena_blocks(const entry_arena *a);

#endif
