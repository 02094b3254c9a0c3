/* create_topics_mode.c — rmqbench --create-topics: creates topics
 * <--topic>-<i> one at a time on one blocking connection and prints, every
 * --report-every creations, the time of that block scaled to 1,000 with its
 * median and p99; then 200 sends each to the first and the last topic. The
 * figures decide nothing: they go to docs/benchmarks.md. */
#include "create_topics_mode.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blocking_call.h"
#include "remoting_command.h"

#define FIXED_SENDS 200

static rmq_cmd *request_for(const rmq_bench_options *o, const char *topic, int32_t opaque,
                            const char *born, int queue)
{
    rmq_cmd *c = rmq_cmd_new();
    if (!c)
        return NULL;
    c->opaque = opaque;
    char queues[16], qid[16];
    snprintf(queues, sizeof queues, "%u", o->queues);
    snprintf(qid, sizeof qid, "%d", queue);
    int rc;
    if (o->create_via_admin) {
        c->code = 17;
        rc = rmq_cmd_ext_set(c, "topic", topic) || rmq_cmd_ext_set(c, "readQueueNums", queues) ||
             rmq_cmd_ext_set(c, "writeQueueNums", queues) || rmq_cmd_ext_set(c, "perm", "6") ||
             rmq_cmd_ext_set(c, "topicFilterType", "SINGLE_TAG") ||
             rmq_cmd_ext_set(c, "defaultTopic", "TBW102");
    } else {
        c->code = 310;
        rc = rmq_cmd_ext_set(c, "a", o->group) || rmq_cmd_ext_set(c, "b", topic) ||
             rmq_cmd_ext_set(c, "c", "TBW102") || rmq_cmd_ext_set(c, "d", queues) ||
             rmq_cmd_ext_set(c, "e", qid) || rmq_cmd_ext_set(c, "f", "0") ||
             rmq_cmd_ext_set(c, "g", born) || rmq_cmd_ext_set(c, "h", "0") ||
             rmq_cmd_ext_set(c, "i", "WAIT\001true\002TAGS\001TagA") ||
             rmq_cmd_ext_set(c, "j", "0") || rmq_cmd_ext_set(c, "k", "false") ||
             rmq_cmd_ext_set(c, "m", "false") ||
             rmq_cmd_set_body(c, o->body, o->body_len, NULL, NULL);
    }
    if (rc != 0) {
        rmq_cmd_free(c);
        return NULL;
    }
    return c;
}

/* FIXED_SENDS sends to `topic`: their median and p99 into out. */
static int fixed_sends(const rmq_bench_options *o, rmq_blocking_conn *conn, const char *topic,
                       const char *born, FILE *out)
{
    uint64_t lat[FIXED_SENDS];
    rmq_bench_options so = *o;
    so.create_via_admin = 0;
    for (int i = 0; i < FIXED_SENDS; i++) {
        rmq_cmd *req = request_for(&so, topic, 2000000 + i, born, -1);
        if (!req)
            return -1;
        uint64_t t0 = rmq_bench_now_ns();
        int32_t code = rmq_blocking_call(conn, req);
        lat[i] = rmq_bench_now_ns() - t0;
        rmq_cmd_free(req);
        if (code != 0) {
            fprintf(stderr, "rmqbench: send to %s answered %d\n", topic, code);
            return -1;
        }
    }
    double p50, p99;
    rmq_bench_pcts(lat, FIXED_SENDS, &p50, &p99);
    fprintf(out, "sends to %s: p50 %.3f ms, p99 %.3f ms (%d sends)\n", topic, p50, p99,
            FIXED_SENDS);
    return 0;
}

int rmq_bench_create_topics_run(const rmq_bench_options *o, FILE *out)
{
    rmq_blocking_conn conn;
    if (rmq_blocking_connect(&conn, &o->addr, o->target) != 0)
        return 1;
    char born[32];
    snprintf(born, sizeof born, "%lld", (long long)time(NULL) * 1000);
    unsigned every = o->report_every ? o->report_every : 1000;
    uint64_t *lat = malloc(every * sizeof *lat);
    int status = lat ? 0 : 1;
    fprintf(out, "creating %u topics %s-<i> (%u queues) by %s, one at a time%s\n", o->create_topics,
            o->topic, o->queues,
            o->create_via_admin ? "UPDATE_AND_CREATE_TOPIC" : "SEND_MESSAGE_V2",
            o->per_queue && !o->create_via_admin ? ", then a message to each other queue" : "");
    uint64_t block_start = rmq_bench_now_ns(), all_start = block_start;
    unsigned in_block = 0;
    for (unsigned i = 0; i < o->create_topics && status == 0; i++) {
        char topic[160];
        snprintf(topic, sizeof topic, "%s-%u", o->topic, i);
        /* with --per-queue, one message to each queue (queue 0 creates) */
        unsigned sends = o->per_queue && !o->create_via_admin ? o->queues : 1;
        uint64_t t0 = rmq_bench_now_ns();
        for (unsigned q = 0; q < sends && status == 0; q++) {
            rmq_cmd *req = request_for(o, topic, (int32_t)(i % 1000000000u) + 1, born,
                                       o->per_queue ? (int)q : -1);
            int32_t code = req ? rmq_blocking_call(&conn, req) : INT32_MIN;
            rmq_cmd_free(req);
            if (code != 0) {
                fprintf(stderr, "rmqbench: send %u to %s answered %d\n", q, topic, code);
                status = 1;
            }
        }
        lat[in_block++] = rmq_bench_now_ns() - t0;
        if (status != 0)
            break;
        if (in_block == every || i + 1 == o->create_topics) {
            uint64_t t = rmq_bench_now_ns();
            double secs = (double)(t - block_start) / 1e9;
            double p50, p99;
            rmq_bench_pcts(lat, in_block, &p50, &p99);
            fprintf(out,
                    "topics %u: %.3f s per 1000 (this block of %u), p50 %.3f ms, p99 %.3f ms\n",
                    i + 1, secs * 1000.0 / in_block, in_block, p50, p99);
            fflush(out);
            in_block = 0;
            block_start = t;
        }
    }
    if (status == 0) {
        fprintf(out, "%u topics in %.1f s\n", o->create_topics,
                (double)(rmq_bench_now_ns() - all_start) / 1e9);
        char first[160], last[160];
        snprintf(first, sizeof first, "%s-0", o->topic);
        snprintf(last, sizeof last, "%s-%u", o->topic, o->create_topics - 1);
        if (fixed_sends(o, &conn, first, born, out) != 0 ||
            fixed_sends(o, &conn, last, born, out) != 0)
            status = 1;
    }
    free(lat);
    rmq_blocking_close(&conn);
    return status;
}
