/* connection.c — one TCP connection on its I/O loop: reads bytes, cuts them
 * into frames, hands decoded commands to the dispatcher, and writes
 * responses with back-pressure (reading stops above the high-water mark
 * and resumes below the low-water mark). Garbage closes only this
 * connection, with one log line naming the peer and the reason. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host.h"
#include "tls_host.h"

#define READ_CHUNK (64 * 1024)
#define RBUF_SHRINK_ABOVE (1024 * 1024)

uint64_t loop_assign_slot(io_loop *l, connection *c);
void loop_release_slot(io_loop *l, connection *c);

static void format_peer(const struct sockaddr_storage *ss, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
        port = ntohs(a->sin_port);
        snprintf(buf, len, "%s:%d", ip, port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
        port = ntohs(a->sin6_port);
        snprintf(buf, len, "[%s]:%d", ip, port);
    } else {
        snprintf(buf, len, "unknown");
    }
}

static void dirty_mark(connection *c)
{
    if (c->dirty)
        return;
    c->dirty = true;
    c->dirty_next = c->loop->dirty;
    c->loop->dirty = c;
}

static void dirty_unlink(connection *c)
{
    if (!c->dirty)
        return;
    for (connection **pp = &c->loop->dirty; *pp; pp = &(*pp)->dirty_next) {
        if (*pp == c) {
            *pp = c->dirty_next;
            break;
        }
    }
    c->dirty = false;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    connection *c = h->data;
    if (large_frame_alloc(c, buf))
        return;
    if (c->rbuf.cap == 0 && c->loop->spare_rbuf.cap > 0) {
        c->rbuf = c->loop->spare_rbuf; /* borrowed until its bytes are processed */
        memset(&c->loop->spare_rbuf, 0, sizeof(c->loop->spare_rbuf));
    } else if (c->rbuf.cap == 0) {
        conn_rbuf_take_returned(c);
    }
    if (byte_buf_reserve(&c->rbuf, READ_CHUNK) != 0) {
        buf->base = NULL;
        buf->len = 0;
        return;
    }
    buf->base = (char *)c->rbuf.data + c->rbuf.len;
    buf->len = c->rbuf.cap - c->rbuf.len;
}

void conn_mark_dirty(connection *c)
{
    if (!c->closing)
        dirty_mark(c);
}

static void pause_reading(connection *c)
{
    if (c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = false;
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void resume_reading(connection *c)
{
    if (!c->reading && !c->closing && c->connected && !c->read_paused &&
        !(c->srv && c->loop->stop_reading)) {
        if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
            c->reading = true;
    }
}

static void check_low_water(connection *c)
{
    rmq_host *h = c->loop->host;
    if (c->read_paused &&
        c->out.len + (c->writing ? c->inflight.len : 0) <= (size_t)h->conf.write_low_water) {
        c->read_paused = false;
        resume_reading(c);
        if (c->rbuf.len > 0) {
            /* Frames that arrived before the pause wait in rbuf; process them
             * from the loop, not from inside this write callback. */
            loop_task *t = calloc(1, sizeof(*t));
            if (t) {
                t->type = LT_RESUME;
                t->channel = c->id;
                loop_post(c->loop, t);
            }
        }
    }
}

static void conn_flush(connection *c);

static void on_write(uv_write_t *req, int status)
{
    connection *c = req->data;
    c->writing = false;
    c->inflight.len = 0;
    if (c->closing)
        return;
    if (status < 0) {
        HLOG_INFO(c->loop->host, "write to %s failed: %s; closing", c->peer, uv_strerror(status));
        conn_close(c, RMQ_CHANNEL_EXCEPTION);
        return;
    }
    c->last_active_ms = uv_now(&c->loop->loop);
    conn_flush(c);
    check_low_water(c);
}

static void conn_flush(connection *c)
{
    if (c->closing || c->writing || !c->connected)
        return;
    /* TLS: c->out's plaintext becomes records (tls_connection.c). */
    if (c->tls && tls_conn_seal(c) != 0) {
        conn_close(c, RMQ_CHANNEL_EXCEPTION);
        return;
    }
    if (c->out.len == 0) {
        conn_drain_check(c); /* close_outgoing: all written (outgoing_close.c) */
        return;
    }
    uv_buf_t b = uv_buf_init((char *)c->out.data, (unsigned)c->out.len);
    int n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (n == UV_EAGAIN || n == UV_ENOSYS)
        n = 0;
    if (n < 0) {
        HLOG_INFO(c->loop->host, "write to %s failed: %s; closing", c->peer, uv_strerror(n));
        conn_close(c, RMQ_CHANNEL_EXCEPTION);
        return;
    }
    if (n > 0)
        c->last_active_ms = uv_now(&c->loop->loop);
    if ((size_t)n == c->out.len) {
        c->out.len = 0;
        check_low_water(c);
        conn_drain_check(c);
        return;
    }
    /* The rest goes through uv_write from a buffer nobody appends to. */
    memmove(c->out.data, c->out.data + n, c->out.len - (size_t)n);
    c->out.len -= (size_t)n;
    byte_buf tmp = c->inflight;
    c->inflight = c->out;
    c->out = tmp;
    c->out.len = 0;
    b = uv_buf_init((char *)c->inflight.data, (unsigned)c->inflight.len);
    c->wreq.data = c;
    if (uv_write(&c->wreq, (uv_stream_t *)&c->tcp, &b, 1, on_write) != 0) {
        conn_close(c, RMQ_CHANNEL_EXCEPTION);
        return;
    }
    c->writing = true;
}

void loop_flush_dirty(io_loop *l)
{
    while (l->dirty) {
        connection *c = l->dirty;
        l->dirty = c->dirty_next;
        c->dirty = false;
        conn_flush(c);
    }
}

static void check_high_water(connection *c)
{
    rmq_host *h = c->loop->host;
    if (!c->read_paused && c->srv &&
        c->out.len + (c->writing ? c->inflight.len : 0) > (size_t)h->conf.write_high_water) {
        c->read_paused = true;
        pause_reading(c);
    }
}

int conn_queue_frame(connection *c, const uint8_t *data, size_t len)
{
    if (c->closing)
        return RMQ_ENOTCONN;
    if (byte_buf_reserve(&c->out, len) != 0)
        return RMQ_ENOMEM;
    memcpy(c->out.data + c->out.len, data, len);
    c->out.len += len;
    dirty_mark(c);
    check_high_water(c);
    return 0;
}

int conn_queue_cmd(connection *c, const rmq_cmd *cmd)
{
    if (c->closing)
        return RMQ_ENOTCONN;
    /* One encoding pass into room for the cheap upper bound. */
    size_t bound = rmq_cmd_encoded_size_bound(cmd);
    if (bound == 0)
        return RMQ_EINVAL;
    if (byte_buf_reserve(&c->out, bound) != 0)
        return RMQ_ENOMEM;
    size_t n = rmq_cmd_encode(cmd, c->out.data + c->out.len, bound);
    if (n == 0)
        return RMQ_EINVAL;
    c->out.len += n;
    dirty_mark(c);
    check_high_water(c);
    return 0;
}

static void on_closed(uv_handle_t *h)
{
    connection *c = h->data;
    io_loop *l = c->loop;
    atomic_fetch_sub(&l->nconns, 1);
    if (c->srv)
        atomic_fetch_sub(&c->srv->connections, 1);
    else
        atomic_fetch_sub(&l->host->outgoing_conns, 1);
    byte_buf_free(&c->rbuf);
    large_frame_drop(c);
    byte_buf_free(&c->out);
    byte_buf_free(&c->inflight);
    tls_conn_free(c);
    free(c);
}

void conn_close(connection *c, rmq_channel_event why)
{
    if (c->closing)
        return;
    io_loop *l = c->loop;
    c->closing = true;
    dirty_unlink(c);
    loop_release_slot(l, c);
    if (c->prev)
        c->prev->next = c->next;
    else
        l->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    grpc_conn_free(c); /* its calls learn the client is gone */
    if (c->srv) {
        if (why != RMQ_CHANNEL_CLOSE)
            event_thread_post(&c->srv->events, why, c->id, c->peer);
        event_thread_post(&c->srv->events, RMQ_CHANNEL_CLOSE, c->id, c->peer);
    }
    outgoing_sweep(l, c->id, c->connected ? RMQ_ENOTCONN : RMQ_ECONNREFUSED);
    uv_close((uv_handle_t *)&c->tcp, on_closed);
}

void conn_process_frames(connection *c)
{
    if (c->srv && c->srv->protocol == SERVER_PROTOCOL_GRPC) {
        grpc_conn_input(c);
        return;
    }
    rmq_host *h = c->loop->host;
    size_t off = 0;
    /* A paused connection keeps its unprocessed frames: one read must not
     * produce more output than the high-water mark allows. */
    while (!c->closing && !c->read_paused) {
        size_t total = 0;
        const char *reason = NULL;
        rmq_frame_status st = rmq_frame_check(c->rbuf.data + off, c->rbuf.len - off,
                                              (size_t)h->conf.max_frame_bytes, &total, &reason);
        if (st == RMQ_FRAME_NEED_MORE)
            break;
        if (st == RMQ_FRAME_INVALID) {
            HLOG_WARN(h, "closing connection %s on server %s: %s", c->peer,
                      c->srv ? c->srv->name : "(client)", reason ? reason : "bad frame");
            conn_close(c, RMQ_CHANNEL_EXCEPTION);
            break; /* a request deferred before still needs its buffer kept */
        }
        char err[160];
        err[0] = 0;
        /* the body stays in rbuf: a request that outlives this pass copies
         * it (executor, held) or keeps the buffer (deferred) */
        rmq_cmd *cmd = rmq_cmd_decode_in_place(c->rbuf.data + off, total, err, sizeof(err));
        off += total;
        if (!cmd) {
            HLOG_WARN(h, "closing connection %s on server %s: undecodable header: %s", c->peer,
                      c->srv ? c->srv->name : "(client)", err[0] ? err : "decode error");
            conn_close(c, RMQ_CHANNEL_EXCEPTION);
            break;
        }
        dispatch_command(c, cmd);
    }
    if (c->rbuf_pin) {
        if (conn_rbuf_unpin(c, off) != 0) {
            HLOG_WARN(h, "closing connection %s: out of memory for its read buffer", c->peer);
            conn_close(c, RMQ_CHANNEL_EXCEPTION);
            return;
        }
        off = 0; /* the processed bytes went with the kept buffer */
    }
    if (c->closing)
        return;
    if (off > 0) {
        memmove(c->rbuf.data, c->rbuf.data + off, c->rbuf.len - off);
        c->rbuf.len -= off;
    }
    large_frame_maybe_start(c);
    if (c->rbuf.len == 0 && c->rbuf.cap > RBUF_SHRINK_ABOVE)
        byte_buf_free(&c->rbuf); /* a huge frame passed; don't keep its buffer */
    if (c->rbuf.len == 0 && c->rbuf.cap > 0 && c->loop->spare_rbuf.cap == 0) {
        /* nothing pending: the loop keeps the buffer for the next reader, so
         * 50,000 mostly idle clients do not hold 64 KB each */
        c->loop->spare_rbuf = c->rbuf;
        memset(&c->rbuf, 0, sizeof(c->rbuf));
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    connection *c = s->data;
    io_loop *l = c->loop;
    if (nread > 0 && c->large.buf) {
        c->last_active_ms = uv_now(&c->loop->loop);
        large_frame_read(c, (size_t)nread);
    } else if (nread > 0) {
        c->rbuf.len += (size_t)nread;
        c->last_active_ms = uv_now(&c->loop->loop);
        /* TLS: decide on the first byte, decrypt in place (tls_connection.c). */
        if (c->tls_detect || c->tls) {
            int t = tls_conn_input(c, c->rbuf.len - (size_t)nread);
            if (t < 0) {
                conn_close(c, t == -2 ? RMQ_CHANNEL_CLOSE : RMQ_CHANNEL_EXCEPTION);
                loop_flush_dirty(l);
                return;
            }
            if (t > 0)
                dirty_mark(c);
        }
        conn_process_frames(c);
    } else if (nread < 0) {
        if (nread != UV_EOF && nread != UV_ECONNRESET)
            HLOG_INFO(l->host, "read from %s failed: %s", c->peer, uv_strerror((int)nread));
        conn_close(c, nread == UV_EOF || nread == UV_ECONNRESET ? RMQ_CHANNEL_CLOSE
                                                                : RMQ_CHANNEL_EXCEPTION);
    }
    loop_flush_dirty(l);
}

static connection *conn_new(io_loop *l, server *srv)
{
    connection *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->loop = l;
    c->srv = srv;
    if (uv_tcp_init(&l->loop, &c->tcp) != 0) {
        free(c);
        return NULL;
    }
    c->tcp.data = c;
    c->id = loop_assign_slot(l, c);
    c->last_active_ms = uv_now(&c->loop->loop);
    c->next = l->conns;
    if (l->conns)
        l->conns->prev = c;
    l->conns = c;
    atomic_fetch_add(&l->nconns, 1);
    if (srv)
        atomic_fetch_add(&srv->connections, 1);
    else
        atomic_fetch_add(&l->host->outgoing_conns, 1);
    return c;
}

void conn_adopt(io_loop *l, server *srv, uv_os_sock_t fd)
{
    if (l->stopping) {
        close(fd);
        return;
    }
    connection *c = conn_new(l, srv);
    if (!c || c->id == 0) {
        if (c)
            conn_close(c, RMQ_CHANNEL_CLOSE);
        close(fd);
        return;
    }
    if (uv_tcp_open(&c->tcp, fd) != 0) {
        close(fd);
        conn_close(c, RMQ_CHANNEL_CLOSE);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    struct sockaddr_storage ss;
    int len = sizeof(ss);
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0)
        format_peer(&ss, c->peer, sizeof(c->peer));
    else
        snprintf(c->peer, sizeof(c->peer), "unknown");
    c->connected = true;
    c->tls_detect = true; /* the first byte decides TLS (tls_connection.c) */
    event_thread_post(&srv->events, RMQ_CHANNEL_CONNECT, c->id, c->peer);
    resume_reading(c);
}

/* ---- outgoing client connections ---------------------------------------- */

static void on_connected(uv_connect_t *req, int status)
{
    connection *c = req->data;
    if (c->closing)
        return;
    if (status < 0) {
        HLOG_WARN(c->loop->host, "connect to %s failed: %s", c->addr_key, uv_strerror(status));
        conn_close(c, RMQ_CHANNEL_EXCEPTION);
        loop_flush_dirty(c->loop);
        return;
    }
    c->connected = true;
    c->last_active_ms = uv_now(&c->loop->loop);
    uv_tcp_nodelay(&c->tcp, 1);
    resume_reading(c);
    conn_flush(c);
}

void loop_connect_and_invoke(io_loop *l, loop_task *t)
{
    connection *c = NULL;
    for (connection *x = l->conns; x; x = x->next)
        /* a draining one (close_outgoing) takes no new request */
        if (!x->srv && !x->closing && !x->draining && strcmp(x->addr_key, t->addr) == 0) {
            c = x;
            break;
        }
    if (!c) {
        struct sockaddr_storage ss;
        socklen_t sslen;
        /* "ip:port#tag" (ABI 1.14): a connection of its own to ip:port */
        char host_part[sizeof t->addr];
        snprintf(host_part, sizeof host_part, "%.*s", (int)outgoing_addr_host_len(t->addr),
                 t->addr);
        if (l->stopping || socket_address_parse(host_part, false, &ss, &sslen) != 0) {
            if (!l->stopping)
                HLOG_WARN(l->host, "cannot call %s: not an ip:port address", t->addr);
            if (t->call)
                pending_call_fail(l->host, t->call, l->stopping ? RMQ_ESHUTDOWN : RMQ_EINVAL);
            return;
        }
        c = conn_new(l, NULL);
        if (!c) {
            if (t->call)
                pending_call_fail(l->host, t->call, RMQ_ENOMEM);
            return;
        }
        snprintf(c->addr_key, sizeof(c->addr_key), "%s", t->addr);
        snprintf(c->peer, sizeof(c->peer), "%.63s", host_part);
        if (tls_conn_start_client(c) != 0) { /* tls_client.enable */
            if (t->call)
                pending_call_fail(l->host, t->call, RMQ_ECONNREFUSED);
            conn_close(c, RMQ_CHANNEL_EXCEPTION);
            return;
        }
        c->connect_req.data = c;
        int rc = uv_tcp_connect(&c->connect_req, &c->tcp, (struct sockaddr *)&ss, on_connected);
        if (rc != 0) {
            HLOG_WARN(l->host, "connect to %s failed: %s", t->addr, uv_strerror(rc));
            if (t->call)
                pending_call_fail(l->host, t->call, RMQ_ECONNREFUSED);
            conn_close(c, RMQ_CHANNEL_EXCEPTION);
            return;
        }
    }
    if (t->call) {
        t->call->channel = c->id;
        pending_insert(l, t->call);
    }
    conn_queue_frame(c, t->frame, t->frame_len);
}
