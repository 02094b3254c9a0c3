/* large_frame.c — receiving one large frame (a broker registration of
 * thousands of topics) straight into a pooled buffer of its exact size: no
 * growing rbuf, no second copy of the body, no fresh pages per frame. The
 * command borrows the body; the buffer returns to the host's pool when the
 * command is freed. connection.c calls in at three points only. */
#include <string.h>

#include "host.h"

/* The reads of a large frame land in its buffer, never past its end, so the
 * next frame's bytes still go through rbuf. */
bool large_frame_alloc(connection *c, uv_buf_t *buf)
{
    if (!c->large.buf)
        return false;
    buf->base = (char *)frame_buf_data(c->large.buf) + c->large.have;
    buf->len = c->large.total - c->large.have;
    return true;
}

void large_frame_drop(connection *c)
{
    frame_pool_put(c->large.buf);
    c->large.buf = NULL;
    c->large.total = c->large.have = 0;
}

void large_frame_read(connection *c, size_t nread)
{
    rmq_host *h = c->loop->host;
    c->large.have += nread;
    if (c->large.have < c->large.total)
        return;
    frame_buf *b = c->large.buf;
    size_t total = c->large.total;
    c->large.buf = NULL;
    c->large.total = c->large.have = 0;
    char err[160];
    err[0] = 0;
    bool taken = false;
    rmq_cmd *cmd = rmq_cmd_decode_borrowed(frame_buf_data(b), total, frame_buf_release_body, b,
                                           &taken, err, sizeof(err));
    if (!taken)
        frame_pool_put(b);
    if (!cmd) {
        HLOG_WARN(h, "closing connection %s on server %s: undecodable header: %s", c->peer,
                  c->srv ? c->srv->name : "(client)", err[0] ? err : "decode error");
        conn_close(c, RMQ_CHANNEL_EXCEPTION);
        return;
    }
    dispatch_command(c, cmd);
}

/* After rbuf's complete frames were processed: if what is left is the start
 * of a large frame, move it into a buffer of the frame's size. */
void large_frame_maybe_start(connection *c)
{
    rmq_host *h = c->loop->host;
    /* TLS: the socket delivers records, not frame bytes; they must go
     * through the session into rbuf (tls_connection.c) */
    if (c->large.buf || c->closing || c->read_paused || c->rbuf.len < 8 || c->tls || c->tls_detect)
        return;
    size_t total = 0;
    const char *reason = NULL;
    rmq_frame_status st = rmq_frame_check(c->rbuf.data, c->rbuf.len,
                                          (size_t)h->conf.max_frame_bytes, &total, &reason);
    /* NEED_MORE with the length known: the prefix and header word passed */
    if (st != RMQ_FRAME_NEED_MORE || c->rbuf.len < 8)
        return;
    const uint8_t *p = c->rbuf.data;
    total = (((size_t)p[0] << 24) | ((size_t)p[1] << 16) | ((size_t)p[2] << 8) | p[3]) + 4;
    if (total < LARGE_FRAME_MIN || total <= c->rbuf.len)
        return;
    frame_buf *b = frame_pool_get(&h->large_frames, total);
    if (!b)
        return; /* out of memory: rbuf grows as before */
    memcpy(frame_buf_data(b), c->rbuf.data, c->rbuf.len);
    c->large.buf = b;
    c->large.total = total;
    c->large.have = c->rbuf.len;
    c->rbuf.len = 0;
}
