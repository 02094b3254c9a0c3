/* grpc_conn.c — a connection of a gRPC server: the transport (connection.c,
 * TLS included) hands it the bytes it read; they go into the connection's
 * HTTP/2 session (host/grpc/grpc_h2.c), whose calls are started, fed and
 * ended here by stream id, and whose output is appended to the
 * connection's write buffer. Loop thread only. */
#include <stdlib.h>
#include <string.h>

#include "grpc_calls.h"

typedef struct call_link {
    int32_t stream_id;
    rmq_grpc_call *call;
} call_link;

typedef struct grpc_conn {
    connection *c;
    grpc_h2 *h2;
    call_link *calls;
    size_t ncalls, cap;
    /* inside grpc_h2_feed: nghttp2 must not be asked for output from its
     * own callbacks; the feed's caller writes it afterwards */
    bool in_feed;
} grpc_conn;

static rmq_grpc_call *find_call(grpc_conn *g, int32_t id, size_t *at)
{
    for (size_t i = 0; i < g->ncalls; i++)
        if (g->calls[i].stream_id == id) {
            if (at)
                *at = i;
            return g->calls[i].call;
        }
    return NULL;
}

static void on_call(void *ud, int32_t id, const grpc_h2_call_info *info)
{
    grpc_conn *g = ud;
    if (g->ncalls == g->cap) {
        size_t ncap = g->cap ? g->cap * 2 : 8;
        call_link *n = realloc(g->calls, ncap * sizeof(*n));
        if (!n) {
            grpc_h2_finish(g->h2, id, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
            return;
        }
        g->calls = n;
        g->cap = ncap;
    }
    rmq_grpc_call *call = grpc_call_start(g->c, id, info);
    if (!call) {
        grpc_h2_finish(g->h2, id, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    g->calls[g->ncalls++] = (call_link){id, call};
}

static void on_message(void *ud, int32_t id, const uint8_t *msg, size_t len)
{
    rmq_grpc_call *call = find_call(ud, id, NULL);
    if (call)
        grpc_call_message(call, msg, len);
}

static void on_half_close(void *ud, int32_t id)
{
    rmq_grpc_call *call = find_call(ud, id, NULL);
    if (call)
        grpc_call_half_close(call);
}

static void on_close(void *ud, int32_t id)
{
    grpc_conn *g = ud;
    size_t at;
    rmq_grpc_call *call = find_call(g, id, &at);
    if (!call)
        return;
    g->calls[at] = g->calls[--g->ncalls];
    grpc_call_gone(call);
}

static const grpc_h2_callbacks CALLBACKS = {on_call, on_message, on_half_close, on_close};

static int sink(void *ud, const uint8_t *data, size_t len)
{
    connection *c = ud;
    return conn_queue_frame(c, data, len) == 0 ? 0 : -1;
}

/* Write what the session has to say; close when it has nothing more to
 * read or write (GOAWAY exchanged, protocol error). */
static void pump(connection *c)
{
    grpc_conn *g = c->grpc;
    if (!g || c->closing || g->in_feed)
        return;
    if (grpc_h2_flush(g->h2, sink, c) != 0) {
        HLOG_INFO(c->loop->host, "closing gRPC connection %s on server %s: HTTP/2 session error",
                  c->peer, c->srv->name);
        conn_close(c, RMQ_CHANNEL_EXCEPTION);
        return;
    }
    conn_mark_dirty(c);
    if (grpc_h2_done(g->h2))
        conn_close(c, RMQ_CHANNEL_CLOSE);
}

void grpc_conn_input(connection *c)
{
    rmq_host *h = c->loop->host;
    if (!c->grpc) {
        grpc_conn *g = calloc(1, sizeof(*g));
        if (g) {
            g->c = c;
            g->h2 = grpc_h2_new(&CALLBACKS, g, (size_t)h->conf.max_frame_bytes);
        }
        if (!g || !g->h2) {
            free(g);
            HLOG_WARN(h, "closing gRPC connection %s: out of memory", c->peer);
            conn_close(c, RMQ_CHANNEL_EXCEPTION);
            return;
        }
        c->grpc = g;
    }
    size_t n = c->rbuf.len;
    c->rbuf.len = 0;
    c->grpc->in_feed = true;
    int rc = n > 0 ? grpc_h2_feed(c->grpc->h2, c->rbuf.data, n) : 0;
    if (c->grpc)
        c->grpc->in_feed = false;
    if (c->closing)
        return;
    if (rc != 0) {
        HLOG_WARN(h, "closing connection %s on server %s: not an HTTP/2 (gRPC) client", c->peer,
                  c->srv->name);
        pump(c); /* GOAWAY first, when the session produced one */
        conn_close(c, RMQ_CHANNEL_EXCEPTION);
        return;
    }
    pump(c);
    if (!c->closing && c->rbuf.cap > 0 && c->loop->spare_rbuf.cap == 0) {
        /* an idle connection holds no read buffer (as connection.c does) */
        c->loop->spare_rbuf = c->rbuf;
        memset(&c->rbuf, 0, sizeof(c->rbuf));
    }
}

void grpc_conn_finish(connection *c, int32_t id, int status, const char *message)
{
    if (!c->grpc || c->closing)
        return;
    grpc_h2_finish(c->grpc->h2, id, status, message);
    pump(c);
}

void grpc_conn_answer(connection *c, int32_t id, const uint8_t *bytes, const size_t *lens, size_t n,
                      bool finish, int status, const char *message)
{
    if (!c->grpc || c->closing)
        return;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (grpc_h2_send_message(c->grpc->h2, id, bytes + at, lens[i]) != 0) {
            /* out of memory: the stream ends here, nothing after it */
            grpc_h2_finish(c->grpc->h2, id, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
            finish = false;
            break;
        }
        at += lens[i];
    }
    if (finish)
        grpc_h2_finish(c->grpc->h2, id, status, message);
    pump(c); /* one write for the whole batch */
}

void grpc_conn_tick(connection *c)
{
    grpc_conn *g = c->grpc;
    if (!g || c->closing)
        return;
    uint64_t now = host_now_ms();
    /* by index from the end: a finish may close a stream (on_close swaps
     * the last link into its slot) or, on a session error, the connection
     * (grpc_conn_free) */
    for (size_t i = g->ncalls; i-- > 0 && c->grpc == g && !c->closing;)
        if (i < g->ncalls)
            grpc_call_tick(c, g->calls[i].call, now);
}

void grpc_conn_free(connection *c)
{
    grpc_conn *g = c->grpc;
    if (!g)
        return;
    c->grpc = NULL;
    grpc_h2_free(g->h2); /* on_close for every open call */
    for (size_t i = 0; i < g->ncalls; i++)
        grpc_call_gone(g->calls[i].call);
    free(g->calls);
    free(g);
}
