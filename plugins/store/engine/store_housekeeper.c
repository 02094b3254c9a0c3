/* store_housekeeper.c — the background thread that keeps sends off the
 * disk's slow paths: it pre-creates (fallocate) the next commit-log segment
 * and pre-faults the pages just ahead of the write position (when records
 * are copied into the mapping); every 100 ms it
 * records the written offset in the state file and every second makes
 * queues and index durable (checkpoint, durable offset); it re-checks disk
 * usage and writeability (a full or failing disk makes the store refuse puts
 * until it recovers: store_writeable.c) and runs retention periodically. */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define PREFAULT_WINDOW (32 * 1048576LL)
#define PREFAULT_STEP (8 * 1048576LL) /* per 10 ms tick: up to 800 MB/s ahead */
#define DROP_MIN (4 * 1048576LL)      /* drop behind in steps of at least this */
#define DROP_MAX (64 * 1048576LL)     /* and at most this per 10 ms tick */
#define STATE_WRITE_MS 100            /* the state file's written offset */
#define LOGICS_FLUSH_MS 1000          /* log + queues + index durable, checkpoint, state */

/* Create the segment after the last one as the spare (blocks reserved).
 * when_half_used: only once the current segment is half used, so a store
 * opened and closed again at once (plugin reload) does not create and
 * delete a segment. 0 (also when nothing was to be done) or -errno. */
static int spare_create(store_engine *e, bool when_half_used, char *err, size_t errlen)
{
    /* `maps` is held shared throughout so no roll can create this segment
     * meanwhile: a spare is never a segment of the list */
    pthread_rwlock_rdlock(&e->maps);
    int64_t next = e->cl.n ? e->cl.v[e->cl.n - 1]->start + e->cl.v[e->cl.n - 1]->size : -1;
    if (next >= 0 && when_half_used &&
        atomic_load(&e->committed) < next - e->cfg.commitlog_file_size / 2) {
        pthread_rwlock_unlock(&e->maps);
        return 0;
    }
    pthread_mutex_lock(&e->spare_mu);
    bool have = e->spare && e->spare->start == next;
    mfile *stale = !have ? e->spare : NULL;
    if (stale)
        e->spare = NULL;
    pthread_mutex_unlock(&e->spare_mu);
    mfile_close(stale, true);
    int inj = atomic_load(&e->inject_errno);
    if (next < 0 || have || inj) {
        pthread_rwlock_unlock(&e->maps);
        if (inj)
            snprintf(err, errlen, "create commit-log segment: %s (injected)", strerror(inj));
        return inj ? -inj : 0;
    }
    char path[PATH_MAX];
    store_name20(path, sizeof path, e->cl_dir, next);
    mfile *f;
    int rc = mfile_open(path, next, e->cfg.commitlog_file_size, true, true, &f, err, errlen);
    if (rc != 0) {
        pthread_rwlock_unlock(&e->maps);
        return rc;
    }
    /* the first pages are written right after the roll */
    int64_t w = PREFAULT_STEP < f->size ? PREFAULT_STEP : f->size;
    if (!e->write_through && !atomic_load(&e->slave))
        madvise(f->map, (size_t)w, MADV_POPULATE_WRITE);
    pthread_mutex_lock(&e->spare_mu);
    /* a test's re-check may race the housekeeper: the first one wins and
     * the other's mapping of the same file goes (the file stays) */
    mfile *lost = e->spare ? f : NULL;
    if (!lost)
        e->spare = f;
    pthread_mutex_unlock(&e->spare_mu);
    pthread_rwlock_unlock(&e->maps);
    mfile_close(lost, false);
    return 0;
}

int make_spare_now(store_engine *e, char *err, size_t errlen)
{
    return spare_create(e, false, err, errlen);
}

static void make_spare(store_engine *e)
{
    char err[256];
    int rc = spare_create(e, true, err, sizeof err);
    if (rc != 0 && !atomic_load(&e->inject_errno)) {
        store_log(e, 1, "pre-create segment: %s", err);
        /* refused now, while half a segment is left, rather than at the
         * roll: the store resumes once a whole segment can be had */
        set_not_writeable(e, "cannot pre-create the next commit-log segment", rc);
    }
}

/* Not in write-through mode: there the flusher's pwrite fills page-cache
 * pages that the mapping never writes, and faulting them in through the
 * mapping held the process's mmap lock for the whole 8 MiB step (~20 ms on
 * fresh VM memory): any mmap/munmap (malloc) queued behind it and every
 * page fault behind that, which made SYNC_FLUSH's p99 9.7-11.4 ms against
 * 2.1-3.5 ms without it, at the same or a better rate (docs/design.md). */
static void prefault(store_engine *e)
{
    /* a slave writes its frames with pwrite (store_ha_append), which fills
     * the pages itself: a prefault would only zero them first */
    if (e->write_through || atomic_load(&e->slave))
        return;
    int64_t pos = atomic_load(&e->committed);
    pthread_rwlock_rdlock(&e->maps);
    mfile *f = mfile_list_find(&e->cl, pos);
    if (f) {
        int64_t from = e->prefault_pos > pos ? e->prefault_pos : pos;
        int64_t to = pos + PREFAULT_WINDOW;
        if (to > from + PREFAULT_STEP)
            to = from + PREFAULT_STEP;
        if (to > f->start + f->size)
            to = f->start + f->size;
        from = from / 4096 * 4096;
        if (from < to) {
            madvise(f->map + (from - f->start), (size_t)(to - from), MADV_POPULATE_WRITE);
            e->prefault_pos = to;
        }
    }
    pthread_rwlock_unlock(&e->maps);
}

/* The walk drop_behind and unmap_behind share: the commit log from *mark
 * up to limit (rounded down to a page, at most DROP_MAX a turn, nothing
 * under DROP_MIN) leaves the process's mapping (MADV_DONTNEED) and, with
 * drop_cache, the page cache (POSIX_FADV_DONTNEED); *mark moves past it. */
static void release_behind(store_engine *e, int64_t limit, int64_t *mark, bool drop_cache)
{
    limit = limit / 4096 * 4096;
    if (limit < *mark + DROP_MIN)
        return;
    if (limit > *mark + DROP_MAX)
        limit = *mark + DROP_MAX;
    pthread_rwlock_rdlock(&e->maps);
    int64_t pos = *mark;
    while (pos < limit) {
        mfile *f = cl_segment_in(e, &pos, limit);
        if (!f)
            break;
        int64_t end = limit < f->start + f->size ? limit : f->start + f->size;
        int64_t a = (pos - f->start) / 4096 * 4096;
        size_t len = (size_t)(end - f->start - a);
        madvise(f->map + a, len, MADV_DONTNEED);
        if (drop_cache) {
            int fd = open(f->path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                posix_fadvise(fd, a, (off_t)len, POSIX_FADV_DONTNEED);
                close(fd);
            }
        }
        pos = end;
    }
    pthread_rwlock_unlock(&e->maps);
    *mark = pos > *mark ? pos : *mark;
}

/* Drop written-back commit log more than page_cache_keep_bytes behind the
 * flushed end from the page cache. Why: on a VM whose memory the host backs
 * lazily (and takes back when the guest frees it), the first use of a page
 * costs 6-16 us, ~4 us of CPU per 1 KiB send; pages freed here are taken
 * again by the next prefault within milliseconds, at under 1 us. Only
 * flushed bytes are dropped (clean pages: nothing is lost, a later read
 * faults them back from the file, as Java reads evicted data). The mapping's
 * PTEs go first (MADV_DONTNEED on a shared file mapping only unmaps), then
 * the file's pages (POSIX_FADV_DONTNEED frees clean, unmapped pages). */
static void drop_behind(store_engine *e)
{
    int64_t keep = e->cfg.page_cache_keep_bytes;
    if (keep <= 0)
        return;
    release_behind(e, atomic_load(&e->flushed) - keep, &e->drop_pos, true);
}

/* Unmap flushed commit log more than mapped_keep_bytes behind the flushed
 * end from the process. Why: the RSS counts every page of the log the
 * process ever touched, so with the page cache window above it held the
 * whole recent log (122 MB after 400,000 one-message sends); the pages stay
 * in the page cache (MADV_DONTNEED on a shared file mapping only removes
 * the process's PTEs, nothing is lost or written), so a read behind the
 * window costs a minor fault, not a disk read. */
static void unmap_behind(store_engine *e)
{
    int64_t keep = e->cfg.mapped_keep_bytes;
    if (keep <= 0)
        return;
    int64_t flushed = atomic_load(&e->flushed);
    if (e->unmap_pos > flushed)
        e->unmap_pos = flushed; /* truncated (a slave's rejoin) */
    release_behind(e, flushed - keep, &e->unmap_pos, false);
}

double store_disk_ratio(const char *dir)
{
    return store_disk_used_ratio(dir);
}

static void *housekeeper_main(void *arg)
{
    store_engine *e = arg;
    for (;;) {
        pthread_mutex_lock(&e->hk_mu);
        if (!atomic_load(&e->closing)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 10 * 1000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&e->hk_cv, &e->hk_mu, &ts);
        }
        pthread_mutex_unlock(&e->hk_mu);
        if (atomic_load(&e->closing))
            break;
        if (atomic_load(&e->writeable))
            make_spare(e);
        drop_behind(e); /* first: the prefault right after reuses the pages */
        unmap_behind(e);
        prefault(e);
        cq_prefault_hot(e);
        cq_unmap_cold(e);
        cq_release_idle(e);
        cq_trash_collect(e);
        int64_t now = store_now_ms();
        if (now - e->last_logics_ms >= LOGICS_FLUSH_MS) {
            e->last_logics_ms = now;
            e->last_state_ms = now;
            store_check_truncation(e);
            flush_all_now(e);
        } else if (now - e->last_state_ms >= STATE_WRITE_MS) {
            e->last_state_ms = now;
            state_write(e, false);
        }
        if (now - e->last_disk_check_ms >= e->cfg.disk_check_interval_ms) {
            e->last_disk_check_ms = now;
            disk_check(e);
        }
        if (e->cfg.clean_interval_ms > 0 && now - e->last_clean_ms >= e->cfg.clean_interval_ms) {
            e->last_clean_ms = now;
            store_clean_expired(e, false);
        }
    }
    return NULL;
}

int housekeeper_start(store_engine *e)
{
    e->last_clean_ms = store_now_ms(); /* first retention run after one interval */
    e->last_logics_ms = e->last_state_ms = e->last_clean_ms;
    int rc = pthread_create(&e->housekeeper, NULL, housekeeper_main, e);
    if (rc != 0)
        return -rc;
    e->housekeeper_started = true;
    return 0;
}

void housekeeper_stop(store_engine *e)
{
    if (!e->housekeeper_started)
        return;
    pthread_mutex_lock(&e->hk_mu);
    atomic_store(&e->closing, true);
    pthread_cond_signal(&e->hk_cv);
    pthread_mutex_unlock(&e->hk_mu);
    pthread_join(e->housekeeper, NULL);
    e->housekeeper_started = false;
}

void store_test_inject_file_error(store_engine *e, int err)
{
    atomic_store(&e->inject_errno, err);
    if (err) {
        /* drop the spare so the next roll must create a file */
        pthread_mutex_lock(&e->spare_mu);
        mfile *f = e->spare;
        e->spare = NULL;
        pthread_mutex_unlock(&e->spare_mu);
        mfile_close(f, true);
    }
}

void store_test_recheck_disk(store_engine *e)
{
    disk_check(e);
}

void store_test_inject_write_error(store_engine *e, int err)
{
    atomic_store(&e->inject_write_errno, err);
}

void store_test_inject_back_error(store_engine *e, int err)
{
    atomic_store(&e->inject_back_errno, err);
}

void store_test_inject_sync_error(store_engine *e, int err)
{
    atomic_store(&e->inject_sync_errno, err);
}
