/* replay_diff.c — compares two answers field by field and JSON bodies as
 * values; describes every difference in text and never asserts. Bodies that
 * are not standard JSON (Java's non-standard maps such as {0:"..."}) are
 * compared byte for byte. */
#include "replay_diff.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct diff_out {
    char *buf;
    size_t cap, len;
    int n;
} diff_out;

static void note(diff_out *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(diff_out *d, const char *fmt, ...)
{
    d->n++;
    if (!d->buf || d->len + 3 >= d->cap)
        return;
    if (d->len) {
        memcpy(d->buf + d->len, "; ", 2);
        d->len += 2;
        d->buf[d->len] = 0;
    }
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(d->buf + d->len, d->cap - d->len, fmt, ap);
    va_end(ap);
    if (w > 0)
        d->len += (size_t)w < d->cap - d->len ? (size_t)w : d->cap - d->len - 1;
}

static bool ignored(const replay_ignore *ign, const char *key)
{
    for (size_t i = 0; key && ign && ign->keys && ign->keys[i]; i++)
        if (strcmp(ign->keys[i], key) == 0)
            return true;
    return false;
}

static bool same_value(const replay_ignore *ign, const char *key, json_t *w, json_t *g);

/* Arrays as multisets: every recorded element matches a distinct element of
 * the answer (Java's HashSet/HashMap order is not part of the protocol). */
static bool same_array(const replay_ignore *ign, json_t *w, json_t *g)
{
    size_t n = json_array_size(w);
    if (n != json_array_size(g))
        return false;
    bool *used = calloc(n + 1, sizeof(*used));
    if (!used)
        return false;
    bool all = true;
    for (size_t i = 0; i < n && all; i++) {
        bool found = false;
        for (size_t k = 0; k < n && !found; k++) {
            if (used[k])
                continue;
            if (same_value(ign, NULL, json_array_get(w, i), json_array_get(g, k)))
                used[k] = found = true;
        }
        all = found;
    }
    free(used);
    return all;
}

static bool same_value(const replay_ignore *ign, const char *key, json_t *w, json_t *g)
{
    if (!w || !g)
        return w == g;
    bool wnum = json_is_number(w), gnum = json_is_number(g);
    if (ignored(ign, key))
        return json_typeof(w) == json_typeof(g) || (wnum && gnum);
    if (wnum && gnum)
        return json_number_value(w) == json_number_value(g);
    if (json_typeof(w) != json_typeof(g))
        return false;
    if (json_is_object(w)) {
        if (json_object_size(w) != json_object_size(g))
            return false;
        const char *k;
        json_t *v;
        json_object_foreach(w, k, v)
        {
            if (!same_value(ign, k, v, json_object_get(g, k)))
                return false;
        }
        return true;
    }
    if (json_is_array(w))
        return same_array(ign, w, g);
    return json_equal(w, g);
}

/* Names the first differing member of two objects, for a readable report. */
static void describe_json(diff_out *d, const replay_ignore *ign, json_t *w, json_t *g)
{
    if (json_is_object(w) && json_is_object(g)) {
        const char *k;
        json_t *v;
        json_object_foreach(w, k, v)
        {
            json_t *gv = json_object_get(g, k);
            if (!gv) {
                note(d, "body: member \"%s\" missing", k);
                return;
            }
            if (!same_value(ign, k, v, gv)) {
                char *ws = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
                char *gs = json_dumps(gv, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
                note(d, "body: \"%s\" is %.300s, want %.300s", k, gs ? gs : "?", ws ? ws : "?");
                free(ws);
                free(gs);
                return;
            }
        }
        json_object_foreach(g, k, v)
        {
            if (!json_object_get(w, k)) {
                note(d, "body: extra member \"%s\"", k);
                return;
            }
        }
    }
    note(d, "body differs as JSON");
}

static void diff_body(diff_out *d, const replay_ignore *ign, const rmq_cmd *want,
                      const rmq_cmd *got)
{
    if (!want->body_len && !got->body_len)
        return;
    if (!want->body_len || !got->body_len) {
        note(d, "body %u bytes, want %u", (unsigned)got->body_len, (unsigned)want->body_len);
        return;
    }
    json_t *w = json_loadb((const char *)want->body, want->body_len, JSON_DECODE_ANY, NULL);
    json_t *g =
        w ? json_loadb((const char *)got->body, got->body_len, JSON_DECODE_ANY, NULL) : NULL;
    if (w && g) {
        if (!same_value(ign, NULL, w, g))
            describe_json(d, ign, w, g);
    } else if (want->body_len != got->body_len ||
               memcmp(want->body, got->body, want->body_len) != 0) {
        note(d, "body differs byte for byte (%u bytes, want %u; not both JSON)",
             (unsigned)got->body_len, (unsigned)want->body_len);
    }
    json_decref(w);
    json_decref(g);
}

static const char *or_none(const char *s)
{
    return s ? s : "(none)";
}

int replay_diff(const rmq_cmd *want, const rmq_cmd *got, const replay_ignore *ign, char *out,
                size_t outlen)
{
    diff_out d = {out, outlen, 0, 0};
    if (out && outlen)
        out[0] = 0;
    if (!got) {
        note(&d, "no answer");
        return d.n;
    }
    if (want->code != got->code)
        note(&d, "code %d, want %d", got->code, want->code);
    if (want->flag != got->flag)
        note(&d, "flag %d, want %d", got->flag, want->flag);
    if (want->opaque != got->opaque)
        note(&d, "opaque %d, want %d", got->opaque, want->opaque);
    if (want->serialize_type != got->serialize_type)
        note(&d, "serialization %d, want %d", got->serialize_type, want->serialize_type);
    if ((want->remark == NULL) != (got->remark == NULL) ||
        (want->remark && strcmp(want->remark, got->remark) != 0))
        note(&d, "remark '%.200s', want '%.200s'", or_none(got->remark), or_none(want->remark));
    if (want->has_ext != got->has_ext && (want->ext_count || got->ext_count || want->has_ext))
        note(&d, "extFields %s, want %s", got->has_ext ? "present" : "absent",
             want->has_ext ? "present" : "absent");
    for (uint32_t i = 0; i < want->ext_count; i++) {
        const char *k = want->ext[i].key, *wv = want->ext[i].value;
        bool present = false;
        const char *gv = NULL;
        for (uint32_t j = 0; j < got->ext_count && !present; j++)
            if (strcmp(got->ext[j].key, k) == 0) {
                present = true;
                gv = got->ext[j].value;
            }
        if (!present)
            note(&d, "ext %s missing (want %s)", k, or_none(wv));
        else if (!ignored(ign, k) && ((wv == NULL) != (gv == NULL) || (wv && strcmp(wv, gv) != 0)))
            note(&d, "ext %s = %s, want %s", k, or_none(gv), or_none(wv));
    }
    for (uint32_t j = 0; j < got->ext_count; j++)
        if (!rmq_cmd_ext_get(want, got->ext[j].key)) {
            bool in_want = false;
            for (uint32_t i = 0; i < want->ext_count && !in_want; i++)
                in_want = strcmp(want->ext[i].key, got->ext[j].key) == 0;
            if (!in_want)
                note(&d, "extra ext %s = %s", got->ext[j].key, or_none(got->ext[j].value));
        }
    diff_body(&d, ign, want, got);
    return d.n;
}
