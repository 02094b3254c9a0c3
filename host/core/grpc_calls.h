/* grpc_calls.h — gRPC calls between a connection's HTTP/2 session
 * (grpc_conn.c, loop thread) and the plugin handlers they are dispatched to
 * (grpc_calls.c, any thread). Internal to the daemon. */
#ifndef RMQHOST_GRPC_CALLS_H
#define RMQHOST_GRPC_CALLS_H

#include "grpc_h2.h"
#include "host.h"

/* Loop thread of c. A call for a request whose headers arrived on c; its
 * method is looked up now (UNIMPLEMENTED is answered at once when nobody
 * serves it). NULL when out of memory (the stream is then refused). */
rmq_grpc_call *grpc_call_start(connection *c, int32_t stream_id, const grpc_h2_call_info *info);
void grpc_call_message(rmq_grpc_call *call, const uint8_t *msg, size_t len);
void grpc_call_half_close(rmq_grpc_call *call);
/* The stream is gone: answers are dropped from now on; the session's
 * reference is released. */
void grpc_call_gone(rmq_grpc_call *call);
/* Loop thread of c, about once a second: a held call whose deadline passed
 * is finished DEADLINE_EXCEEDED and its plugin's on_done told. */
void grpc_call_tick(connection *c, rmq_grpc_call *call, uint64_t now_ms);

/* Loop thread: queue an answer on stream `stream_id` of connection c and
 * write what the session wants written (grpc_conn.c). */
void grpc_conn_finish(connection *c, int32_t stream_id, int status, const char *message);
/* n messages (bytes one after another, lens[i] each), then the finish when
 * `finish`, written out once (grpc_send_batch's loop side). */
void grpc_conn_answer(connection *c, int32_t stream_id, const uint8_t *bytes, const size_t *lens,
                      size_t n, bool finish, int status, const char *message);

#endif
