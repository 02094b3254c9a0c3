/* store_mapped_file.c — segment files of the store: create (zero-filled at
 * full size, optionally with blocks reserved so a later write cannot hit
 * ENOSPC through the mapping; others get blocks in chunks, store_backing.c), map MAP_SHARED, load a
 * directory of 20-digit-named segments in order, drop segments. A commit-log segment written with
 * pwrite (SYNC_FLUSH) also keeps a descriptor. */
#include "store_internal.h"

#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void store_name20(char *out, size_t cap, const char *dir, int64_t off)
{
    snprintf(out, cap, "%s/%020lld", dir, (long long)off);
}

int store_mkdirs(const char *path)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* A zeroed mfile with its path in the same block: one allocation per
 * file, 400,000 queue files. A queue file keeps no path (its queue gives
 * it): 64 bytes instead of ~160 with a path under a long state_dir. Sized
 * from the path's offset, not sizeof (which rounds up past it). */
static mfile *mfile_alloc(const char *path, const struct store_cq *owner)
{
    size_t n = owner ? 1 : strlen(path) + 1;
    mfile *f = calloc(1, offsetof(mfile, path) + n);
    if (f) {
        if (!owner)
            memcpy(f->path, path, n);
        f->owner = owner;
    }
    return f;
}

const char *mfile_path(const mfile *f, char *buf, size_t cap)
{
    if (!f->owner)
        return f->path;
    char dir[PATH_MAX];
    cq_dir_path(f->owner->e, f->owner, dir, sizeof dir);
    store_name20(buf, cap, dir, f->start);
    return buf;
}

static int open_file(const char *path, const struct store_cq *owner, int64_t start, int64_t size,
                     bool create, bool prealloc, bool map_now, mfile **out, char *err,
                     size_t errlen)
{
    *out = NULL;
    int fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
    if (fd < 0) {
        int rc = -errno;
        snprintf(err, errlen, "open %s: %s", path, strerror(errno));
        return rc;
    }
    struct stat st;
    int64_t backed = 0; /* a file found on disk: backed before it is written */
    if (fstat(fd, &st) != 0) {
        int rc = -errno;
        snprintf(err, errlen, "stat %s: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    if (st.st_size != size) {
        if (!create || st.st_size > size) {
            snprintf(err, errlen, "%s: size %lld, expected %lld", path, (long long)st.st_size,
                     (long long)size);
            close(fd);
            return -EINVAL;
        }
        int rc = ftruncate(fd, size) != 0 ? errno : 0;
        /* blocks for the whole file before it is mapped: a segment is
         * written through the mapping, where a hole the disk cannot fill
         * is SIGBUS (store_backing.c) */
        if (rc == 0 && prealloc)
            rc = -store_back_fd(fd, size, 0, size);
        if (rc != 0) {
            snprintf(err, errlen, "size %s to %lld: %s", path, (long long)size, strerror(rc));
            close(fd);
            unlink(path);
            return -rc;
        }
        backed = prealloc ? size : 0;
    }
    void *map = NULL;
    if (map_now) {
        map = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) {
            int rc = -errno;
            snprintf(err, errlen, "mmap %s: %s", path, strerror(errno));
            close(fd);
            return rc;
        }
    }
    /* the mapping keeps the file; no descriptor per segment (thousands of
     * queue files would exhaust the process's limit) */
    close(fd);
    mfile *f = mfile_alloc(path, owner);
    if (!f) {
        if (map)
            munmap(map, (size_t)size);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    f->start = start;
    f->size = size;
    f->map = map;
    atomic_init(&f->fd, -1);
    atomic_init(&f->backed, backed);
    *out = f;
    return 0;
}

int mfile_open(const char *path, int64_t start, int64_t size, bool create, bool prealloc,
               mfile **out, char *err, size_t errlen)
{
    return open_file(path, NULL, start, size, create, prealloc, true, out, err, errlen);
}

int mfile_open_unmapped(const char *path, const struct store_cq *owner, int64_t start, int64_t size,
                        bool create, mfile **out, char *err, size_t errlen)
{
    return open_file(path, owner, start, size, create, false, false, out, err, errlen);
}

/* Loading a lazily mapped list: one stat per file (100,000s of queue files
 * at start), nothing opened. */
static int mfile_stat_unmapped(const char *path, const struct store_cq *owner, int64_t start,
                               int64_t size, mfile **out, char *err, size_t errlen)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0) {
        int rc = -errno;
        snprintf(err, errlen, "stat %s: %s", path, strerror(errno));
        return rc;
    }
    if (st.st_size != size) {
        snprintf(err, errlen, "%s: size %lld, expected %lld", path, (long long)st.st_size,
                 (long long)size);
        return -EINVAL;
    }
    mfile *f = mfile_alloc(path, owner);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    f->start = start;
    f->size = size;
    atomic_init(&f->fd, -1);
    *out = f;
    return 0;
}

int mfile_map(mfile *f)
{
    if (f->map)
        return 0;
    char buf[PATH_MAX];
    int fd = open(mfile_path(f, buf, sizeof buf), O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    void *map = mmap(NULL, (size_t)f->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int rc = map == MAP_FAILED ? -errno : 0;
    close(fd);
    if (rc == 0)
        __atomic_store_n(&f->map, (uint8_t *)map, __ATOMIC_RELEASE);
    return rc;
}

void mfile_unmap(mfile *f)
{
    if (f->map)
        munmap(f->map, (size_t)f->size);
    f->map = NULL;
}

void mfile_advise_random(mfile *f)
{
    if (f->map)
        madvise(f->map, (size_t)f->size, MADV_RANDOM);
}

int mfile_keep_fd(mfile *f)
{
    if (atomic_load(&f->fd) >= 0)
        return 0;
    char buf[PATH_MAX];
    int fd = open(mfile_path(f, buf, sizeof buf), O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    atomic_store(&f->fd, fd);
    return 0;
}

void mfile_close(mfile *f, bool remove_file)
{
    if (!f)
        return;
    int fd = atomic_load(&f->fd);
    if (fd >= 0)
        close(fd);
    if (f->map)
        munmap(f->map, (size_t)f->size);
    char buf[PATH_MAX];
    if (remove_file)
        unlink(mfile_path(f, buf, sizeof buf));
    free(f); /* the path with it */
}

int mfile_list_push(mfile_list *l, mfile *f)
{
    if (l->n == l->cap) {
        /* a queue mostly has one file (400,000 queues): kept in `one` */
        if (l->cap == 0 && l->lazy_map) {
            l->v = &l->one;
            l->cap = 1;
        } else {
            uint32_t nc = l->cap ? l->cap * 2 : 8;
            bool inline_one = l->v == &l->one;
            mfile **nv = realloc(inline_one ? NULL : l->v, nc * sizeof *nv);
            if (!nv)
                return -ENOMEM;
            if (inline_one)
                nv[0] = l->one;
            l->v = nv;
            l->cap = nc;
        }
    }
    l->v[l->n++] = f;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* A last segment of the wrong size holding no data (its first 8 bytes, if
 * any, are zero) can only be one being created when the process died. */
static bool unlink_if_unused(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    uint8_t b[8] = {0};
    ssize_t n = pread(fd, b, sizeof b, 0);
    close(fd);
    static const uint8_t zero[8];
    if (n < 0 || memcmp(b, zero, sizeof b) != 0)
        return false;
    return unlink(path) == 0;
}

/* A lazily mapped list is always a queue's `files` */
static const store_cq *lazy_owner(const mfile_list *l)
{
    return (const store_cq *)(const void *)((const char *)l - offsetof(store_cq, files));
}

int mfile_list_load(mfile_list *l, const char *dir, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -errno;
    int64_t *starts = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strlen(de->d_name) != 20 || !all_digits(de->d_name))
            continue; /* not a segment (Java ignores such names too) */
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            int64_t *ns = realloc(starts, cap * sizeof *ns);
            if (!ns) {
                free(starts);
                closedir(d);
                return -ENOMEM;
            }
            starts = ns;
        }
        starts[n++] = strtoll(de->d_name, NULL, 10);
    }
    closedir(d);
    if (n)
        qsort(starts, n, sizeof *starts, cmp_i64);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[PATH_MAX];
        store_name20(path, sizeof path, dir, starts[i]);
        mfile *f;
        rc = l->lazy_map ? mfile_stat_unmapped(path, lazy_owner(l), starts[i], l->file_size, &f,
                                               err, errlen)
                         : mfile_open(path, starts[i], l->file_size, false, false, &f, err, errlen);
        if (rc == -EINVAL && i == n - 1 && unlink_if_unused(path))
            rc = 0; /* a segment whose creation a crash interrupted */
        else if (rc == 0) {
            if (l->random_access)
                mfile_advise_random(f);
            rc = mfile_list_push(l, f);
        }
    }
    free(starts);
    return rc;
}

mfile *mfile_list_find(const mfile_list *l, int64_t off)
{
    if (l->n == 0 || off < l->v[0]->start)
        return NULL;
    /* segments are contiguous in practice; binary search copes with gaps */
    size_t lo = 0, hi = l->n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (l->v[mid]->start <= off)
            lo = mid;
        else
            hi = mid;
    }
    mfile *f = l->v[lo];
    return off < f->start + f->size ? f : NULL;
}

void mfile_list_drop_first(mfile_list *l, bool remove_file)
{
    if (l->n == 0)
        return;
    mfile_close(l->v[0], remove_file);
    memmove(l->v, l->v + 1, (l->n - 1) * sizeof *l->v);
    l->n--;
}

void mfile_list_drop_last(mfile_list *l, bool remove_file)
{
    if (l->n == 0)
        return;
    mfile_close(l->v[l->n - 1], remove_file);
    l->n--;
}

void mfile_list_free(mfile_list *l, bool remove_files)
{
    for (size_t i = 0; i < l->n; i++)
        mfile_close(l->v[i], remove_files);
    if (l->v != &l->one)
        free(l->v);
    l->v = NULL;
    l->one = NULL;
    l->n = l->cap = 0;
}
