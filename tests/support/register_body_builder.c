/* register_body_builder.c — builds the RegisterBrokerBody texts and zlib
 * bodies every NameServer test sends, so the wire shape lives in one place.
 * Builds bytes only: never sends, never asserts. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "rmq_test_bodies.h"

char *rmq_tb_register_body_json(long long counter, long long timestamp, const char *topics)
{
    size_t ntop = 1;
    for (const char *c = topics; c && *c; c++)
        ntop += *c == ',';
    size_t cap = 4096 + (topics ? strlen(topics) * 2 : 0) + ntop * 220;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t n = (size_t)snprintf(out, cap,
                                "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{"
                                "\"dataVersion\":{\"counter\":%lld,\"timestamp\":%lld},"
                                "\"topicConfigTable\":{",
                                counter, timestamp);
    char *copy = topics ? strdup(topics) : NULL;
    char *save = NULL;
    bool first = true;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
        char name[128];
        int perm = 6, rq = 4, wq = 4, sf = 0;
        sscanf(t, "%127[^:]:%d:%d:%d:%d", name, &perm, &rq, &wq, &sf);
        n += (size_t)snprintf(out + n, cap - n,
                              "%s\"%s\":{\"order\":false,\"perm\":%d,\"readQueueNums\":%d,"
                              "\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":\"%s\","
                              "\"topicSysFlag\":%d,\"writeQueueNums\":%d}",
                              first ? "" : ",", name, perm, rq, name, sf, wq);
        first = false;
    }
    free(copy);
    snprintf(out + n, cap - n, "}}}");
    return out;
}

/* One length-prefixed chunk (4-byte big-endian length, then the bytes). */
static size_t put_chunk(uint8_t *p, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    p[0] = (uint8_t)(n >> 24);
    p[1] = (uint8_t)(n >> 16);
    p[2] = (uint8_t)(n >> 8);
    p[3] = (uint8_t)n;
    memcpy(p + 4, s, n);
    return 4 + n;
}

uint8_t *rmq_tb_compressed_register_body(long long counter, long long timestamp,
                                         const char *const *lines, size_t nlines, size_t *out_len)
{
    size_t cap = 64 + 8 + 16;
    for (size_t i = 0; i < nlines; i++)
        cap += 4 + strlen(lines[i]);
    uint8_t *raw = malloc(cap + 64);
    if (!raw)
        return NULL;
    char dv[96];
    snprintf(dv, sizeof(dv), "{\"counter\":%lld,\"timestamp\":%lld}", counter, timestamp);
    size_t n = put_chunk(raw, dv);
    uint32_t count = (uint32_t)nlines;
    raw[n++] = (uint8_t)(count >> 24);
    raw[n++] = (uint8_t)(count >> 16);
    raw[n++] = (uint8_t)(count >> 8);
    raw[n++] = (uint8_t)count;
    for (size_t i = 0; i < nlines; i++)
        n += put_chunk(raw + n, lines[i]);
    n += put_chunk(raw + n, "[]");
    uLongf zcap = compressBound(n);
    uint8_t *z = malloc(zcap);
    if (!z || compress2(z, &zcap, raw, n, 9) != Z_OK) {
        free(z);
        free(raw);
        return NULL;
    }
    free(raw);
    *out_len = zcap;
    return z;
}

void rmq_tb_body_crc32_text(const void *body, size_t len, char out[16])
{
    snprintf(out, 16, "%lu", crc32(0, (const Bytef *)body, (uInt)len) & 0x7FFFFFFFul);
}
