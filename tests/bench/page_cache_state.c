/* page_cache_state — save which pages of some files are in the page cache,
 * and later put those files back into that state (tests/bench/ha_catchup.sh):
 * a replication catch-up reads the master's commit log from wherever the
 * page cache left it (the store drops log older than commitLogPageCacheKeep),
 * and the loopback copy it is compared with must start from the same state,
 * not from the pages the catch-up itself brought back. Not a test.
 *
 * usage: page_cache_state save STATE FILE...     (mincore of each file)
 *        page_cache_state restore STATE FILE...  (POSIX_FADV_DONTNEED on the
 *            pages not resident in STATE, a read of the resident ones that
 *            are gone; works without root on clean pages no process maps)
 * prints: bytes resident-in-STATE resident-now (after a restore) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static long page;

/* one byte per page of the file, bit 0 = resident; NULL on error */
static unsigned char *residency(const char *path, size_t *pages, int *fd_out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(path);
        exit(1);
    }
    *pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
    unsigned char *v = calloc(*pages ? *pages : 1, 1);
    if (*pages) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED || mincore(m, (size_t)st.st_size, v) != 0) {
            perror(path);
            exit(1);
        }
        munmap(m, (size_t)st.st_size);
    }
    *fd_out = fd;
    return v;
}

static size_t resident(const unsigned char *v, size_t n)
{
    size_t r = 0;
    for (size_t i = 0; i < n; i++)
        r += v[i] & 1;
    return r;
}

int main(int argc, char **argv)
{
    page = sysconf(_SC_PAGESIZE);
    if (argc < 4 || (strcmp(argv[1], "save") != 0 && strcmp(argv[1], "restore") != 0)) {
        fprintf(stderr, "usage: page_cache_state save|restore STATE FILE...\n");
        return 2;
    }
    int save = strcmp(argv[1], "save") == 0;
    FILE *st = fopen(argv[2], save ? "wb" : "rb");
    if (!st) {
        perror(argv[2]);
        return 1;
    }
    long long bytes = 0, was = 0, now = 0;
    char *buf = malloc((size_t)page);
    for (int i = 3; i < argc; i++) {
        size_t n;
        int fd;
        unsigned char *v = residency(argv[i], &n, &fd);
        bytes += (long long)n * page;
        if (save) {
            if (fwrite(&n, sizeof n, 1, st) != 1 || fwrite(v, 1, n, st) != n) {
                perror(argv[2]);
                return 1;
            }
            was += (long long)resident(v, n) * page;
        } else {
            size_t sn;
            if (fread(&sn, sizeof sn, 1, st) != 1 || sn != n) {
                fprintf(stderr, "%s: not the state of %s\n", argv[2], argv[i]);
                return 1;
            }
            unsigned char *w = malloc(n ? n : 1);
            if (fread(w, 1, n, st) != n) {
                fprintf(stderr, "%s: short\n", argv[2]);
                return 1;
            }
            was += (long long)resident(w, n) * page;
            for (size_t p = 0; p < n;) {
                size_t q = p;
                while (q < n && (w[q] & 1) == (w[p] & 1))
                    q++;
                if (!(w[p] & 1))
                    posix_fadvise(fd, (off_t)p * page, (off_t)(q - p) * page, POSIX_FADV_DONTNEED);
                else
                    for (size_t k = p; k < q; k++)
                        if (!(v[k] & 1) && pread(fd, buf, (size_t)page, (off_t)k * page) < 0)
                            perror(argv[i]);
                p = q;
            }
            free(w);
            close(fd);
            free(v);
            v = residency(argv[i], &n, &fd);
            now += (long long)resident(v, n) * page;
        }
        close(fd);
        free(v);
    }
    free(buf);
    if (fclose(st) != 0) {
        perror(argv[2]);
        return 1;
    }
    if (save)
        printf("%lld %lld\n", bytes, was);
    else
        printf("%lld %lld %lld\n", bytes, was, now);
    return 0;
}
