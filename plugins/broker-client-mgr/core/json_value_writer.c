/* json_value_writer.c — owns writing a jansson tree as compact JSON with
 * sorted keys, byte for byte json_dumps' output (jansson 2.14 dump.c: keys
 * ordered by memcmp over the shorter length, then by length; strings
 * escaped as bcm_json_string does). */
#include "json_value_writer.h"

#include <stdlib.h>
#include <string.h>

/* jansson refuses to dump deeper trees (JSON_PARSER_MAX_DEPTH) */
#define MAX_DEPTH 2048

typedef struct key_ref {
    const char *key;
    size_t len;
    const json_t *value;
} key_ref;

static int by_key(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

static void write_value(bcm_buf *b, const json_t *v, int depth);

static void write_object(bcm_buf *b, const json_t *v, int depth)
{
    size_t n = json_object_size(v);
    if (n == 0) {
        bcm_buf_add(b, "{}", 2);
        return;
    }
    /* attributes hold a handful of keys: the stack, else the heap */
    key_ref small[16];
    key_ref *keys = n <= 16 ? small : malloc(n * sizeof *keys);
    if (!keys) {
        b->oom = true;
        return;
    }
    size_t k = 0;
    const char *key;
    json_t *item;
    json_object_foreach((json_t *)v, key, item)
    {
        keys[k].key = key;
        keys[k].len = json_object_iter_key_len(json_object_key_to_iter(key));
        keys[k].value = item;
        k++;
    }
    qsort(keys, k, sizeof *keys, by_key);
    bcm_buf_char(b, '{');
    for (size_t i = 0; i < k; i++) {
        if (i)
            bcm_buf_char(b, ',');
        bcm_json_string(b, keys[i].key, keys[i].len);
        bcm_buf_char(b, ':');
        write_value(b, keys[i].value, depth + 1);
    }
    bcm_buf_char(b, '}');
    if (keys != small)
        free(keys);
}

static void write_value(bcm_buf *b, const json_t *v, int depth)
{
    if (depth > MAX_DEPTH) {
        b->oom = true;
        return;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: write_object(b, v, depth); break;
    case JSON_ARRAY:
        bcm_buf_char(b, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                bcm_buf_char(b, ',');
            write_value(b, json_array_get(v, i), depth + 1);
        }
        bcm_buf_char(b, ']');
        break;
    case JSON_STRING: bcm_json_string(b, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: bcm_buf_i64(b, (int64_t)json_integer_value(v)); break;
    case JSON_TRUE: bcm_buf_add(b, "true", 4); break;
    case JSON_FALSE: bcm_buf_add(b, "false", 5); break;
    case JSON_NULL: bcm_buf_add(b, "null", 4); break;
    case JSON_REAL: {
        /* rare in attributes; jansson's %.17g clean-up is its own to keep */
        char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!t) {
            b->oom = true;
            return;
        }
        bcm_buf_str(b, t);
        free(t);
        break;
    }
    }
}

void bcm_json_value_write(bcm_buf *b, const json_t *v)
{
    write_value(b, v, 0);
}
