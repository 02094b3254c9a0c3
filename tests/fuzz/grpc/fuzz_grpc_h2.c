/* fuzz_grpc_h2.c — the entry of every byte a gRPC client sends: the HTTP/2
 * server session (nghttp2 + host/grpc/grpc_h2.c: request checks, message
 * reassembly, answers). Calls are answered from inside the callbacks, as
 * an inline handler does: a message each way and trailers, so the output
 * side (data provider, trailers) runs too. The first input byte chooses
 * whether the client preface is prepended, so mutations reach frames past
 * the preface check. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_h2.h"

typedef struct fz {
    grpc_h2 *h2;
    int calls;
} fz;

static void on_call(void *ud, int32_t id, const grpc_h2_call_info *info)
{
    fz *f = ud;
    f->calls++;
    if (info->path[1] == 'x') /* some calls refused before any message */
        grpc_h2_finish(f->h2, id, 12, "Method not found: x");
}

static void on_message(void *ud, int32_t id, const uint8_t *msg, size_t len)
{
    fz *f = ud;
    grpc_h2_send_message(f->h2, id, msg, len < 64 ? len : 64);
}

static void on_half_close(void *ud, int32_t id)
{
    fz *f = ud;
    grpc_h2_finish(f->h2, id, 0, "done \xff%");
}

static void on_close(void *ud, int32_t id)
{
    (void)ud;
    (void)id;
}

static int sink(void *ud, const uint8_t *data, size_t len)
{
    (void)ud;
    (void)data;
    (void)len;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    static const grpc_h2_callbacks cb = {on_call, on_message, on_half_close, on_close};
    if (size == 0)
        return 0;
    fz f = {0};
    f.h2 = grpc_h2_new(&cb, &f, 4096);
    if (!f.h2)
        return 0;
    bool add_preface = data[0] & 1;
    data++;
    size--;
    int rc = 0;
    if (add_preface)
        rc = grpc_h2_feed(f.h2, (const uint8_t *)preface, sizeof(preface) - 1);
    /* in two pieces: a frame cut between reads */
    size_t cut = size / 2;
    if (rc == 0)
        rc = grpc_h2_feed(f.h2, data, cut);
    if (rc == 0)
        grpc_h2_flush(f.h2, sink, NULL);
    if (rc == 0)
        rc = grpc_h2_feed(f.h2, data + cut, size - cut);
    if (rc == 0)
        grpc_h2_flush(f.h2, sink, NULL);
    (void)grpc_h2_done(f.h2);
    grpc_h2_free(f.h2);
    return 0;
}
