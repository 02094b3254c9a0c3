/* grpc_mode.c — rmqbench --grpc: the TLS context, the shared poll loop and
 * error counts, and the two phases one after the other (as
 * tests/bench/proxy5/main.go runs them). */
#include "grpc_mode.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "grpc_bench_msgs.h"
#include "grpc_phase.h"

void gb_errors_add(gb_errors *e, int code)
{
    e->total++;
    for (unsigned i = 0; i < e->used; i++)
        if (e->code[i] == code) {
            e->n[i]++;
            return;
        }
    if (e->used < GB_MAX_CODES) {
        e->code[e->used] = code;
        e->n[e->used++] = 1;
    }
}

void gb_errors_print(const gb_errors *e, FILE *out)
{
    if (e->used == 0) {
        fputs("none", out);
        return;
    }
    for (unsigned i = 0; i < e->used; i++)
        fprintf(out, "%s%dx%llu", i ? "," : "", e->code[i], (unsigned long long)e->n[i]);
}

double gb_ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

int gb_loop(gb_run *r, gbc_conn **conns, unsigned n, int (*done)(void *arg), void *arg,
            uint64_t deadline_ns)
{
    (void)r;
    struct pollfd *p = calloc(n ? n : 1, sizeof *p);
    unsigned *which = calloc(n ? n : 1, sizeof *which);
    int rc = -1;
    while (p && which) {
        if (done(arg)) {
            rc = 0;
            break;
        }
        uint64_t now = gbc_now_ns();
        if (now >= deadline_ns)
            break;
        unsigned k = 0;
        for (unsigned i = 0; i < n; i++) {
            if (!conns[i])
                continue;
            p[k] = (struct pollfd){.fd = gbc_fd(conns[i]), .events = gbc_events(conns[i])};
            which[k++] = i;
        }
        if (k == 0)
            break;
        uint64_t left_ms = (deadline_ns - now) / 1000000 + 1;
        int prc = poll(p, k, left_ms > 100 ? 100 : (int)left_ms);
        if (prc < 0)
            continue; /* EINTR */
        for (unsigned j = 0; j < k; j++) {
            if (!p[j].revents)
                continue;
            gbc_conn *c = conns[which[j]];
            if (gbc_on_ready(c) != 0) {
                /* its calls have ended; the phase sees them failed */
                conns[which[j]] = NULL;
                gbc_close(c);
            }
        }
    }
    free(p);
    free(which);
    return rc;
}

static void settings_message(gbc_call *call, const uint8_t *msg, size_t len)
{
    gb_client *cl = call->user;
    if (!cl->settings_ok && gbm_is_settings(msg, len)) {
        cl->settings_ok = 1;
        uint8_t buf[256];
        size_t n = gbm_heartbeat(buf, sizeof buf, cl->group);
        if (n == 0 || gbc_start(call->conn, &cl->heartbeat, "Heartbeat", buf, n, 10000) != 0)
            cl->failed = 1;
    }
}

static void telemetry_done(gbc_call *call, int grpc_status)
{
    gb_client *cl = call->user;
    cl->telemetry_open = 0;
    if (!cl->settings_ok) {
        fprintf(stderr,
                "rmqbench: Telemetry ended before the server's settings (grpc-status %d %s)\n",
                grpc_status, call->grpc_message);
        cl->failed = 1;
    }
}

static void heartbeat_message(gbc_call *call, const uint8_t *msg, size_t len)
{
    gb_client *cl = call->user;
    cl->heartbeat_code = gbm_heartbeat_code(msg, len);
}

static void heartbeat_done(gbc_call *call, int grpc_status)
{
    gb_client *cl = call->user;
    cl->started = 1;
    if (grpc_status != 0 || cl->heartbeat_code != 20000) {
        fprintf(stderr, "rmqbench: Heartbeat answered grpc-status %d code %d %s\n", grpc_status,
                cl->heartbeat_code, call->grpc_message);
        cl->failed = 1;
    }
}

typedef struct start_wait {
    gb_client *cl;
    unsigned n;
} start_wait;

static int all_started(void *arg)
{
    start_wait *w = arg;
    for (unsigned i = 0; i < w->n; i++)
        if (!w->cl[i].started && !w->cl[i].failed)
            return 0;
    return 1;
}

int gb_start_clients(gb_run *r, gbc_conn **conns, gb_client *cl, unsigned n, const char *group)
{
    uint8_t buf[1024];
    for (unsigned i = 0; i < n; i++) {
        cl[i].group = group;
        cl[i].heartbeat_code = -1;
        cl[i].telemetry.user = &cl[i];
        cl[i].telemetry.keep_open = 1;
        cl[i].telemetry.on_message = settings_message;
        cl[i].telemetry.on_done = telemetry_done;
        cl[i].heartbeat.user = &cl[i];
        cl[i].heartbeat.on_message = heartbeat_message;
        cl[i].heartbeat.on_done = heartbeat_done;
        size_t len = gbm_settings(buf, sizeof buf, r->o->topic, group, r->o->long_poll_ms, 3000);
        /* the stream stays open as a 5.x client's does, for the whole phase */
        if (len == 0 || gbc_start(conns[i], &cl[i].telemetry, "Telemetry", buf, len, 3600000) != 0)
            return -1;
        cl[i].telemetry_open = 1;
    }
    start_wait w = {cl, n};
    if (gb_loop(r, conns, n, all_started, &w, gbc_now_ns() + 30000000000ull) != 0) {
        fprintf(stderr,
                "rmqbench: clients did not start (Telemetry settings, Heartbeat) in 30 s\n");
        return -1;
    }
    for (unsigned i = 0; i < n; i++)
        if (cl[i].failed)
            return -1;
    return 0;
}

gbc_conn **gb_connect_all(gb_run *r, unsigned n, char kind)
{
    gbc_conn **conns = calloc(n, sizeof *conns);
    for (unsigned i = 0; conns && i < n; i++) {
        char id[96];
        snprintf(id, sizeof id, "%s-%c%u", r->id_prefix, kind, i);
        conns[i] = gbc_connect((const struct sockaddr *)&r->o->addr, r->o->target, r->tls, id);
        if (!conns[i]) {
            gb_close_all(conns, n);
            return NULL;
        }
    }
    return conns;
}

void gb_close_all(gbc_conn **conns, unsigned n)
{
    for (unsigned i = 0; conns && i < n; i++)
        gbc_close(conns[i]);
    free(conns);
}

int rmq_bench_grpc_run(const rmq_bench_options *o, FILE *out)
{
    gb_run r = {.o = o};
    snprintf(r.id_prefix, sizeof r.id_prefix, "rmqbench-%ld-%lx", (long)getpid(),
             (unsigned long)time(NULL));
    if (o->tls) {
        r.tls = SSL_CTX_new(TLS_client_method());
        if (!r.tls)
            return 1;
        SSL_CTX_set_min_proto_version(r.tls, TLS1_2_VERSION);
        /* the servers' certificates are self-signed: a transport cost
         * measurement, not a security check */
        SSL_CTX_set_verify(r.tls, SSL_VERIFY_NONE, NULL);
        static const unsigned char alpn[] = {2, 'h', '2'};
        SSL_CTX_set_alpn_protos(r.tls, alpn, sizeof alpn);
    }
    /* as the Go client's bench gives itself: a minute plus 2 ms a message */
    r.deadline_ns = gbc_now_ns() + (uint64_t)(60 + o->messages / 500) * 1000000000u;
    int failed = 0;
    uint64_t sent = gb_send_phase(&r, out, &failed);
    fflush(out);
    r.deadline_ns = gbc_now_ns() + (uint64_t)(60 + sent / 500) * 1000000000u;
    if (sent > 0 && gb_recv_phase(&r, sent, out) != 0)
        failed = 1;
    if (sent < o->messages) {
        fprintf(out, "incomplete: sent %llu of %u\n", (unsigned long long)sent, o->messages);
        failed = 1;
    }
    SSL_CTX_free(r.tls);
    return failed ? 1 : 0;
}
