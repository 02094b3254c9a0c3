/* store_live_limits.c — the engine settings Java's store reads at each use
 * (MessageStoreConfig getters per read, query, SYNC_FLUSH put or flush
 * pass, messageIndexEnable per dispatched record), kept in atomics so UPDATE_BROKER_CONFIG can
 * change them while the readers run: one relaxed store each, one load at each use. */
#include <unistd.h>

#include "store_internal.h"

void store_set_live_limits(store_engine *e, const store_config *c)
{
    if (!e || !c)
        return;
    atomic_store_explicit(&e->live.xfer_bytes_mem, c->max_transfer_bytes_in_memory,
                          memory_order_relaxed);
    atomic_store_explicit(&e->live.xfer_count_mem, c->max_transfer_count_in_memory,
                          memory_order_relaxed);
    atomic_store_explicit(&e->live.xfer_bytes_disk, c->max_transfer_bytes_in_disk,
                          memory_order_relaxed);
    atomic_store_explicit(&e->live.xfer_count_disk, c->max_transfer_count_in_disk,
                          memory_order_relaxed);
    atomic_store_explicit(&e->live.msgs_num_batch, c->max_msgs_num_batch, memory_order_relaxed);
    atomic_store_explicit(&e->live.sync_flush_timeout_ms, c->sync_flush_timeout_ms,
                          memory_order_relaxed);
    atomic_store_explicit(&e->live.flush_interval_ms, c->flush_interval_ms, memory_order_relaxed);
    atomic_store_explicit(&e->live.clean_file_forcibly, c->clean_file_forcibly,
                          memory_order_relaxed);
    atomic_store_explicit(&e->live.message_index_enable, c->message_index_enable,
                          memory_order_relaxed);
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    atomic_store_explicit(&e->mem_limit_bytes,
                          (int64_t)pages * psz / 100 * c->access_message_in_memory_max_ratio,
                          memory_order_relaxed);
}
