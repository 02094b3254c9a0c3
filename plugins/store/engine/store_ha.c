/* store_ha.c — the engine's side of master/slave replication
 * (protocol-ha.md §2): a master reads raw commit-log bytes for transfer
 * frames, a slave appends them at its log end byte for byte (blank records
 * and padding included, so both logs stay identical) and dispatches the
 * records that became whole to consume queues and the index, as recovery
 * does. */
#include "store_internal.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

static void dispatch_new(store_engine *e);

int64_t store_ha_max_offset(store_engine *e)
{
    return atomic_load_explicit(&e->committed, memory_order_acquire);
}

int64_t store_ha_min_offset(store_engine *e)
{
    pthread_rwlock_rdlock(&e->maps);
    int64_t m = e->cl.n ? e->cl.v[0]->start : 0;
    pthread_rwlock_unlock(&e->maps);
    int64_t c = atomic_load(&e->cl_min_offset);
    return c > m ? c : m;
}

int64_t store_ha_read(store_engine *e, int64_t off, uint8_t *buf, int64_t max)
{
    int64_t end = atomic_load_explicit(&e->committed, memory_order_acquire);
    if (off >= end || max <= 0)
        return 0;
    pthread_rwlock_rdlock(&e->maps);
    int64_t n = 0;
    mfile *f = mfile_list_find(&e->cl, off);
    if (!f) {
        bool below = e->cl.n == 0 || off < e->cl.v[0]->start;
        pthread_rwlock_unlock(&e->maps);
        return below ? -ENOENT : 0;
    }
    n = end - off;
    if (n > f->start + f->size - off)
        n = f->start + f->size - off;
    if (n > max)
        n = max;
    const uint8_t *p = cl_ptr(e, off, n); /* writes what is still staged */
    if (p)
        memcpy(buf, p, (size_t)n);
    else
        n = 0;
    pthread_rwlock_unlock(&e->maps);
    return n;
}

/* one readahead request: read_ahead_kb's common default, below which the
 * kernel never caps a request */
#define HA_PREFETCH_PIECE (128 * 1024)

void store_ha_prefetch(store_engine *e, int64_t off, int64_t len)
{
    int64_t end = atomic_load_explicit(&e->committed, memory_order_acquire);
    if (off + len < end)
        end = off + len;
    pthread_rwlock_rdlock(&e->maps);
    int64_t pos = off;
    while (pos < end) {
        mfile *f = cl_segment_in(e, &pos, end);
        if (!f)
            break;
        int64_t stop = end < f->start + f->size ? end : f->start + f->size;
        int64_t a = (pos - f->start) / 4096 * 4096;
        /* asynchronous readahead of the file's pages; resident pages cost a
         * lookup each. In pieces: the kernel reads at most the device's
         * readahead size (read_ahead_kb, often 128 KiB) per call and
         * silently ignores the rest of the range — one 16 MiB call read 8
         * MiB here (session 10), leaving the rest to page faults. */
        for (int64_t b = a; b < stop - f->start; b += HA_PREFETCH_PIECE) {
            int64_t l = stop - f->start - b;
            madvise(f->map + b, (size_t)(l < HA_PREFETCH_PIECE ? l : HA_PREFETCH_PIECE),
                    MADV_WILLNEED);
        }
        pos = stop;
    }
    pthread_rwlock_unlock(&e->maps);
}

int64_t store_ha_appended(store_engine *e)
{
    int64_t a = atomic_load_explicit(&e->ha_appended, memory_order_acquire);
    int64_t c = atomic_load_explicit(&e->committed, memory_order_acquire);
    return a > c ? a : c;
}

void store_ha_dispatch(store_engine *e)
{
    pthread_mutex_lock(&e->append_mu);
    pthread_rwlock_wrlock(&e->maps);
    if (e->ha_dispatch_pos < e->write_pos || atomic_load(&e->committed) < e->write_pos) {
        dispatch_new(e);
        atomic_store_explicit(&e->committed, e->write_pos, memory_order_release);
    }
    pthread_rwlock_unlock(&e->maps);
    pthread_mutex_unlock(&e->append_mu);
}

int64_t store_ha_end_replication(store_engine *e)
{
    int64_t dropped = 0;
    pthread_mutex_lock(&e->append_mu);
    pthread_rwlock_wrlock(&e->maps);
    dispatch_new(e);
    int64_t keep = e->ha_dispatch_pos;
    if (keep < e->write_pos) {
        /* the start of a record whose rest never came: appends must begin
         * at a record boundary (Java gets there by restarting: recovery) */
        mfile *f = mfile_list_find(&e->cl, keep);
        if (f)
            memset(f->map + (keep - f->start), 0, (size_t)(e->write_pos - keep));
        dropped = e->write_pos - keep;
        e->write_pos = keep;
        if (atomic_load(&e->file_written) > keep)
            atomic_store(&e->file_written, keep);
        if (atomic_load(&e->flushed) > keep)
            atomic_store(&e->flushed, keep);
    }
    atomic_store_explicit(&e->committed, e->write_pos, memory_order_release);
    atomic_store_explicit(&e->ha_appended, e->write_pos, memory_order_release);
    pthread_rwlock_unlock(&e->maps);
    pthread_mutex_unlock(&e->append_mu);
    return dropped;
}

int store_ha_truncate(store_engine *e, int64_t to, int64_t last_off, int64_t last_size)
{
    int rc = 0;
    pthread_mutex_lock(&e->append_mu);
    pthread_rwlock_wrlock(&e->maps);
    int64_t end = e->write_pos;
    int64_t first = e->cl.n ? e->cl.v[0]->start : 0;
    if (to < first || to > end) {
        rc = -ERANGE;
        goto out;
    }
    if (to == end)
        goto out;
    if ((rc = cl_stage_drain(e)) != 0)
        goto out;
    /* zero the tail in the file holding `to` (a file-end padding included:
     * the new master's bytes land there and the log must stay identical to
     * its), then drop the files past it */
    mfile *f = mfile_list_find(&e->cl, to);
    if (f) {
        int64_t stop = end < f->start + f->size ? end : f->start + f->size;
        memset(f->map + (to - f->start), 0, (size_t)(stop - to));
        int64_t a = (to - f->start) / 4096 * 4096;
        msync(f->map + a, (size_t)(stop - f->start - a), MS_SYNC);
    }
    while (e->cl.n > 0 && e->cl.v[e->cl.n - 1]->start > to)
        mfile_list_drop_last(&e->cl, true);
    for (size_t i = 0; i < e->cqs.nb; i++)
        for (store_cq *q = e->cqs.b[i]; q; q = q->next)
            if (q->max_phys_end > to)
                cq_truncate_past(e, q, to);
    /* index entries past `to` stay: a lookup reads the record they point at
     * and drops those whose key it does not hold */
    if (e->idx_last_phy >= to)
        e->idx_last_phy = to - 1;
    e->write_pos = to;
    e->ha_dispatch_pos = to;
    if (atomic_load(&e->file_written) > to)
        atomic_store(&e->file_written, to);
    if (atomic_load(&e->flushed) > to)
        atomic_store(&e->flushed, to);
    atomic_store(&e->last_rec_offset, last_size > 0 ? last_off : to);
    atomic_store(&e->last_rec_size, last_size > 0 ? last_size : 0);
    atomic_store_explicit(&e->committed, to, memory_order_release);
    atomic_store_explicit(&e->ha_appended, to, memory_order_release);
out:
    pthread_rwlock_unlock(&e->maps);
    pthread_mutex_unlock(&e->append_mu);
    return rc;
}

void store_set_slave(store_engine *e, bool slave)
{
    atomic_store(&e->slave, slave);
}

bool store_is_slave(store_engine *e)
{
    return atomic_load(&e->slave);
}

/* Dispatch every whole record in [ha_dispatch_pos, write_pos). append_mu
 * and `maps` exclusively held. A fresh slave's queues begin at the queue
 * offset of their first replicated record (Java's minLogicOffset). */
static void dispatch_new(store_engine *e)
{
    int64_t pos = e->ha_dispatch_pos;
    if (e->cl.n && pos < e->cl.v[0]->start)
        pos = e->cl.v[0]->start;
    while (pos < e->write_pos) {
        mfile *f = mfile_list_find(&e->cl, pos);
        if (!f || pos + 8 > e->write_pos)
            break;
        const uint8_t *p = f->map + (pos - f->start);
        int64_t left = f->start + f->size - pos;
        uint32_t size = stored_be32(p), magic = stored_be32(p + 4);
        if (magic == STORED_RECORD_BLANK_MAGIC) {
            pos = f->start + f->size;
            continue;
        }
        if (magic != STORED_RECORD_MAGIC || size < STORED_RECORD_MIN_SIZE || (int64_t)size > left) {
            store_log(e, 0, "replication: no record at %lld (magic %08x, size %u): dispatch stops",
                      (long long)pos, magic, size);
            pos = e->write_pos;
            break;
        }
        if (pos + (int64_t)size > e->write_pos)
            break; /* the rest comes with the next frame */
        stored_record r;
        if (stored_record_decode(p, size, false, &r) == STORED_RECORD_OK) {
            char topic[128];
            memcpy(topic, r.topic, r.topic_len);
            topic[r.topic_len] = 0;
            /* a topic whose queues are still on disk only is loaded first */
            bool fresh = r.topic_len > 0 && !memchr(topic, '/', r.topic_len) && r.queue_id >= 0 &&
                         cq_ensure_topic(e, topic, true) && !cq_find(e, topic, r.queue_id);
            store_dispatch(e, p, pos, false);
            store_cq *q = fresh ? cq_find(e, topic, r.queue_id) : NULL;
            if (q && r.queue_offset > 0)
                atomic_store(&q->min_offset, r.queue_offset);
            atomic_store_explicit(&e->committed_ts, r.store_ts, memory_order_relaxed);
            atomic_fetch_add_explicit(&e->put_times, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&e->put_bytes, size, memory_order_relaxed);
        }
        atomic_store_explicit(&e->last_rec_offset, pos, memory_order_relaxed);
        atomic_store_explicit(&e->last_rec_size, size, memory_order_relaxed);
        pos += size;
    }
    e->ha_dispatch_pos = pos;
}

int store_ha_append(store_engine *e, int64_t phys, const uint8_t *data, int64_t len)
{
    if (atomic_load(&e->closing))
        return -ECANCELED;
    int64_t fs = e->cfg.commitlog_file_size;
    int rc = 0;
    char err[256];
    pthread_mutex_lock(&e->append_mu);
    pthread_rwlock_wrlock(&e->maps);
    if (e->cl.n == 0 && e->write_pos == 0) {
        /* empty: the log starts where the master starts us (§2.4) */
        if (phys % fs != 0) {
            rc = -EXDEV;
            goto out;
        }
        if (phys == 0 && len == 0)
            goto out;
        e->write_pos = phys;
        e->ha_dispatch_pos = phys;
        atomic_store(&e->cl_min_offset, phys);
        atomic_store(&e->file_written, phys);
        atomic_store(&e->flushed, phys);
        e->drop_pos = phys;
        if ((rc = cl_roll(e, err, sizeof err)) != 0) {
            store_log(e, 0, "replication: %s", err);
            goto out;
        }
        atomic_store_explicit(&e->committed, phys, memory_order_release);
        atomic_store_explicit(&e->ha_appended, phys, memory_order_release);
    } else if (phys != e->write_pos) {
        rc = -EPROTO;
        goto out;
    }
    if (len == 0)
        goto out;
    mfile *seg = mfile_list_find(&e->cl, e->write_pos);
    if (!seg) {
        if ((rc = cl_roll(e, err, sizeof err)) != 0) {
            store_log(e, 0, "replication: %s", err);
            goto out;
        }
        seg = mfile_list_find(&e->cl, e->write_pos);
    }
    if (!seg || e->write_pos + len > seg->start + seg->size) {
        rc = -EXDEV;
        goto out;
    }
    if (e->write_through) {
        uint8_t *dst = cl_stage_begin(e, seg, e->write_pos, (size_t)len, &rc);
        if (!dst)
            goto out;
        memcpy(dst, data, (size_t)len);
        if ((rc = cl_stage_end(e, (size_t)len, true)) != 0)
            goto out;
    } else if ((rc = cl_write_at(e, seg, e->write_pos, data, (size_t)len)) != 0) {
        /* written, not copied into the mapping: a frame is tens of KiB, and
         * filling fresh page-cache pages with pwrite costs a fraction of
         * faulting them in through the mapping first (each one zeroed, then
         * overwritten) — catch-up went from 37 to 59 MB/s at a load of 30.
         * The mapping sees the same pages; msync (the flusher) writes them
         * back like any dirty page of the range. */
        goto out;
    }
    e->write_pos += len;
    atomic_store_explicit(&e->ha_appended, e->write_pos, memory_order_release);
out:
    pthread_rwlock_unlock(&e->maps);
    pthread_mutex_unlock(&e->append_mu);
    /* no flusher wake-up: the slave's log is flushed on its flusher's own
     * cycle (flushIntervalCommitLog; 10 ms under SYNC_FLUSH), as Java's
     * appendToCommitLog leaves it. A wake-up per frame made the slave sync
     * after every frame, competing with the appends it acknowledges. */
    return rc;
}
