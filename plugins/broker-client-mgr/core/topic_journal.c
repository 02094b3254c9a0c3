/* topic_journal.c — owns the topics.journal record format: encoding one
 * change and replaying a journal's intact prefix onto a topic table. */
#include "topic_journal.h"

#include "json_writer.h"
#include "topic_config_json.h"
#include "topics_json_reader.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CRC_HEX 8

/* The record written straight into the journal buffer: building it as a
 * jansson tree and dumping it cost an object per field, a sorted key array
 * per object and a copy of the text for every topic created or deleted.
 * The bytes are what json_dumps(JSON_COMPACT | JSON_SORT_KEYS) wrote from
 * that tree (test_topic_journal_writer.c compares them): "del" < "dv" <
 * "put". The 8 hex digits are filled in once the JSON is there. */
int bcm_topic_journal_note(const bcm_topic_table *t, const char *name, char **buf, size_t *len,
                           size_t *cap)
{
    size_t name_len = strlen(name);
    if (!bcm_utf8_valid(name, name_len))
        return -1; /* jansson refused such a name: no record */
    const bcm_topic_cfg *cfg = str_map_get(&t->cfgs, name);
    bcm_buf b = {.p = (unsigned char *)*buf, .n = *len, .cap = *cap};
    size_t head = b.n;
    bcm_buf_reserve(&b, CRC_HEX + 1 + 2 * name_len + 200);
    bcm_buf_add(&b, "00000000 {", CRC_HEX + 2);
    if (!cfg) {
        bcm_buf_str(&b, "\"del\":");
        bcm_json_string(&b, name, name_len);
        bcm_buf_char(&b, ',');
    }
    bcm_buf_str(&b, "\"dv\":[");
    bcm_buf_i64(&b, t->dv.counter);
    bcm_buf_char(&b, ',');
    bcm_buf_i64(&b, t->dv.timestamp);
    bcm_buf_char(&b, ']');
    if (cfg) {
        bcm_buf_str(&b, ",\"put\":");
        bcm_topic_config_object_write(&b, name, name_len, cfg, -1);
    }
    bcm_buf_char(&b, '}');
    size_t json_end = b.n;
    bcm_buf_add(&b, "\n", 2); /* the record's end, and a NUL after it */
    /* the buffer may have moved even when an append failed */
    *buf = (char *)b.p;
    *cap = b.cap;
    if (b.oom) {
        if (*buf)
            (*buf)[*len] = '\0';
        return -1;
    }
    const char *js = *buf + head + CRC_HEX + 1;
    uint32_t crc = (uint32_t)crc32(0L, (const Bytef *)js, (uInt)(json_end - head - CRC_HEX - 1));
    for (int i = CRC_HEX - 1; i >= 0; i--, crc >>= 4) /* "%08lx" */
        (*buf)[head + (size_t)i] = "0123456789abcdef"[crc & 0xF];
    *len = json_end + 1;
    return 0;
}

/* One intact record at p (up to its '\n') into *rec: 0, or -1. */
static int parse_record(const char *p, size_t n, bcm_journal_rec *rec)
{
    if (n < CRC_HEX + 2 || p[CRC_HEX] != ' ')
        return -1;
    char hex[CRC_HEX + 1];
    memcpy(hex, p, CRC_HEX);
    hex[CRC_HEX] = '\0';
    char *end = NULL;
    unsigned long want = strtoul(hex, &end, 16);
    if (!end || *end)
        return -1;
    const char *js = p + CRC_HEX + 1;
    size_t jl = n - CRC_HEX - 1;
    if (crc32(0L, (const Bytef *)js, (uInt)jl) != want)
        return -1;
    /* read straight into a struct (topics_json_reader.c): a jansson tree
     * per record made a journal of 100,000 creations take 0.4 s */
    return bcm_journal_rec_read(js, jl, rec);
}

static void apply(bcm_topic_table *t, const bcm_journal_rec *rec)
{
    if (rec->put) {
        if (rec->put_ok)
            bcm_topic_table_put_cfg(t, rec->name, &rec->cfg, 0);
    } else {
        bcm_topic_table_delete(t, rec->name, 0);
    }
    t->dv = rec->dv;
}

void bcm_topic_journal_replay(bcm_topic_table *t, const char *text, size_t len,
                              bcm_journal_replay *out)
{
    memset(out, 0, sizeof *out);
    int64_t base = t->dv.counter;
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        if (!nl)
            break;
        size_t n = (size_t)(nl - (text + pos));
        bcm_journal_rec rec;
        if (parse_record(text + pos, n, &rec) != 0)
            break;
        out->records++;
        if (rec.dv.counter > base) {
            apply(t, &rec);
            out->applied++;
        }
        bcm_journal_rec_free(&rec);
        pos += n + 1;
    }
    out->valid_len = pos;
    out->torn = pos < len;
}
