/* store_commitlog.c — commit-log segments: rolling to the next segment at a
 * file end (blank record, §10.15.2), taking the pre-created spare segment,
 * resolving an offset to mapped bytes for readers, and the pwrite of the
 * write-through mode. */
#include "store_internal.h"

#include <errno.h>
#include <stdio.h>
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
    mfile *f = mfile_list_find(&e->cl, off);
    if (!f || off + len > f->start + f->size)
        return NULL;
    return f->map + (off - f->start);
}

int cl_pwrite(store_engine *e, mfile *f, int64_t off, const void *src, size_t len)
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
