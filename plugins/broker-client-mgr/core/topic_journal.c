/* topic_journal.c — owns the topics.journal record format: encoding one
 * change and replaying a journal's intact prefix onto a topic table. */
#include "topic_journal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CRC_HEX 8

static int append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t nc = *cap ? *cap * 2 : 4096;
        while (nc < *len + n + 1)
            nc *= 2;
        char *nb = realloc(*buf, nc);
        if (!nb)
            return -1;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}

int bcm_topic_journal_note(const bcm_topic_table *t, const char *name, char **buf, size_t *len,
                           size_t *cap)
{
    json_t *cfg = bcm_topic_table_config_json(t, name);
    json_t *rec =
        json_pack("{s[II]}", "dv", (json_int_t)t->dv.counter, (json_int_t)t->dv.timestamp);
    if (!rec) {
        json_decref(cfg);
        return -1;
    }
    int rc = cfg ? json_object_set_new(rec, "put", cfg)
                 : json_object_set_new(rec, "del", json_string(name));
    char *text = rc == 0 ? json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(rec);
    if (!text)
        return -1;
    size_t n = strlen(text);
    char head[CRC_HEX + 2];
    snprintf(head, sizeof head, "%08lx ", (unsigned long)crc32(0L, (const Bytef *)text, (uInt)n));
    size_t old = *len;
    rc = append(buf, len, cap, head, CRC_HEX + 1);
    if (rc == 0)
        rc = append(buf, len, cap, text, n);
    if (rc == 0)
        rc = append(buf, len, cap, "\n", 1);
    if (rc != 0)
        *len = old;
    free(text);
    return rc;
}

/* One intact record at p (up to its '\n'), or NULL. */
static json_t *parse_record(const char *p, size_t n)
{
    if (n < CRC_HEX + 2 || p[CRC_HEX] != ' ')
        return NULL;
    char hex[CRC_HEX + 1];
    memcpy(hex, p, CRC_HEX);
    hex[CRC_HEX] = '\0';
    char *end = NULL;
    unsigned long want = strtoul(hex, &end, 16);
    if (!end || *end)
        return NULL;
    const char *js = p + CRC_HEX + 1;
    size_t jl = n - CRC_HEX - 1;
    if (crc32(0L, (const Bytef *)js, (uInt)jl) != want)
        return NULL;
    json_t *rec = json_loadb(js, jl, 0, NULL);
    json_t *dv = json_object_get(rec, "dv");
    if (!json_is_object(rec) || !json_is_array(dv) || json_array_size(dv) != 2 ||
        (!json_is_object(json_object_get(rec, "put")) &&
         !json_is_string(json_object_get(rec, "del")))) {
        json_decref(rec);
        return NULL;
    }
    return rec;
}

static void apply(bcm_topic_table *t, json_t *rec)
{
    json_t *dv = json_object_get(rec, "dv");
    bcm_data_version v = {(int64_t)json_integer_value(json_array_get(dv, 0)),
                          (int64_t)json_integer_value(json_array_get(dv, 1))};
    json_t *put = json_object_get(rec, "put");
    if (put) {
        bcm_topic_table_put(t, json_incref(put), 0);
    } else {
        bcm_topic_table_delete(t, json_string_value(json_object_get(rec, "del")), 0);
    }
    t->dv = v;
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
        json_t *rec = parse_record(text + pos, n);
        if (!rec)
            break;
        out->records++;
        if ((int64_t)json_integer_value(json_array_get(json_object_get(rec, "dv"), 0)) > base) {
            apply(t, rec);
            out->applied++;
        }
        json_decref(rec);
        pos += n + 1;
    }
    out->valid_len = pos;
    out->torn = pos < len;
}
