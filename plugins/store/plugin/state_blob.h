/* state_blob.h — the byte writer and reader of the hot-reload state blob
 * (store_reload.c and the statistics it hands over). Host byte order: the
 * blob never leaves the process. A reader that runs past the end stays
 * failed (ok = false) and reads zeros, so callers check once at the end. */
#ifndef STORE_STATE_BLOB_H
#define STORE_STATE_BLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct blob_writer {
    uint8_t *buf;
    size_t len, cap;
    bool failed; /* out of memory */
} blob_writer;

static inline void blob_put(blob_writer *w, const void *p, size_t n)
{
    if (w->failed)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        while (cap < w->len + n)
            cap *= 2;
        uint8_t *nb = realloc(w->buf, cap);
        if (!nb) {
            w->failed = true;
            return;
        }
        w->buf = nb;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

static inline void blob_put_u64(blob_writer *w, uint64_t v)
{
    blob_put(w, &v, sizeof v);
}

typedef struct blob_reader {
    const uint8_t *p;
    size_t left;
    bool ok;
} blob_reader;

static inline bool blob_get(blob_reader *r, void *out, size_t n)
{
    if (!r->ok || r->left < n) {
        r->ok = false;
        memset(out, 0, n);
        return false;
    }
    memcpy(out, r->p, n);
    r->p += n;
    r->left -= n;
    return true;
}

static inline uint64_t blob_get_u64(blob_reader *r)
{
    uint64_t v;
    blob_get(r, &v, sizeof v);
    return v;
}

#endif
