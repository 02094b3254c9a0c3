/* state_dir.c — the daemon's state directory: created on start, locked so
 * two daemons cannot share it, and the atomic file writer every plugin uses
 * (temp file, fsync, keep .bak, rename, fsync the directory). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"

static int mkdir_p(const char *path)
{
    char tmp[CONF_PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s", path);
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

/* Private plugin copies left by a daemon that did not stop cleanly: the
 * lock we hold says no other daemon maps them. */
static void remove_stale_plugin_copies(rmq_host *h)
{
    char dir[CONF_PATH_MAX + 32];
    snprintf(dir, sizeof(dir), "%s/.plugins", h->conf.state_dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 3 && strcmp(e->d_name + n - 3, ".so") == 0 && unlinkat(dirfd(d), e->d_name, 0) == 0)
            HLOG_INFO(h, "removed stale plugin copy %s/%s", dir, e->d_name);
    }
    closedir(d);
}

int state_dir_prepare(rmq_host *h, char *err, size_t errlen)
{
    if (h->lock_fd >= 0)
        return 0; /* already created and locked */
    int rc = mkdir_p(h->conf.state_dir);
    if (rc != 0) {
        snprintf(err, errlen, "%s: cannot create state_dir %s: %s", h->conf.host_file,
                 h->conf.state_dir, strerror(-rc));
        return -1;
    }
    char lock[CONF_PATH_MAX + 16];
    snprintf(lock, sizeof(lock), "%s/rmqhostd.lock", h->conf.state_dir);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", lock, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
        if (n > 0)
            pid[n] = 0;
        snprintf(err, errlen, "state_dir %s is in use by another rmqhostd (pid %s)",
                 h->conf.state_dir, n > 0 ? pid : "?");
        close(fd);
        return -1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) < 0)
        HLOG_WARN(h, "cannot write pid to %s", lock);
    h->lock_fd = fd;
    remove_stale_plugin_copies(h);
    return 0;
}

static int fsync_dir_of(const char *path)
{
    char tmp[CONF_PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s", path);
    int fd = open(dirname(tmp), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) == 0 ? 0 : -errno;
    close(fd);
    return rc;
}

int file_copy(const char *src, const char *dst, int mode, bool sync)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -errno;
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (out < 0) {
        int e = -errno;
        close(in);
        return e;
    }
    char buf[65536];
    ssize_t r;
    int rc = 0;
    while (rc == 0 && (r = read(in, buf, sizeof(buf))) != 0) {
        if (r < 0) {
            rc = -errno;
            break;
        }
        for (ssize_t off = 0; off < r && rc == 0;) {
            ssize_t w = write(out, buf + off, (size_t)(r - off));
            if (w < 0)
                rc = -errno;
            else
                off += w;
        }
    }
    if (rc == 0 && sync && fsync(out) != 0)
        rc = -errno;
    close(in);
    if (close(out) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

int atomic_file_write(const char *path, const void *data, size_t len)
{
    char dir[CONF_PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    int rc = mkdir_p(dirname(dir));
    if (rc != 0)
        return rc;
    char tmp[CONF_PATH_MAX + 16], bak[CONF_PATH_MAX + 16];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    snprintf(bak, sizeof(bak), "%s.bak", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    const char *p = data;
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, p + off, len - off);
        if (w < 0) {
            rc = -errno;
            close(fd);
            unlink(tmp);
            return rc;
        }
        off += (size_t)w;
    }
    if (fsync(fd) != 0) {
        rc = -errno;
        close(fd);
        unlink(tmp);
        return rc;
    }
    close(fd);
    /* The previous version stays readable as .bak if the new one is lost. */
    if ((rc = file_copy(path, bak, 0644, true)) != 0 && rc != -ENOENT)
        return rc;
    if (rename(tmp, path) != 0) {
        rc = -errno;
        unlink(tmp);
        return rc;
    }
    return fsync_dir_of(path);
}

static int slurp(const char *path, char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? RMQ_ENOENT : RMQ_EIO;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf)
        return RMQ_ENOMEM;
    if (bad) {
        free(buf);
        return RMQ_EIO;
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return 0;
}

int file_read_with_backup(const char *path, bool (*valid)(const char *, size_t, void *), void *ud,
                          char **data, size_t *len, bool *used_backup)
{
    *used_backup = false;
    char *d = NULL;
    size_t n = 0;
    int rc = slurp(path, &d, &n);
    if (rc == 0 && n > 0 && (!valid || valid(d, n, ud))) {
        *data = d;
        *len = n;
        return 0;
    }
    free(d);
    char bak[CONF_PATH_MAX + 16];
    snprintf(bak, sizeof(bak), "%s.bak", path);
    int rc2 = slurp(bak, &d, &n);
    if (rc2 == 0 && n > 0 && (!valid || valid(d, n, ud))) {
        *data = d;
        *len = n;
        *used_backup = true;
        return 0;
    }
    if (rc2 == 0)
        free(d);
    if (rc == RMQ_ENOENT && rc2 == RMQ_ENOENT)
        return RMQ_ENOENT;
    return rc == 0 || rc == RMQ_ENOENT ? RMQ_EINVAL : rc;
}
