/* grpc_h2.h — the server side of gRPC over one HTTP/2 connection, built on
 * nghttp2 and free of I/O: bytes the socket delivered go in through
 * grpc_h2_feed, bytes to write come out through grpc_h2_flush, and calls are
 * reported through callbacks by stream id. Requests are checked (POST,
 * application/grpc, a :path), their DATA is cut into messages
 * (grpc_wire.c), and answers are headers, length-prefixed messages and
 * grpc-status/grpc-message trailers. One thread uses a session at a time
 * (the connection's I/O loop). */
#ifndef RMQHOST_GRPC_H2_H
#define RMQHOST_GRPC_H2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct grpc_h2 grpc_h2;

typedef struct grpc_h2_header {
    const char *name; /* lower case, as HTTP/2 sends them */
    const char *value;
} grpc_h2_header;

/* What a call's request headers said; valid during on_call only. */
typedef struct grpc_h2_call_info {
    const char *path;              /* "/package.Service/Method" */
    uint64_t timeout_ms;           /* grpc-timeout; 0 = none */
    const grpc_h2_header *headers; /* the other (non-pseudo) headers */
    size_t nheaders;
} grpc_h2_call_info;

typedef struct grpc_h2_callbacks {
    /* A request's headers arrived. The session has already refused what is
     * not a gRPC request (it never gets here). */
    void (*on_call)(void *ud, int32_t stream_id, const grpc_h2_call_info *info);
    /* One whole request message (valid during the call). */
    void (*on_message)(void *ud, int32_t stream_id, const uint8_t *msg, size_t len);
    /* The client closed its side (no more messages). */
    void (*on_half_close)(void *ud, int32_t stream_id);
    /* The stream is gone (answered, reset by the peer, or the connection
     * ends): no further callback names it. */
    void (*on_close)(void *ud, int32_t stream_id);
} grpc_h2_callbacks;

/* max_msg: longest request message accepted (RESOURCE_EXHAUSTED beyond). */
grpc_h2 *grpc_h2_new(const grpc_h2_callbacks *cb, void *ud, size_t max_msg);
void grpc_h2_free(grpc_h2 *h);

/* Bytes received. 0, or -1 when the connection must be closed (not
 * HTTP/2, a connection-level protocol error). Callbacks run inside. */
int grpc_h2_feed(grpc_h2 *h, const uint8_t *data, size_t len);

/* Answers on a stream (loop thread). send_message queues one message
 * (response headers go first, once); finish queues the trailers (or a
 * trailers-only answer when nothing was sent) and ends the stream. A
 * stream that is gone is ignored: 0, the peer left. -1 on no memory. */
int grpc_h2_send_message(grpc_h2 *h, int32_t stream_id, const uint8_t *msg, size_t len);
int grpc_h2_finish(grpc_h2 *h, int32_t stream_id, int status, const char *message);

/* Move what the session wants to write to `sink` (returns 0 or -1 to
 * stop). -1 on a session error. */
int grpc_h2_flush(grpc_h2 *h, int (*sink)(void *ud, const uint8_t *data, size_t len),
                  void *sink_ud);

/* Nothing more to read or write: the connection can be closed. */
bool grpc_h2_done(const grpc_h2 *h);

#endif
