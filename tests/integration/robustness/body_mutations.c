/* body_mutations.c — builds hostile request bodies for the request fuzz test
 * from a seeded PRNG (deterministic). Owns only the buffers it returns;
 * knows nothing of codes, sockets or the daemon. */
#include "body_mutations.h"

#include "rmq_test_bodies.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static fuzz_body make(uint8_t *data, size_t len, const char *label)
{
    fuzz_body b = {data, data ? len : 0, label};
    return b;
}

static fuzz_body dup_text(const char *s, const char *label)
{
    size_t n = strlen(s);
    uint8_t *d = malloc(n ? n : 1);
    if (d)
        memcpy(d, s, n);
    return make(d, n, label);
}

static void fill_random(fuzz_rng *r, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)fuzz_rng_next(r);
}

fuzz_body fuzz_body_random(fuzz_rng *r)
{
    size_t n = 1 + fuzz_rng_below(r, fuzz_rng_chance(r, 80) ? 256 : 16384);
    uint8_t *d = malloc(n);
    if (d)
        fill_random(r, d, n);
    return make(d, n, "body-random");
}

fuzz_body fuzz_body_truncated(fuzz_rng *r, const uint8_t *orig, size_t len)
{
    if (len < 2)
        return fuzz_body_random(r);
    size_t n = 1 + fuzz_rng_below(r, len - 1);
    uint8_t *d = malloc(n);
    if (d)
        memcpy(d, orig, n);
    return make(d, n, "body-truncated");
}

fuzz_body fuzz_body_flipped(fuzz_rng *r, const uint8_t *orig, size_t len)
{
    if (len == 0)
        return fuzz_body_random(r);
    uint8_t *d = malloc(len);
    if (!d)
        return make(NULL, 0, "body-flipped");
    memcpy(d, orig, len);
    size_t flips = 1 + fuzz_rng_below(r, 8);
    for (size_t i = 0; i < flips; i++)
        d[fuzz_rng_below(r, len)] ^= (uint8_t)(1u << fuzz_rng_below(r, 8));
    return make(d, len, "body-flipped");
}

fuzz_body fuzz_body_huge(fuzz_rng *r)
{
    size_t n = 64 * 1024 + fuzz_rng_below(r, FUZZ_HUGE_BODY_MAX - 64 * 1024);
    uint8_t *d = malloc(n);
    if (!d)
        return make(NULL, 0, "body-huge");
    switch (fuzz_rng_below(r, 4)) {
    case 0: fill_random(r, d, n); return make(d, n, "body-huge-random");
    case 1: /* one giant JSON string value */
        memset(d, 'x', n);
        memcpy(d, "{\"a\":\"", 6);
        memcpy(d + n - 2, "\"}", 2);
        return make(d, n, "body-huge-string");
    case 2: /* a giant array of small numbers */
        d[0] = '[';
        for (size_t i = 1; i + 1 < n; i++)
            d[i] = (i % 2) ? '1' : ',';
        d[n - 2] = '1';
        d[n - 1] = ']';
        return make(d, n, "body-huge-array");
    default: /* valid prefix, never closed */
        memset(d, ' ', n);
        memcpy(d, "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{", 52);
        return make(d, n, "body-huge-unclosed");
    }
}

fuzz_body fuzz_body_wrong_shape(fuzz_rng *r)
{
    static const char *const shapes[] = {
        "[]",
        "{}",
        "null",
        "true",
        "123",
        "-1",
        "1e999",
        "\"text\"",
        "[{}]",
        "{\"a\":",
        "{\"a\":1,}",
        "{'single':'quotes'}",
        "{\"topicConfigSerializeWrapper\":[]}",
        "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":[],\"dataVersion\":\"x\"}}",
        "{\"consumerDataSet\":{},\"producerDataSet\":\"x\",\"clientID\":1}",
        "{\"mqSet\":{\"topic\":1},\"consumerGroup\":[]}",
        "{\"subscriptionData\":[],\"clientId\":{}}",
        "{\"queueDatas\":{},\"brokerDatas\":7}",
        "{\"counter\":\"x\",\"timestamp\":[]}",
        "{\"groupName\":null,\"retryQueueNums\":\"many\"}",
        "{0:\"fastjson-native key\"}",
        "\xef\xbb\xbf{}",
        "{\"a\":\"\\ud800\"}",
        "{\"a\":\"\\u0000\"}",
        "=\n==\nkey\n\\u12\n",
        "",
    };
    size_t i = fuzz_rng_below(r, sizeof shapes / sizeof shapes[0]);
    return dup_text(shapes[i], "body-wrong-shape");
}

static json_t *random_value(fuzz_rng *r)
{
    switch (fuzz_rng_below(r, 9)) {
    case 0: return json_null();
    case 1: return json_true();
    case 2: return json_string("");
    case 3: return json_integer(-1);
    case 4: return json_integer(INT64_MAX);
    case 5: return json_real(1.5e300);
    case 6: return json_array();
    case 7: return json_object();
    default: return json_string("not-a-number");
    }
}

/* Collect every value slot (object member or array item) depth-first. */
typedef struct slot {
    json_t *parent;
    const char *key; /* NULL: array index */
    size_t index;
} slot;

static void collect(json_t *v, slot *s, size_t *n, size_t cap)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *m;
        json_object_foreach(v, k, m)
        {
            if (*n < cap)
                s[(*n)++] = (slot){v, k, 0};
            collect(m, s, n, cap);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (*n < cap)
                s[(*n)++] = (slot){v, NULL, i};
            collect(json_array_get(v, i), s, n, cap);
        }
    }
}

fuzz_body fuzz_body_retyped_json(fuzz_rng *r, const uint8_t *orig, size_t len)
{
    json_t *root = orig ? json_loadb((const char *)orig, len, 0, NULL) : NULL;
    if (!root)
        return fuzz_body_wrong_shape(r);
    slot slots[256];
    size_t n = 0;
    collect(root, slots, &n, 256);
    size_t changes = 1 + fuzz_rng_below(r, 3);
    for (size_t c = 0; c < changes && n > 0; c++) {
        /* later slots may sit inside a replaced value: only touch one slot
         * per pass and re-collect */
        slot s = slots[fuzz_rng_below(r, n)];
        if (s.key)
            json_object_set_new(s.parent, s.key, random_value(r));
        else
            json_array_set_new(s.parent, s.index, random_value(r));
        n = 0;
        collect(root, slots, &n, 256);
    }
    char *text = json_dumps(root, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(root);
    fuzz_body b = make((uint8_t *)text, text ? strlen(text) : 0, "body-retyped-json");
    return b;
}

fuzz_body fuzz_body_deep_nesting(fuzz_rng *r)
{
    size_t depth = 1000 + fuzz_rng_below(r, 200000);
    bool objects = fuzz_rng_chance(r, 50);
    size_t unit = objects ? 5 : 1; /* {"a": or [ */
    size_t n = depth * unit + (fuzz_rng_chance(r, 50) ? depth : 0);
    uint8_t *d = malloc(n ? n : 1);
    if (!d)
        return make(NULL, 0, "body-deep-nesting");
    size_t at = 0;
    for (size_t i = 0; i < depth; i++) {
        if (objects) {
            memcpy(d + at, "{\"a\":", 5);
            at += 5;
        } else {
            d[at++] = '[';
        }
    }
    while (at < n)
        d[at++] = objects ? '}' : ']';
    return make(d, n, objects ? "body-deep-objects" : "body-deep-arrays");
}

static fuzz_body deflate_bytes(const uint8_t *src, size_t len, size_t keep_percent,
                               const char *label)
{
    uLongf cap = compressBound((uLong)len);
    uint8_t *d = malloc(cap ? cap : 1);
    if (!d || compress2(d, &cap, src, (uLong)len, Z_BEST_SPEED) != Z_OK) {
        free(d);
        return make(NULL, 0, label);
    }
    size_t n = (size_t)cap * keep_percent / 100;
    return make(d, n ? n : 1, label);
}

/* A valid 4.9.8 compressed RegisterBrokerBody, inflated, damaged where its
 * length-prefixed chunks and counts live, and deflated again: the stream is
 * fine, its content is not. */
static fuzz_body deflate_structured(fuzz_rng *r)
{
    static const char *const lines[] = {
        "FuzzTopic 4 4 6 SINGLE_TAG", "%RETRY%FuzzGroup 1 1 6 SINGLE_TAG", "Other 8 8 7 MULTI_TAG"};
    size_t zlen = 0;
    uint8_t *z = rmq_tb_compressed_register_body(1, 1700000000000LL, lines, 3, &zlen);
    uLongf rawlen = 64 * 1024;
    uint8_t *raw = malloc(rawlen);
    if (!z || !raw || uncompress(raw, &rawlen, z, (uLong)zlen) != Z_OK || rawlen < 8) {
        free(z);
        free(raw);
        return make(NULL, 0, "deflate-structured");
    }
    free(z);
    static const uint32_t lengths[] = {0x7fffffffu, 0xffffffffu, 0x80000000u, 0, 1, 0x10000u};
    size_t edits = 1 + fuzz_rng_below(r, 3);
    for (size_t i = 0; i < edits; i++) {
        size_t at = fuzz_rng_below(r, rawlen - 3);
        if (fuzz_rng_chance(r, 60)) {
            uint32_t v = lengths[fuzz_rng_below(r, sizeof lengths / sizeof lengths[0])];
            raw[at] = (uint8_t)(v >> 24);
            raw[at + 1] = (uint8_t)(v >> 16);
            raw[at + 2] = (uint8_t)(v >> 8);
            raw[at + 3] = (uint8_t)v;
        } else {
            raw[at] = (uint8_t)fuzz_rng_next(r);
        }
    }
    if (fuzz_rng_chance(r, 30))
        rawlen = 1 + fuzz_rng_below(r, rawlen);
    fuzz_body b = deflate_bytes(raw, rawlen, 100, "deflate-structured");
    free(raw);
    return b;
}

fuzz_body fuzz_body_deflate_garbage(fuzz_rng *r, const uint8_t *orig, size_t len)
{
    if (fuzz_rng_chance(r, 30))
        return deflate_structured(r);
    size_t pick = fuzz_rng_below(r, 25);
    /* a bomb is slow to build and inflate (under ASan too): keep it rare */
    switch (pick == 24 ? 5 : pick % 5) {
    case 0: {
        fuzz_body b = fuzz_body_random(r);
        b.label = "deflate-not-zlib";
        return b;
    }
    case 1: { /* a valid zlib stream of random bytes */
        uint8_t raw[512];
        fill_random(r, raw, sizeof raw);
        return deflate_bytes(raw, sizeof raw, 100, "deflate-of-random");
    }
    case 2: { /* valid zlib stream of JSON of the wrong shape */
        fuzz_body w = fuzz_body_wrong_shape(r);
        fuzz_body b = deflate_bytes(w.data ? w.data : (const uint8_t *)"", w.len, 100,
                                    "deflate-of-wrong-shape");
        free(w.data);
        return b;
    }
    case 3: /* truncated deflate of the original */
        if (orig && len > 0)
            return deflate_bytes(orig, len, 10 + fuzz_rng_below(r, 80), "deflate-truncated");
        return deflate_bytes((const uint8_t *)"{}", 2, 50, "deflate-truncated");
    case 4: { /* zlib header, garbage after it */
        uint8_t *d = malloc(64);
        if (!d)
            return make(NULL, 0, "deflate-bad-stream");
        fill_random(r, d, 64);
        d[0] = 0x78;
        d[1] = 0x9c;
        return make(d, 64, "deflate-bad-stream");
    }
    default: { /* bomb: 32..64 MB of one byte */
        size_t n = (32u + fuzz_rng_below(r, 32)) * 1024u * 1024u;
        uint8_t *raw = malloc(n);
        if (!raw)
            return make(NULL, 0, "deflate-bomb");
        memset(raw, fuzz_rng_chance(r, 50) ? ' ' : '[', n);
        fuzz_body b = deflate_bytes(raw, n, 100, "deflate-bomb");
        free(raw);
        return b;
    }
    }
}
