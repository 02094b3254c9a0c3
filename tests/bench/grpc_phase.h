/* grpc_phase.h — what the phases of rmqbench --grpc share: the run's
 * settings, one poll loop over its connections, latency and error counts. */
#ifndef RMQBENCH_GRPC_PHASE_H
#define RMQBENCH_GRPC_PHASE_H

#include <openssl/ssl.h>
#include <stdint.h>
#include <stdio.h>

#include "bench_options.h"
#include "grpc_bench_conn.h"
#include "latency_histogram.h"

#define GB_MAX_CODES 16

/* Failed calls by code: a gRPC status (1..16), a RocketMQ v2 Code
 * (e.g. 40402), or -1 (connection lost, answer not understood). */
typedef struct gb_errors {
    int code[GB_MAX_CODES];
    uint64_t n[GB_MAX_CODES];
    unsigned used;
    uint64_t total;
} gb_errors;

void gb_errors_add(gb_errors *e, int code);
/* "none" or "14x3,40402x1" */
void gb_errors_print(const gb_errors *e, FILE *out);

typedef struct gb_run {
    const rmq_bench_options *o;
    SSL_CTX *tls;
    char id_prefix[48]; /* client ids and message ids: unique per run */
    uint64_t deadline_ns;
} gb_run;

/* Poll conns until done(arg) is true, the deadline passes, or every
 * connection is lost; a lost connection's calls end (status -1) and its
 * slot becomes NULL. 0 when done(arg), else -1. */
int gb_loop(gb_run *r, gbc_conn **conns, unsigned n, int (*done)(void *arg), void *arg,
            uint64_t deadline_ns);

/* A 5.x client's start on one connection: Telemetry with its Settings
 * (Java's proxy answers ReceiveMessage only for a client whose settings it
 * holds: GrpcClientSettingsManager), then a Heartbeat. group NULL: a
 * producer of o->topic. */
typedef struct gb_client {
    gbc_call telemetry, heartbeat;
    const char *group;
    int settings_ok, started, failed, telemetry_open;
    int heartbeat_code;
} gb_client;
/* Start cl[i] on conns[i] for i < n and wait for them; 0 or -1. The
 * telemetry calls stay open: cl must outlive conns. */
int gb_start_clients(gb_run *r, gbc_conn **conns, gb_client *cl, unsigned n, const char *group);
/* n connections with client ids <prefix>-<kind><i>; NULL if one fails. */
gbc_conn **gb_connect_all(gb_run *r, unsigned n, char kind);
void gb_close_all(gbc_conn **conns, unsigned n);

/* The send phase: o->messages sent; how many were answered OK. */
uint64_t gb_send_phase(gb_run *r, FILE *out, int *failed);
/* The receive+ack phase for `sent` messages; 0 when all were acked with no
 * failed call. */
int gb_recv_phase(gb_run *r, uint64_t sent, FILE *out);

double gb_ms(uint64_t ns);

#endif
