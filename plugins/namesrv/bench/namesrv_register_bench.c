/* namesrv_register_bench.c — REGISTER_BROKER cost without the network: CRC32
 * + body parse + route-table update + re-encoding/publishing the changed
 * routes, for bodies of 1,000 and 10,000 topics; RSS and heap in use with
 * 10,000 topics x 4 brokers; the cost of removing one broker among many.
 * Prints figures only; never asserts on timing. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu.h>

#include "namesrv_core.h"
#include "register_body.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

/* Bytes malloc hands out (RSS hides what malloc keeps for reuse). */
static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* A 4.9.8 broker's body: Java key order, one TopicConfig per topic. */
static char *make_body_named(int ntopics, long long counter, const char *prefix, size_t *len)
{
    size_t cap = (size_t)ntopics * 200 + 256;
    char *b = malloc(cap);
    size_t n = (size_t)snprintf(b, cap,
                                "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{"
                                "\"dataVersion\":{\"counter\":%lld,\"timestamp\":1795946114373},"
                                "\"topicConfigTable\":{",
                                counter);
    for (int i = 0; i < ntopics; i++)
        n += (size_t)snprintf(b + n, cap - n,
                              "%s\"%s_%06d\":{\"order\":false,\"perm\":6,\"readQueueNums\":8,"
                              "\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"%s_%06d\","
                              "\"topicSysFlag\":0,\"writeQueueNums\":8}",
                              i ? "," : "", prefix, i, prefix, i);
    n += (size_t)snprintf(b + n, cap - n, "}}}");
    *len = n;
    return b;
}

static char *make_body(int ntopics, long long counter, size_t *len)
{
    return make_body_named(ntopics, counter, "BenchTopic", len);
}

typedef struct phase_ms {
    double parse, table, publish;
} phase_ms;

/* One REGISTER_BROKER as the processor does it; returns milliseconds and,
 * when `phases` is given, where they went. */
static double register_once_split(namesrv_core *core, const char *body, size_t len,
                                  const char *name, const char *addr, uint64_t channel,
                                  phase_ms *phases)
{
    double t0 = now_ms();
    volatile int32_t crc = body_crc32_masked(body, len);
    (void)crc;
    register_body rb;
    register_body_init(&rb);
    char err[128];
    if (register_body_parse_json(body, len, false, &rb, err, sizeof(err)) != 0) {
        fprintf(stderr, "parse failed: %s\n", err);
        exit(1);
    }
    register_request rr = {.cluster = "BenchCluster",
                           .broker_name = name,
                           .broker_addr = addr,
                           .ha_addr = "127.0.0.1:10912",
                           .broker_id = 0,
                           .channel = channel,
                           .body = &rb};
    register_result res;
    double t1 = now_ms();
    namesrv_core_lock(core);
    route_table_register(&core->routes, &rr, 1, &res);
    double t2 = now_ms();
    namesrv_core_publish(core);
    namesrv_core_unlock(core);
    double t3 = now_ms();
    register_result_free(&res);
    register_body_free(&rb);
    if (phases) {
        phases->parse = t1 - t0;
        phases->table = t2 - t1;
        phases->publish = t3 - t2;
    }
    return now_ms() - t0;
}

static double register_once(namesrv_core *core, const char *body, size_t len, const char *name,
                            const char *addr, uint64_t channel)
{
    return register_once_split(core, body, len, name, addr, channel, NULL);
}

static double parse_only(const char *body, size_t len)
{
    double t0 = now_ms();
    register_body rb;
    register_body_init(&rb);
    char err[128];
    register_body_parse_json(body, len, false, &rb, err, sizeof(err));
    register_body_free(&rb);
    return now_ms() - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void bench_size(int ntopics)
{
    enum { RUNS = 7 };
    size_t len_a, len_b;
    char *body_a = make_body(ntopics, 1, &len_a);
    char *body_b = make_body(ntopics, 2, &len_b);
    double first[RUNS], changed[RUNS], same[RUNS], parse[RUNS], fourth[RUNS];
    phase_ms split[RUNS];
    for (int r = 0; r < RUNS; r++) {
        namesrv_core core;
        namesrv_config cfg;
        namesrv_config_defaults(&cfg);
        namesrv_core_init(&core, &cfg);
        first[r] =
            register_once_split(&core, body_a, len_a, "broker-a", "10.0.0.1:10911", 1, &split[r]);
        changed[r] = register_once(&core, body_b, len_b, "broker-a", "10.0.0.1:10911", 1);
        same[r] = register_once(&core, body_b, len_b, "broker-a", "10.0.0.1:10911", 1);
        parse[r] = parse_only(body_a, len_a);
        register_once(&core, body_a, len_a, "broker-b", "10.0.0.2:10911", 2);
        register_once(&core, body_a, len_a, "broker-c", "10.0.0.3:10911", 3);
        /* a 4th master joins: every shared topic's route grows and is re-encoded */
        fourth[r] = register_once(&core, body_a, len_a, "broker-d", "10.0.0.4:10911", 4);
        namesrv_core_destroy(&core);
    }
    qsort(first, RUNS, sizeof(double), cmp_double);
    qsort(changed, RUNS, sizeof(double), cmp_double);
    qsort(same, RUNS, sizeof(double), cmp_double);
    qsort(parse, RUNS, sizeof(double), cmp_double);
    qsort(fourth, RUNS, sizeof(double), cmp_double);
    printf("REGISTER_BROKER %6d topics (%7zu bytes): parse %.2f ms | first registration %.2f ms | "
           "re-registration, changed DataVersion %.2f ms | unchanged %.2f ms   (median of %d)\n",
           ntopics, len_a, parse[RUNS / 2], first[RUNS / 2], changed[RUNS / 2], same[RUNS / 2],
           RUNS);
    printf("    first registration split (run 0): crc+parse %.2f ms, tables %.2f ms, "
           "re-encode+publish "
           "%.2f ms; a 4th broker joining the same topics: %.2f ms\n",
           split[0].parse, split[0].table, split[0].publish, fourth[RUNS / 2]);
    free(body_a);
    free(body_b);
}

/* UNREGISTER_BROKER of one master among `nbrokers`, each with `ntopics`
 * topics of its own: what one broker's removal costs while the table holds
 * nbrokers x ntopics topics (table update + withdrawing its routes). */
static void bench_removal(int nbrokers, int ntopics)
{
    enum { RUNS = 7 };
    namesrv_core core;
    namesrv_config cfg;
    namesrv_config_defaults(&cfg);
    namesrv_core_init(&core, &cfg);
    char name[32], addr[32];
    size_t heap_before = heap_in_use();
    for (int i = 0; i < nbrokers; i++) {
        size_t len;
        snprintf(name, sizeof(name), "broker-%03d", i);
        snprintf(addr, sizeof(addr), "10.0.%d.%d:10911", i / 250, i % 250);
        char *body = make_body_named(ntopics, 1, name, &len);
        register_once(&core, body, len, name, addr, (uint64_t)i + 1);
        free(body);
    }
    printf("heap in use: %d brokers x %d topics of their own add %.0f bytes per (topic, broker)\n",
           nbrokers, ntopics, (double)(heap_in_use() - heap_before) / ((double)nbrokers * ntopics));
    double table[RUNS], total[RUNS];
    for (int r = 0; r < RUNS; r++) {
        snprintf(name, sizeof(name), "broker-%03d", r);
        snprintf(addr, sizeof(addr), "10.0.%d.%d:10911", r / 250, r % 250);
        double t0 = now_ms();
        namesrv_core_lock(&core);
        route_table_unregister(&core.routes, "BenchCluster", name, addr, 0);
        double t1 = now_ms();
        namesrv_core_publish(&core);
        namesrv_core_unlock(&core);
        total[r] = now_ms() - t0;
        table[r] = t1 - t0;
    }
    qsort(table, RUNS, sizeof(double), cmp_double);
    qsort(total, RUNS, sizeof(double), cmp_double);
    printf("UNREGISTER_BROKER of 1 of %d brokers x %d topics each: table %.3f ms, with routes "
           "withdrawn %.3f ms   (median of %d)\n",
           nbrokers, ntopics, table[RUNS / 2], total[RUNS / 2], RUNS);
    namesrv_core_destroy(&core);
}

/* No argument: both sizes and RSS. One argument N: only N topics (for
 * profiling under callgrind/perf). */
int main(int argc, char **argv)
{
    /* rmqhostd's malloc settings (host/main/rmqhostd_main.c): freed memory
     * stays in the heap, as in the daemon */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_TOP_PAD, 4 << 20);
    rcu_register_thread();
    if (argc > 1) {
        bench_size(atoi(argv[1]));
        rcu_unregister_thread();
        return 0;
    }
    long rss0 = rss_kb();
    bench_size(1000);
    bench_size(10000);

    namesrv_core core;
    namesrv_config cfg;
    namesrv_config_defaults(&cfg);
    namesrv_core_init(&core, &cfg);
    long before = rss_kb();
    size_t heap_before = heap_in_use();
    size_t len;
    char *body = make_body(10000, 1, &len);
    const char *names[] = {"broker-a", "broker-b", "broker-c", "broker-d"};
    const char *addrs[] = {"10.0.0.1:10911", "10.0.0.2:10911", "10.0.0.3:10911", "10.0.0.4:10911"};
    for (int i = 0; i < 4; i++)
        register_once(&core, body, len, names[i], addrs[i], (uint64_t)i + 1);
    free(body);
    long after = rss_kb();
    size_t heap_after = heap_in_use();
    printf(
        "RSS: process at start %ld kB; 10,000 topics x 4 brokers add %ld kB (%zu routes cached)\n",
        rss0, after - before, route_cache_count(&core.cache));
    printf("heap in use: 10,000 topics x 4 brokers add %zu kB, %.0f bytes per (topic, broker)\n",
           (heap_after - heap_before) / 1024, (double)(heap_after - heap_before) / 40000.0);
    namesrv_core_destroy(&core);
    bench_removal(100, 1000);
    rcu_unregister_thread();
    return 0;
}
