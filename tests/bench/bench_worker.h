/* bench_worker.h — one rmqbench event loop driving a group of connections
 * (the whole run with -t 1, one thread's share otherwise). */
#ifndef RMQBENCH_BENCH_WORKER_H
#define RMQBENCH_BENCH_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include "bench_stats.h"
#include "request_template.h"

typedef struct rmq_bench_worker_config {
    const struct sockaddr *addr;
    const rmq_request_template *tpl;
    unsigned connections; /* this worker's share */
    unsigned depth;
    int oneway;
    uint64_t warmup_ns;
    uint64_t measure_ns;
    SSL_CTX *tls; /* NULL = plaintext; else every connection speaks TLS */
    /* pull mode: patch queueId / queueOffset placeholders per request, count
     * the records of FOUND answers, stop when every connection's queue is
     * drained (its first answer that is not FOUND). */
    int pull;
    size_t queue_off, offset_off; /* placeholder offsets in the template */
    unsigned queues;
    unsigned batch;
    unsigned conn_base; /* global index of this worker's first connection */
} rmq_bench_worker_config;

/* Run the whole benchmark for this worker on a private uv loop in the
 * calling thread. Results go to *stats (initialised here). Returns 0, or -1
 * when a connection could not be set up or failed before the end. */
int rmq_bench_worker_run(const rmq_bench_worker_config *cfg, rmq_bench_stats *stats);

#endif
