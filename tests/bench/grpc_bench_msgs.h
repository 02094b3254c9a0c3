/* grpc_bench_msgs.h — the apache.rocketmq.v2 requests rmqbench's gRPC mode
 * sends, filled as the Go 5.x client (rocketmq-clients golang v5) fills
 * them, packed with the generated protobuf-c code (proxy_proto), and the
 * few fields it reads back from the answers. */
#ifndef RMQBENCH_GRPC_BENCH_MSGS_H
#define RMQBENCH_GRPC_BENCH_MSGS_H

#include <stddef.h>
#include <stdint.h>

/* A builder returns the packed length, or 0 when it does not fit in cap. */
size_t gbm_send(uint8_t *out, size_t cap, const char *topic, const uint8_t *body, size_t len,
                const char *message_id, const char *born_host);
/* TelemetryCommand{settings}: a producer publishing to topic (group NULL),
 * or a SIMPLE_CONSUMER of group subscribed to topic with "*" (TAG). */
size_t gbm_settings(uint8_t *out, size_t cap, const char *topic, const char *group,
                    unsigned long_poll_ms, unsigned request_timeout_ms);
size_t gbm_heartbeat(uint8_t *out, size_t cap, const char *group);
size_t gbm_receive(uint8_t *out, size_t cap, const char *group, const char *topic, unsigned batch,
                   unsigned invisible_ms, unsigned long_poll_ms);
size_t gbm_ack(uint8_t *out, size_t cap, const char *group, const char *topic,
               const char *message_id, const char *receipt_handle);

/* status.code of a SendMessageResponse (an entry's when the top one is OK),
 * HeartbeatResponse, AckMessageResponse, or -1 if it does not parse. */
int gbm_send_code(const uint8_t *msg, size_t len);
int gbm_heartbeat_code(const uint8_t *msg, size_t len);
int gbm_ack_code(const uint8_t *msg, size_t len);
/* A TelemetryCommand carrying settings: 1, else 0. */
int gbm_is_settings(const uint8_t *msg, size_t len);

/* One ReceiveMessageResponse: a status (code set, message fields empty), a
 * message (its id, topic and receipt handle copied), or neither. */
typedef struct gbm_received {
    int code; /* -1 when this response is not a status */
    char message_id[64];
    char topic[128];
    char receipt_handle[512];
    int is_message;
} gbm_received;
int gbm_parse_receive(const uint8_t *msg, size_t len, gbm_received *out);

#endif
