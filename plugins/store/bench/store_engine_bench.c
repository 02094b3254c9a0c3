/* store_engine_bench.c — in-process figures of the store engine: 1 KiB
 * appends/s with ASYNC_FLUSH (1 and 4 producer threads), with SYNC_FLUSH group
 * commit (a window of in-flight appends waiting for their flush, as a server
 * with many connections has), PULL-style reads/s (get_messages of 32), the
 * reopen time after a clean stop and after kill -9, and RssAnon.
 *   store_engine_bench [-d DIR] [-n MESSAGES] [-s BODY_BYTES] [-q QUEUES] [-Q MANY]
 * (-Q: queues of the per-queue memory run, default 5000)
 * DIR defaults to ./store-bench (removed at the end unless -k). */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store_engine.h"

static const char *g_dir = "store-bench";
static long g_n = 1000000;
static size_t g_body = 1024;
static int g_queues = 8;
static int g_many = 5000;
static char *g_payload;
static int g_write = STORE_CL_WRITE_AUTO;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int rm_cb(const char *p, const struct stat *sb, int f, struct FTW *ftw)
{
    (void)sb;
    (void)f;
    (void)ftw;
    return remove(p);
}

static void wipe(void)
{
    nftw(g_dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* CPU seconds (user + system) of the whole process: a figure that does not
 * depend on how busy the machine is, unlike wall-clock rates */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static long rss_anon_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "RssAnon: %ld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

static store_engine *open_store(store_flush_type ft)
{
    store_config c;
    store_config_defaults(&c);
    c.root_dir = g_dir;
    c.flush_type = ft;
    c.commitlog_write = g_write;
    store_engine *e = NULL;
    char err[256];
    if (store_open(&c, &e, err, sizeof err) != 0) {
        fprintf(stderr, "store_open: %s\n", err);
        exit(1);
    }
    return e;
}

static void make_msg(store_msg *m, char *props, long i)
{
    memset(m, 0, sizeof *m);
    int pl = snprintf(props, 128, "UNIQ_KEY\001BENCH%012ld\002TAGS\001TagA\002WAIT\001true", i);
    m->topic = "BenchTopic";
    m->queue_id = (int32_t)(i % g_queues);
    m->born_ts = 1;
    m->born_host.ip_len = 4;
    m->born_host.port = 1;
    m->store_host.ip_len = 4;
    m->store_host.port = 10911;
    m->body = g_payload;
    m->body_len = g_body;
    m->props = props;
    m->props_len = (size_t)pl;
    m->tags_code = 2598919;
}

typedef struct prod {
    store_engine *e;
    long from, to;
} prod;

static void *produce_async(void *arg)
{
    prod *p = arg;
    char props[128];
    for (long i = p->from; i < p->to; i++) {
        store_msg m;
        make_msg(&m, props, i);
        store_put_result r;
        if (store_put(p->e, &m, &r) != 0 || r.status != STORE_PUT_OK) {
            fprintf(stderr, "put failed: %d\n", r.status);
            exit(1);
        }
    }
    return NULL;
}

static double bench_async(int threads)
{
    wipe();
    store_engine *e = open_store(STORE_ASYNC_FLUSH);
    pthread_t th[16];
    prod p[16];
    double t0 = now_s(), c0 = cpu_s();
    for (int i = 0; i < threads; i++) {
        p[i] = (prod){e, g_n * i / threads, g_n * (i + 1) / threads};
        pthread_create(&th[i], NULL, produce_async, &p[i]);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    double dt = now_s() - t0, dc = cpu_s() - c0;
    printf("async put, %d thread(s): %ld x %zu B in %.2f s = %.0f msgs/s; %.2f us CPU/msg "
           "(all threads), RssAnon %ld kB\n",
           threads, g_n, g_body, dt, g_n / dt, dc * 1e6 / g_n, rss_anon_kb());
    store_close(e);
    return g_n / dt;
}

typedef struct window {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long inflight, done, failed;
} window;

static void flushed(void *ud, bool ok)
{
    window *w = ud;
    pthread_mutex_lock(&w->mu);
    w->inflight--;
    w->done++;
    w->failed += !ok;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void bench_sync(long window_size)
{
    wipe();
    store_engine *e = open_store(STORE_SYNC_FLUSH);
    window w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
    long n = g_n / 2;
    char props[128];
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&w.mu);
        while (w.inflight >= window_size)
            pthread_cond_wait(&w.cv, &w.mu);
        w.inflight++;
        pthread_mutex_unlock(&w.mu);
        store_msg m;
        make_msg(&m, props, i);
        store_put_result r;
        if (store_put(e, &m, &r) != 0 || r.status != STORE_PUT_OK ||
            store_wait_flush(e, r.end_offset, flushed, &w) != 0) {
            fprintf(stderr, "sync put failed\n");
            exit(1);
        }
    }
    pthread_mutex_lock(&w.mu);
    while (w.done < n)
        pthread_cond_wait(&w.cv, &w.mu);
    pthread_mutex_unlock(&w.mu);
    double dt = now_s() - t0;
    printf("sync put (group commit, %ld in flight): %ld in %.2f s = %.0f msgs/s (%ld timeouts)\n",
           window_size, n, dt, n / dt, w.failed);
    store_close(e);
}

static void bench_reads(void)
{
    /* on the store bench_async left */
    double t0 = now_s();
    store_engine *e = open_store(STORE_ASYNC_FLUSH);
    double topen = now_s() - t0;
    long got = 0;
    t0 = now_s();
    double c0 = cpu_s();
    for (int q = 0; q < g_queues; q++) {
        int64_t off = 0, max = store_max_offset(e, "BenchTopic", q);
        while (off < max) {
            store_get_result g;
            if (store_get_messages(e, "BenchTopic", q, off, 32, NULL, NULL, NULL, &g) != 0 ||
                g.status != STORE_GET_FOUND) {
                fprintf(stderr, "get failed at %lld\n", (long long)off);
                exit(1);
            }
            got += g.msg_count;
            off = g.next_begin_offset;
            free(g.data);
        }
    }
    double dt = now_s() - t0, dc = cpu_s() - c0;
    printf("reopen after a clean stop: %.1f ms\n", topen * 1000);
    printf("get_messages(32) drain: %ld msgs in %.2f s = %.0f msgs/s; %.2f us CPU/msg, RssAnon "
           "%ld kB\n",
           got, dt, got / dt, dc * 1e6 / got, rss_anon_kb());
    store_close(e);
}

static void bench_reopen_cycles(void)
{
    /* hot reload: the old generation closes, the new one opens */
    double worst = 0, sum = 0;
    for (int i = 0; i < 10; i++) {
        double t0 = now_s();
        store_engine *e = open_store(STORE_ASYNC_FLUSH);
        store_close(e);
        double dt = now_s() - t0;
        sum += dt;
        if (dt > worst)
            worst = dt;
    }
    printf("open + close after a clean stop: mean %.1f ms, worst %.1f ms\n", sum * 100,
           worst * 1000);
}

static void bench_many_queues(int nq)
{
    /* per-queue metadata: one message in each of nq queues */
    wipe();
    long before = rss_anon_kb();
    store_engine *e = open_store(STORE_ASYNC_FLUSH);
    char props[128];
    double t0 = now_s();
    for (int q = 0; q < nq; q++) {
        store_msg m;
        make_msg(&m, props, q);
        char topic[32];
        snprintf(topic, sizeof topic, "T%d", q / 8);
        m.topic = topic;
        m.queue_id = q % 8;
        store_put_result r;
        if (store_put(e, &m, &r) != 0 || r.status != STORE_PUT_OK) {
            fprintf(stderr, "put failed\n");
            exit(1);
        }
    }
    double dt = now_s() - t0;
    printf("%d queues (one message each, %.2f s): RssAnon %ld kB (%+ld kB)\n", nq, dt,
           rss_anon_kb(), rss_anon_kb() - before);
    t0 = now_s();
    store_close(e);
    double tc = now_s() - t0;
    t0 = now_s();
    e = open_store(STORE_ASYNC_FLUSH);
    printf("%d queues: close %.0f ms, reopen %.0f ms\n", nq, tc * 1000, (now_s() - t0) * 1000);
    store_close(e);
}

static void bench_kill9_reopen(void)
{
    /* a child appends (async) on top of the existing store and is killed */
    pid_t pid = fork();
    if (pid == 0) {
        store_engine *e = open_store(STORE_ASYNC_FLUSH);
        prod p = {e, 0, 1L << 40};
        produce_async(&p);
        _exit(0);
    }
    usleep(1500 * 1000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    double t0 = now_s();
    store_engine *e = open_store(STORE_ASYNC_FLUSH);
    double dt = now_s() - t0;
    store_runtime_stats rs;
    store_runtime_stats_get(e, &rs);
    printf("reopen after kill -9 mid-append (%.2f GiB stored): %.1f ms\n",
           rs.commitlog_max_offset / 1073741824.0, dt * 1000);
    store_close(e);
}

int main(int argc, char **argv)
{
    int opt;
    bool keep = false;
    long sync_only = 0;
    while ((opt = getopt(argc, argv, "d:n:s:q:Q:kS:W:")) != -1) {
        switch (opt) {
        case 'd': g_dir = optarg; break;
        case 'n': g_n = atol(optarg); break;
        case 's': g_body = (size_t)atol(optarg); break;
        case 'q': g_queues = atoi(optarg); break;
        case 'Q': g_many = atoi(optarg); break;
        case 'k': keep = true; break;
        case 'S': sync_only = atol(optarg); break;
        case 'W':
            g_write = strcmp(optarg, "pwrite") == 0 ? STORE_CL_WRITE_PWRITE
                      : strcmp(optarg, "mmap") == 0 ? STORE_CL_WRITE_MMAP
                                                    : STORE_CL_WRITE_AUTO;
            break;
        default:
            fprintf(stderr,
                    "usage: %s [-d DIR] [-n MESSAGES] [-s BODY] [-q QUEUES] [-Q MANY] [-k] "
                    "[-S WINDOW (SYNC group commit only)] [-W auto|pwrite|mmap]\n",
                    argv[0]);
            return 2;
        }
    }
    g_payload = malloc(g_body);
    memset(g_payload, 'x', g_body);
    if (sync_only > 0) {
        bench_sync(sync_only);
        wipe();
        free(g_payload);
        return 0;
    }
    bench_async(1);
    bench_async(4);
    bench_reads();
    bench_reopen_cycles();
    bench_kill9_reopen();
    bench_sync(256);
    bench_sync(4096);
    bench_many_queues(g_many);
    if (!keep)
        wipe();
    free(g_payload);
    return 0;
}
