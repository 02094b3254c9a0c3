/* fuzz_frame_decoder.c — libFuzzer harness for the remoting codec: frames
 * the input as a byte stream and as bare JSON/binary headers, decodes, and
 * checks that encode/decode reaches a fixed point in both serializations and
 * that the in-place decode the daemon uses agrees with the copying one.
 * Aborts on any broken property; never trusts a length it did not check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remoting_command.h"

#define FUZZ_MAX_FRAME (1u << 20)

static void die(const char *what, const uint8_t *frame, size_t len)
{
    fprintf(stderr, "codec fuzz property broken: %s (frame of %zu bytes)\n", what, len);
    (void)frame;
    abort();
}

static uint8_t *encode_or_null(const rmq_cmd *c, size_t *len)
{
    size_t n = rmq_cmd_encoded_size(c);
    if (n == 0)
        return NULL; /* e.g. a code outside int16 in the binary form */
    uint8_t *buf = malloc(n);
    if (!buf)
        abort();
    if (rmq_cmd_encode(c, buf, n) != n)
        die("encode disagrees with encoded_size", buf, n);
    if (rmq_cmd_encode_header(c, buf, n) != n - c->body_len)
        die("encode_header disagrees with encoded_size", buf, n);
    *len = n;
    return buf;
}

static rmq_cmd *decode_own(const uint8_t *buf, size_t len)
{
    size_t total = 0;
    const char *reason = NULL;
    if (rmq_frame_check(buf, len, SIZE_MAX, &total, &reason) != RMQ_FRAME_READY || total != len)
        die("own frame fails frame check", buf, len);
    char err[160];
    rmq_cmd *d = rmq_cmd_decode(buf, len, err, sizeof err);
    if (!d) {
        fprintf(stderr, "own frame rejected: %s\n", err);
        die("own frame does not decode", buf, len);
    }
    return d;
}

static void same_scalars(const rmq_cmd *a, const rmq_cmd *b, uint8_t type, const uint8_t *f,
                         size_t n)
{
    if (a->code != b->code || a->flag != b->flag || a->opaque != b->opaque ||
        a->version != b->version || a->body_len != b->body_len)
        die("scalar field changed in a round trip", f, n);
    if (a->body_len && memcmp(a->body, b->body, a->body_len) != 0)
        die("body changed in a round trip", f, n);
    /* JSON carries names: a byte without one comes back as OTHER */
    int32_t want = a->language;
    if (type == RMQ_SERIALIZE_JSON && (want < 0 || want > 13))
        want = 7;
    if (b->language != want)
        die("language changed in a round trip", f, n);
    for (uint32_t i = 0; i < a->ext_count; i++) {
        const rmq_ext_field *e = &a->ext[i];
        if (!e->value || (type == RMQ_SERIALIZE_ROCKETMQ && (!e->value[0] || !e->key[0])))
            continue; /* forms that cannot carry these drop them */
        const char *v = rmq_cmd_ext_get(b, e->key);
        if (!v || strcmp(v, e->value) != 0)
            die("ext value lost in a round trip", f, n);
    }
}

static void round_trip(rmq_cmd *c)
{
    uint8_t original = c->serialize_type;
    for (uint8_t type = 0; type <= 1; type++) {
        c->serialize_type = type;
        size_t n1, n2, n3;
        uint8_t *e1 = encode_or_null(c, &n1);
        if (!e1)
            continue;
        rmq_cmd *d1 = decode_own(e1, n1);
        same_scalars(c, d1, type, e1, n1);
        /* one trip normalises (null values, empty strings); after that the
         * bytes must be stable */
        uint8_t *e2 = encode_or_null(d1, &n2);
        if (!e2)
            die("decoded command cannot be re-encoded", e1, n1);
        rmq_cmd *d2 = decode_own(e2, n2);
        uint8_t *e3 = encode_or_null(d2, &n3);
        if (!e3 || n3 != n2 || memcmp(e2, e3, n2) != 0)
            die("encode/decode does not reach a fixed point", e2, n2);
        free(e3);
        rmq_cmd_free(d2);
        free(e2);
        rmq_cmd_free(d1);
        free(e1);
    }
    c->serialize_type = original;
}

static void decode_frame(const uint8_t *f, size_t n)
{
    char err[160];
    err[0] = '\0';
    rmq_cmd *c = rmq_cmd_decode(f, n, err, sizeof err);
    if (!c) {
        if (err[0] == '\0')
            die("decode failed without a reason", f, n);
        return;
    }
    /* the daemon decodes in place: the same command, its body still in f
     * until it is owned */
    rmq_cmd *p = rmq_cmd_decode_in_place(f, n, NULL, 0);
    if (!p)
        die("in-place decode refuses a frame decode accepts", f, n);
    if (p->body_len && (p->body < f || p->body_len > n || p->body + p->body_len != f + n))
        die("in-place body is not the end of the frame", f, n);
    same_scalars(c, p, c->serialize_type, f, n);
    if (rmq_cmd_own_body(p) != 0)
        abort();
    if (p->body_in_frame || (p->body_len && p->body >= f && p->body < f + n))
        die("owned body still points into the frame", f, n);
    same_scalars(c, p, c->serialize_type, f, n);
    rmq_cmd_free(p);
    round_trip(c);
    rmq_cmd_free(c);
}

static void as_header(uint8_t type, const uint8_t *data, size_t size)
{
    if (size > 0x00FFFFFFu)
        return;
    uint8_t *f = malloc(size + 8);
    if (!f)
        abort();
    uint32_t length = (uint32_t)size + 4, word = ((uint32_t)type << 24) | (uint32_t)size;
    for (int i = 0; i < 4; i++) {
        f[i] = (uint8_t)(length >> (24 - 8 * i));
        f[4 + i] = (uint8_t)(word >> (24 - 8 * i));
    }
    if (size)
        memcpy(f + 8, data, size);
    decode_frame(f, size + 8);
    free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* 1: the input as a receive stream of frames */
    size_t off = 0;
    while (off < size) {
        size_t total = 0;
        const char *reason = NULL;
        rmq_frame_status st =
            rmq_frame_check(data + off, size - off, FUZZ_MAX_FRAME, &total, &reason);
        if (st == RMQ_FRAME_INVALID && !reason)
            die("invalid frame without a reason", data + off, size - off);
        if (st != RMQ_FRAME_READY)
            break;
        if (total < 8 || total > size - off)
            die("frame check reported an impossible total", data + off, size - off);
        decode_frame(data + off, total);
        off += total;
    }
    /* 2: the input as a bare header of either form, so the header parsers
     * are reached without the fuzzer having to guess length prefixes */
    as_header(RMQ_SERIALIZE_JSON, data, size);
    as_header(RMQ_SERIALIZE_ROCKETMQ, data, size);
    return 0;
}
