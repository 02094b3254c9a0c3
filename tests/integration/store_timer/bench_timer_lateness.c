/* bench_timer_lateness.c — a benchmark, not a test (no ctest, nothing
 * asserted): how late timer messages reach their queue while plain sends
 * keep the commit log's page cache dirty. A real rmqhostd (store at
 * timerPrecisionMs 1000); one connection pipelines 4 KiB plain sends for
 * the whole run (2000/s, RMQ_BENCH_LOAD_PER_S; the load whose dirty pages
 * a slot-file syncfs has to write), another sends RMQ_BENCH_TIMERS timers (default 3000) due 3-23 s
 * later; then every timer is pulled from its real queue and its lateness
 * TIMER_DEQUEUE_MS - TIMER_OUT_MS (the broker's own clock) summarised.
 * RMQ_BENCH_STORE_SO=/path/store.so runs another build's store plugin
 * (before/after comparisons with the same daemon and client). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_test_client.h"

#define RUN_MS 30000
#define LOAD_WINDOW 32
/* plain sends per second (RMQ_BENCH_LOAD_PER_S), 4 KiB each: 2000 is 8 MB/s,
 * ~240 MB of commit log per run */
#define LOAD_PER_S_DEFAULT 2000

typedef struct loader {
    int port;
    long per_s;
    atomic_bool stop;
    long sent;
} loader;

static void *load(void *arg)
{
    loader *l = arg;
    int fd = rmq_tc_connect(l->port);
    if (fd < 0)
        return NULL;
    static char body[4097];
    memset(body, 'x', 4096);
    long sent = 0, acked = 0;
    uint64_t t0 = rmq_test_now_ms();
    while (!atomic_load(&l->stop)) {
        if (sent >= (long)((rmq_test_now_ms() - t0) * (uint64_t)l->per_s / 1000) && sent == acked) {
            rmq_test_pause_ms(1); /* ahead of the pace */
            continue;
        }
        while (sent - acked < LOAD_WINDOW &&
               sent < (long)((rmq_test_now_ms() - t0) * (uint64_t)l->per_s / 1000) + LOAD_WINDOW) {
            rmq_cmd *req = st_send_request((int)sent + 1, "LoadB", (int)(sent % 4), "", body, NULL);
            if (!req || rmq_tc_send(fd, req) != 0) {
                rmq_cmd_free(req);
                goto out;
            }
            rmq_cmd_free(req);
            sent++;
        }
        rmq_cmd *r = rmq_tc_recv(fd, 60000);
        if (!r)
            break;
        rmq_cmd_free(r);
        acked++;
    }
out:
    l->sent = acked;
    close(fd);
    return NULL;
}

/* The store plugin's path in the daemon's conf replaced by `so`. */
static int use_store_so(rmq_test_daemon *d, const char *so)
{
    char path[400], text[8192];
    snprintf(path, sizeof path, "%s/50-store.conf", d->conf_dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *p = strstr(text, "path = \""), *e = p ? strstr(p + 8, "\";") : NULL;
    if (!e)
        return -1;
    char out[8400];
    snprintf(out, sizeof out, "%.*spath = \"%s%s", (int)(p - text), text, so, e);
    return rmq_td_write_conf(d, "50-store.conf", out);
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    int ntimers = getenv("RMQ_BENCH_TIMERS") ? atoi(getenv("RMQ_BENCH_TIMERS")) : 3000;
    const char *so = getenv("RMQ_BENCH_STORE_SO");
    rmq_test_daemon d;
    if (st_configure(&d, "timerPrecisionMs = 1000;") != 0 || (so && use_store_so(&d, so) != 0) ||
        rmq_td_start(&d, NULL) != 0) {
        fprintf(stderr, "cannot start the daemon\n");
        return 1;
    }
    int port = rmq_td_port(&d, "broker");
    int fd = rmq_tc_connect(port);
    const char *rate = getenv("RMQ_BENCH_LOAD_PER_S");
    loader l = {.port = port, .per_s = rate ? atol(rate) : LOAD_PER_S_DEFAULT};
    pthread_t th;
    uint64_t t0 = rmq_test_now_ms();
    if (fd < 0 || pthread_create(&th, NULL, load, &l) != 0) {
        fprintf(stderr, "cannot connect\n");
        rmq_td_stop(&d);
        rmq_td_cleanup(&d);
        return 1;
    }
    /* timers paced over the first seconds, due 3..23 s after their send */
    for (int i = 0; i < ntimers; i++) {
        char props[64], body[16];
        snprintf(props, sizeof props, "TIMER_DELAY_MS\001%d\002", 3000 + (i * 20000) / ntimers);
        snprintf(body, sizeof body, "t%d", i);
        rmq_cmd *req = st_send_request(i + 1, "TimerB", i % 4, props, body, NULL);
        rmq_cmd *r = req && rmq_tc_send(fd, req) == 0 ? rmq_tc_recv(fd, 60000) : NULL;
        rmq_cmd_free(req);
        if (!r || r->code != 0) {
            fprintf(stderr, "timer send %d failed\n", i);
            rmq_cmd_free(r);
            break;
        }
        rmq_cmd_free(r);
    }
    while (rmq_test_now_ms() - t0 < RUN_MS)
        rmq_test_pause_ms(200);
    atomic_store(&l.stop, true);
    pthread_join(th, NULL);
    rmq_test_pause_ms(2000);

    long long *late = calloc((size_t)ntimers * 2 + 1, sizeof *late);
    size_t nl = 0;
    for (int q = 0; q < 4; q++) {
        long long off = 0;
        for (;;) {
            st_pull_args pa = {
                .group = "BenchCG", .topic = "TimerB", .queue = q, .offset = off, .max = 32};
            rmq_cmd *c = st_pull(fd, 100 + q, &pa);
            stored_record recs[32];
            size_t n = c && c->code == 0 ? st_records(c, recs, 32) : 0;
            for (size_t i = 0; i < n && nl < (size_t)ntimers * 2; i++) {
                char *out = st_prop(&recs[i], "TIMER_OUT_MS");
                char *deq = st_prop(&recs[i], "TIMER_DEQUEUE_MS");
                if (out && deq)
                    late[nl++] = atoll(deq) - atoll(out);
                free(out);
                free(deq);
            }
            rmq_cmd_free(c);
            if (n == 0)
                break;
            off += (long long)n;
        }
    }
    qsort(late, nl, sizeof *late, cmp_ll);
    double la[3] = {0};
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf) {
        if (fscanf(lf, "%lf %lf %lf", &la[0], &la[1], &la[2]) != 3)
            la[0] = -1;
        fclose(lf);
    }
    printf("store %s: %zu of %d timers delivered, %ld plain 4 KiB sends; lateness ms p50 %lld "
           "p90 %lld p99 %lld max %lld; load %.1f %.1f %.1f\n",
           so ? so : "(this build)", nl, ntimers, l.sent, nl ? late[nl / 2] : -1,
           nl ? late[nl * 9 / 10] : -1, nl ? late[nl * 99 / 100] : -1, nl ? late[nl - 1] : -1,
           la[0], la[1], la[2]);
    free(late);
    close(fd);
    rmq_td_stop(&d);
    rmq_td_cleanup(&d);
    return 0;
}
