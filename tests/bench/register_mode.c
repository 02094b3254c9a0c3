/* register_mode.c — rmqbench --register: REGISTER_BROKER measured over the
 * wire. Builds 4.9.8-shaped bodies (JSON or the compressed form) before the
 * clock starts, then times each frame from its first byte written to its
 * answer read, one request at a time on one connection; a probe thread may
 * look routes up meanwhile. Owns nothing of the pipelined mode. */
#include "register_mode.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "latency_histogram.h"
#include "remoting_command.h"
#include "request_template.h"

#define QUEUES 8
#define TIMESTAMP 1700000000000LL

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- bodies ---------------------------------------------------------------- */

typedef struct growbuf {
    char *p;
    size_t len, cap;
} growbuf;

static int gb_put(growbuf *g, const void *s, size_t n)
{
    if (g->len + n > g->cap) {
        size_t nc = g->cap ? g->cap : 4096;
        while (nc < g->len + n)
            nc *= 2;
        char *np = realloc(g->p, nc);
        if (!np)
            return -1;
        g->p = np;
        g->cap = nc;
    }
    memcpy(g->p + g->len, s, n);
    g->len += n;
    return 0;
}

static int gb_printf(growbuf *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int gb_printf(growbuf *g, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(tmp))
        return -1;
    return gb_put(g, tmp, (size_t)n);
}

static void topic_name(char *out, size_t cap, const rmq_bench_options *o, unsigned broker,
                       unsigned i)
{
    if (o->distinct_topics)
        snprintf(out, cap, "%s-b%u-t%u", o->broker_prefix, broker, i);
    else
        snprintf(out, cap, "%s-t%u", o->broker_prefix, i);
}

/* The topic part of each broker's JSON body, built once: a storm of 100
 * brokers x 10,000 topics must not spend the client's CPU on snprintf while
 * the server is measured (only the DataVersion changes between rounds). */
typedef struct body_cache {
    growbuf *tails; /* per broker; len 0 = not built yet */
    unsigned n;
} body_cache;

static void cache_free(body_cache *bc)
{
    for (unsigned i = 0; i < bc->n; i++)
        free(bc->tails[i].p);
    free(bc->tails);
    bc->tails = NULL;
    bc->n = 0;
}

/* 4.9.8's RegisterBrokerBody JSON (fastjson key order) for topics [lo, hi). */
static int json_tail(growbuf *g, const rmq_bench_options *o, unsigned broker, unsigned lo,
                     unsigned hi);

static int json_body(growbuf *g, const rmq_bench_options *o, unsigned broker, long long counter,
                     unsigned lo, unsigned hi, body_cache *bc)
{
    g->len = 0;
    if (gb_printf(g,
                  "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":{"
                  "\"counter\":%lld,\"timestamp\":%lld},\"topicConfigTable\":{",
                  counter, TIMESTAMP) != 0)
        return -1;
    bool whole = lo == 0 && hi == o->register_topics;
    if (bc && whole && broker < bc->n) {
        growbuf *t = &bc->tails[broker];
        if (t->len == 0 && json_tail(t, o, broker, lo, hi) != 0)
            return -1;
        return gb_put(g, t->p, t->len);
    }
    growbuf t = {0};
    int rc = json_tail(&t, o, broker, lo, hi) || gb_put(g, t.p, t.len);
    free(t.p);
    return rc ? -1 : 0;
}

static int json_tail(growbuf *g, const rmq_bench_options *o, unsigned broker, unsigned lo,
                     unsigned hi)
{
    for (unsigned i = lo; i < hi; i++) {
        char name[160];
        topic_name(name, sizeof(name), o, broker, i);
        if (gb_printf(g,
                      "%s\"%s\":{\"order\":false,\"perm\":6,\"readQueueNums\":%d,"
                      "\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"%s\","
                      "\"topicSysFlag\":0,\"writeQueueNums\":%d}",
                      i == lo ? "" : ",", name, QUEUES, name, QUEUES) != 0)
            return -1;
    }
    return gb_put(g, "}}}", 3);
}

static int put_chunk(growbuf *g, const char *s, size_t n)
{
    uint8_t be[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
    return gb_put(g, be, 4) || gb_put(g, s, n);
}

/* 4.9.8's compress(): DataVersion chunk, count, one line per topic, filter
 * list chunk — deflated. */
static int compressed_body(growbuf *g, const rmq_bench_options *o, unsigned broker,
                           long long counter, unsigned lo, unsigned hi)
{
    growbuf raw = {0};
    char line[256];
    int n =
        snprintf(line, sizeof(line), "{\"counter\":%lld,\"timestamp\":%lld}", counter, TIMESTAMP);
    int rc = put_chunk(&raw, line, (size_t)n);
    uint32_t cnt = hi - lo;
    uint8_t be[4] = {(uint8_t)(cnt >> 24), (uint8_t)(cnt >> 16), (uint8_t)(cnt >> 8), (uint8_t)cnt};
    rc |= gb_put(&raw, be, 4);
    for (unsigned i = lo; i < hi && rc == 0; i++) {
        char name[160];
        topic_name(name, sizeof(name), o, broker, i);
        n = snprintf(line, sizeof(line), "%s %d %d 6 SINGLE_TAG", name, QUEUES, QUEUES);
        rc |= put_chunk(&raw, line, (size_t)n);
    }
    rc |= put_chunk(&raw, "[]", 2);
    uLongf zl = compressBound((uLong)raw.len);
    g->len = 0;
    if (rc == 0 && g->cap < zl) {
        char *np = realloc(g->p, zl);
        if (!np)
            rc = -1;
        else {
            g->p = np;
            g->cap = zl;
        }
    }
    if (rc == 0 && compress2((Bytef *)g->p, &zl, (const Bytef *)raw.p, (uLong)raw.len,
                             Z_BEST_COMPRESSION) != Z_OK)
        rc = -1;
    if (rc == 0)
        g->len = zl;
    free(raw.p);
    return rc;
}

/* One REGISTER_BROKER frame, encoded by the real codec. */
static int build_frame(rmq_request_template *t, const rmq_bench_options *o, unsigned broker,
                       long long counter, unsigned lo, unsigned hi, growbuf *body, body_cache *bc)
{
    int rc = o->compressed ? compressed_body(body, o, broker, counter, lo, hi)
                           : json_body(body, o, broker, counter, lo, hi, bc);
    if (rc != 0)
        return -1;
    char name[128], addr[64], crc[16], hb[24];
    snprintf(name, sizeof(name), "%s-%u", o->broker_prefix, broker);
    snprintf(addr, sizeof(addr), "127.0.0.%u:%u", 1 + broker / 50000, 10000 + broker % 50000);
    uLong c = crc32(0L, (const Bytef *)body->p, (uInt)body->len);
    snprintf(crc, sizeof(crc), "%ld", (long)(c & 0x7FFFFFFFu));
    snprintf(hb, sizeof(hb), "%u", o->expire_ms);
    const char *keys[] = {"brokerName", "brokerAddr", "clusterName", "haServerAddr",
                          "brokerId",   "compressed", "bodyCrc32",   "heartbeatTimeoutMillis"};
    const char *vals[] = {
        name, addr, "BenchCluster", "127.0.0.1:10912", "0", o->compressed ? "true" : "false",
        crc,  hb};
    rmq_request_spec spec = {
        .code = 103,
        .serialize_type = RMQ_SERIALIZE_JSON,
        .ext_keys = keys,
        .ext_values = vals,
        .ext_count = o->expire_ms ? 8 : 7,
        .body = (const uint8_t *)body->p,
        .body_len = body->len,
    };
    char err[128];
    if (rmq_template_build(t, &spec, err, sizeof(err)) != 0) {
        fprintf(stderr, "rmqbench: %s\n", err);
        return -1;
    }
    return 0;
}

/* ---- blocking request/response ---------------------------------------------- */

static int dial(const rmq_bench_options *o)
{
    int fd = socket(o->addr.ss_family, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    socklen_t len =
        o->addr.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (connect(fd, (const struct sockaddr *)&o->addr, len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Sends the frame and returns the answer's code (or -1); *buf is reused. */
static int call(int fd, const uint8_t *frame, size_t len, growbuf *buf)
{
    if (write_all(fd, frame, len) != 0)
        return -1;
    uint8_t pre[4];
    if (read_all(fd, pre, 4) != 0)
        return -1;
    size_t n = ((size_t)pre[0] << 24) | ((size_t)pre[1] << 16) | ((size_t)pre[2] << 8) | pre[3];
    if (n < 4 || n > (64u << 20))
        return -1;
    buf->len = 0;
    if (gb_put(buf, pre, 4) != 0 || buf->cap < n + 4) {
        char *np = realloc(buf->p, n + 4);
        if (!np)
            return -1;
        buf->p = np;
        buf->cap = n + 4;
    }
    if (read_all(fd, (uint8_t *)buf->p + 4, n) != 0)
        return -1;
    char err[128];
    rmq_cmd *cmd = rmq_cmd_decode((const uint8_t *)buf->p, n + 4, err, sizeof(err));
    if (!cmd)
        return -1;
    int code = cmd->code;
    rmq_cmd_free(cmd);
    return code;
}

/* ---- the probe: route lookups one at a time ----------------------------------- */

typedef struct probe {
    const rmq_bench_options *o;
    const char *fixed_topic; /* NULL: topics of broker 0 */
    pthread_t thread;
    atomic_bool stop;
    atomic_bool ready; /* first lookup answered, or the probe gave up */
    atomic_int last_code;
    rmq_latency_histogram hist;
    uint64_t errors;
    int failed;
} probe;

static void *probe_main(void *arg)
{
    probe *p = arg;
    int fd = dial(p->o);
    if (fd < 0) {
        p->failed = 1;
        atomic_store(&p->ready, true);
        return NULL;
    }
    unsigned ntopics = p->o->register_topics;
    growbuf in = {0};
    rmq_request_template *tpls = calloc(64, sizeof(*tpls));
    unsigned ntpl = 0;
    for (; tpls && ntpl < 64; ntpl++) {
        char topic[160];
        if (p->fixed_topic)
            snprintf(topic, sizeof(topic), "%s", p->fixed_topic);
        else
            topic_name(topic, sizeof(topic), p->o, 0, (ntpl * 7919u) % ntopics);
        const char *k[] = {"topic"};
        const char *v[] = {topic};
        rmq_request_spec spec = {.code = 105,
                                 .serialize_type = RMQ_SERIALIZE_JSON,
                                 .ext_keys = k,
                                 .ext_values = v,
                                 .ext_count = 1};
        char err[64];
        if (rmq_template_build(&tpls[ntpl], &spec, err, sizeof(err)) != 0)
            break;
    }
    uint64_t every = (uint64_t)p->o->probe_every_us * 1000u, next = now_ns();
    for (uint64_t i = 0; ntpl > 0 && !atomic_load(&p->stop); i++) {
        const rmq_request_template *t = &tpls[i % ntpl];
        if (every) {
            next += every;
            uint64_t now = now_ns();
            if (now < next) {
                struct timespec ts = {(time_t)((next - now) / 1000000000u),
                                      (long)((next - now) % 1000000000u)};
                nanosleep(&ts, NULL);
            } else {
                next = now; /* late (a long lookup): no burst to catch up */
            }
        }
        uint64_t t0 = now_ns();
        int code = call(fd, t->frame, t->frame_len, &in);
        if (code < 0) {
            p->failed = 1;
            break;
        }
        rmq_hist_record(&p->hist, now_ns() - t0);
        atomic_store(&p->last_code, code);
        if (code != 0)
            p->errors++;
        atomic_store(&p->ready, true);
    }
    atomic_store(&p->ready, true);
    for (unsigned i = 0; i < ntpl; i++)
        rmq_template_free(&tpls[i]);
    free(tpls);
    free(in.p);
    close(fd);
    return NULL;
}

/* ---- runs ---------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* One registration of `broker` (all its frames when split); returns the
 * nanoseconds its frames took on the wire, or 0 on failure. */
static uint64_t register_once(int fd, const rmq_bench_options *o, unsigned broker,
                              long long counter, growbuf *body, growbuf *in, size_t *frame_bytes,
                              body_cache *bc)
{
    unsigned step = o->split ? o->split : o->register_topics;
    uint64_t spent = 0;
    for (unsigned lo = 0; lo < o->register_topics; lo += step) {
        unsigned hi = lo + step < o->register_topics ? lo + step : o->register_topics;
        rmq_request_template t;
        if (build_frame(&t, o, broker, counter, lo, hi, body, bc) != 0)
            return 0;
        if (frame_bytes)
            *frame_bytes = t.frame_len;
        uint64_t t0 = now_ns();
        int code = call(fd, t.frame, t.frame_len, in);
        spent += now_ns() - t0;
        rmq_template_free(&t);
        if (code != 0) {
            fprintf(stderr, "rmqbench: REGISTER_BROKER of %s-%u answered %d\n", o->broker_prefix,
                    broker, code);
            return 0;
        }
    }
    return spent ? spent : 1;
}

static void print_probe(FILE *out, const probe *p, bool json)
{
    const rmq_latency_histogram *h = &p->hist;
    double us = 1e-3;
    if (json)
        fprintf(out,
                ",\"probe\":{\"lookups\":%llu,\"not_success\":%llu,\"p50_us\":%.1f,"
                "\"p99_us\":%.1f,\"max_us\":%.1f}",
                (unsigned long long)h->count, (unsigned long long)p->errors,
                (double)rmq_hist_quantile_ns(h, 0.5) * us,
                (double)rmq_hist_quantile_ns(h, 0.99) * us, (double)h->max_ns * us);
    else
        fprintf(out,
                "probe: %llu route lookups (%llu not SUCCESS), p50 %.1f us  p99 %.1f us  max "
                "%.1f us\n",
                (unsigned long long)h->count, (unsigned long long)p->errors,
                (double)rmq_hist_quantile_ns(h, 0.5) * us,
                (double)rmq_hist_quantile_ns(h, 0.99) * us, (double)h->max_ns * us);
}

/* Rounds of one broker (or of every broker in turn): round 1 is the first
 * registration, later rounds change only the DataVersion counter. */
static int run_rounds(int fd, const rmq_bench_options *o, FILE *out, growbuf *body, growbuf *in)
{
    uint64_t *ns = calloc((size_t)o->rounds * o->brokers, sizeof(*ns));
    if (!ns)
        return 1;
    size_t frame_bytes = 0, k = 0;
    int rc = 0;
    for (unsigned r = 0; r < o->rounds && rc == 0; r++)
        for (unsigned b = 0; b < o->brokers && rc == 0; b++) {
            ns[k] = register_once(fd, o, b, 1 + r, body, in, &frame_bytes, NULL);
            rc = ns[k++] ? 0 : 1;
        }
    if (rc != 0) {
        free(ns);
        return rc;
    }
    size_t nfirst = o->brokers, nre = k - nfirst;
    uint64_t sum = 0, sum_first = 0;
    for (size_t i = 0; i < k; i++)
        sum += ns[i];
    for (size_t i = 0; i < nfirst; i++)
        sum_first += ns[i];
    qsort(ns + nfirst, nre, sizeof(*ns), cmp_u64);
    double ms = 1e-6;
    double first = (double)sum_first / (double)nfirst * ms;
    double mean = (double)sum / (double)k * ms;
    double re_min = nre ? (double)ns[nfirst] * ms : 0, re_max = nre ? (double)ns[k - 1] * ms : 0;
    double re_med = nre ? (double)ns[nfirst + nre / 2] * ms : 0;
    const char *form = o->compressed ? "compressed" : "JSON";
    if (o->json)
        fprintf(out,
                "{\"target\":\"%s\",\"topics\":%u,\"queues\":%d,\"form\":\"%s\",\"split\":%u,"
                "\"brokers\":%u,\"rounds\":%u,\"frame_bytes\":%zu,\"first_ms\":%.3f,"
                "\"rereg_min_ms\":%.3f,\"rereg_median_ms\":%.3f,\"rereg_max_ms\":%.3f,"
                "\"mean_ms\":%.3f",
                o->target, o->register_topics, QUEUES, form, o->split, o->brokers, o->rounds,
                frame_bytes, first, re_min, re_med, re_max, mean);
    else
        fprintf(out,
                "target %s  REGISTER_BROKER  %u topics x %d queues  %s  split %u  brokers %u\n"
                "frame %zu bytes (last frame sent)\n"
                "first registration: %.3f ms%s\n"
                "re-registrations (%zu, counter changed): min %.3f  median %.3f  max %.3f ms\n"
                "mean over %u rounds incl. the first: %.3f ms\n",
                o->target, o->register_topics, QUEUES, form, o->split, o->brokers, frame_bytes,
                first, o->brokers > 1 ? " (mean per broker)" : "", nre, re_min, re_med, re_max,
                o->rounds, mean);
    free(ns);
    return 0;
}

/* Every broker re-registers every period for o->seconds; then, with
 * --expire-ms, registrations stop and the run waits for the brokers to
 * expire (the probe's topic stops answering SUCCESS). */
static int run_storm(int fd, const rmq_bench_options *o, FILE *out, growbuf *body, growbuf *in,
                     probe *pr, body_cache *bc)
{
    rmq_latency_histogram *h = calloc(1, sizeof(*h));
    if (!h)
        return 1;
    rmq_hist_reset(h);
    uint64_t start = now_ns(), end = start + (uint64_t)(o->seconds * 1e9);
    uint64_t period = (uint64_t)(o->period_seconds * 1e9);
    long long counter = 1;
    unsigned storms = 0;
    int rc = 0;
    for (uint64_t next = start; now_ns() < end && rc == 0; next += period, counter++) {
        while (now_ns() < next)
            usleep(1000);
        for (unsigned b = 0; b < o->brokers && rc == 0; b++) {
            uint64_t t = register_once(fd, o, b, counter, body, in, NULL, bc);
            if (!t)
                rc = 1;
            else
                rmq_hist_record(h, t);
        }
        storms++;
    }
    double expire_s = -1;
    if (rc == 0 && pr && !o->json) {
        fputs("during the storms ", out);
        print_probe(out, pr, false);
    }
    if (rc == 0 && o->expire_ms && pr) {
        uint64_t t0 = now_ns();
        rmq_hist_reset(&pr->hist);
        pr->errors = 0;
        uint64_t deadline = t0 + (uint64_t)o->expire_ms * 1000000u * 3 + 30000000000u;
        while (atomic_load(&pr->last_code) == 0 && now_ns() < deadline && !pr->failed)
            usleep(1000);
        expire_s = atomic_load(&pr->last_code) != 0 ? (double)(now_ns() - t0) * 1e-9 : -1;
        usleep(200000); /* a little after the expiry too */
    }
    double ms = 1e-6;
    if (o->json)
        fprintf(out,
                "{\"target\":\"%s\",\"topics\":%u,\"brokers\":%u,\"period_s\":%.3f,"
                "\"storms\":%u,\"registrations\":%llu,\"reg_p50_ms\":%.3f,\"reg_max_ms\":%.3f,"
                "\"expired_after_s\":%.3f",
                o->target, o->register_topics, o->brokers, o->period_seconds, storms,
                (unsigned long long)h->count, (double)rmq_hist_quantile_ns(h, 0.5) * ms,
                (double)h->max_ns * ms, expire_s);
    else {
        fprintf(out,
                "target %s  storm: %u brokers x %u topics every %.3f s, %u storms\n"
                "registrations %llu: p50 %.3f ms  max %.3f ms\n",
                o->target, o->brokers, o->register_topics, o->period_seconds, storms,
                (unsigned long long)h->count, (double)rmq_hist_quantile_ns(h, 0.5) * ms,
                (double)h->max_ns * ms);
        if (o->expire_ms)
            fprintf(out, "expiry: routes gone %.3f s after the last registration%s\n", expire_s,
                    expire_s < 0 ? " (not seen)" : "");
    }
    free(h);
    return rc;
}

int rmq_bench_register_run(const rmq_bench_options *o, FILE *out)
{
    int fd = dial(o);
    if (fd < 0) {
        fprintf(stderr, "rmqbench: cannot connect to %s\n", o->target);
        return 1;
    }
    growbuf body = {0}, in = {0};
    body_cache bc = {0};
    if (o->period_seconds > 0 && (bc.tails = calloc(o->brokers, sizeof(growbuf))))
        bc.n = o->brokers;
    probe *pr = NULL;
    int rc = 0;
    char probe_topic[160];
    snprintf(probe_topic, sizeof(probe_topic), "%s-probe", o->broker_prefix);
    if (o->probe || o->expire_ms) {
        if (o->period_seconds > 0) {
            /* storm: the probe reads broker 0's topics, so it sees them expire */
            if (!register_once(fd, o, 0, 0, &body, &in, NULL, &bc))
                rc = 1;
        } else {
            /* rounds: round 1 must stay a first registration, so the probe's
             * topic belongs to a broker of its own */
            rmq_bench_options po = *o;
            po.register_topics = 1;
            po.split = 0;
            po.distinct_topics = 0;
            char prefix[128];
            snprintf(prefix, sizeof(prefix), "%s-probe", o->broker_prefix);
            po.broker_prefix = prefix;
            if (!register_once(fd, &po, o->brokers, 1, &body, &in, NULL, NULL))
                rc = 1;
            snprintf(probe_topic, sizeof(probe_topic), "%s-probe-t0", o->broker_prefix);
        }
        pr = calloc(1, sizeof(*pr));
        if (!pr || rc)
            rc = 1;
        else {
            pr->o = o;
            pr->fixed_topic = o->period_seconds > 0 ? NULL : probe_topic;
            rmq_hist_reset(&pr->hist);
            if (pthread_create(&pr->thread, NULL, probe_main, pr) != 0) {
                free(pr);
                pr = NULL;
                rc = 1;
            }
            /* the run starts once the probe is looking routes up: on a loaded
             * machine the thread could otherwise be scheduled only after a
             * short run ended, and report no lookup at all */
            while (pr && !atomic_load(&pr->ready)) {
                struct timespec ts = {0, 1000000L};
                nanosleep(&ts, NULL);
            }
        }
    }
    if (rc == 0)
        rc = o->period_seconds > 0 ? run_storm(fd, o, out, &body, &in, pr, &bc)
                                   : run_rounds(fd, o, out, &body, &in);
    if (pr) {
        atomic_store(&pr->stop, true);
        pthread_join(pr->thread, NULL);
        if (rc == 0 && !o->json && o->period_seconds > 0 && o->expire_ms)
            fputs("from the last registration until after the expiry ", out);
        if (rc == 0)
            print_probe(out, pr, o->json);
        if (pr->failed)
            fprintf(stderr, "rmqbench: the probe connection failed\n");
        free(pr);
    }
    if (rc == 0 && o->json)
        fputs("}\n", out);
    cache_free(&bc);
    free(body.p);
    free(in.p);
    close(fd);
    return rc;
}
