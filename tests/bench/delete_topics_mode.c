/* delete_topics_mode.c — rmqbench --delete-topics (delete_topics_mode.h).
 * The figures decide nothing: they go to docs/benchmarks.md. */
#include "delete_topics_mode.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blocking_call.h"
#include "remoting_command.h"

enum { DELETE_TOPIC_IN_BROKER = 215, DELETE_TOPIC_IN_NAMESRV = 216 };

/* One deletion request: its code, or INT32_MIN when it could not be made or
 * the connection failed. */
static int32_t delete_call(rmq_blocking_conn *conn, int32_t code, const char *topic, int32_t opaque)
{
    rmq_cmd *c = rmq_cmd_new();
    if (!c)
        return INT32_MIN;
    c->code = code;
    c->opaque = opaque;
    int32_t rc = rmq_cmd_ext_set(c, "topic", topic) == 0 ? rmq_blocking_call(conn, c) : INT32_MIN;
    rmq_cmd_free(c);
    return rc;
}

static void report(FILE *out, unsigned done, uint64_t block_ns, uint64_t *broker, uint64_t *ns,
                   unsigned n, int with_ns)
{
    double b50, b99, n50 = 0, n99 = 0;
    rmq_bench_pcts(broker, n, &b50, &b99);
    if (with_ns)
        rmq_bench_pcts(ns, n, &n50, &n99);
    fprintf(out, "deleted %u: %.3f s per 1000 (this block of %u); broker p50 %.3f ms p99 %.3f ms",
            done, (double)block_ns / 1e9 * 1000.0 / n, n, b50, b99);
    if (with_ns)
        fprintf(out, "; namesrv p50 %.3f ms p99 %.3f ms", n50, n99);
    fputc('\n', out);
    fflush(out);
}

int rmq_bench_delete_topics_run(const rmq_bench_options *o, FILE *out)
{
    rmq_blocking_conn broker, ns = {.fd = -1};
    if (rmq_blocking_connect(&broker, &o->addr, o->target) != 0)
        return 1;
    int with_ns = o->namesrv_target[0] != '\0';
    if (with_ns && rmq_blocking_connect(&ns, &o->namesrv_addr, o->namesrv_target) != 0) {
        rmq_blocking_close(&broker);
        return 1;
    }
    unsigned every = o->report_every ? o->report_every : 1000;
    uint64_t *lat_b = malloc(every * sizeof *lat_b), *lat_n = malloc(every * sizeof *lat_n);
    int status = lat_b && lat_n ? 0 : 1;
    fprintf(out, "deleting %u topics %s-<i> one at a time by DELETE_TOPIC_IN_BROKER%s\n",
            o->delete_topics, o->topic, with_ns ? " then DELETE_TOPIC_IN_NAMESRV" : "");
    uint64_t block_start = rmq_bench_now_ns(), all_start = block_start;
    unsigned in_block = 0;
    for (unsigned i = 0; i < o->delete_topics && status == 0; i++) {
        char topic[160];
        snprintf(topic, sizeof topic, "%s-%u", o->topic, i);
        int32_t opaque = (int32_t)(i % 1000000000u) + 1;
        uint64_t t0 = rmq_bench_now_ns();
        int32_t code = delete_call(&broker, DELETE_TOPIC_IN_BROKER, topic, opaque);
        uint64_t t1 = rmq_bench_now_ns();
        if (code != 0) {
            fprintf(stderr, "rmqbench: DELETE_TOPIC_IN_BROKER %s answered %d\n", topic, code);
            status = 1;
            break;
        }
        lat_b[in_block] = t1 - t0;
        lat_n[in_block] = 0;
        if (with_ns) {
            code = delete_call(&ns, DELETE_TOPIC_IN_NAMESRV, topic, opaque);
            lat_n[in_block] = rmq_bench_now_ns() - t1;
            if (code != 0) {
                fprintf(stderr, "rmqbench: DELETE_TOPIC_IN_NAMESRV %s answered %d\n", topic, code);
                status = 1;
                break;
            }
        }
        in_block++;
        if (in_block == every || i + 1 == o->delete_topics) {
            uint64_t t = rmq_bench_now_ns();
            report(out, i + 1, t - block_start, lat_b, lat_n, in_block, with_ns);
            in_block = 0;
            block_start = t;
        }
    }
    if (status == 0)
        fprintf(out, "%u topics deleted in %.1f s\n", o->delete_topics,
                (double)(rmq_bench_now_ns() - all_start) / 1e9);
    free(lat_b);
    free(lat_n);
    rmq_blocking_close(&broker);
    if (with_ns)
        rmq_blocking_close(&ns);
    return status;
}
