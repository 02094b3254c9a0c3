/* store_disk_probe.c — the machine costs that bound the store's send rate,
 * measured without the store: fdatasync of a write of 4 KiB..1 MiB
 * (SYNC_FLUSH: one per group commit), the CPU per 4 KiB page of populating a
 * fresh segment (MADV_POPULATE_WRITE; first use of the memory vs pages freed
 * just before and reused), and one group commit's sync when the records
 * were copied into the mapping (msync of the range, as the store does) vs
 * written with pwrite. Not a test; see docs/benchmarks.md.
 *   store_disk_probe [DIR]   (writes and removes a 64 MiB file in DIR, default .) */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define FILE_SIZE (64L << 20)
#define ROUNDS 40

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* median fdatasync time after writing `chunk` bytes into blocks already
 * written once (as a segment after its first pass: no extent conversion) */
static double fdatasync_ms(int fd, size_t chunk, const char *buf)
{
    double t[ROUNDS];
    off_t off = 0;
    for (int i = 0; i < ROUNDS; i++) {
        if (pwrite(fd, buf, chunk, off) != (ssize_t)chunk)
            return -1;
        off += (off_t)chunk;
        double a = now_s();
        if (fdatasync(fd) != 0)
            return -1;
        t[i] = (now_s() - a) * 1e3;
    }
    qsort(t, ROUNDS, sizeof t[0], cmp_double);
    return t[ROUNDS / 2];
}

/* us of CPU per 4 KiB page populating a fallocated file mapping */
static double populate_us(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || posix_fallocate(fd, 0, FILE_SIZE) != 0)
        return -1;
    char *m = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -1;
    double a = now_s();
    int rc = madvise(m, FILE_SIZE, MADV_POPULATE_WRITE);
    double us = (now_s() - a) * 1e6 / (FILE_SIZE / 4096);
    munmap(m, FILE_SIZE);
    unlink(path); /* frees the pages: the next round may reuse them */
    return rc == 0 ? us : -1;
}

/* median ms to make `chunk` new bytes durable, group commit after group
 * commit through a fallocated segment: copied into the shared mapping then
 * msync(MS_SYNC) of their pages (via_mmap), or pwrite then fdatasync */
static double group_commit_ms(const char *path, size_t chunk, const char *buf, bool via_mmap)
{
    enum { N = 200 };
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || posix_fallocate(fd, 0, FILE_SIZE) != 0 || chunk * N > (size_t)FILE_SIZE)
        return -1;
    char *m = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        close(fd);
        return -1;
    }
    double t[N];
    size_t off = 0;
    int bad = 0;
    for (int i = 0; i < N; i++) {
        double a = now_s();
        if (via_mmap) {
            memcpy(m + off, buf, chunk);
            size_t page = off / 4096 * 4096;
            bad |= msync(m + page, off + chunk - page, MS_SYNC);
        } else {
            bad |= pwrite(fd, buf, chunk, (off_t)off) != (ssize_t)chunk;
            bad |= fdatasync(fd);
        }
        t[i] = (now_s() - a) * 1e3;
        off += chunk;
    }
    munmap(m, FILE_SIZE);
    close(fd);
    unlink(path);
    qsort(t, N, sizeof t[0], cmp_double);
    return bad ? -1 : t[N / 2];
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    char path[4096];
    snprintf(path, sizeof path, "%s/store_disk_probe.tmp", dir);
    for (int r = 0; r < 3; r++)
        printf("populate round %d: %.2f us per 4 KiB page\n", r, populate_us(path));

    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    char *buf = malloc(1 << 20);
    if (fd < 0 || !buf) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return 1;
    }
    memset(buf, 0, 1 << 20);
    for (off_t o = 0; o < FILE_SIZE; o += 1 << 20)
        if (pwrite(fd, buf, 1 << 20, o) != 1 << 20)
            return 1;
    fsync(fd);
    memset(buf, 'x', 1 << 20);
    for (size_t chunk = 4096; chunk <= (1u << 20); chunk *= 4)
        printf("fdatasync after %7zu B: median %.2f ms\n", chunk, fdatasync_ms(fd, chunk, buf));
    close(fd);
    unlink(path);
    /* ~99 sends of 1 KiB: one SYNC_FLUSH group at 4 x 32 in flight */
    for (int r = 0; r < 2; r++)
        printf("group commit of 115000 B: mmap+msync %.2f ms, pwrite+fdatasync %.2f ms\n",
               group_commit_ms(path, 115000, buf, true), group_commit_ms(path, 115000, buf, false));
    free(buf);
    return 0;
}
