/* store_writeable.c — when a store that refuses puts (disk above
 * diskSpaceWarningLevelRatio, a file that could not be created or given
 * blocks, a failed write or sync, a file truncated under it) takes them
 * again. The rule is "a whole segment can be had": the current segment's
 * rest and the whole next segment have blocks (the next one is created
 * right here as the spare, so the roll cannot fail for lack of space), the
 * file system keeps headroom for the queue and index chunks the next puts
 * reserve, no failed sync is outstanding and no mapped file was
 * truncated. A probe file that merely fits is not enough: the next segment
 * may still not, and the puts it let in then fail again at the roll. */
#include "store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Room kept free beyond the next segment: a put reserves queue chunks
 * (64 KiB per queue file) and index chunks (1 MiB) as it goes; this many
 * of them can be had before the store would turn not writeable again. */
#define RESUME_HEADROOM (4 * STORE_INDEX_BACK_CHUNK + 64 * STORE_CQ_BACK_CHUNK)

static bool headroom_ok(const char *dir)
{
    struct statvfs sv;
    if (statvfs(dir, &sv) != 0)
        return false;
    return (uint64_t)sv.f_bavail * sv.f_frsize >= RESUME_HEADROOM;
}

void store_check_truncation(store_engine *e)
{
    if (!atomic_load(&e->writeable))
        return;
    pthread_rwlock_rdlock(&e->maps);
    bool cut = e->cl.n && mfile_truncated(e->cl.v[e->cl.n - 1]);
    pthread_rwlock_unlock(&e->maps);
    if (cut)
        set_not_writeable(e, "the current commit-log segment was truncated under the store", 0);
}

/* A current segment cut short under the store: when only its unwritten
 * tail went, give the file its size and blocks back (nothing is lost); when
 * written records went, stay refused (a restart then refuses the segment's
 * size, as Java's MappedFileQueue.load does: an operator's decision). */
static int regrow_current(store_engine *e, mfile *cur, char *why, size_t cap)
{
    struct stat st;
    if (stat(cur->path, &st) != 0) {
        snprintf(why, cap, "the current segment %s: %s", cur->path, strerror(errno));
        return -errno;
    }
    if (st.st_size >= cur->size)
        return 0;
    int64_t written = cl_file_end(e) - cur->start;
    if (st.st_size < written) {
        snprintf(why, cap,
                 "the current segment %s was truncated to %lld bytes, below its %lld written "
                 "ones",
                 cur->path, (long long)st.st_size, (long long)written);
        return -ESTALE;
    }
    atomic_store(&cur->backed, (int64_t)st.st_size / 4096 * 4096);
    if (truncate(cur->path, cur->size) != 0) {
        snprintf(why, cap, "regrow %s: %s", cur->path, strerror(errno));
        return -errno;
    }
    store_log(e, 1, "commit-log segment %s was cut to %lld bytes under the store: regrown",
              cur->path, (long long)st.st_size);
    return 0;
}

bool store_can_resume(store_engine *e, char *why, size_t cap)
{
    if (atomic_load(&e->inject_errno) || atomic_load(&e->inject_write_errno) ||
        atomic_load(&e->inject_back_errno) || atomic_load(&e->inject_sync_errno)) {
        snprintf(why, cap, "a test fault is injected");
        return false;
    }
    if (atomic_load(&e->sync_failed)) {
        /* the flusher retries; its next successful sync clears this */
        flush_commitlog(e, NULL);
        if (atomic_load(&e->sync_failed)) {
            snprintf(why, cap, "the commit log still cannot be synced");
            return false;
        }
    }
    /* append_mu: nothing is appended while the segment is looked at */
    pthread_mutex_lock(&e->append_mu);
    pthread_rwlock_rdlock(&e->maps);
    mfile *cur = e->cl.n ? e->cl.v[e->cl.n - 1] : NULL;
    int rc = cur ? regrow_current(e, cur, why, cap) : 0;
    if (rc != 0) {
        pthread_rwlock_unlock(&e->maps);
        pthread_mutex_unlock(&e->append_mu);
        return false;
    }
    if (cur)
        rc = mfile_back(e, cur, cur->size);
    pthread_rwlock_unlock(&e->maps);
    pthread_mutex_unlock(&e->append_mu);
    if (rc != 0) {
        snprintf(why, cap, "no blocks for the current segment: %s", store_back_error(rc));
        return false;
    }
    char err[256];
    if ((rc = make_spare_now(e, err, sizeof err)) != 0) {
        snprintf(why, cap, "next segment: %s", err);
        return false;
    }
    if (!headroom_ok(e->cl_dir) || !headroom_ok(e->cq_dir) || !headroom_ok(e->index_dir)) {
        snprintf(why, cap, "less than %d MiB free besides the next segment",
                 RESUME_HEADROOM / 1048576);
        return false;
    }
    return true;
}

void disk_check(store_engine *e)
{
    double r1 = store_disk_used_ratio(e->cl_dir), r2 = store_disk_used_ratio(e->cq_dir);
    double r = r1 > r2 ? r1 : r2;
    double warn = e->cfg.disk_warning_ratio / 100.0;
    if (r > warn) {
        if (!atomic_exchange(&e->disk_full, true))
            store_log(e, 0, "disk usage %.0f%% > %d%%: puts refused", r * 100,
                      e->cfg.disk_warning_ratio);
        atomic_store(&e->writeable, false);
        return;
    }
    bool was_full = atomic_exchange(&e->disk_full, false);
    if (atomic_load(&e->writeable)) {
        /* a segment truncated under the store: the next append into it
         * would fault (the appender checks only when it reserves blocks) */
        pthread_rwlock_rdlock(&e->maps);
        bool cut = e->cl.n && mfile_truncated(e->cl.v[e->cl.n - 1]);
        pthread_rwlock_unlock(&e->maps);
        if (cut)
            set_not_writeable(e, "the current commit-log segment was truncated under the store", 0);
        return;
    }
    char why[320];
    if (!store_can_resume(e, why, sizeof why)) {
        store_log(e, 3, "store still not writeable: %s", why);
        return;
    }
    atomic_store(&e->writeable, true);
    store_log(e, 2, "store writeable again%s", was_full ? " (disk usage fell)" : "");
}
