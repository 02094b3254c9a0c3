/* frame_pool.c — the host's pool of large receive buffers. A frame above
 * LARGE_FRAME_MIN is read straight into one of these and its command borrows
 * the body from it; the buffer comes back here when the command is freed (on
 * whichever thread frees it). Kept buffers stay faulted in, so a broker's
 * registration every 30 s does not pay fresh pages for every frame. */
#include <stdlib.h>
#include <string.h>

#include "host.h"

/* A buffer: this header, then `cap` bytes of frame. */
struct frame_buf {
    frame_pool *pool;
    size_t cap;
    uint8_t data[];
};

void frame_pool_init(frame_pool *fp, size_t max_bytes)
{
    memset(fp, 0, sizeof(*fp));
    pthread_mutex_init(&fp->mu, NULL);
    fp->max_bytes = max_bytes;
}

void frame_pool_destroy(frame_pool *fp)
{
    for (size_t i = 0; i < fp->n; i++)
        free(fp->free[i]);
    fp->n = 0;
    pthread_mutex_destroy(&fp->mu);
}

/* Round up so that frames of a similar size share buffers. */
static size_t round_cap(size_t need)
{
    size_t step = 64 * 1024;
    return (need + step - 1) / step * step;
}

frame_buf *frame_pool_get(frame_pool *fp, size_t need)
{
    frame_buf *best = NULL;
    size_t at = 0;
    pthread_mutex_lock(&fp->mu);
    for (size_t i = 0; i < fp->n; i++) {
        frame_buf *b = fp->free[i];
        if (b->cap >= need && (!best || b->cap < best->cap)) {
            best = b;
            at = i;
        }
    }
    if (best) {
        fp->free[at] = fp->free[--fp->n];
        fp->bytes -= best->cap;
        fp->hits++;
    }
    pthread_mutex_unlock(&fp->mu);
    if (best)
        return best;
    size_t cap = round_cap(need);
    frame_buf *b = malloc(sizeof(*b) + cap);
    if (!b)
        return NULL;
    b->pool = fp;
    b->cap = cap;
    return b;
}

void frame_pool_put(frame_buf *b)
{
    if (!b)
        return;
    frame_pool *fp = b->pool;
    pthread_mutex_lock(&fp->mu);
    if (fp->n == FRAME_POOL_SLOTS || fp->bytes + b->cap > fp->max_bytes) {
        /* full: drop the smallest kept buffer if this one is larger */
        size_t small = 0;
        for (size_t i = 1; i < fp->n; i++)
            if (fp->free[i]->cap < fp->free[small]->cap)
                small = i;
        if (fp->n > 0 && fp->free[small]->cap < b->cap &&
            fp->bytes - fp->free[small]->cap + b->cap <= fp->max_bytes) {
            frame_buf *old = fp->free[small];
            fp->bytes -= old->cap;
            fp->free[small] = b;
            fp->bytes += b->cap;
            b = old;
        }
        pthread_mutex_unlock(&fp->mu);
        free(b);
        return;
    }
    fp->free[fp->n++] = b;
    fp->bytes += b->cap;
    pthread_mutex_unlock(&fp->mu);
}

uint8_t *frame_buf_data(frame_buf *b)
{
    return b->data;
}

size_t frame_buf_cap(const frame_buf *b)
{
    return b->cap;
}

/* rmq_body_free_fn of a borrowed body: the whole buffer goes back. */
void frame_buf_release_body(void *ud, const void *body)
{
    (void)body;
    frame_pool_put(ud);
}
