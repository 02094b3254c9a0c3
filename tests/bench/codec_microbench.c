/* codec_microbench.c — ns/op of the remoting codec's hot path: decoding a
 * recorded GET_ROUTEINFO request and encoding responses as the host does.
 * Prints figures only; it never decides pass/fail and touches no network. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "remoting_command.h"

#ifndef RMQ_BENCH_VECTORS_DIR
#define RMQ_BENCH_VECTORS_DIR "."
#endif

typedef struct bench_ctx {
    uint8_t *frame;
    size_t frame_len;
    rmq_cmd *request;  /* decoded once, re-encoded by the request case */
    rmq_cmd *response; /* code 0, 300-byte body, as the daemon answers */
    uint8_t *out;
    size_t out_cap;
    uint64_t sink;    /* keeps the compiler from dropping the work */
    const char *only; /* run only cases whose name contains this */
} bench_ctx;

typedef int (*bench_fn)(bench_ctx *ctx);

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int load_file(const char *path, uint8_t **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    uint8_t *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, 1 << 20, f) : 0;
    fclose(f);
    if (!buf || n == 0) {
        free(buf);
        return -1;
    }
    *data = buf;
    *len = n;
    return 0;
}

static int bench_decode(bench_ctx *ctx)
{
    rmq_cmd *c = rmq_cmd_decode(ctx->frame, ctx->frame_len, NULL, 0);
    if (!c)
        return -1;
    ctx->sink += (uint64_t)c->code + c->ext_count;
    rmq_cmd_free(c);
    return 0;
}

/* What connection.c does today: exact size, then encode. */
static int encode_sized(bench_ctx *ctx, const rmq_cmd *cmd)
{
    size_t need = rmq_cmd_encoded_size(cmd);
    if (need == 0 || need > ctx->out_cap)
        return -1;
    size_t n = rmq_cmd_encode(cmd, ctx->out, need);
    ctx->sink += n + ctx->out[n - 1];
    return n == need ? 0 : -1;
}

static int bench_encode_response(bench_ctx *ctx)
{
    return encode_sized(ctx, ctx->response);
}

static int bench_encode_request(bench_ctx *ctx)
{
    return encode_sized(ctx, ctx->request);
}

/* The one-pass path: a cheap bound, then encode into that room. */
static int encode_bounded(bench_ctx *ctx, const rmq_cmd *cmd)
{
    size_t room = rmq_cmd_encoded_size_bound(cmd);
    if (room == 0 || room > ctx->out_cap)
        return -1;
    size_t n = rmq_cmd_encode(cmd, ctx->out, room);
    ctx->sink += n + ctx->out[n - 1];
    return n ? 0 : -1;
}

static int bench_encode_response_bound(bench_ctx *ctx)
{
    return encode_bounded(ctx, ctx->response);
}

static int bench_encode_request_bound(bench_ctx *ctx)
{
    return encode_bounded(ctx, ctx->request);
}

static int run(bench_ctx *ctx, const char *name, bench_fn fn, long iters)
{
    if (ctx->only && !strstr(name, ctx->only))
        return 0;
    for (long i = 0; i < iters / 20 + 1; i++) /* warm caches and branch predictors */
        if (fn(ctx) != 0) {
            fprintf(stderr, "%s: operation failed\n", name);
            return -1;
        }
    double best = 0;
    for (int round = 0; round < 3; round++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++)
            if (fn(ctx) != 0) {
                fprintf(stderr, "%s: operation failed\n", name);
                return -1;
            }
        double per = (now_ns() - t0) / (double)iters;
        if (round == 0 || per < best)
            best = per;
    }
    printf("%-28s %8.1f ns/op  (best of 3 x %ld)\n", name, best, iters);
    return 0;
}

int main(int argc, char **argv)
{
    long iters = 2000000;
    const char *vector = RMQ_BENCH_VECTORS_DIR "/105-get-routeinfo.req.bin";
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
            iters = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--vector") == 0 && i + 1 < argc)
            vector = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--iterations N] [--vector FILE] [--only NAME-PART]\n",
                    argv[0]);
            return 2;
        }
    }
    if (iters <= 0)
        iters = 1;
    bench_ctx ctx = {0};
    ctx.only = only;
    if (load_file(vector, &ctx.frame, &ctx.frame_len) != 0) {
        fprintf(stderr, "cannot read %s\n", vector);
        return 1;
    }
    ctx.request = rmq_cmd_decode(ctx.frame, ctx.frame_len, NULL, 0);
    ctx.response = ctx.request ? rmq_cmd_new_response(ctx.request, 0, NULL) : NULL;
    uint8_t body[300];
    for (size_t i = 0; i < sizeof body; i++)
        body[i] = (uint8_t)('a' + i % 26);
    ctx.out_cap = 64 * 1024;
    ctx.out = malloc(ctx.out_cap);
    if (!ctx.response || !ctx.out ||
        rmq_cmd_set_body(ctx.response, body, sizeof body, NULL, NULL) != 0) {
        fprintf(stderr, "cannot set up the commands\n");
        return 1;
    }
    ctx.request->opaque = 123456; /* a realistic multi-digit opaque */
    ctx.response->opaque = 123456;
    printf("vector %s (%zu bytes)\n", vector, ctx.frame_len);
    int rc = 0;
    rc |= run(&ctx, "decode 105 request", bench_decode, iters);
    rc |= run(&ctx, "size+encode response(300B)", bench_encode_response, iters);
    rc |= run(&ctx, "size+encode request", bench_encode_request, iters);
    rc |= run(&ctx, "bound+encode response(300B)", bench_encode_response_bound, iters);
    rc |= run(&ctx, "bound+encode request", bench_encode_request_bound, iters);
    printf("sink %" PRIu64 "\n", ctx.sink);
    rmq_cmd_free(ctx.request);
    rmq_cmd_free(ctx.response);
    free(ctx.out);
    free(ctx.frame);
    return rc ? 1 : 0;
}
