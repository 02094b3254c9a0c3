/* rmqbench_main.c — rmqbench entry point: options → request template →
 * one event loop per thread → merged report. Owns the thread fan-out and the
 * exit status; the network work itself lives in bench_worker.c. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_options.h"
#include "bench_report.h"
#include "bench_worker.h"
#include "create_topics_mode.h"
#include "delete_topics_mode.h"
#include "grpc_mode.h"
#include "hold_mode.h"
#include "register_mode.h"
#include "request_template.h"

typedef struct worker_slot {
    pthread_t thread;
    rmq_bench_worker_config cfg;
    rmq_bench_stats stats; /* large (histogram): lives on the heap array */
    int rc;
} worker_slot;

static void *worker_thread(void *arg)
{
    worker_slot *s = arg;
    s->rc = rmq_bench_worker_run(&s->cfg, &s->stats);
    return NULL;
}

static int run(const rmq_bench_options *o, const rmq_request_template *tpl, rmq_bench_result *res)
{
    worker_slot *slots = calloc(o->threads, sizeof(*slots));
    if (!slots)
        return -1;
    SSL_CTX *tls = NULL;
    if (o->tls) {
        tls = SSL_CTX_new(TLS_client_method());
        if (!tls) {
            free(slots);
            return -1;
        }
        SSL_CTX_set_min_proto_version(tls, TLS1_2_VERSION);
        SSL_CTX_set_verify(tls, SSL_VERIFY_NONE, NULL);
    }
    for (unsigned i = 0; i < o->threads; i++) {
        rmq_bench_worker_config *cfg = &slots[i].cfg;
        cfg->addr = (const struct sockaddr *)&o->addr;
        cfg->tpl = tpl;
        /* Spread connections as evenly as possible over the threads. */
        cfg->connections = o->connections / o->threads + (i < o->connections % o->threads);
        cfg->depth = o->depth;
        cfg->oneway = o->oneway;
        cfg->warmup_ns = (uint64_t)(o->warmup_seconds * 1e9);
        cfg->measure_ns = (uint64_t)(o->seconds * 1e9);
        cfg->tls = tls;
        cfg->pull = o->mode == RMQ_BENCH_MODE_PULL;
        cfg->queues = o->queues;
        cfg->batch = o->batch;
        cfg->conn_base = i == 0 ? 0 : slots[i - 1].cfg.conn_base + slots[i - 1].cfg.connections;
        if (cfg->pull && (rmq_template_find(tpl, RMQ_BENCH_QUEUE_MARKER, &cfg->queue_off) != 0 ||
                          rmq_template_find(tpl, RMQ_BENCH_OFFSET_MARKER, &cfg->offset_off) != 0)) {
            fprintf(stderr, "rmqbench: pull mode needs the queueId and queueOffset placeholders\n");
            free(slots);
            return -1;
        }
    }
    unsigned spawned = 0;
    if (o->threads == 1) {
        worker_thread(&slots[0]);
    } else {
        for (; spawned < o->threads; spawned++)
            if (pthread_create(&slots[spawned].thread, NULL, worker_thread, &slots[spawned]) != 0)
                break;
        for (unsigned i = 0; i < spawned; i++)
            pthread_join(slots[i].thread, NULL);
    }
    int rc = (o->threads > 1 && spawned < o->threads) ? -1 : 0;
    rmq_stats_init(&res->total);
    for (unsigned i = 0; i < o->threads; i++) {
        const rmq_bench_stats *st = &slots[i].stats;
        if (slots[i].rc != 0)
            res->failed = 1;
        rmq_stats_merge(&res->total, st);
        if (st->window_seconds > 0.0)
            res->requests_per_sec +=
                (double)(o->oneway ? st->sent : st->responses) / st->window_seconds;
        if (st->window_seconds > 0.0)
            res->messages_per_sec += (double)st->messages / st->window_seconds;
        if (st->window_seconds > res->window_seconds)
            res->window_seconds = st->window_seconds;
    }
    free(slots);
    SSL_CTX_free(tls);
    return rc;
}

int main(int argc, char **argv)
{
    rmq_bench_options opts;
    int prc = rmq_bench_options_parse(&opts, argc, argv);
    if (prc != 0) {
        rmq_bench_options_free(&opts);
        return prc > 0 ? 0 : 2;
    }
    if (opts.grpc) {
        int grc = rmq_bench_grpc_run(&opts, stdout);
        rmq_bench_options_free(&opts);
        return grc;
    }
    if (opts.hold > 0) {
        int hrc = rmq_bench_hold_run(&opts, stdout);
        rmq_bench_options_free(&opts);
        return hrc;
    }
    if (opts.create_topics > 0) {
        int crc = rmq_bench_create_topics_run(&opts, stdout);
        rmq_bench_options_free(&opts);
        return crc;
    }
    if (opts.delete_topics > 0) {
        int drc = rmq_bench_delete_topics_run(&opts, stdout);
        rmq_bench_options_free(&opts);
        return drc;
    }
    if (opts.register_topics > 0) {
        char prefix[64];
        if (!opts.broker_prefix) {
            snprintf(prefix, sizeof(prefix), "bench-%ld", (long)getpid());
            opts.broker_prefix = prefix;
        }
        int rrc = rmq_bench_register_run(&opts, stdout);
        rmq_bench_options_free(&opts);
        return rrc;
    }
    rmq_request_spec spec = {
        .code = opts.code,
        .serialize_type = opts.rocketmq ? RMQ_SERIALIZE_ROCKETMQ : RMQ_SERIALIZE_JSON,
        .oneway = opts.oneway,
        .ext_keys = opts.ext_keys,
        .ext_values = opts.ext_values,
        .ext_count = opts.ext_count,
        .body = opts.body,
        .body_len = opts.body_len,
    };
    rmq_request_template tpl;
    char err[256];
    if (rmq_template_build(&tpl, &spec, err, sizeof(err)) != 0) {
        fprintf(stderr, "rmqbench: %s\n", err);
        rmq_bench_options_free(&opts);
        return 2;
    }
    rmq_bench_result *res = calloc(1, sizeof(*res));
    int status = 1;
    if (res && run(&opts, &tpl, res) == 0) {
        if (opts.json)
            rmq_report_json(stdout, &opts, res);
        else
            rmq_report_text(stdout, &opts, res);
        uint64_t done = opts.oneway ? res->total.sent : res->total.responses;
        if (res->failed)
            fprintf(stderr, "rmqbench: a connection to %s failed (see errors)\n", opts.target);
        else if (done == 0)
            fprintf(stderr, "rmqbench: no %s in the measured window\n",
                    opts.oneway ? "request was sent" : "response came back");
        else
            status = 0;
    } else {
        fprintf(stderr, "rmqbench: out of resources\n");
    }
    free(res);
    rmq_template_free(&tpl);
    rmq_bench_options_free(&opts);
    return status;
}
