/* register_body.c — owns the encoding of the broker's registration body
 * (JSON and zlib forms) and its checksum. Never sends anything. The body is
 * written topic by topic from a snapshot of the table's structs into one
 * growing buffer (through deflate for the zlib form): a whole-table body of
 * 100,000 topics (15 MB of JSON) used to cost ~120 MB of jansson objects
 * first. */
#include "register_body.h"

#include "json_writer.h"
#include "topic_config_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Raw bytes handed to deflate at a time. */
#define DEFLATE_STAGE (64u * 1024u)

uint32_t bcm_body_crc32(const void *data, size_t len)
{
    uLong c = crc32(0L, Z_NULL, 0);
    c = crc32(c, data, (uInt)len);
    return (uint32_t)(c & 0x7FFFFFFFu);
}

/* 4.9.8 replaces every topic's perm with a broker permission that lacks
 * read or write; -1 = keep each topic's. */
static int perm_override(int broker_perm)
{
    return broker_perm >= 6 && (broker_perm & 6) == 6 ? -1 : broker_perm;
}

static void encode_json(const bcm_topic_snap_entry *v, size_t n, const bcm_data_version *dv,
                        const char *filters, int perm, bcm_buf *out)
{
    bcm_buf_reserve(out, bcm_topic_configs_size_hint(v, n) + strlen(filters));
    bcm_buf_str(out, "{\"filterServerList\":");
    bcm_buf_str(out, filters);
    bcm_buf_str(out, ",\"topicConfigSerializeWrapper\":{\"dataVersion\":");
    bcm_data_version_write(out, dv);
    bcm_buf_str(out, ",\"topicConfigTable\":{");
    for (size_t i = 0; i < n; i++) {
        if (i)
            bcm_buf_char(out, ',');
        bcm_topic_config_write(out, v[i].name, &v[i].cfg, perm);
    }
    bcm_buf_str(out, "}}}");
}

/* Deflates stage into out (Z_NO_FLUSH or Z_FINISH) and empties stage. */
static int deflate_stage(z_stream *z, bcm_buf *stage, bcm_buf *out, int flush)
{
    z->next_in = stage->p;
    z->avail_in = (uInt)stage->n;
    for (;;) {
        if (!bcm_buf_reserve(out, 4096))
            return -1;
        z->next_out = out->p + out->n;
        z->avail_out = (uInt)(out->cap - out->n);
        int rc = deflate(z, flush);
        out->n = (size_t)(z->next_out - out->p);
        if (rc == Z_STREAM_END)
            break;
        if (rc != Z_OK && rc != Z_BUF_ERROR)
            return -1;
        if (flush == Z_NO_FLUSH && z->avail_in == 0)
            break;
    }
    stage->n = 0;
    return 0;
}

/* RegisterBrokerBody.encode(true) of 4.9.8: DataVersion JSON, the topic
 * count, one "name read write perm filterType" line per topic and the
 * filter-server list, each prefixed by its length, deflated at level 9. */
static int encode_compressed(const bcm_topic_snap_entry *v, size_t n, const bcm_data_version *dv,
                             const char *filters, int perm, bcm_buf *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit(&z, 9) != Z_OK)
        return -1;
    bcm_buf stage = {0}, dvs = {0};
    bcm_data_version_write(&dvs, dv);
    bcm_buf_be32(&stage, (uint32_t)dvs.n);
    bcm_buf_add(&stage, dvs.p, dvs.n);
    bcm_buf_free(&dvs);
    bcm_buf_be32(&stage, (uint32_t)n);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const bcm_topic_cfg *c = &v[i].cfg;
        char line[512];
        int k = snprintf(line, sizeof line, "%s %d %d %d %s", v[i].name, (int)c->read_queue_nums,
                         (int)c->write_queue_nums, perm >= 0 ? perm : (int)c->perm,
                         c->topic_filter_type == 1 ? "MULTI_TAG" : "SINGLE_TAG");
        size_t len = k < 0 ? 0 : (size_t)k < sizeof line ? (size_t)k : sizeof line - 1;
        bcm_buf_be32(&stage, (uint32_t)len);
        bcm_buf_add(&stage, line, len);
        if (stage.n >= DEFLATE_STAGE)
            rc = stage.oom ? -1 : deflate_stage(&z, &stage, out, Z_NO_FLUSH);
    }
    size_t fl = strlen(filters);
    bcm_buf_be32(&stage, (uint32_t)fl);
    bcm_buf_add(&stage, filters, fl);
    if (rc == 0)
        rc = stage.oom ? -1 : deflate_stage(&z, &stage, out, Z_FINISH);
    deflateEnd(&z);
    bcm_buf_free(&stage);
    return rc == 0 && !out->oom ? 0 : -1;
}

int bcm_register_bodies(bcm_topic_snapshot *s, const json_t *filter_servers, int broker_perm,
                        bool compressed, size_t chunk_topics, bcm_body **out)
{
    bcm_topic_snapshot_sort(s);
    size_t total = s->n;
    size_t n = (chunk_topics == 0 || total <= chunk_topics)
                   ? 1
                   : (total + chunk_topics - 1) / chunk_topics;
    size_t per = n == 1 ? total : chunk_topics;
    char *filters = filter_servers ? json_dumps(filter_servers, JSON_COMPACT) : NULL;
    bcm_body *bodies = calloc(n, sizeof *bodies);
    if (!bodies || (filter_servers && !filters)) {
        free(filters);
        free(bodies);
        return -1;
    }
    int perm = perm_override(broker_perm);
    for (size_t k = 0; k < n; k++) {
        size_t first = k * per, cnt = total - first < per ? total - first : per;
        bcm_buf b = {0};
        int rc = 0;
        if (compressed)
            rc = encode_compressed(s->v + first, cnt, &s->dv, filters ? filters : "[]", perm, &b);
        else
            encode_json(s->v + first, cnt, &s->dv, filters ? filters : "[]", perm, &b);
        if (rc != 0 || b.oom) {
            bcm_buf_free(&b);
            bcm_bodies_free(bodies, (int)k);
            free(filters);
            return -1;
        }
        bodies[k] = (bcm_body){.data = b.p, .len = b.n, .compressed = compressed};
    }
    free(filters);
    *out = bodies;
    return (int)n;
}

void bcm_bodies_free(bcm_body *bodies, int n)
{
    for (int i = 0; i < n; i++)
        free(bodies[i].data);
    free(bodies);
}
