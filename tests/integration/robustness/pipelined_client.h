/* pipelined_client.h — the fuzz test's side of the wire: a few non-blocking
 * connections with many requests in flight each, answers matched by opaque,
 * every request without an answer by its deadline (or lost with a closed
 * connection) recorded as a failure. Server-initiated requests (relays of
 * 307/309) are answered so the daemon never waits on the test. */
#ifndef PIPELINED_CLIENT_H
#define PIPELINED_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fuzz_counts.h"
#include "remoting_command.h"

#define FUZZ_MAX_CONNS 8
#define FUZZ_FAILURES_KEPT 20

typedef struct fuzz_pending {
    int32_t opaque;
    int32_t code;
    uint64_t deadline_ms;
    char label[224];
} fuzz_pending;

typedef struct fuzz_conn {
    int fd; /* -1 once closed */
    uint8_t *out;
    size_t out_len, out_off, out_cap;
    uint8_t *in;
    size_t in_len, in_cap;
    fuzz_pending *pending;
    size_t npending, pending_cap;
} fuzz_conn;

typedef struct fuzz_pipeline {
    fuzz_conn conns[FUZZ_MAX_CONNS];
    size_t nconns;
    size_t window;         /* requests in flight per connection */
    int answer_timeout_ms; /* per request, from submission */
    fuzz_counts answers_by_code;
    fuzz_counts unanswered_by_code;
    unsigned long answered, unanswered, stray_answers, server_requests;
    char failures[FUZZ_FAILURES_KEPT][320];
    size_t failures_kept;
    /* error answers (code != 0) without a remark: unclear, reported only */
    unsigned long silent_errors;
    char silent_error_examples[FUZZ_FAILURES_KEPT][320];
    size_t silent_errors_kept;
} fuzz_pipeline;

void fuzz_pipeline_init(fuzz_pipeline *p, size_t window, int answer_timeout_ms);
/* Connect to 127.0.0.1:port; the connection's index or -1. */
int fuzz_pipeline_connect(fuzz_pipeline *p, int port);
/* Queue cmd on connection `conn`, first pumping until it has room in its
 * window. A oneway cmd expects no answer. 0, or -1 when it cannot be encoded
 * or the connection is gone (recorded as a failure for a non-oneway cmd). */
int fuzz_pipeline_submit(fuzz_pipeline *p, size_t conn, const rmq_cmd *cmd, const char *label);
/* One round of I/O (waits up to timeout_ms for readiness), then expires
 * overdue requests. */
void fuzz_pipeline_pump(fuzz_pipeline *p, int timeout_ms);
/* Pump until nothing is in flight or unsent; false if deadline_ms (monotonic)
 * passed first. */
bool fuzz_pipeline_drain(fuzz_pipeline *p, uint64_t deadline_ms);
size_t fuzz_pipeline_in_flight(const fuzz_pipeline *p);
void fuzz_pipeline_close(fuzz_pipeline *p);

#endif
