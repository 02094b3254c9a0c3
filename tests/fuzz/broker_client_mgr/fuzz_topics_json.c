/* fuzz_topics_json.c — libFuzzer harness of the one-pass topics.json reader
 * (broker-client-mgr, topics_json_reader.c): any bytes are read in bounds;
 * it accepts and refuses what the jansson load it replaced did, and loads
 * the same table (unless topicConfigTable repeats a key: jansson kept the
 * last entry only); a refused text leaves the table empty with an error
 * message; an accepted one written back by rmqhost reads to the same text. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fastjson_text.h"
#include "topic_table.h"
#include "topics_json_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int reference_load(bcm_topic_table *t, const char *text, size_t len)
{
    char err[256];
    json_t *root = fastjson_load_object(text, len, err, sizeof err);
    if (!root)
        return -1;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(root, "topicConfigTable"), k, v)
    {
        if (!json_is_object(v))
            continue;
        json_t *cfg = json_deep_copy(v);
        if (!json_is_string(json_object_get(cfg, "topicName")))
            json_object_set_new(cfg, "topicName", json_string(k));
        if (bcm_topic_table_put(t, cfg, 0) != 0)
            abort();
    }
    t->dv = (bcm_data_version){0, 0};
    bcm_data_version_from_json(&t->dv, json_object_get(root, "dataVersion"));
    json_decref(root);
    return 0;
}

typedef struct keys_seen {
    char **v;
    size_t n;
    bool dup;
} keys_seen;

static int note_key(void *ud, const char *key, const char *name, const bcm_topic_cfg *c)
{
    (void)name;
    (void)c;
    keys_seen *k = ud;
    for (size_t i = 0; i < k->n && !k->dup; i++)
        k->dup = strcmp(k->v[i], key) == 0;
    char **v = realloc(k->v, (k->n + 1) * sizeof *v);
    if (!v)
        abort();
    k->v = v;
    if (!(k->v[k->n++] = strdup(key)))
        abort();
    return 0;
}

static void reset_keys(void *ud)
{
    keys_seen *k = ud;
    for (size_t i = 0; i < k->n; i++)
        free(k->v[i]);
    k->n = 0;
    k->dup = false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    bcm_topic_table a, b;
    bcm_topic_table_init(&a, 0);
    bcm_topic_table_init(&b, 0);
    char err[256] = "";
    int ra = bcm_topic_table_load(&a, text, size, err, sizeof err);
    if (ra != 0 && (err[0] == '\0' || bcm_topic_table_size(&a) != 0))
        abort();
    keys_seen k = {0};
    bcm_data_version dv = {0, 0};
    bool dup =
        ra == 0 &&
        bcm_topics_json_read(text, size, note_key, reset_keys, &k, &dv, err, sizeof err) == 0 &&
        k.dup;
    reset_keys(&k);
    free(k.v);
    char *ea = ra == 0 ? bcm_topic_table_encode(&a) : NULL;
    /* jansson reads a C string: compared on texts without NUL bytes */
    if (!memchr(text, 0, size)) {
        int rb = reference_load(&b, text, size);
        if (ra != rb)
            abort();
        if (ra == 0 && !dup) {
            char *eb = bcm_topic_table_encode(&b);
            if (!ea || !eb || strcmp(ea, eb) != 0)
                abort();
            free(eb);
        }
    }
    if (ea) {
        bcm_topic_table c;
        bcm_topic_table_init(&c, 0);
        if (bcm_topic_table_load(&c, ea, strlen(ea), err, sizeof err) != 0)
            abort();
        char *ec = bcm_topic_table_encode(&c);
        if (!ec || strcmp(ea, ec) != 0)
            abort();
        free(ec);
        bcm_topic_table_free(&c);
    }
    free(ea);
    bcm_topic_table_free(&a);
    bcm_topic_table_free(&b);
    return 0;
}
