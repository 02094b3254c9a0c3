/* proxy_replies.c — the answer messages of one stream packed into one
 * buffer and handed to the host in one call (ABI 1.13 grpc_send_batch): a
 * ReceiveMessage's status, messages and delivery timestamp reach the
 * connection's I/O loop as one task instead of one per message (each a
 * wake-up of that loop from the store's thread). */
#include <stdlib.h>
#include <string.h>

#include "proxy_internal.h"

int proxy_replies_reserve(proxy_replies *r, size_t bytes)
{
    if (r->err || r->cap - r->used >= bytes)
        return r->err;
    uint8_t *nb = realloc(r->buf, r->used + bytes);
    if (!nb)
        return r->err = RMQ_ENOMEM;
    r->buf = nb;
    r->cap = r->used + bytes;
    return 0;
}

int proxy_replies_add(proxy_replies *r, const ProtobufCMessage *msg)
{
    if (r->err)
        return r->err;
    size_t len = protobuf_c_message_get_packed_size(msg);
    if (r->n == r->lens_cap) {
        size_t ncap = r->lens_cap ? r->lens_cap * 2 : 8;
        size_t *nl = realloc(r->lens, ncap * sizeof *nl);
        if (!nl)
            return r->err = RMQ_ENOMEM;
        r->lens = nl;
        r->lens_cap = ncap;
    }
    if (r->used + len > r->cap) {
        size_t ncap = r->cap ? r->cap : 4096;
        while (ncap < r->used + len)
            ncap *= 2;
        uint8_t *nb = realloc(r->buf, ncap);
        if (!nb)
            return r->err = RMQ_ENOMEM;
        r->buf = nb;
        r->cap = ncap;
    }
    protobuf_c_message_pack(msg, r->buf + r->used);
    r->used += len;
    r->lens[r->n++] = len;
    return 0;
}

int proxy_replies_flush(proxy *px, rmq_grpc_call *call, proxy_replies *r, int finish_status)
{
    const rmq_host_api *api = px->api;
    int rc = 0;
    if (api->abi_minor >= 13 && api->grpc_send_batch) {
        rmq_grpc_msg one[40] = {{0}}; /* a batch of 32 and its status and timestamp */
        rmq_grpc_msg *m = r->n <= sizeof one / sizeof one[0] ? one : malloc(r->n * sizeof *m);
        if (!m) {
            rc = RMQ_ENOMEM;
        } else {
            size_t at = 0;
            for (size_t i = 0; i < r->n; i++) {
                m[i].data = r->buf + at;
                m[i].len = r->lens[i];
                at += r->lens[i];
            }
            rc = api->grpc_send_batch(call, m, r->n, finish_status, NULL);
            if (m != one)
                free(m);
        }
    } else { /* an older host: one hand-off per message */
        size_t at = 0;
        for (size_t i = 0; rc == 0 && i < r->n; i++) {
            rc = api->grpc_send(call, r->buf + at, r->lens[i]);
            at += r->lens[i];
        }
        if (rc == 0 && finish_status != RMQ_GRPC_NO_FINISH)
            rc = api->grpc_finish(call, finish_status, NULL);
    }
    free(r->buf);
    free(r->lens);
    memset(r, 0, sizeof *r);
    return rc;
}
