/* bench_worker.c — rmqbench's connection driver: connects, keeps `depth`
 * requests in flight per connection, matches responses by opaque and records
 * latencies. No allocation per request: send buffers, slots and the
 * histogram are sized once. With --tls each connection runs an OpenSSL
 * session over memory BIOs on the same loop. Must not print: the caller
 * reports. */
#include "bench_worker.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "remoting_command.h"
#include "response_peek.h"

#define READ_BUF_INITIAL (64u * 1024u)
#define READ_BUF_MIN_FREE (16u * 1024u)

struct bench_worker;

typedef struct bench_conn {
    uv_tcp_t tcp;
    uv_connect_t connect_req;
    uv_write_t write_req;
    struct bench_worker *w;
    uint8_t *rbuf;
    size_t rcap, rlen;
    /* Two send buffers: one owned by the in-flight uv_write, one collecting
     * the next batch; each holds at most `depth` frames. */
    uint8_t *wbuf[2];
    size_t wlen[2];
    unsigned wfill; /* index of the collecting buffer */
    int writing;
    /* Per in-flight slot: opaque sent and send time; slot = (opaque-BASE) % depth. */
    int32_t *slot_opaque;
    uint64_t *slot_sent_ns;
    uint32_t *slot_gen;
    int connected;
    int dead;
    /* --tls: the session, and the ciphertext being written */
    SSL *ssl;
    BIO *rbio, *wbio;
    uint8_t *cbuf;
    size_t ccap;
    /* pull mode */
    unsigned index;       /* global connection index: its queue is index % queues */
    uint64_t next_offset; /* queue offset of the next pull sent */
    unsigned inflight;
    int drained;
} bench_conn;

typedef struct bench_worker {
    uv_loop_t loop;
    uv_timer_t warmup_timer;
    uv_timer_t end_timer;
    const rmq_bench_worker_config *cfg;
    bench_conn *conns;
    rmq_bench_stats *stats;
    /* Codes whose first response was fully decoded (kept across warm-up). */
    int32_t validated_codes[RMQ_BENCH_MAX_CODES];
    unsigned validated_count;
    int measuring;
    int stopping;
    int failed;
    uint64_t window_start_ns;
} bench_worker;

static void stop_all(bench_worker *w);

static void conn_fail(bench_conn *c, uint64_t *error_counter)
{
    bench_worker *w = c->w;
    if (c->dead || w->stopping)
        return;
    (*error_counter)++;
    c->dead = 1;
    w->failed = 1;
    /* One broken connection makes the figures meaningless: end the run. */
    stop_all(w);
}

static void flush(bench_conn *c);

static void on_write(uv_write_t *req, int status)
{
    bench_conn *c = req->data;
    c->writing = 0;
    c->wlen[c->wfill ^ 1u] = 0;
    if (c->w->stopping)
        return;
    if (status < 0) {
        conn_fail(c, &c->w->stats->errors.closed);
        return;
    }
    flush(c);
}

/* Fill the oneway batch: the send rate is bounded only by write completion. */
static void fill_oneway(bench_conn *c);

/* TLS: encrypt the collecting batch once the handshake is done and write
 * whatever records the session has (handshake ones included). */
static void flush_tls(bench_conn *c)
{
    unsigned idx = c->wfill;
    if (!SSL_is_init_finished(c->ssl)) {
        int r = SSL_do_handshake(c->ssl);
        int e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, r);
        if (e != SSL_ERROR_NONE && e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
            conn_fail(c, &c->w->stats->errors.connect);
            return;
        }
    }
    if (SSL_is_init_finished(c->ssl) && c->wlen[idx] > 0) {
        if (SSL_write(c->ssl, c->wbuf[idx], (int)c->wlen[idx]) <= 0) {
            conn_fail(c, &c->w->stats->errors.closed);
            return;
        }
        c->wlen[idx] = 0;
    }
    size_t pending = BIO_ctrl_pending(c->wbio);
    if (pending == 0)
        return;
    if (pending > c->ccap) {
        uint8_t *bigger = realloc(c->cbuf, pending);
        if (!bigger) {
            conn_fail(c, &c->w->stats->errors.closed);
            return;
        }
        c->cbuf = bigger;
        c->ccap = pending;
    }
    int n = BIO_read(c->wbio, c->cbuf, (int)pending);
    uv_buf_t buf = uv_buf_init((char *)c->cbuf, (unsigned)(n > 0 ? n : 0));
    c->write_req.data = c;
    if (n <= 0 || uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &buf, 1, on_write) < 0) {
        conn_fail(c, &c->w->stats->errors.closed);
        return;
    }
    /* The plaintext batch is consumed: wfill stays, on_write's reset of the
     * other batch is a no-op here. */
    c->writing = 1;
}

static void flush(bench_conn *c)
{
    if (c->writing || c->dead || c->w->stopping)
        return;
    if (c->w->cfg->oneway && c->wlen[c->wfill] == 0)
        fill_oneway(c);
    if (c->ssl) {
        flush_tls(c);
        return;
    }
    unsigned idx = c->wfill;
    if (c->wlen[idx] == 0)
        return;
    uv_buf_t buf = uv_buf_init((char *)c->wbuf[idx], (unsigned)c->wlen[idx]);
    c->write_req.data = c;
    int rc = uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &buf, 1, on_write);
    if (rc < 0) {
        conn_fail(c, &c->w->stats->errors.closed);
        return;
    }
    c->writing = 1;
    c->wfill = idx ^ 1u;
}

static void enqueue(bench_conn *c, unsigned slot, uint64_t now)
{
    const rmq_bench_worker_config *cfg = c->w->cfg;
    const rmq_request_template *tpl = cfg->tpl;
    uint64_t op = RMQ_TEMPLATE_OPAQUE_BASE + (uint64_t)c->slot_gen[slot] * cfg->depth + slot;
    if (op > INT32_MAX) {
        c->slot_gen[slot] = 0;
        op = RMQ_TEMPLATE_OPAQUE_BASE + slot;
    }
    c->slot_gen[slot]++;
    uint8_t *dst = c->wbuf[c->wfill] + c->wlen[c->wfill];
    memcpy(dst, tpl->frame, tpl->frame_len);
    rmq_template_patch_opaque(tpl, dst, (int32_t)op);
    if (cfg->pull) {
        rmq_template_patch_digits(dst, cfg->queue_off, 10, c->index % cfg->queues);
        rmq_template_patch_digits(dst, cfg->offset_off, 19, c->next_offset);
        c->next_offset += cfg->batch;
        c->inflight++;
    }
    c->wlen[c->wfill] += tpl->frame_len;
    c->slot_opaque[slot] = (int32_t)op;
    c->slot_sent_ns[slot] = now;
    if (c->w->measuring)
        c->w->stats->sent++;
}

static void fill_oneway(bench_conn *c)
{
    uint64_t now = uv_hrtime();
    for (unsigned s = 0; s < c->w->cfg->depth; s++)
        enqueue(c, s, now);
}

/* The slot of a response, or -1 when its opaque is not in flight. */
static int match_slot(const bench_conn *c, int32_t opaque)
{
    if (opaque < RMQ_TEMPLATE_OPAQUE_BASE)
        return -1;
    unsigned slot = (unsigned)(((uint32_t)opaque - RMQ_TEMPLATE_OPAQUE_BASE) % c->w->cfg->depth);
    if (c->slot_opaque[slot] != opaque)
        return -1;
    return (int)slot;
}

/* Full decode of a response whose code is new: proves the fast path read a
 * well-formed response and not something it merely looked like. */
static int validate_fully(const uint8_t *frame, size_t total, const rmq_frame_peek *pk)
{
    char err[128];
    rmq_cmd *cmd = rmq_cmd_decode(frame, total, err, sizeof(err));
    if (!cmd)
        return -1;
    int ok = cmd->code == pk->code && cmd->opaque == pk->opaque && cmd->flag == pk->flag;
    rmq_cmd_free(cmd);
    return ok ? 0 : -1;
}

/* True when responses of `code` need no more full decodes. Past the table's
 * size every further new code is taken on trust (tracked codes still were). */
static int code_validated(const bench_worker *w, int32_t code)
{
    for (unsigned i = 0; i < w->validated_count; i++)
        if (w->validated_codes[i] == code)
            return 1;
    return w->validated_count == RMQ_BENCH_MAX_CODES;
}

/* Stored records in a PULL answer's body (TOTALSIZE-prefixed, back to back). */
static uint64_t count_records(const uint8_t *frame, size_t total)
{
    if (total < 8)
        return 0;
    size_t hlen = ((size_t)frame[5] << 16) | ((size_t)frame[6] << 8) | frame[7];
    if (8 + hlen > total)
        return 0;
    const uint8_t *b = frame + 8 + hlen;
    size_t len = total - 8 - hlen, at = 0;
    uint64_t n = 0;
    while (len - at >= 4) {
        uint32_t sz = ((uint32_t)b[at] << 24) | ((uint32_t)b[at + 1] << 16) |
                      ((uint32_t)b[at + 2] << 8) | b[at + 3];
        if (sz < 4 || sz > len - at)
            break;
        at += sz;
        n++;
    }
    return n;
}

static int all_drained(const bench_worker *w)
{
    for (unsigned i = 0; i < w->cfg->connections; i++)
        if (!w->conns[i].drained || w->conns[i].inflight)
            return 0;
    return 1;
}

static void handle_frame(bench_conn *c, const uint8_t *frame, size_t total, uint64_t now)
{
    bench_worker *w = c->w;
    rmq_frame_peek pk;
    int peeked = rmq_peek_frame(frame, total, &pk);
    if (peeked != 0) {
        /* Unusual header layout: let the real codec read it. */
        char err[128];
        rmq_cmd *cmd = rmq_cmd_decode(frame, total, err, sizeof(err));
        if (!cmd) {
            conn_fail(c, &w->stats->errors.bad_frame);
            return;
        }
        pk.code = cmd->code;
        pk.opaque = cmd->opaque;
        pk.flag = cmd->flag;
        rmq_cmd_free(cmd);
    } else if (!code_validated(w, pk.code)) {
        if (validate_fully(frame, total, &pk) != 0) {
            conn_fail(c, &w->stats->errors.bad_frame);
            return;
        }
        if (w->validated_count < RMQ_BENCH_MAX_CODES)
            w->validated_codes[w->validated_count++] = pk.code;
    }
    int slot = match_slot(c, pk.opaque);
    if (slot < 0 || !(pk.flag & RMQ_FLAG_RESPONSE)) {
        w->stats->errors.unmatched++;
        return;
    }
    c->slot_opaque[slot] = 0; /* never a valid opaque: slot is free */
    if (w->measuring) {
        w->stats->responses++;
        rmq_stats_count_code(w->stats, pk.code);
        rmq_hist_record(&w->stats->hist, now - c->slot_sent_ns[slot]);
    }
    if (w->cfg->pull) {
        c->inflight--;
        if (pk.code == 0) {
            if (w->measuring)
                w->stats->messages += count_records(frame, total);
        } else {
            c->drained = 1;
        }
        if (c->drained) {
            if (all_drained(w))
                stop_all(w);
            return;
        }
    }
    if (!w->stopping && !w->cfg->oneway)
        enqueue(c, (unsigned)slot, now);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    bench_conn *c = h->data;
    if (c->rcap - c->rlen < READ_BUF_MIN_FREE) {
        size_t cap = c->rcap * 2;
        uint8_t *bigger = realloc(c->rbuf, cap);
        if (bigger) {
            c->rbuf = bigger;
            c->rcap = cap;
        }
    }
    *buf = uv_buf_init((char *)c->rbuf + c->rlen, (unsigned)(c->rcap - c->rlen));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    bench_conn *c = s->data;
    bench_worker *w = c->w;
    if (nread == 0)
        return;
    if (nread < 0) {
        conn_fail(c, &w->stats->errors.closed);
        return;
    }
    if (c->ssl) {
        /* The bytes landed in rbuf; move them into the session and decrypt
         * in their place. */
        if (BIO_write(c->rbio, c->rbuf + c->rlen, (int)nread) != (int)nread) {
            conn_fail(c, &w->stats->errors.closed);
            return;
        }
        for (;;) {
            if (c->rcap - c->rlen < READ_BUF_MIN_FREE) {
                uint8_t *bigger = realloc(c->rbuf, c->rcap * 2);
                if (!bigger) {
                    conn_fail(c, &w->stats->errors.closed);
                    return;
                }
                c->rbuf = bigger;
                c->rcap *= 2;
            }
            int n = SSL_read(c->ssl, c->rbuf + c->rlen, (int)(c->rcap - c->rlen));
            if (n > 0) {
                c->rlen += (size_t)n;
                continue;
            }
            int e = SSL_get_error(c->ssl, n);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                break;
            conn_fail(c, &w->stats->errors.closed);
            return;
        }
    } else {
        c->rlen += (size_t)nread;
    }
    uint64_t now = uv_hrtime();
    size_t off = 0;
    while (!c->dead) {
        size_t total = 0;
        const char *why = NULL;
        rmq_frame_status st = rmq_frame_check(c->rbuf + off, c->rlen - off,
                                              RMQ_DEFAULT_MAX_FRAME_BYTES, &total, &why);
        if (st == RMQ_FRAME_NEED_MORE)
            break;
        if (st != RMQ_FRAME_READY) {
            conn_fail(c, &w->stats->errors.bad_frame);
            return;
        }
        handle_frame(c, c->rbuf + off, total, now);
        off += total;
    }
    if (c->dead)
        return;
    if (off > 0) {
        memmove(c->rbuf, c->rbuf + off, c->rlen - off);
        c->rlen -= off;
    }
    flush(c);
}

static void on_connect(uv_connect_t *req, int status)
{
    bench_conn *c = req->data;
    bench_worker *w = c->w;
    if (w->stopping)
        return;
    if (status < 0) {
        conn_fail(c, &w->stats->errors.connect);
        return;
    }
    c->connected = 1;
    uv_tcp_nodelay(&c->tcp, 1);
    if (w->cfg->tls) {
        c->ssl = SSL_new(w->cfg->tls);
        c->rbio = BIO_new(BIO_s_mem());
        c->wbio = BIO_new(BIO_s_mem());
        if (!c->ssl || !c->rbio || !c->wbio) {
            BIO_free(c->rbio);
            BIO_free(c->wbio);
            c->rbio = c->wbio = NULL;
            conn_fail(c, &w->stats->errors.connect);
            return;
        }
        BIO_set_mem_eof_return(c->rbio, -1);
        BIO_set_mem_eof_return(c->wbio, -1);
        SSL_set_bio(c->ssl, c->rbio, c->wbio);
        SSL_set_connect_state(c->ssl);
    }
    int rc = uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    if (rc < 0) {
        conn_fail(c, &w->stats->errors.closed);
        return;
    }
    if (!w->cfg->oneway) {
        uint64_t now = uv_hrtime();
        for (unsigned s = 0; s < w->cfg->depth; s++)
            enqueue(c, s, now);
    }
    flush(c);
}

static void begin_window(bench_worker *w)
{
    rmq_stats_reset_window(w->stats);
    w->measuring = 1;
    w->window_start_ns = uv_hrtime();
}

static void on_warmup_end(uv_timer_t *t)
{
    begin_window(t->data);
}

static void on_run_end(uv_timer_t *t)
{
    stop_all(t->data);
}

static void stop_all(bench_worker *w)
{
    if (w->stopping)
        return;
    w->stopping = 1;
    /* A run cut short by a failure still reports the rate up to that point. */
    if (w->measuring)
        w->stats->window_seconds = (double)(uv_hrtime() - w->window_start_ns) / 1e9;
    w->measuring = 0;
    uv_timer_stop(&w->warmup_timer);
    uv_timer_stop(&w->end_timer);
    for (unsigned i = 0; i < w->cfg->connections; i++) {
        uv_handle_t *h = (uv_handle_t *)&w->conns[i].tcp;
        if (!uv_is_closing(h))
            uv_close(h, NULL);
    }
    uv_close((uv_handle_t *)&w->warmup_timer, NULL);
    uv_close((uv_handle_t *)&w->end_timer, NULL);
}

static int conn_init(bench_worker *w, bench_conn *c)
{
    const rmq_bench_worker_config *cfg = w->cfg;
    size_t batch = (size_t)cfg->depth * cfg->tpl->frame_len;
    c->w = w;
    c->rcap = READ_BUF_INITIAL;
    c->rbuf = malloc(c->rcap);
    c->wbuf[0] = malloc(batch);
    c->wbuf[1] = malloc(batch);
    c->slot_opaque = calloc(cfg->depth, sizeof(*c->slot_opaque));
    c->slot_sent_ns = calloc(cfg->depth, sizeof(*c->slot_sent_ns));
    c->slot_gen = calloc(cfg->depth, sizeof(*c->slot_gen));
    if (!c->rbuf || !c->wbuf[0] || !c->wbuf[1] || !c->slot_opaque || !c->slot_sent_ns ||
        !c->slot_gen)
        return -1;
    return 0;
}

static void conn_release(bench_conn *c)
{
    free(c->rbuf);
    free(c->wbuf[0]);
    free(c->wbuf[1]);
    free(c->slot_opaque);
    free(c->slot_sent_ns);
    free(c->slot_gen);
    if (c->ssl)
        SSL_free(c->ssl); /* and its BIOs */
    free(c->cbuf);
}

int rmq_bench_worker_run(const rmq_bench_worker_config *cfg, rmq_bench_stats *stats)
{
    rmq_stats_init(stats);
    bench_worker w;
    memset(&w, 0, sizeof(w));
    w.cfg = cfg;
    w.stats = stats;
    if (uv_loop_init(&w.loop) != 0)
        return -1;
    w.conns = calloc(cfg->connections, sizeof(*w.conns));
    int rc = w.conns ? 0 : -1;
    unsigned started = 0;
    for (; rc == 0 && started < cfg->connections; started++) {
        bench_conn *c = &w.conns[started];
        c->index = cfg->conn_base + started;
        if (conn_init(&w, c) != 0 || uv_tcp_init(&w.loop, &c->tcp) != 0) {
            rc = -1;
            break;
        }
        c->tcp.data = c;
        c->connect_req.data = c;
        if (uv_tcp_connect(&c->connect_req, &c->tcp, cfg->addr, on_connect) != 0) {
            stats->errors.connect++;
            rc = -1; /* the loop's started++ still counts this handle for closing */
        }
    }
    uv_timer_init(&w.loop, &w.warmup_timer);
    uv_timer_init(&w.loop, &w.end_timer);
    w.warmup_timer.data = &w;
    w.end_timer.data = &w;
    if (rc == 0) {
        uint64_t warm_ms = cfg->warmup_ns / 1000000u;
        uint64_t end_ms = (cfg->warmup_ns + cfg->measure_ns) / 1000000u;
        if (warm_ms == 0)
            begin_window(&w);
        else
            uv_timer_start(&w.warmup_timer, on_warmup_end, warm_ms, 0);
        uv_timer_start(&w.end_timer, on_run_end, end_ms, 0);
    } else {
        /* Close what was opened; only initialised handles are touched. */
        w.stopping = 1;
        for (unsigned i = 0; i < started; i++)
            uv_close((uv_handle_t *)&w.conns[i].tcp, NULL);
        uv_close((uv_handle_t *)&w.warmup_timer, NULL);
        uv_close((uv_handle_t *)&w.end_timer, NULL);
    }
    uv_run(&w.loop, UV_RUN_DEFAULT);
    if (w.failed)
        rc = -1;
    if (w.conns) {
        for (unsigned i = 0; i < cfg->connections; i++)
            conn_release(&w.conns[i]);
        free(w.conns);
    }
    uv_loop_close(&w.loop);
    return rc;
}
