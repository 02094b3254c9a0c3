/* grpc_bench_conn.h — rmqbench's gRPC client connection: one HTTP/2
 * session (nghttp2) over TCP, TLS (ALPN h2, the server not verified) or
 * plaintext h2c with prior knowledge, carrying calls of
 * apache.rocketmq.v2.MessagingService as a RocketMQ 5.x client sends them
 * (its x-mq-* headers, grpc-timeout). Non-blocking after connect; the caller
 * polls gbc_fd() and calls gbc_on_ready(). One thread owns a connection. */
#ifndef RMQBENCH_GRPC_BENCH_CONN_H
#define RMQBENCH_GRPC_BENCH_CONN_H

#include <openssl/ssl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct gbc_conn gbc_conn;
typedef struct gbc_call gbc_call;

/* A response message (the 5-byte prefix removed), and the end of a call:
 * grpc_status is the trailer's grpc-status (-1 when the stream closed
 * without one: reset, connection lost, not gRPC). */
typedef void (*gbc_on_message)(gbc_call *call, const uint8_t *msg, size_t len);
typedef void (*gbc_on_done)(gbc_call *call, int grpc_status);

struct gbc_call {
    gbc_conn *conn;
    int32_t stream_id;
    uint8_t *req; /* framed request (owned) */
    size_t req_len, req_off;
    int keep_open; /* bidirectional (Telemetry): no END_STREAM after req */
    uint8_t *in;   /* response bytes not yet a whole message */
    size_t in_len, in_cap;
    int grpc_status;
    char grpc_message[160];
    gbc_on_message on_message;
    gbc_on_done on_done;
    void *user;
    uint64_t started_ns;
};

/* Connect (blocking, then non-blocking) to addr; tls NULL for h2c. The
 * client id goes in every call's x-mq-client-id. NULL with the reason on
 * stderr. */
gbc_conn *gbc_connect(const struct sockaddr *addr, const char *authority, SSL_CTX *tls,
                      const char *client_id);
void gbc_close(gbc_conn *c);
int gbc_fd(const gbc_conn *c);
/* POLLIN / POLLOUT the session wants now. */
short gbc_events(const gbc_conn *c);
/* Read and write what can be; 0, or -1 when the connection is lost (every
 * open call then ends with grpc_status -1). */
int gbc_on_ready(gbc_conn *c);
/* Start a call of method (e.g. "SendMessage") with the protobuf request
 * body (copied, framed here), a deadline of timeout_ms (grpc-timeout).
 * 0 or -1. */
int gbc_start(gbc_conn *c, gbc_call *call, const char *method, const uint8_t *body, size_t len,
              unsigned timeout_ms);
/* Reset a call still open (RST_STREAM CANCEL); its on_done still comes. */
void gbc_cancel(gbc_call *call);
/* Calls open on c. */
unsigned gbc_open_calls(const gbc_conn *c);

uint64_t gbc_now_ns(void);

#endif
