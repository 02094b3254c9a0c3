/* admin_stats.c — the daemon's figures as JSON (`rmqhostctl stats`) and as
 * Prometheus text (metrics endpoint). Labels are bounded by construction:
 * server, request code, plugin, executor — never a topic or a client. A
 * plugin's own gauges (ABI 1.10) carry labels the plugin bounds (the store's
 * per-slave figures: the few slaves of a master, by address). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_context.h"

static json_t *codes_json(request_stats *st)
{
    json_t *arr = json_array();
    for (size_t i = 0; i <= STATS_CODE_SLOTS; i++) {
        unsigned long n = atomic_load(&st->requests[i]);
        unsigned long e = atomic_load(&st->errors[i]);
        if (!n && !e)
            continue;
        json_t *code = i < STATS_CODE_SLOTS ? json_integer((json_int_t)i) : json_string("other");
        json_array_append_new(arr, json_pack("{s:o, s:I, s:I}", "code", code, "requests",
                                             (json_int_t)n, "errors", (json_int_t)e));
    }
    return arr;
}

typedef struct prom_buf prom_buf;

/* What api->gauge writes into: the stats JSON array or the metrics text. */
struct rmq_gauge_sink {
    const char *plugin;
    json_t *arr;
    prom_buf *prom;
    char last[128]; /* name whose HELP/TYPE went out last */
};

static void plugin_gauges(rmq_host *h, json_t *arr, prom_buf *prom);

json_t *admin_stats_json(rmq_host *h)
{
    json_t *servers = json_array(), *execs = json_array();
    for (size_t i = 0; i < h->nservers; i++) {
        server *s = &h->servers[i];
        char listen[128] = "not listening";
        if (s->listening)
            snprintf(listen, sizeof(listen), "%s:%d", s->bound_host, s->bound_port);
        request_stats *st = &s->stats;
        json_t *lat =
            json_pack("{s:I, s:I, s:I, s:I}", "p50", (json_int_t)request_stats_quantile_us(st, 0.5),
                      "p90", (json_int_t)request_stats_quantile_us(st, 0.9), "p99",
                      (json_int_t)request_stats_quantile_us(st, 0.99), "max",
                      (json_int_t)atomic_load(&st->latency_max_us));
        json_array_append_new(servers, json_pack("{s:s, s:s, s:I, s:I, s:I, s:o, s:o}", "name",
                                                 s->name, "listen", listen, "connections",
                                                 (json_int_t)atomic_load(&s->connections),
                                                 "requests", (json_int_t)atomic_load(&s->requests),
                                                 "errors", (json_int_t)atomic_load(&s->errors),
                                                 "latency_us", lat, "codes", codes_json(st)));
    }
    pthread_mutex_lock(&h->registry_mu);
    for (size_t i = 0; i < h->nplugins; i++) {
        plugin_inst *p = h->plugins[i];
        for (size_t k = 0; k < p->nexecutors; k++) {
            executor *ex = p->executors[k];
            json_array_append_new(execs,
                                  json_pack("{s:s, s:s, s:i, s:I, s:I, s:I}", "name", ex->name,
                                            "plugin", p->conf.name, "threads", ex->nthreads,
                                            "queue_depth", (json_int_t)executor_depth(ex),
                                            "executed", (json_int_t)atomic_load(&ex->executed),
                                            "rejected", (json_int_t)atomic_load(&ex->rejected)));
        }
    }
    pthread_mutex_unlock(&h->registry_mu);
    json_t *gauges = json_array();
    plugin_gauges(h, gauges, NULL);
    return json_pack("{s:o, s:o, s:I, s:I, s:o}", "servers", servers, "executors", execs,
                     "inflight", (json_int_t)atomic_load(&h->inflight_requests),
                     "outgoing_connections", (json_int_t)atomic_load(&h->outgoing_conns), "gauges",
                     gauges);
}

struct prom_buf {
    char *buf;
    size_t len, cap;
    bool oom;
};

static void emit(prom_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(prom_buf *b, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n > 0 && b->len + (size_t)n + 1 > b->cap) {
        size_t ncap = b->cap * 2 + (size_t)n + 4096;
        char *nb = realloc(b->buf, ncap);
        if (!nb) {
            b->oom = true;
            va_end(ap2);
            return;
        }
        b->buf = nb;
        b->cap = ncap;
    }
    if (n > 0) {
        vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
}

char *admin_stats_prometheus(rmq_host *h, size_t *len)
{
    prom_buf b = {0};
    emit(&b, "# HELP rmqhost_server_connections Open connections per server.\n"
             "# TYPE rmqhost_server_connections gauge\n");
    for (size_t i = 0; i < h->nservers; i++)
        emit(&b, "rmqhost_server_connections{server=\"%s\"} %lu\n", h->servers[i].name,
             atomic_load(&h->servers[i].connections));
    emit(&b,
         "# HELP rmqhost_outgoing_connections Open connections this process dialled "
         "(plugins' invoke_*_addr).\n"
         "# TYPE rmqhost_outgoing_connections gauge\nrmqhost_outgoing_connections %lu\n",
         atomic_load(&h->outgoing_conns));
    emit(&b, "# HELP rmqhost_requests_total Requests received, by server and request code.\n"
             "# TYPE rmqhost_requests_total counter\n");
    for (size_t i = 0; i < h->nservers; i++)
        for (size_t c = 0; c <= STATS_CODE_SLOTS; c++) {
            unsigned long n = atomic_load(&h->servers[i].stats.requests[c]);
            if (!n)
                continue;
            if (c < STATS_CODE_SLOTS)
                emit(&b, "rmqhost_requests_total{server=\"%s\",code=\"%zu\"} %lu\n",
                     h->servers[i].name, c, n);
            else
                emit(&b, "rmqhost_requests_total{server=\"%s\",code=\"other\"} %lu\n",
                     h->servers[i].name, n);
        }
    emit(&b, "# HELP rmqhost_request_errors_total Requests answered with a non-zero code.\n"
             "# TYPE rmqhost_request_errors_total counter\n");
    for (size_t i = 0; i < h->nservers; i++)
        for (size_t c = 0; c <= STATS_CODE_SLOTS; c++) {
            unsigned long n = atomic_load(&h->servers[i].stats.errors[c]);
            if (!n)
                continue;
            if (c < STATS_CODE_SLOTS)
                emit(&b, "rmqhost_request_errors_total{server=\"%s\",code=\"%zu\"} %lu\n",
                     h->servers[i].name, c, n);
            else
                emit(&b, "rmqhost_request_errors_total{server=\"%s\",code=\"other\"} %lu\n",
                     h->servers[i].name, n);
        }
    emit(&b, "# HELP rmqhost_request_duration_seconds Time from decode to completion.\n"
             "# TYPE rmqhost_request_duration_seconds histogram\n");
    for (size_t i = 0; i < h->nservers; i++) {
        request_stats *st = &h->servers[i].stats;
        unsigned long cum = 0;
        for (size_t k = 0; k < STATS_LATENCY_BUCKETS; k++) {
            cum += atomic_load(&st->latency[k]);
            emit(&b, "rmqhost_request_duration_seconds_bucket{server=\"%s\",le=\"%g\"} %lu\n",
                 h->servers[i].name, (double)((uint64_t)1 << k) / 1e6, cum);
        }
        emit(&b, "rmqhost_request_duration_seconds_bucket{server=\"%s\",le=\"+Inf\"} %lu\n",
             h->servers[i].name, cum);
        emit(&b, "rmqhost_request_duration_seconds_sum{server=\"%s\"} %g\n", h->servers[i].name,
             (double)atomic_load(&st->latency_sum_us) / 1e6);
        emit(&b, "rmqhost_request_duration_seconds_count{server=\"%s\"} %lu\n", h->servers[i].name,
             cum);
    }
    emit(&b, "# HELP rmqhost_plugin_served_total Requests served per plugin.\n"
             "# TYPE rmqhost_plugin_served_total counter\n");
    pthread_mutex_lock(&h->registry_mu);
    for (size_t i = 0; i < h->nplugins; i++)
        emit(&b, "rmqhost_plugin_served_total{plugin=\"%s\"} %lu\n", h->plugins[i]->conf.name,
             atomic_load(&h->plugins[i]->served));
    emit(&b, "# HELP rmqhost_plugin_generation Loaded generation per plugin.\n"
             "# TYPE rmqhost_plugin_generation gauge\n");
    for (size_t i = 0; i < h->nplugins; i++)
        emit(&b, "rmqhost_plugin_generation{plugin=\"%s\"} %u\n", h->plugins[i]->conf.name,
             h->plugins[i]->generation);
    emit(&b, "# HELP rmqhost_executor_queue_depth Tasks waiting per executor.\n"
             "# TYPE rmqhost_executor_queue_depth gauge\n");
    for (size_t i = 0; i < h->nplugins; i++)
        for (size_t k = 0; k < h->plugins[i]->nexecutors; k++)
            emit(&b, "rmqhost_executor_queue_depth{plugin=\"%s\",executor=\"%s\"} %zu\n",
                 h->plugins[i]->conf.name, h->plugins[i]->executors[k]->name,
                 executor_depth(h->plugins[i]->executors[k]));
    pthread_mutex_unlock(&h->registry_mu);
    plugin_gauges(h, NULL, &b);
    if (b.oom) {
        free(b.buf);
        return NULL;
    }
    *len = b.len;
    return b.buf;
}

/* Label values in Prometheus text: backslash, quote and newline escaped. */
static void emit_label_value(prom_buf *b, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            emit(b, "\\%c", *v);
        else if (*v == '\n')
            emit(b, "\\n");
        else
            emit(b, "%c", *v);
    }
}

void admin_stats_gauge(rmq_gauge_sink *sink, const char *name, const char *help,
                       const char *const *labels, double value)
{
    if (!sink || !name || !name[0])
        return;
    if (sink->arr) {
        json_t *lab = json_object();
        for (size_t i = 0; labels && labels[i] && labels[i + 1]; i += 2)
            json_object_set_new(lab, labels[i], json_string(labels[i + 1]));
        json_array_append_new(sink->arr, json_pack("{s:s, s:s, s:o, s:f}", "plugin", sink->plugin,
                                                   "name", name, "labels", lab, "value", value));
        return;
    }
    prom_buf *b = sink->prom;
    if (strcmp(sink->last, name) != 0) {
        emit(b, "# HELP rmqhost_%s %s\n# TYPE rmqhost_%s gauge\n", name, help ? help : name, name);
        snprintf(sink->last, sizeof(sink->last), "%s", name);
    }
    emit(b, "rmqhost_%s{plugin=\"", name);
    emit_label_value(b, sink->plugin);
    emit(b, "\"");
    for (size_t i = 0; labels && labels[i] && labels[i + 1]; i += 2) {
        emit(b, ",%s=\"", labels[i]);
        emit_label_value(b, labels[i + 1]);
        emit(b, "\"");
    }
    emit(b, "} %.17g\n", value);
}

/* Each live plugin's gauges: collected under registry_mu (the plugin held
 * by its inflight count, as an admin command is), reported outside it. */
static void plugin_gauges(rmq_host *h, json_t *arr, prom_buf *prom)
{
    typedef struct {
        plugin_inst *p;
        rmq_gauges_fn fn;
        void *ud;
    } src;
    src *v = NULL;
    size_t n = 0;
    pthread_mutex_lock(&h->registry_mu);
    v = h->nplugins ? calloc(h->nplugins, sizeof(*v)) : NULL;
    for (size_t i = 0; v && i < h->nplugins; i++) {
        plugin_inst *p = h->plugins[i];
        if (p->state != PLUGIN_LIVE || !p->gauges_fn)
            continue;
        atomic_fetch_add(&p->inflight, 1);
        v[n++] = (src){p, p->gauges_fn, p->gauges_ud};
    }
    pthread_mutex_unlock(&h->registry_mu);
    for (size_t i = 0; i < n; i++) {
        rmq_gauge_sink sink = {.plugin = v[i].p->conf.name, .arr = arr, .prom = prom};
        v[i].fn(v[i].ud, &sink);
        atomic_fetch_sub(&v[i].p->inflight, 1);
    }
    free(v);
}
