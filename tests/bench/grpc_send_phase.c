/* grpc_send_phase.c — rmqbench --grpc's send phase: one Producer (its
 * connections, Telemetry settings, Heartbeat), then -n SendMessage calls of
 * one NORMAL message each, -c in flight; prints the `send` line. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grpc_bench_msgs.h"
#include "grpc_phase.h"

typedef struct send_state send_state;

typedef struct send_slot {
    gbc_call call;
    send_state *st;
    unsigned index;
    int code;
} send_slot;

struct send_state {
    gb_run *r;
    gbc_conn **conns;
    unsigned nconns;
    uint8_t *body;
    uint8_t *buf;
    size_t buf_cap;
    uint64_t next, ok, ended;
    int closing; /* calls ending as the connections close start no more */
    rmq_latency_histogram lat;
    gb_errors errors;
};

static void start_next(send_slot *s);

static void send_message(gbc_call *call, const uint8_t *msg, size_t len)
{
    send_slot *s = call->user;
    s->code = gbm_send_code(msg, len);
}

static void send_done(gbc_call *call, int grpc_status)
{
    send_slot *s = call->user;
    send_state *st = s->st;
    st->ended++;
    if (grpc_status == 0 && s->code == 20000) {
        st->ok++;
        rmq_hist_record(&st->lat, gbc_now_ns() - call->started_ns);
    } else {
        gb_errors_add(&st->errors, grpc_status != 0 ? grpc_status : s->code);
        if (st->errors.total == 1)
            fprintf(stderr, "rmqbench: first failed SendMessage: grpc-status %d code %d %s\n",
                    grpc_status, s->code, call->grpc_message);
    }
    if (!st->closing)
        start_next(s);
}

static void start_next(send_slot *s)
{
    send_state *st = s->st;
    const rmq_bench_options *o = st->r->o;
    while (st->next < o->messages) {
        uint64_t seq = st->next++;
        /* the 5.x id's shape: version 01, then host, pid, time and a
         * sequence as hex (34 characters) */
        char id[48];
        snprintf(id, sizeof id, "01%012llx%04x%08x%08x", 0x7f0000000001ull,
                 (unsigned)getpid() & 0xffff, (unsigned)time(NULL), (unsigned)seq);
        size_t len =
            gbm_send(st->buf, st->buf_cap, o->topic, st->body, o->msg_size, id, "rmqbench");
        gbc_conn *c = st->conns[s->index % st->nconns];
        s->code = -1;
        if (len > 0 && c && gbc_start(c, &s->call, "SendMessage", st->buf, len, 10000) == 0)
            return;
        st->ended++;
        gb_errors_add(&st->errors, -1);
    }
}

static int all_ended(void *arg)
{
    send_state *st = arg;
    return st->ended >= st->r->o->messages;
}

uint64_t gb_send_phase(gb_run *r, FILE *out, int *failed)
{
    const rmq_bench_options *o = r->o;
    send_state st = {.r = r, .nconns = o->grpc_conns};
    rmq_hist_reset(&st.lat);
    st.body = malloc(o->msg_size ? o->msg_size : 1);
    st.buf_cap = o->msg_size + 1024;
    st.buf = malloc(st.buf_cap);
    send_slot *slots = calloc(o->connections, sizeof *slots);
    gb_client *cl = calloc(st.nconns, sizeof *cl);
    st.conns = gb_connect_all(r, st.nconns, 'p');
    if (!st.body || !st.buf || !slots || !cl || !st.conns ||
        gb_start_clients(r, st.conns, cl, st.nconns, NULL) != 0) {
        *failed = 1;
        gb_close_all(st.conns, st.nconns);
        free(cl);
        free(slots);
        free(st.buf);
        free(st.body);
        return 0;
    }
    for (size_t i = 0; i < o->msg_size; i++)
        st.body[i] = (uint8_t)('a' + i % 26);
    uint64_t t0 = gbc_now_ns();
    for (unsigned i = 0; i < o->connections; i++) {
        slots[i].st = &st;
        slots[i].index = i;
        slots[i].call.user = &slots[i];
        slots[i].call.on_message = send_message;
        slots[i].call.on_done = send_done;
        start_next(&slots[i]);
    }
    if (gb_loop(r, st.conns, st.nconns, all_ended, &st, r->deadline_ns) != 0)
        fprintf(stderr, "rmqbench: send phase: %llu of %u ended before the deadline\n",
                (unsigned long long)st.ended, o->messages);
    double secs = (double)(gbc_now_ns() - t0) / 1e9;
    /* calls still open end here (status -1) */
    st.closing = 1;
    gb_close_all(st.conns, st.nconns);
    fprintf(out, "send n=%llu secs=%.2f rate=%.0f p50_ms=%.2f p99_ms=%.2f errors=%llu codes=",
            (unsigned long long)st.ok, secs, secs > 0 ? (double)st.ok / secs : 0.0,
            gb_ms(rmq_hist_quantile_ns(&st.lat, 0.50)), gb_ms(rmq_hist_quantile_ns(&st.lat, 0.99)),
            (unsigned long long)st.errors.total);
    gb_errors_print(&st.errors, out);
    fputc('\n', out);
    if (st.errors.total > 0 || st.ok < o->messages)
        *failed = 1;
    uint64_t ok = st.ok;
    free(cl);
    free(slots);
    free(st.buf);
    free(st.body);
    return ok;
}
