/* store_backing.c — real blocks for a mapped store file before anything is
 * written through its mapping. A write through a MAP_SHARED mapping into a
 * hole the file system cannot fill (disk full, quota, a file truncated under
 * the store) is not an error code but SIGBUS, which kills the daemon; a
 * failed fallocate here is an error the caller turns into a refused put.
 *
 * Every mfile records `backed`: bytes [0, backed) are known to have blocks.
 * Commit-log segments are backed whole when created (or, for a segment
 * found on disk, before the first append into it); consume-queue and index
 * files, which are mostly empty for a long time, in chunks just ahead of
 * the entries being written. */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* No fallocate (some network and FUSE file systems): read each page and
 * write it back, which fills a hole with zeros and leaves data as it is.
 * Only ever run on ranges no writer uses yet (past the append position,
 * under the appender's lock, or a file not yet published). */
static int back_by_writing(int fd, int64_t from, int64_t to)
{
    uint8_t buf[65536];
    while (from < to) {
        size_t n = to - from < (int64_t)sizeof buf ? (size_t)(to - from) : sizeof buf;
        ssize_t r = pread(fd, buf, n, (off_t)from);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if ((size_t)r < n)
            memset(buf + r, 0, n - (size_t)r);
        size_t done = 0;
        while (done < n) {
            ssize_t w = pwrite(fd, buf + done, n - done, (off_t)(from + (int64_t)done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return w < 0 ? -errno : -EIO;
            done += (size_t)w;
        }
        from += (int64_t)n;
    }
    return 0;
}

int store_back_fd(int fd, int64_t expected_size, int64_t from, int64_t to)
{
    if (from >= to)
        return 0;
    /* a file shorter than we mapped was truncated under the store: growing
     * it again would hand zeros to readers as if they were the lost data,
     * and writing into the mapping past its end is SIGBUS */
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -errno;
    if (st.st_size < expected_size)
        return -ESTALE;
    /* KEEP_SIZE: a truncation racing with this call is not undone */
    if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from)) == 0)
        return 0;
    int rc = errno;
    if (rc != EOPNOTSUPP && rc != ENOSYS)
        return -rc;
    return back_by_writing(fd, from, to);
}

int mfile_back(store_engine *e, mfile *f, int64_t to)
{
    if (to > f->size)
        to = f->size;
    int64_t have = atomic_load_explicit(&f->backed, memory_order_acquire);
    if (to <= have)
        return 0;
    int inj = e ? atomic_load(&e->inject_back_errno) : 0;
    if (inj)
        return -inj;
    int fd = atomic_load(&f->fd);
    bool own = fd < 0;
    char buf[PATH_MAX];
    if (own && (fd = open(mfile_path(f, buf, sizeof buf), O_RDWR | O_CLOEXEC)) < 0)
        return -errno;
    int rc = store_back_fd(fd, f->size, have, to);
    if (own)
        close(fd);
    if (rc != 0)
        return rc;
    /* several threads may back the same file: `backed` only moves up */
    while (have < to && !atomic_compare_exchange_weak_explicit(
                            &f->backed, &have, to, memory_order_release, memory_order_acquire))
        ;
    return 0;
}

bool mfile_truncated(const mfile *f)
{
    struct stat st;
    int fd = atomic_load(&f->fd);
    if (fd >= 0)
        return fstat(fd, &st) == 0 && st.st_size < f->size;
    char buf[PATH_MAX];
    return stat(mfile_path(f, buf, sizeof buf), &st) == 0 && st.st_size < f->size;
}

const char *store_back_error(int rc)
{
    return rc == -ESTALE ? "file truncated under the store" : strerror(rc < 0 ? -rc : rc);
}
