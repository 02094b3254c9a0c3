/* pipelined_client.c — non-blocking pipelined connections for the request
 * fuzz test: queues encoded frames, reads answers, matches them by opaque and
 * keeps the failure record. Never asserts and never decides pass/fail: the
 * test reads the counters. */
#include "pipelined_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rmq_test_support.h"

#define MAX_ANSWER_FRAME (64u * 1024u * 1024u)
#define MAX_UNSENT (4u * 1024u * 1024u)

void fuzz_pipeline_init(fuzz_pipeline *p, size_t window, int answer_timeout_ms)
{
    memset(p, 0, sizeof *p);
    p->window = window ? window : 1;
    p->answer_timeout_ms = answer_timeout_ms;
    for (size_t i = 0; i < FUZZ_MAX_CONNS; i++)
        p->conns[i].fd = -1;
}

static void note_failure(fuzz_pipeline *p, const fuzz_pending *pd, const char *why)
{
    p->unanswered++;
    fuzz_counts_add_int(&p->unanswered_by_code, pd->code);
    if (p->failures_kept < FUZZ_FAILURES_KEPT)
        snprintf(p->failures[p->failures_kept++], sizeof p->failures[0],
                 "opaque %d code %d: %s [%s]", (int)pd->opaque, (int)pd->code, why, pd->label);
}

static void close_conn(fuzz_pipeline *p, fuzz_conn *c, const char *why)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    for (size_t i = 0; i < c->npending; i++)
        note_failure(p, &c->pending[i], why);
    c->npending = 0;
    c->out_len = c->out_off = 0;
}

int fuzz_pipeline_connect(fuzz_pipeline *p, int port)
{
    if (p->nconns == FUZZ_MAX_CONNS)
        return -1;
    int fd = rmq_tc_connect(port);
    if (fd < 0)
        return -1;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        close(fd);
        return -1;
    }
    p->conns[p->nconns].fd = fd;
    return (int)p->nconns++;
}

static int reserve(uint8_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 65536;
    while (nc < need)
        nc *= 2;
    uint8_t *b = realloc(*buf, nc);
    if (!b)
        return -1;
    *buf = b;
    *cap = nc;
    return 0;
}

static int enqueue(fuzz_conn *c, const rmq_cmd *cmd)
{
    size_t need = rmq_cmd_encoded_size(cmd);
    if (need == 0)
        return -1;
    if (c->out_off > 0 && c->out_off == c->out_len)
        c->out_off = c->out_len = 0;
    if (reserve(&c->out, &c->out_cap, c->out_len + need) != 0)
        return -1;
    size_t n = rmq_cmd_encode(cmd, c->out + c->out_len, need);
    if (n == 0)
        return -1;
    c->out_len += n;
    return 0;
}

/* Answer a server-initiated request (a relayed 307/309) at once, SUCCESS
 * with no body: the test stands in for a client that is alive. */
static void answer_server_request(fuzz_pipeline *p, fuzz_conn *c, const rmq_cmd *req)
{
    p->server_requests++;
    if (req->flag & RMQ_FLAG_ONEWAY)
        return;
    rmq_cmd *resp = rmq_cmd_new_response(req, 0, NULL);
    if (resp)
        enqueue(c, resp);
    rmq_cmd_free(resp);
}

static void handle_frame(fuzz_pipeline *p, fuzz_conn *c, const rmq_cmd *f)
{
    if (!(f->flag & RMQ_FLAG_RESPONSE)) {
        answer_server_request(p, c, f);
        return;
    }
    for (size_t i = 0; i < c->npending; i++) {
        if (c->pending[i].opaque == f->opaque) {
            p->answered++;
            fuzz_counts_add_int(&p->answers_by_code, f->code);
            if (f->code != 0 && (!f->remark || !*f->remark)) {
                p->silent_errors++;
                if (p->silent_errors_kept < FUZZ_FAILURES_KEPT)
                    snprintf(p->silent_error_examples[p->silent_errors_kept++],
                             sizeof p->silent_error_examples[0], "code %d answered %d: [%s]",
                             (int)c->pending[i].code, (int)f->code, c->pending[i].label);
            }
            c->pending[i] = c->pending[--c->npending];
            return;
        }
    }
    p->stray_answers++;
}

static void read_frames(fuzz_pipeline *p, fuzz_conn *c)
{
    /* answers that arrived before a close still count: parse, then close */
    const char *gone = NULL;
    for (;;) {
        if (reserve(&c->in, &c->in_cap, c->in_len + 65536) != 0) {
            gone = "test out of memory";
            break;
        }
        ssize_t r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
        if (r == 0) {
            gone = "connection closed by the daemon";
            break;
        }
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                gone = "connection reset";
            break;
        }
        c->in_len += (size_t)r;
    }
    size_t at = 0;
    while (c->fd >= 0) {
        size_t total = 0;
        const char *reason = NULL;
        rmq_frame_status st =
            rmq_frame_check(c->in + at, c->in_len - at, MAX_ANSWER_FRAME, &total, &reason);
        if (st == RMQ_FRAME_NEED_MORE)
            break;
        if (st == RMQ_FRAME_INVALID) {
            close_conn(p, c, "the daemon sent an invalid frame");
            return;
        }
        char err[128];
        rmq_cmd *f = rmq_cmd_decode(c->in + at, total, err, sizeof err);
        if (!f) {
            close_conn(p, c, "the daemon sent an undecodable frame");
            return;
        }
        handle_frame(p, c, f);
        rmq_cmd_free(f);
        at += total;
    }
    if (at > 0 && c->fd >= 0) {
        memmove(c->in, c->in + at, c->in_len - at);
        c->in_len -= at;
    }
    if (gone && c->fd >= 0)
        close_conn(p, c, gone);
}

static void write_out(fuzz_pipeline *p, fuzz_conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                close_conn(p, c, "send failed: connection gone");
            return;
        }
        c->out_off += (size_t)w;
    }
    c->out_off = c->out_len = 0;
}

static void expire(fuzz_pipeline *p)
{
    uint64_t now = rmq_test_now_ms();
    for (size_t k = 0; k < p->nconns; k++) {
        fuzz_conn *c = &p->conns[k];
        for (size_t i = 0; i < c->npending;) {
            if (c->pending[i].deadline_ms <= now) {
                note_failure(p, &c->pending[i], "no answer before the deadline");
                c->pending[i] = c->pending[--c->npending];
            } else {
                i++;
            }
        }
    }
}

void fuzz_pipeline_pump(fuzz_pipeline *p, int timeout_ms)
{
    struct pollfd fds[FUZZ_MAX_CONNS];
    size_t idx[FUZZ_MAX_CONNS], n = 0;
    for (size_t k = 0; k < p->nconns; k++) {
        fuzz_conn *c = &p->conns[k];
        if (c->fd < 0)
            continue;
        fds[n] = (struct pollfd){c->fd, POLLIN | (c->out_off < c->out_len ? POLLOUT : 0), 0};
        idx[n++] = k;
    }
    if (n > 0 && poll(fds, (nfds_t)n, timeout_ms) > 0) {
        for (size_t i = 0; i < n; i++) {
            fuzz_conn *c = &p->conns[idx[i]];
            if (c->fd >= 0 && (fds[i].revents & POLLOUT))
                write_out(p, c);
            if (c->fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                read_frames(p, c);
        }
    }
    expire(p);
}

int fuzz_pipeline_submit(fuzz_pipeline *p, size_t conn, const rmq_cmd *cmd, const char *label)
{
    fuzz_conn *c = &p->conns[conn];
    while (c->fd >= 0 && (c->npending >= p->window || c->out_len - c->out_off > MAX_UNSENT))
        fuzz_pipeline_pump(p, 50);
    bool oneway = (cmd->flag & RMQ_FLAG_ONEWAY) != 0;
    fuzz_pending pd = {cmd->opaque, cmd->code, rmq_test_now_ms() + (uint64_t)p->answer_timeout_ms,
                       ""};
    snprintf(pd.label, sizeof pd.label, "%s", label);
    if (c->fd < 0) {
        if (!oneway)
            note_failure(p, &pd, "connection already closed by the daemon");
        return -1;
    }
    if (enqueue(c, cmd) != 0)
        return -1;
    if (!oneway) {
        if (c->npending == c->pending_cap) {
            size_t nc = c->pending_cap ? c->pending_cap * 2 : 64;
            fuzz_pending *v = realloc(c->pending, nc * sizeof *v);
            if (!v)
                return -1;
            c->pending = v;
            c->pending_cap = nc;
        }
        c->pending[c->npending++] = pd;
    }
    write_out(p, c);
    return 0;
}

size_t fuzz_pipeline_in_flight(const fuzz_pipeline *p)
{
    size_t n = 0;
    for (size_t k = 0; k < p->nconns; k++)
        n += p->conns[k].npending + (p->conns[k].out_len > p->conns[k].out_off);
    return n;
}

bool fuzz_pipeline_drain(fuzz_pipeline *p, uint64_t deadline_ms)
{
    while (fuzz_pipeline_in_flight(p) > 0) {
        if (rmq_test_now_ms() >= deadline_ms)
            return false;
        fuzz_pipeline_pump(p, 50);
    }
    return true;
}

void fuzz_pipeline_close(fuzz_pipeline *p)
{
    for (size_t k = 0; k < p->nconns; k++) {
        fuzz_conn *c = &p->conns[k];
        if (c->fd >= 0)
            close(c->fd);
        free(c->out);
        free(c->in);
        free(c->pending);
        memset(c, 0, sizeof *c);
        c->fd = -1;
    }
    p->nconns = 0;
    fuzz_counts_free(&p->answers_by_code);
    fuzz_counts_free(&p->unanswered_by_code);
}
