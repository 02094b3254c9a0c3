/* grpc_recv_phase.c — rmqbench --grpc's receive+ack phase: -c
 * SimpleConsumers, each on its own connection as a 5.x SimpleConsumer is
 * (Telemetry settings, Heartbeat), loop ReceiveMessage (server-streaming,
 * --batch, 30 s invisible) and AckMessage each message received, --ackc
 * Acks in flight per consumer, until every sent message is acknowledged;
 * prints the `recv` line (as tests/bench/proxy5/main.go does). */
#include <stdlib.h>
#include <string.h>

#include "grpc_bench_msgs.h"
#include "grpc_phase.h"

#define CODE_OK 20000
#define CODE_MESSAGE_NOT_FOUND 40401

typedef struct recv_state recv_state;
typedef struct consumer consumer;

typedef struct ack_slot {
    gbc_call call;
    consumer *cs;
    int code;
} ack_slot;

struct consumer {
    recv_state *st;
    unsigned index;
    gbc_call recv;
    int recv_code;
    int parse_failed;
    gbm_received *msgs; /* the batch being acknowledged */
    size_t n_msgs, cap, ack_next, acks_ended;
    ack_slot *acks;
};

struct recv_state {
    gb_run *r;
    gbc_conn **conns;
    consumer *cs;
    unsigned n;
    uint64_t target, got, acked, empty_polls;
    uint64_t done_ns;
    int stop;    /* every message is acknowledged */
    int closing; /* calls ending as the connections close start no more */
    rmq_latency_histogram recv_lat, ack_lat;
    gb_errors errors;
    uint8_t buf[2048];
};

static void fail(recv_state *st, int code, const char *what, const gbc_call *call)
{
    gb_errors_add(&st->errors, code);
    if (st->errors.total == 1)
        fprintf(stderr, "rmqbench: first failed %s: code %d %s\n", what, code,
                call ? call->grpc_message : "");
}

static void start_receive(consumer *cs)
{
    recv_state *st = cs->st;
    const rmq_bench_options *o = st->r->o;
    gbc_conn *c = st->conns[cs->index];
    if (st->stop || st->closing || !c)
        return;
    cs->recv_code = -1;
    cs->parse_failed = 0;
    cs->n_msgs = cs->ack_next = cs->acks_ended = 0;
    size_t len =
        gbm_receive(st->buf, sizeof st->buf, o->group, o->topic, o->batch, 30000, o->long_poll_ms);
    /* the deadline leaves room for the long poll (Java answers
     * ILLEGAL_POLLING_TIME when less remains than it would poll) */
    if (len == 0 ||
        gbc_start(c, &cs->recv, "ReceiveMessage", st->buf, len, o->long_poll_ms + 10000) != 0)
        fail(st, -1, "ReceiveMessage start", NULL);
}

static void start_ack(ack_slot *a)
{
    consumer *cs = a->cs;
    recv_state *st = cs->st;
    gbc_conn *c = st->conns[cs->index];
    while (cs->ack_next < cs->n_msgs && !st->closing) {
        const gbm_received *m = &cs->msgs[cs->ack_next++];
        a->code = -1;
        size_t len = gbm_ack(st->buf, sizeof st->buf, st->r->o->group, m->topic, m->message_id,
                             m->receipt_handle);
        if (len > 0 && c && gbc_start(c, &a->call, "AckMessage", st->buf, len, 10000) == 0)
            return;
        cs->acks_ended++;
        fail(st, -1, "AckMessage start", NULL);
    }
}

static void recv_message(gbc_call *call, const uint8_t *msg, size_t len)
{
    consumer *cs = call->user;
    gbm_received m;
    if (gbm_parse_receive(msg, len, &m) != 0) {
        cs->parse_failed = 1;
        return;
    }
    if (!m.is_message) {
        if (m.code != -1)
            cs->recv_code = m.code;
        return;
    }
    if (cs->n_msgs == cs->cap) {
        size_t cap = cs->cap ? cs->cap * 2 : 32;
        gbm_received *p = realloc(cs->msgs, cap * sizeof *p);
        if (!p) {
            cs->parse_failed = 1;
            return;
        }
        cs->msgs = p;
        cs->cap = cap;
    }
    cs->msgs[cs->n_msgs++] = m;
}

static void recv_done(gbc_call *call, int grpc_status)
{
    consumer *cs = call->user;
    recv_state *st = cs->st;
    if (st->closing || st->stop)
        return; /* an idle long poll, cancelled once everything was acked */
    if (cs->parse_failed)
        fail(st, -1, "ReceiveMessage (answer not understood)", call);
    if (cs->n_msgs > 0) {
        rmq_hist_record(&st->recv_lat, gbc_now_ns() - call->started_ns);
        st->got += cs->n_msgs;
        const rmq_bench_options *o = st->r->o;
        for (unsigned i = 0; i < o->ackc && i < cs->n_msgs; i++)
            start_ack(&cs->acks[i]);
        return;
    }
    if (grpc_status != 0)
        fail(st, grpc_status, "ReceiveMessage", call);
    else if (cs->recv_code == CODE_MESSAGE_NOT_FOUND)
        st->empty_polls++; /* the long poll ended with nothing: poll again */
    else if (cs->recv_code != CODE_OK)
        fail(st, cs->recv_code, "ReceiveMessage", call);
    start_receive(cs);
}

static void ack_message(gbc_call *call, const uint8_t *msg, size_t len)
{
    ack_slot *a = call->user;
    a->code = gbm_ack_code(msg, len);
}

static void ack_done(gbc_call *call, int grpc_status)
{
    ack_slot *a = call->user;
    consumer *cs = a->cs;
    recv_state *st = cs->st;
    if (st->closing)
        return;
    cs->acks_ended++;
    if (grpc_status == 0 && a->code == CODE_OK) {
        rmq_hist_record(&st->ack_lat, gbc_now_ns() - call->started_ns);
        if (++st->acked >= st->target && !st->stop) {
            st->stop = 1;
            st->done_ns = gbc_now_ns();
            for (unsigned i = 0; i < st->n; i++)
                if (st->cs[i].recv.stream_id > 0)
                    gbc_cancel(&st->cs[i].recv);
        }
    } else {
        fail(st, grpc_status != 0 ? grpc_status : a->code, "AckMessage", call);
    }
    start_ack(a);
    if (cs->acks_ended == cs->n_msgs && cs->recv.stream_id == 0)
        start_receive(cs);
}

static int acked_all(void *arg)
{
    recv_state *st = arg;
    return st->stop;
}

static int receives_ended(void *arg)
{
    recv_state *st = arg;
    for (unsigned i = 0; i < st->n; i++)
        if (st->cs[i].recv.stream_id > 0)
            return 0;
    return 1;
}

int gb_recv_phase(gb_run *r, uint64_t sent, FILE *out)
{
    const rmq_bench_options *o = r->o;
    recv_state *st = calloc(1, sizeof *st);
    if (!st)
        return -1;
    st->r = r;
    st->n = o->connections;
    st->target = sent;
    rmq_hist_reset(&st->recv_lat);
    rmq_hist_reset(&st->ack_lat);
    st->cs = calloc(st->n, sizeof *st->cs);
    gb_client *cl = calloc(st->n, sizeof *cl);
    int rc = -1;
    st->conns = gb_connect_all(r, st->n, 'c');
    if (!st->cs || !cl || !st->conns || gb_start_clients(r, st->conns, cl, st->n, o->group) != 0)
        goto done;
    for (unsigned i = 0; i < st->n; i++) {
        consumer *cs = &st->cs[i];
        cs->st = st;
        cs->index = i;
        cs->recv.user = cs;
        cs->recv.on_message = recv_message;
        cs->recv.on_done = recv_done;
        cs->acks = calloc(o->ackc, sizeof *cs->acks);
        if (!cs->acks)
            goto done;
        for (unsigned k = 0; k < o->ackc; k++) {
            cs->acks[k].cs = cs;
            cs->acks[k].call.user = &cs->acks[k];
            cs->acks[k].call.on_message = ack_message;
            cs->acks[k].call.on_done = ack_done;
        }
    }
    uint64_t t0 = gbc_now_ns();
    for (unsigned i = 0; i < st->n; i++)
        start_receive(&st->cs[i]);
    gb_loop(r, st->conns, st->n, acked_all, st, r->deadline_ns);
    uint64_t end = st->stop ? st->done_ns : gbc_now_ns();
    /* the consumers' idle long polls, cancelled at the last Ack */
    gb_loop(r, st->conns, st->n, receives_ended, st, gbc_now_ns() + 5000000000ull);
    uint64_t tail = gbc_now_ns() - end;
    double secs = (double)(end - t0) / 1e9;
    fprintf(out,
            "recv n=%llu secs=%.2f rate=%.0f p50_ms=%.2f p99_ms=%.2f ack_p50_ms=%.2f "
            "ack_p99_ms=%.2f tail_secs=%.2f ackc=%u errors=%llu acked=%llu empty_polls=%llu codes=",
            (unsigned long long)st->got, secs, secs > 0 ? (double)st->acked / secs : 0.0,
            gb_ms(rmq_hist_quantile_ns(&st->recv_lat, 0.50)),
            gb_ms(rmq_hist_quantile_ns(&st->recv_lat, 0.99)),
            gb_ms(rmq_hist_quantile_ns(&st->ack_lat, 0.50)),
            gb_ms(rmq_hist_quantile_ns(&st->ack_lat, 0.99)), (double)tail / 1e9, o->ackc,
            (unsigned long long)st->errors.total, (unsigned long long)st->acked,
            (unsigned long long)st->empty_polls);
    gb_errors_print(&st->errors, out);
    fputc('\n', out);
    if (st->acked < sent)
        fprintf(out, "incomplete: received %llu and acknowledged %llu of %llu\n",
                (unsigned long long)st->got, (unsigned long long)st->acked,
                (unsigned long long)sent);
    rc = st->acked >= sent && st->errors.total == 0 ? 0 : -1;
done:
    if (rc != 0 && !st->stop && st->errors.total == 0 && st->acked == 0)
        fprintf(stderr, "rmqbench: receive phase did not run\n");
    st->closing = 1;
    gb_close_all(st->conns, st->n);
    for (unsigned i = 0; st->cs && i < st->n; i++) {
        free(st->cs[i].acks);
        free(st->cs[i].msgs);
    }
    free(st->cs);
    free(cl);
    free(st);
    return rc;
}
