/* grpc_h2.c — gRPC requests and answers on an nghttp2 server session.
 * nghttp2 does the HTTP/2 work (framing, HPACK, flow control, SETTINGS and
 * PING); this file checks requests are gRPC, reassembles messages and
 * produces answers with a per-stream output queue read by a data provider,
 * so an answer may be queued at any time the loop runs. */
#include "grpc_h2.h"

#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_wire.h"

#define HEADERS_MAX_BYTES 16384 /* request metadata kept per stream */
#define HEADERS_MAX_COUNT 64
_Static_assert(HEADERS_MAX_BYTES + 2 * HEADERS_MAX_COUNT <= UINT16_MAX,
               "h2_stream.hoff is uint16_t");

typedef struct h2_stream {
    int32_t id;
    char *path;
    char content_type_ok;
    char method_ok;
    uint64_t timeout_ms;
    /* the request's metadata until on_call: "name\0value\0" each in one
     * buffer (was two strndup each, and 64 inline slots made every stream
     * a 1 KiB calloc that consolidated malloc's fast bins per request) */
    char *hbuf;
    size_t hlen, hcap;
    uint16_t hoff[HEADERS_MAX_COUNT][2]; /* name, value offsets in hbuf */
    size_t nhdrs;
    size_t hdr_bytes;
    grpc_msg_reader in;
    bool started;   /* on_call reported */
    bool refused;   /* answered by the session itself */
    bool responded; /* response headers submitted */
    bool finished;  /* trailers queued */
    bool trailers_sent;
    bool deferred; /* the data provider waits for output */
    uint8_t *out;
    size_t out_len, out_off, out_cap;
    char status_text[16];
    char *message;                 /* percent-encoded grpc-message */
    struct h2_stream *prev, *next; /* the session's streams */
} h2_stream;

struct grpc_h2 {
    nghttp2_session *s;
    grpc_h2_callbacks cb;
    void *ud;
    size_t max_msg;
    /* nghttp2_session_del frees its streams without callbacks: ours are
     * listed here so grpc_h2_free can end them */
    h2_stream *streams;
};

static void stream_free(h2_stream *st)
{
    free(st->path);
    free(st->hbuf);
    grpc_msg_reader_free(&st->in);
    free(st->out);
    free(st->message);
    free(st);
}

static h2_stream *stream_of(grpc_h2 *h, int32_t id)
{
    return nghttp2_session_get_stream_user_data(h->s, id);
}

/* ---- output -------------------------------------------------------------- */

static ssize_t read_out(nghttp2_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                        nghttp2_data_source *src, void *user)
{
    (void)src;
    (void)user;
    h2_stream *st = nghttp2_session_get_stream_user_data(s, id);
    if (!st)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    size_t avail = st->out_len - st->out_off;
    if (avail > 0) {
        size_t n = avail < len ? avail : len;
        memcpy(buf, st->out + st->out_off, n);
        st->out_off += n;
        if (st->out_off == st->out_len)
            st->out_off = st->out_len = 0;
        return (ssize_t)n;
    }
    if (st->finished && !st->trailers_sent) {
        nghttp2_nv tr[2];
        size_t n = 0;
        tr[n++] = (nghttp2_nv){(uint8_t *)"grpc-status", (uint8_t *)st->status_text, 11,
                               strlen(st->status_text), NGHTTP2_NV_FLAG_NONE};
        if (st->message && st->message[0])
            tr[n++] = (nghttp2_nv){(uint8_t *)"grpc-message", (uint8_t *)st->message, 12,
                                   strlen(st->message), NGHTTP2_NV_FLAG_NONE};
        if (nghttp2_submit_trailer(s, id, tr, n) != 0)
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        st->trailers_sent = true;
        *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        return 0;
    }
    st->deferred = true;
    return NGHTTP2_ERR_DEFERRED;
}

static int submit_headers(grpc_h2 *h, h2_stream *st)
{
    nghttp2_nv hd[] = {
        {(uint8_t *)":status", (uint8_t *)"200", 7, 3, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, NGHTTP2_NV_FLAG_NONE},
    };
    nghttp2_data_provider dp = {.source.ptr = st, .read_callback = read_out};
    if (nghttp2_submit_response(h->s, st->id, hd, 2, &dp) != 0)
        return -1;
    st->responded = true;
    return 0;
}

/* Answer with headers and trailers in one HEADERS frame (gRPC's
 * "Trailers-Only"), ending the stream. */
static int submit_trailers_only(grpc_h2 *h, int32_t id, int status, const char *message)
{
    char code[16], enc[1024];
    snprintf(code, sizeof(code), "%d", status);
    grpc_message_encode(message ? message : "", enc, sizeof(enc));
    nghttp2_nv hd[4] = {
        {(uint8_t *)":status", (uint8_t *)"200", 7, 3, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"grpc-status", (uint8_t *)code, 11, strlen(code), NGHTTP2_NV_FLAG_NONE},
        {(uint8_t *)"grpc-message", (uint8_t *)enc, 12, strlen(enc), NGHTTP2_NV_FLAG_NONE},
    };
    return nghttp2_submit_response(h->s, id, hd, enc[0] ? 4 : 3, NULL) == 0 ? 0 : -1;
}

/* The session answers a request it will not hand over, and resets what the
 * client still sends on it. */
static void refuse(grpc_h2 *h, h2_stream *st, int status, const char *message)
{
    if (st->refused || st->responded)
        return;
    st->refused = true;
    st->finished = true;
    submit_trailers_only(h, st->id, status, message);
}

static void wake(grpc_h2 *h, h2_stream *st)
{
    if (st->deferred) {
        st->deferred = false;
        nghttp2_session_resume_data(h->s, st->id);
    }
}

int grpc_h2_send_message(grpc_h2 *h, int32_t id, const uint8_t *msg, size_t len)
{
    h2_stream *st = stream_of(h, id);
    if (!st || st->finished || len > UINT32_MAX)
        return 0;
    size_t need = st->out_len + GRPC_PREFIX_LEN + len;
    if (need > st->out_cap) {
        size_t ncap = st->out_cap ? st->out_cap : 1024;
        while (ncap < need)
            ncap *= 2;
        uint8_t *nb = realloc(st->out, ncap);
        if (!nb)
            return -1;
        st->out = nb;
        st->out_cap = ncap;
    }
    grpc_msg_prefix(st->out + st->out_len, (uint32_t)len);
    if (len)
        memcpy(st->out + st->out_len + GRPC_PREFIX_LEN, msg, len);
    st->out_len = need;
    if (!st->responded)
        return submit_headers(h, st);
    wake(h, st);
    return 0;
}

int grpc_h2_finish(grpc_h2 *h, int32_t id, int status, const char *message)
{
    h2_stream *st = stream_of(h, id);
    if (!st || st->finished)
        return 0;
    st->finished = true;
    if (!st->responded) {
        st->refused = true; /* nothing more goes out on it */
        return submit_trailers_only(h, id, status, message);
    }
    if (status >= 0 && status < 100) {
        /* gRPC's codes (0-16): without snprintf, once per call */
        char *p = st->status_text;
        if (status >= 10)
            *p++ = (char)('0' + status / 10);
        *p++ = (char)('0' + status % 10);
        *p = '\0';
    } else {
        snprintf(st->status_text, sizeof(st->status_text), "%d", status);
    }
    if (message && message[0]) {
        size_t cap = strlen(message) * 3 + 1;
        st->message = malloc(cap);
        if (st->message)
            grpc_message_encode(message, st->message, cap);
    }
    wake(h, st);
    return 0;
}

/* ---- input ---------------------------------------------------------------- */

static void unlink_stream(grpc_h2 *h, h2_stream *st)
{
    if (st->prev)
        st->prev->next = st->next;
    else
        h->streams = st->next;
    if (st->next)
        st->next->prev = st->prev;
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    h2_stream *st = calloc(1, sizeof(*st));
    if (!st)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    grpc_h2 *h = user;
    st->id = f->hd.stream_id;
    grpc_msg_reader_init(&st->in, h->max_msg);
    st->next = h->streams;
    if (h->streams)
        h->streams->prev = st;
    h->streams = st;
    nghttp2_session_set_stream_user_data(s, st->id, st);
    return 0;
}

static bool name_is(const uint8_t *n, size_t nl, const char *lit)
{
    return nl == strlen(lit) && memcmp(n, lit, nl) == 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user)
{
    (void)flags;
    (void)user;
    h2_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (!st || st->started || f->hd.type != NGHTTP2_HEADERS)
        return 0; /* trailers of a request carry nothing we use */
    if (name_is(name, namelen, ":path")) {
        free(st->path);
        st->path = strndup((const char *)value, valuelen);
        return st->path ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    if (name_is(name, namelen, ":method")) {
        st->method_ok = valuelen == 4 && memcmp(value, "POST", 4) == 0;
        return 0;
    }
    if (name_is(name, namelen, "content-type")) {
        /* "application/grpc" or "application/grpc+proto" and the like */
        st->content_type_ok = valuelen >= 16 && memcmp(value, "application/grpc", 16) == 0 &&
                              (valuelen == 16 || value[16] == '+' || value[16] == ';');
        return 0;
    }
    if (name_is(name, namelen, "grpc-timeout")) {
        uint64_t ms;
        if (grpc_timeout_parse((const char *)value, valuelen, &ms))
            st->timeout_ms = ms ? ms : 1;
        return 0;
    }
    if (namelen > 0 && name[0] == ':')
        return 0;
    if (st->nhdrs >= HEADERS_MAX_COUNT || st->hdr_bytes + namelen + valuelen > HEADERS_MAX_BYTES)
        return 0; /* metadata beyond what a handler needs is dropped */
    size_t need = st->hlen + namelen + valuelen + 2;
    if (need > st->hcap) {
        size_t cap = st->hcap ? st->hcap : 512;
        while (cap < need)
            cap *= 2;
        char *nb = realloc(st->hbuf, cap);
        if (!nb)
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        st->hbuf = nb;
        st->hcap = cap;
    }
    /* offsets fit uint16_t: HEADERS_MAX_BYTES plus two NULs per header */
    st->hoff[st->nhdrs][0] = (uint16_t)st->hlen;
    memcpy(st->hbuf + st->hlen, name, namelen);
    st->hbuf[st->hlen + namelen] = '\0';
    st->hlen += namelen + 1;
    st->hoff[st->nhdrs][1] = (uint16_t)st->hlen;
    memcpy(st->hbuf + st->hlen, value, valuelen);
    st->hbuf[st->hlen + valuelen] = '\0';
    st->hlen += valuelen + 1;
    st->nhdrs++;
    st->hdr_bytes += namelen + valuelen;
    return 0;
}

static void headers_complete(grpc_h2 *h, h2_stream *st)
{
    if (!st->method_ok || !st->content_type_ok || !st->path || st->path[0] != '/') {
        refuse(h, st, 13 /* INTERNAL, as grpc-java answers a malformed request */,
               !st->content_type_ok ? "invalid content-type" : "invalid request");
        return;
    }
    st->started = true;
    grpc_h2_header hdrs[HEADERS_MAX_COUNT];
    for (size_t i = 0; i < st->nhdrs; i++)
        hdrs[i] = (grpc_h2_header){st->hbuf + st->hoff[i][0], st->hbuf + st->hoff[i][1]};
    grpc_h2_call_info info = {st->path, st->timeout_ms, hdrs, st->nhdrs};
    h->cb.on_call(h->ud, st->id, &info);
    /* valid during on_call only (grpc_h2.h): later headers are not kept */
    free(st->hbuf);
    st->hbuf = NULL;
    st->hlen = st->hcap = st->nhdrs = 0;
}

static void deliver_messages(grpc_h2 *h, h2_stream *st)
{
    for (;;) {
        const uint8_t *msg;
        size_t len;
        grpc_read_status rs = grpc_msg_reader_next(&st->in, &msg, &len);
        if (rs == GRPC_READ_NEED_MORE)
            return;
        if (rs != GRPC_READ_MESSAGE) {
            char why[96];
            if (rs == GRPC_READ_TOO_LARGE)
                snprintf(why, sizeof(why), "message larger than %zu bytes", h->max_msg);
            else
                snprintf(why, sizeof(why), "%s",
                         rs == GRPC_READ_COMPRESSED ? "compressed messages are not accepted"
                                                    : "out of memory");
            int status = rs == GRPC_READ_TOO_LARGE    ? GRPC_STATUS_RESOURCE_EXHAUSTED
                         : rs == GRPC_READ_COMPRESSED ? GRPC_STATUS_UNIMPLEMENTED
                                                      : GRPC_STATUS_INTERNAL;
            grpc_msg_reader_free(&st->in);
            /* the handler side learns it through on_close; what the client
             * still sends on the stream is dropped */
            grpc_h2_finish(h, st->id, status, why);
            st->refused = true;
            return;
        }
        h->cb.on_message(h->ud, st->id, msg, len);
        grpc_msg_reader_consume(&st->in, len);
        if (!stream_of(h, st->id))
            return;
    }
}

static int on_data_chunk(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *data,
                         size_t len, void *user)
{
    (void)flags;
    grpc_h2 *h = user;
    h2_stream *st = nghttp2_session_get_stream_user_data(s, id);
    if (!st || !st->started || st->refused)
        return 0;
    if (grpc_msg_reader_pending(&st->in) == 0) {
        /* Whole messages in the chunk go to the call from nghttp2's buffer:
         * copying each into the stream's reader first was a 2 KiB malloc and
         * a copy per 5.x request. The same parser reads them (a view of the
         * chunk: it only reads); the rest, and every error, take the
         * reader's path below. */
        grpc_msg_reader view = {
            .buf = (uint8_t *)data, .len = len, .cap = len, .max_msg = st->in.max_msg};
        const uint8_t *msg;
        size_t mlen;
        while (grpc_msg_reader_next(&view, &msg, &mlen) == GRPC_READ_MESSAGE) {
            h->cb.on_message(h->ud, id, msg, mlen);
            view.buf += GRPC_PREFIX_LEN + mlen;
            view.len -= GRPC_PREFIX_LEN + mlen;
            if (!stream_of(h, id))
                return 0;
        }
        data = view.buf;
        len = view.len;
        if (len == 0)
            return 0;
    }
    if (grpc_msg_reader_feed(&st->in, data, len) != 0)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    deliver_messages(h, st);
    return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
    grpc_h2 *h = user;
    h2_stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (!st)
        return 0;
    if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
        headers_complete(h, st);
    if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
        (f->hd.flags & NGHTTP2_FLAG_END_STREAM) && st->started && !st->refused) {
        if (grpc_msg_reader_pending(&st->in) > 0) {
            grpc_h2_finish(h, st->id, GRPC_STATUS_INTERNAL, "incomplete message at end of stream");
            st->refused = true;
            return 0;
        }
        h->cb.on_half_close(h->ud, st->id);
    }
    return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t id, uint32_t code, void *user)
{
    (void)code;
    grpc_h2 *h = user;
    h2_stream *st = nghttp2_session_get_stream_user_data(s, id);
    if (!st)
        return 0;
    nghttp2_session_set_stream_user_data(s, id, NULL);
    unlink_stream(h, st);
    if (st->started)
        h->cb.on_close(h->ud, id);
    stream_free(st);
    return 0;
}

grpc_h2 *grpc_h2_new(const grpc_h2_callbacks *cb, void *ud, size_t max_msg)
{
    grpc_h2 *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->cb = *cb;
    h->ud = ud;
    h->max_msg = max_msg;
    nghttp2_session_callbacks *cbs;
    if (nghttp2_session_callbacks_new(&cbs) != 0) {
        free(h);
        return NULL;
    }
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    int rc = nghttp2_session_server_new(&h->s, cbs, h);
    nghttp2_session_callbacks_del(cbs);
    if (rc != 0) {
        free(h);
        return NULL;
    }
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 1000},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20},
    };
    if (nghttp2_submit_settings(h->s, NGHTTP2_FLAG_NONE, iv, 2) != 0) {
        grpc_h2_free(h);
        return NULL;
    }
    return h;
}

void grpc_h2_free(grpc_h2 *h)
{
    if (!h)
        return;
    nghttp2_session_del(h->s);
    while (h->streams) {
        h2_stream *st = h->streams;
        unlink_stream(h, st);
        if (st->started)
            h->cb.on_close(h->ud, st->id);
        stream_free(st);
    }
    free(h);
}

int grpc_h2_feed(grpc_h2 *h, const uint8_t *data, size_t len)
{
    ssize_t n = nghttp2_session_mem_recv(h->s, data, len);
    return n < 0 || (size_t)n != len ? -1 : 0;
}

int grpc_h2_flush(grpc_h2 *h, int (*sink)(void *ud, const uint8_t *data, size_t len), void *sink_ud)
{
    for (;;) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(h->s, &data);
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        if (sink(sink_ud, data, (size_t)n) != 0)
            return -1;
    }
}

bool grpc_h2_done(const grpc_h2 *h)
{
    return !nghttp2_session_want_read(h->s) && !nghttp2_session_want_write(h->s);
}
