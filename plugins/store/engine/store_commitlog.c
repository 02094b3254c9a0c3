/* store_commitlog.c — commit-log segments: rolling to the next segment at a
 * file end (blank record, §10.15.2), taking the pre-created spare segment,
 * resolving an offset to mapped bytes for readers and to the segment a walk
 * over a range is at, and the staging buffer
 * of the write-through mode (records written with pwrite, a group commit's
 * worth at once). */
#include "store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

mfile *cl_take_spare(store_engine *e, int64_t start)
{
    mfile *f = NULL;
    pthread_mutex_lock(&e->spare_mu);
    if (e->spare && e->spare->start == start) {
        f = e->spare;
        e->spare = NULL;
    }
    pthread_mutex_unlock(&e->spare_mu);
    return f;
}

/* Add the segment starting at e->write_pos (a file boundary). Called with
 * append_mu held and `maps` held exclusively. */
int cl_roll(store_engine *e, char *err, size_t errlen)
{
    int64_t start = e->write_pos;
    mfile *f = cl_take_spare(e, start);
    if (!f) {
        int inj = atomic_load(&e->inject_errno);
        if (inj) {
            snprintf(err, errlen, "create commit-log segment: %s (injected)", strerror(inj));
            return -inj;
        }
        char path[PATH_MAX];
        store_name20(path, sizeof path, e->cl_dir, start);
        int rc = mfile_open(path, start, e->cfg.commitlog_file_size, true, true, &f, err, errlen);
        if (rc != 0)
            return rc;
    }
    if (mfile_list_push(&e->cl, f) != 0) {
        mfile_close(f, true);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

const uint8_t *cl_ptr(store_engine *e, int64_t off, int64_t len)
{
    if (off < atomic_load_explicit(&e->cl_min_offset, memory_order_relaxed) || len < 0)
        return NULL;
    /* a record still staged is written first: the mapping is the only view */
    if (e->write_through &&
        off + len > atomic_load_explicit(&e->file_written, memory_order_acquire) &&
        (cl_stage_drain(e) != 0 || off + len > atomic_load(&e->file_written)))
        return NULL;
    mfile *f = mfile_list_find(&e->cl, off);
    if (!f || off + len > f->start + f->size)
        return NULL;
    return f->map + (off - f->start);
}

mfile *cl_segment_in(store_engine *e, int64_t *pos, int64_t to)
{
    mfile *f = mfile_list_find(&e->cl, *pos);
    if (f)
        return f;
    mfile *first = e->cl.n ? e->cl.v[0] : NULL;
    if (!first || *pos >= first->start)
        return NULL;
    *pos = first->start; /* deleted by retention meanwhile */
    return first->start < to ? first : NULL;
}

/* pwrite all of [src, src + len) at absolute offset off of segment f */
static int cl_pwrite(store_engine *e, mfile *f, int64_t off, const void *src, size_t len)
{
    int inj = atomic_load(&e->inject_write_errno);
    if (inj)
        return -inj;
    int rc = mfile_keep_fd(f);
    if (rc != 0)
        return rc;
    int fd = atomic_load(&f->fd);
    const uint8_t *p = src;
    off_t at = (off_t)(off - f->start);
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        p += n;
        at += n;
        len -= (size_t)n;
    }
    return 0;
}

int cl_write_at(store_engine *e, mfile *f, int64_t off, const void *src, size_t len)
{
    return cl_pwrite(e, f, off, src, len);
}

/* stage_mu held */
static int drain_locked(store_engine *e)
{
    if (e->stage_len == 0)
        return 0;
    int rc = cl_pwrite(e, e->stage_seg, e->stage_start, e->stage, e->stage_len);
    if (rc != 0) {
        /* logged once, when the store turns not writeable; retried by the
         * next flush or reader */
        set_not_writeable(e, "commit-log write failed", rc);
        return rc;
    }
    atomic_store_explicit(&e->file_written, e->stage_start + (int64_t)e->stage_len,
                          memory_order_release);
    e->stage_start += (int64_t)e->stage_len;
    e->stage_len = 0;
    return 0;
}

/* A group commit's bytes in one write; past this a put writes what is staged */
#define STAGE_DRAIN_AT (1u << 20)

uint8_t *cl_stage_begin(store_engine *e, mfile *seg, int64_t pos, size_t len, int *rc)
{
    pthread_mutex_lock(&e->stage_mu);
    *rc = 0;
    if (e->stage_len > 0 && (e->stage_seg != seg || e->stage_start + (int64_t)e->stage_len != pos ||
                             e->stage_len + len > STAGE_DRAIN_AT))
        *rc = drain_locked(e);
    if (*rc == 0 && e->stage_len + len > e->stage_cap) {
        size_t cap = e->stage_cap ? e->stage_cap : 65536;
        while (cap < e->stage_len + len)
            cap *= 2;
        uint8_t *p = realloc(e->stage, cap);
        if (p) {
            e->stage = p;
            e->stage_cap = cap;
        } else {
            *rc = -ENOMEM;
        }
    }
    if (*rc != 0) {
        pthread_mutex_unlock(&e->stage_mu);
        return NULL;
    }
    if (e->stage_len == 0) {
        e->stage_seg = seg;
        e->stage_start = pos;
    }
    return e->stage + e->stage_len;
}

int cl_stage_end(store_engine *e, size_t len, bool write_now)
{
    e->stage_len += len;
    int rc = write_now ? drain_locked(e) : 0;
    if (rc != 0)
        e->stage_len -= len;
    pthread_mutex_unlock(&e->stage_mu);
    return rc;
}

int cl_stage_drain(store_engine *e)
{
    if (!e->write_through)
        return 0;
    pthread_mutex_lock(&e->stage_mu);
    int rc = drain_locked(e);
    pthread_mutex_unlock(&e->stage_mu);
    return rc;
}

int64_t cl_file_end(store_engine *e)
{
    return e->write_through ? atomic_load_explicit(&e->file_written, memory_order_acquire)
                            : atomic_load_explicit(&e->committed, memory_order_acquire);
}
