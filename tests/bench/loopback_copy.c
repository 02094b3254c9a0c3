/* loopback_copy — the ceiling a replicating slave's catch-up is compared with
 * (tests/bench/ha_catchup.sh): the same bytes a master streams (its
 * commit-log files, read from the page cache) sent over one TCP loopback
 * connection and written into a file on the receiving side, in 32 KiB reads
 * and writes (haTransferBatchSize's default) by one thread per side. No
 * framing, no parsing, no queues: what is left of a slave's catch-up when
 * everything it does besides moving bytes is free. Not a test.
 *
 * usage: loopback_copy [-n BYTES] [-o OFFSET] [-f MS] OUT_FILE IN_FILE...
 *   -n: stop after BYTES (the files in order, each from its start)
 *   -o: begin OFFSET bytes into the files taken in order (where a catch-up
 *       began: the same bytes, not the log's first ones)
 *   -f: write like a slave does: OUT_FILE preallocated (fallocate, as the
 *       store pre-creates a segment), each chunk a pwrite at its offset, and
 *       a thread writing it back (fdatasync) every MS ms while the copy runs,
 *       as the slave's flusher does every flushIntervalCommitLog; the time
 *       stops at the last write, as a slave's ack (page cache) does
 * prints: bytes seconds MB/s (MB = 10^6 bytes) CPU-seconds (both threads) */
#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (32 * 1024)

struct sender {
    int fd;
    char **files;
    int nfiles;
    long long limit; /* < 0: whole files */
    long long skip;  /* bytes of the files to leave out first */
    long long sent;
};

struct flusher {
    int fd;
    int ms;
    atomic_bool stop;
};

static void *flush_loop(void *arg)
{
    struct flusher *f = arg;
    while (!atomic_load(&f->stop)) {
        usleep((useconds_t)f->ms * 1000);
        fdatasync(f->fd);
    }
    return NULL;
}

static void *send_files(void *arg)
{
    struct sender *s = arg;
    static char buf[CHUNK];
    for (int i = 0; i < s->nfiles; i++) {
        int in = open(s->files[i], O_RDONLY | O_CLOEXEC);
        if (in < 0) {
            perror(s->files[i]);
            exit(1);
        }
        if (s->skip > 0) {
            off_t size = lseek(in, 0, SEEK_END);
            off_t at = size < s->skip ? size : (off_t)s->skip;
            s->skip -= at;
            lseek(in, at, SEEK_SET);
        }
        ssize_t n;
        for (;;) {
            size_t want = sizeof buf;
            if (s->limit >= 0 && (long long)want > s->limit - s->sent)
                want = (size_t)(s->limit - s->sent);
            if (want == 0 || (n = read(in, buf, want)) <= 0)
                break;
            for (ssize_t off = 0; off < n;) {
                ssize_t w = send(s->fd, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
                if (w <= 0) {
                    perror("send");
                    exit(1);
                }
                off += w;
            }
            s->sent += n;
        }
        close(in);
    }
    shutdown(s->fd, SHUT_WR);
    return NULL;
}

int main(int argc, char **argv)
{
    long long limit = -1, skip = 0;
    int flush_ms = 0;
    while (argc > 2 && argv[1][0] == '-' && strchr("nof", argv[1][1]) && argv[1][2] == 0) {
        if (argv[1][1] == 'n')
            limit = atoll(argv[2]);
        else if (argv[1][1] == 'o')
            skip = atoll(argv[2]);
        else
            flush_ms = atoi(argv[2]);
        argv += 2;
        argc -= 2;
    }
    if (argc < 3) {
        fprintf(stderr,
                "usage: loopback_copy [-n BYTES] [-o OFFSET] [-f MS] OUT_FILE IN_FILE...\n");
        return 2;
    }
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 1) != 0 ||
        getsockname(ls, (struct sockaddr *)&a, &al) != 0) {
        perror("listen");
        return 1;
    }
    int out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        perror(argv[1]);
        return 1;
    }
    struct flusher fl = {.fd = out, .ms = flush_ms};
    pthread_t flt;
    if (flush_ms > 0) {
        if (limit > 0 && fallocate(out, FALLOC_FL_KEEP_SIZE, 0, (off_t)limit) != 0)
            perror("fallocate");
        if (pthread_create(&flt, NULL, flush_loop, &fl) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct sender s = {.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0),
                       .files = argv + 2,
                       .nfiles = argc - 2,
                       .limit = limit,
                       .skip = skip};
    if (s.fd < 0 || connect(s.fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("connect");
        return 1;
    }
    int rs = accept(ls, NULL, NULL);
    pthread_t th;
    if (rs < 0 || pthread_create(&th, NULL, send_files, &s) != 0) {
        perror("accept");
        return 1;
    }
    static char buf[CHUNK];
    long long got = 0;
    ssize_t n;
    while ((n = recv(rs, buf, sizeof buf, 0)) > 0) {
        for (ssize_t off = 0; off < n;) {
            ssize_t w = flush_ms > 0 ? pwrite(out, buf + off, (size_t)(n - off), (off_t)(got + off))
                                     : write(out, buf + off, (size_t)(n - off));
            if (w <= 0) {
                perror("write");
                return 1;
            }
            off += w;
        }
        got += n;
    }
    pthread_join(th, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    if (flush_ms > 0) {
        atomic_store(&fl.stop, true);
        pthread_join(flt, NULL);
    }
    printf("%lld %.3f %.1f %.3f\n", got, secs, (double)got / secs / 1e6, cpu);
    close(out);
    close(rs);
    close(s.fd);
    close(ls);
    return got == s.sent ? 0 : 1;
}
