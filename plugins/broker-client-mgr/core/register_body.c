/* register_body.c — owns the encoding of the broker's registration body
 * (JSON and zlib forms) and its checksum. Never sends anything. */
#include "register_body.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

uint32_t bcm_body_crc32(const void *data, size_t len)
{
    uLong c = crc32(0L, Z_NULL, 0);
    c = crc32(c, data, (uInt)len);
    return (uint32_t)(c & 0x7FFFFFFFu);
}

static json_t *effective_topics(const json_t *topics, int broker_perm)
{
    if (broker_perm >= 6 && (broker_perm & 6) == 6)
        return json_incref((json_t *)topics);
    json_t *copy = json_deep_copy(topics);
    const char *k;
    json_t *v;
    json_object_foreach(copy, k, v) json_object_set_new(v, "perm", json_integer(broker_perm));
    return copy;
}

typedef struct bytes {
    unsigned char *p;
    size_t n, cap;
    bool oom;
} bytes;

static void b_add(bytes *b, const void *d, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 1024;
        while (nc < b->n + n)
            nc *= 2;
        unsigned char *p = realloc(b->p, nc);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = nc;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void b_int(bytes *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 8), (unsigned char)v};
    b_add(b, x, 4);
}

static void b_lenstr(bytes *b, const char *s)
{
    size_t n = strlen(s);
    b_int(b, (uint32_t)n);
    b_add(b, s, n);
}

static int encode_compressed(const json_t *topics, const bcm_data_version *dv,
                             const json_t *filters, bcm_body *out)
{
    bytes raw = {0};
    json_t *dvj = bcm_data_version_json(dv);
    char *dvs = json_dumps(dvj, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(dvj);
    if (!dvs)
        return -1;
    b_lenstr(&raw, dvs);
    free(dvs);
    b_int(&raw, (uint32_t)json_object_size(topics));
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)topics, k, v)
    {
        char line[1024];
        snprintf(line, sizeof line, "%s %lld %lld %lld %s", k,
                 (long long)json_integer_value(json_object_get(v, "readQueueNums")),
                 (long long)json_integer_value(json_object_get(v, "writeQueueNums")),
                 (long long)json_integer_value(json_object_get(v, "perm")),
                 json_string_value(json_object_get(v, "topicFilterType"))
                     ? json_string_value(json_object_get(v, "topicFilterType"))
                     : "SINGLE_TAG");
        b_lenstr(&raw, line);
    }
    char *fs = json_dumps(filters, JSON_COMPACT);
    b_lenstr(&raw, fs ? fs : "[]");
    free(fs);
    if (raw.oom) {
        free(raw.p);
        return -1;
    }
    uLongf cap = compressBound(raw.n);
    out->data = malloc(cap);
    if (!out->data || compress2(out->data, &cap, raw.p, raw.n, 9) != Z_OK) {
        free(raw.p);
        free(out->data);
        out->data = NULL;
        return -1;
    }
    free(raw.p);
    out->len = cap;
    return 0;
}

int bcm_register_body_encode(const json_t *topics, const bcm_data_version *dv,
                             const json_t *filter_servers, int broker_perm, bool compressed,
                             bcm_body *out)
{
    memset(out, 0, sizeof *out);
    json_t *filters = filter_servers ? json_incref((json_t *)filter_servers) : json_array();
    json_t *eff = effective_topics(topics, broker_perm);
    int rc = -1;
    if (compressed) {
        rc = encode_compressed(eff, dv, filters, out);
    } else {
        json_t *root =
            json_pack("{sO s{so sO}}", "filterServerList", filters, "topicConfigSerializeWrapper",
                      "dataVersion", bcm_data_version_json(dv), "topicConfigTable", eff);
        char *s = root ? json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref(root);
        if (s) {
            out->data = (unsigned char *)s;
            out->len = strlen(s);
            rc = 0;
        }
    }
    json_decref(eff);
    json_decref(filters);
    out->compressed = compressed;
    return rc;
}

int bcm_register_bodies(const json_t *topics, const bcm_data_version *dv,
                        const json_t *filter_servers, int broker_perm, bool compressed,
                        size_t chunk_topics, bcm_body **out)
{
    size_t total = json_object_size(topics);
    size_t n = (chunk_topics == 0 || total <= chunk_topics)
                   ? 1
                   : (total + chunk_topics - 1) / chunk_topics;
    bcm_body *bodies = calloc(n, sizeof *bodies);
    if (!bodies)
        return -1;
    if (n == 1) {
        if (bcm_register_body_encode(topics, dv, filter_servers, broker_perm, compressed,
                                     &bodies[0]) != 0) {
            free(bodies);
            return -1;
        }
        *out = bodies;
        return 1;
    }
    json_t *chunk = json_object();
    size_t idx = 0, in_chunk = 0;
    const char *k;
    json_t *v;
    int rc = 0;
    json_object_foreach((json_t *)topics, k, v)
    {
        json_object_set(chunk, k, v);
        if (++in_chunk == chunk_topics) {
            rc |= bcm_register_body_encode(chunk, dv, filter_servers, broker_perm, compressed,
                                           &bodies[idx++]);
            json_object_clear(chunk);
            in_chunk = 0;
        }
    }
    if (in_chunk)
        rc |= bcm_register_body_encode(chunk, dv, filter_servers, broker_perm, compressed,
                                       &bodies[idx++]);
    json_decref(chunk);
    if (rc != 0) {
        bcm_bodies_free(bodies, (int)n);
        return -1;
    }
    *out = bodies;
    return (int)n;
}

void bcm_bodies_free(bcm_body *bodies, int n)
{
    for (int i = 0; i < n; i++)
        free(bodies[i].data);
    free(bodies);
}
