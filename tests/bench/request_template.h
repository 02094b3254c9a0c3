/* request_template.h — the request frame rmqbench sends, encoded once, with
 * the position of its opaque so each send only patches those bytes. */
#ifndef RMQBENCH_REQUEST_TEMPLATE_H
#define RMQBENCH_REQUEST_TEMPLATE_H

#include <stddef.h>
#include <stdint.h>

#include "remoting_command.h"

/* JSON opaques are rendered as exactly this many digits so the frame never
 * changes length: every opaque sent is in [BASE, INT32_MAX]. */
#define RMQ_TEMPLATE_OPAQUE_DIGITS 10
#define RMQ_TEMPLATE_OPAQUE_BASE 1000000000

typedef struct rmq_request_template {
    uint8_t *frame; /* whole frame, length prefix included (malloc'd) */
    size_t frame_len;
    size_t opaque_off; /* offset of the opaque digits (JSON) or int32 (binary) */
    uint8_t serialize_type;
} rmq_request_template;

typedef struct rmq_request_spec {
    int32_t code;
    uint8_t serialize_type; /* RMQ_SERIALIZE_JSON or RMQ_SERIALIZE_ROCKETMQ */
    int oneway;
    const char *const *ext_keys; /* ext_count entries each */
    const char *const *ext_values;
    size_t ext_count;
    const uint8_t *body;
    size_t body_len;
} rmq_request_spec;

/* Encode `spec` with the codec. 0, or -1 with a reason in errbuf. */
int rmq_template_build(rmq_request_template *t, const rmq_request_spec *spec, char *errbuf,
                       size_t errlen);
void rmq_template_free(rmq_request_template *t);

/* Write the opaque into a copy of the frame at `frame` (which holds
 * t->frame_len bytes copied from t->frame). opaque must be >= BASE. */
void rmq_template_patch_opaque(const rmq_request_template *t, uint8_t *frame, int32_t opaque);

/* Offset of the first occurrence of `marker` in the frame (the digits of a
 * placeholder ext value). 0, or -1 when absent. */
int rmq_template_find(const rmq_request_template *t, const char *marker, size_t *off);
/* Write v as `width` decimal digits with leading zeros at frame + off. */
void rmq_template_patch_digits(uint8_t *frame, size_t off, size_t width, uint64_t v);

#endif
