/* blocking_call.h — one request at a time on a blocking socket: the
 * create-topics and delete-topics modes time each answer as a client waits
 * for it. */
#ifndef RMQBENCH_BLOCKING_CALL_H
#define RMQBENCH_BLOCKING_CALL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "remoting_command.h"

typedef struct rmq_blocking_conn {
    int fd;
    uint8_t *buf; /* frames out and in */
    size_t cap;
} rmq_blocking_conn;

/* 0, or -1 with the reason on stderr (`what` names the target). */
int rmq_blocking_connect(rmq_blocking_conn *c, const struct sockaddr_storage *addr,
                         const char *what);
void rmq_blocking_close(rmq_blocking_conn *c);
/* Sends req, reads one frame: its code, or INT32_MIN when the connection
 * failed. */
int32_t rmq_blocking_call(rmq_blocking_conn *c, const rmq_cmd *req);
uint64_t rmq_bench_now_ns(void);
/* Sorts v; the median and p99 in ms. */
void rmq_bench_pcts(uint64_t *v, size_t n, double *p50_ms, double *p99_ms);

#endif
