/* host_test_plugin.c — a plugin that exercises the host for the integration
 * tests: inline and executor processors, a failing processor, a reject
 * hook, outgoing sync calls, big answers, a log of channel events and
 * requests held (deferred, or gated on an executor) until released.
 * Test-only; speaks codes 7001-7008 that no RocketMQ role uses. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <time.h>

#include "rmqhost/rmqhost.h"

enum {
    CODE_ECHO = 7001,       /* inline echo of ext "msg" and the body */
    CODE_SLOW = 7002,       /* executor "slow" (1 thread, queue 1): sleeps ext "sleep_ms" */
    CODE_FAIL = 7003,       /* fails with remark "boom" */
    CODE_REJECTED = 7004,   /* refused by the reject hook */
    CODE_CALL = 7005,       /* executor "calls": invoke_sync_addr(ext addr, timeout_ms) */
    CODE_EVENTS = 7006,     /* body = the channel events seen so far */
    CODE_BIG = 7007,        /* body of ext "size" bytes */
    CODE_DRAIN = 7008,      /* executor "drain" (4 threads): sleeps ext "sleep_ms" */
    CODE_CANNED = 7009,     /* inline: a canned route-sized body, zero-copy (benchmarks) */
    CODE_HOOK_COUNT = 7010, /* ext answersSeen = answers the after hook saw */
    CODE_MAIN_ONLY = 7011,  /* echo, registered RMQ_PROC_NOT_ON_VIP */
    CODE_FALLBACK = 7012,   /* remark "fallback", registered RMQ_PROC_FALLBACK */
    CODE_HOLD_BODY = 7014,  /* inline: defer(); CODE_RELEASE echoes the body later */
    CODE_GATED_ECHO = 7015, /* executor "gated": echo once CODE_RELEASE opened the gate */
    CODE_RELEASE = 7016,    /* inline: answer the held requests, open the gate */
    /* a request a peer sends on the plugin's outgoing connection (ABI 1.12):
     * answered with ext addr (the address dialled) and seen (how many of
     * them came so far, oneway ones included) */
    CODE_CLIENT_SIDE = 7020,
    /* ABI 1.15: close_outgoing(ext addr), answered with ext err */
    CODE_CLOSE_ADDR = 7021,
    /* inline: invoke_async_addr(ext addr, timeout_ms) of a 105, answered at
     * once (ext err); its callback appends "err/answerCode;" to a log */
    CODE_CALL_ASYNC = 7022,
    CODE_ASYNC_LOG = 7023 /* ext log = that log so far */
};
#define FLAG_ONEWAY 2 /* remoting's RPC_ONEWAY bit */

/* A request held by CODE_HOLD_BODY, with the body pointer taken before
 * defer(): rmqhost.h keeps the cmd (body included) valid until deferred_reply. */
typedef struct held_body {
    rmq_deferred *d;
    const void *body;
    size_t len;
    struct held_body *next;
} held_body;

/* What a GET_ROUTEINFO_BY_TOPIC answer of one two-replica broker looks like. */
static const char CANNED_ROUTE[] =
    "{\"brokerDatas\":[{\"brokerAddrs\":{\"0\":\"127.0.0.1:10911\",\"1\":\"127.0.0.1:10921\"},"
    "\"brokerName\":\"broker-a\",\"cluster\":\"DefaultCluster\"}],\"filterServerTable\":{},"
    "\"queueDatas\":[{\"brokerName\":\"broker-a\",\"perm\":6,\"readQueueNums\":4,"
    "\"topicSysFlag\":0,\"writeQueueNums\":4}]}";

typedef struct test_plugin {
    const rmq_host_api *api;
    rmq_plugin_ctx *ctx;
    pthread_mutex_t mu;
    char *events; /* "EVENT peer\n" lines */
    size_t events_len, events_cap;
    unsigned long answers_seen;
    atomic_ulong client_side_seen; /* CODE_CLIENT_SIDE requests */
    held_body *held;               /* under mu */
    char async_log[512];           /* under mu: CODE_CALL_ASYNC callbacks */
    bool gate_open;                /* under mu */
    pthread_cond_t gate_cv;
} test_plugin;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int reply_code(test_plugin *tp, rmq_request *req, const rmq_cmd *cmd, int code,
                      const char *remark)
{
    rmq_cmd *resp = tp->api->cmd_new_response(cmd, code, remark);
    return resp ? tp->api->reply(req, resp) : RMQ_ENOMEM;
}

static int on_fallback(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return reply_code(ud, req, cmd, RMQ_RESPONSE_SUCCESS, "fallback");
}

static int on_echo(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    const rmq_host_api *api = tp->api;
    rmq_cmd *resp = api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (!resp)
        return RMQ_ENOMEM;
    const char *msg = api->cmd_ext_get(cmd, "msg");
    if (msg)
        api->cmd_ext_set(resp, "echo", msg);
    size_t len;
    const void *body = api->cmd_body(cmd, &len);
    if (body)
        api->cmd_set_body(resp, body, len, NULL, NULL);
    return api->reply(req, resp);
}

static int on_slow(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    const char *ms = tp->api->cmd_ext_get(cmd, "sleep_ms");
    sleep_ms(ms ? atol(ms) : 100);
    return on_echo(req, cmd, ud);
}

static int on_fail(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    (void)cmd;
    test_plugin *tp = ud;
    tp->api->request_fail(req, "boom");
    return RMQ_EINVAL;
}

static int on_rejected(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return reply_code(ud, req, cmd, RMQ_RESPONSE_SUCCESS, "should have been rejected");
}

static bool reject_hook(const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    return tp->api->cmd_code(cmd) == CODE_REJECTED;
}

static int on_call(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    const rmq_host_api *api = tp->api;
    const char *addr = api->cmd_ext_get(cmd, "addr");
    const char *to = api->cmd_ext_get(cmd, "timeout_ms");
    rmq_cmd *out = api->cmd_new_request(105);
    api->cmd_ext_set(out, "topic", "T");
    /* ABI 1.14: the header's language / version of the request sent */
    const char *lang = api->cmd_ext_get(cmd, "language");
    const char *ver = api->cmd_ext_get(cmd, "version");
    if (lang && api->cmd_set_language(out, atoi(lang)) != 0)
        api->cmd_ext_set(out, "languageRefused", lang);
    if (ver && api->cmd_set_version(out, atoi(ver)) != 0)
        api->cmd_ext_set(out, "versionRefused", ver);
    rmq_cmd *answer = NULL;
    int rc = api->invoke_sync_addr(tp->ctx, addr ? addr : "", out, to ? (uint32_t)atol(to) : 1000,
                                   &answer);
    rmq_cmd *resp = api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    char buf[32];
    snprintf(buf, sizeof(buf), "%d", rc);
    api->cmd_ext_set(resp, "err", buf);
    if (answer) {
        snprintf(buf, sizeof(buf), "%d", api->cmd_code(answer));
        api->cmd_ext_set(resp, "answerCode", buf);
        api->cmd_free(answer);
    }
    return api->reply(req, resp);
}

static rmq_cmd *on_client_side(const char *addr, const rmq_cmd *req, void *ud)
{
    test_plugin *tp = ud;
    const rmq_host_api *api = tp->api;
    unsigned long seen = atomic_fetch_add(&tp->client_side_seen, 1) + 1;
    if (api->cmd_flag(req) & FLAG_ONEWAY)
        return NULL;
    rmq_cmd *resp = api->cmd_new_response(req, RMQ_RESPONSE_SUCCESS, NULL);
    char buf[32];
    snprintf(buf, sizeof(buf), "%lu", seen);
    api->cmd_ext_set(resp, "addr", addr);
    api->cmd_ext_set(resp, "seen", buf);
    return resp;
}

static int on_close_addr(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    const rmq_host_api *api = tp->api;
    int rc = api->close_outgoing(tp->ctx, api->cmd_ext_get(cmd, "addr"));
    rmq_cmd *resp = api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    char buf[32];
    snprintf(buf, sizeof(buf), "%d", rc);
    api->cmd_ext_set(resp, "err", buf);
    return api->reply(req, resp);
}

/* Every call appends: a second callback for one request would show. */
static void on_async_answer(int err, const rmq_cmd *resp, void *ud)
{
    test_plugin *tp = ud;
    pthread_mutex_lock(&tp->mu);
    size_t n = strlen(tp->async_log);
    snprintf(tp->async_log + n, sizeof(tp->async_log) - n, "%d/%d;", err,
             resp ? tp->api->cmd_code(resp) : -1);
    pthread_mutex_unlock(&tp->mu);
}

static int on_call_async(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    const rmq_host_api *api = tp->api;
    const char *addr = api->cmd_ext_get(cmd, "addr");
    const char *to = api->cmd_ext_get(cmd, "timeout_ms");
    rmq_cmd *out = api->cmd_new_request(105);
    int rc = api->invoke_async_addr(tp->ctx, addr ? addr : "", out, to ? (uint32_t)atol(to) : 1000,
                                    on_async_answer, tp);
    rmq_cmd *resp = api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    char buf[32];
    snprintf(buf, sizeof(buf), "%d", rc);
    api->cmd_ext_set(resp, "err", buf);
    return api->reply(req, resp);
}

static int on_async_log(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    const rmq_host_api *api = tp->api;
    rmq_cmd *resp = api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    pthread_mutex_lock(&tp->mu);
    api->cmd_ext_set(resp, "log", tp->async_log);
    pthread_mutex_unlock(&tp->mu);
    return api->reply(req, resp);
}

static int on_events(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    rmq_cmd *resp = tp->api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (!resp)
        return RMQ_ENOMEM;
    pthread_mutex_lock(&tp->mu);
    if (tp->events_len)
        tp->api->cmd_set_body(resp, tp->events, tp->events_len, NULL, NULL);
    pthread_mutex_unlock(&tp->mu);
    return tp->api->reply(req, resp);
}

static void free_body(void *ud, const void *data)
{
    (void)ud;
    free((void *)data);
}

static int on_big(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    const char *sz = tp->api->cmd_ext_get(cmd, "size");
    size_t n = sz ? (size_t)atol(sz) : 65536;
    char *body = malloc(n ? n : 1);
    if (!body)
        return RMQ_ENOMEM;
    memset(body, 'x', n);
    rmq_cmd *resp = tp->api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (!resp) {
        free(body);
        return RMQ_ENOMEM;
    }
    tp->api->cmd_set_body(resp, body, n, free_body, NULL);
    return tp->api->reply(req, resp);
}

static void keep_static(void *ud, const void *data)
{
    (void)ud;
    (void)data;
}

static int on_canned(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    rmq_cmd *resp = tp->api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (!resp)
        return RMQ_ENOMEM;
    tp->api->cmd_set_body(resp, CANNED_ROUTE, sizeof(CANNED_ROUTE) - 1, keep_static, NULL);
    return tp->api->reply(req, resp);
}

static int on_hold_body(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    held_body *h = calloc(1, sizeof(*h));
    if (!h)
        return RMQ_ENOMEM;
    h->body = tp->api->cmd_body(cmd, &h->len);
    h->d = tp->api->defer(req);
    if (!h->d) {
        free(h);
        return RMQ_ESHUTDOWN;
    }
    pthread_mutex_lock(&tp->mu);
    h->next = tp->held;
    tp->held = h;
    pthread_mutex_unlock(&tp->mu);
    return RMQ_DEFERRED;
}

static int on_gated_echo(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    pthread_mutex_lock(&tp->mu);
    while (!tp->gate_open)
        pthread_cond_wait(&tp->gate_cv, &tp->mu);
    pthread_mutex_unlock(&tp->mu);
    return on_echo(req, cmd, ud);
}

/* Echo every held body (from the pointer saved before defer) and let the
 * gated executor run; also what quiesce does, so nothing waits at shutdown. */
static void release_all(test_plugin *tp)
{
    const rmq_host_api *api = tp->api;
    pthread_mutex_lock(&tp->mu);
    held_body *h = tp->held;
    tp->held = NULL;
    tp->gate_open = true;
    pthread_cond_broadcast(&tp->gate_cv);
    pthread_mutex_unlock(&tp->mu);
    while (h) {
        held_body *next = h->next;
        rmq_cmd *resp =
            api->cmd_new_response(api->deferred_cmd(h->d), RMQ_RESPONSE_SUCCESS, "released");
        if (resp && h->len)
            api->cmd_set_body(resp, h->body, h->len, NULL, NULL);
        api->deferred_reply(h->d, resp);
        free(h);
        h = next;
    }
}

static int on_release(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    release_all(ud);
    return reply_code(ud, req, cmd, RMQ_RESPONSE_SUCCESS, NULL);
}

static void test_quiesce(rmq_plugin_ctx *ctx)
{
    test_plugin *tp = rmq_ctx_userdata(ctx);
    if (tp)
        release_all(tp);
}

/* RPC hooks: the before hook refuses any request carrying ext deny=1 (as an
 * ACL would); the after hook counts answers it saw. */
static int before_hook(rmq_channel_id ch, const rmq_cmd *req, const char **remark, void *ud)
{
    (void)ch;
    test_plugin *tp = ud;
    const char *deny = tp->api->cmd_ext_get(req, "deny");
    if (deny && strcmp(deny, "1") == 0) {
        *remark = "denied by hook";
        return 16;
    }
    return 0;
}

static void after_hook(rmq_channel_id ch, const rmq_cmd *req, const rmq_cmd *resp, void *ud)
{
    (void)ch;
    (void)req;
    test_plugin *tp = ud;
    if (resp)
        __atomic_fetch_add(&tp->answers_seen, 1, __ATOMIC_RELAXED);
}

static int on_hook_count(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    test_plugin *tp = ud;
    rmq_cmd *resp = tp->api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (!resp)
        return RMQ_ENOMEM;
    char buf[32];
    snprintf(buf, sizeof(buf), "%lu", __atomic_load_n(&tp->answers_seen, __ATOMIC_RELAXED));
    tp->api->cmd_ext_set(resp, "answersSeen", buf);
    return tp->api->reply(req, resp);
}

static const char *event_name(rmq_channel_event ev)
{
    switch (ev) {
    case RMQ_CHANNEL_CONNECT: return "CONNECT";
    case RMQ_CHANNEL_CLOSE: return "CLOSE";
    case RMQ_CHANNEL_IDLE: return "IDLE";
    default: return "EXCEPTION";
    }
}

static void on_channel(rmq_channel_event ev, rmq_channel_id ch, const char *peer, void *ud)
{
    (void)ch;
    test_plugin *tp = ud;
    char line[128];
    int n = snprintf(line, sizeof(line), "%s %s\n", event_name(ev), peer);
    pthread_mutex_lock(&tp->mu);
    if (tp->events_len + (size_t)n + 1 > tp->events_cap) {
        size_t ncap = tp->events_cap ? tp->events_cap * 2 : 4096;
        while (ncap < tp->events_len + (size_t)n + 1)
            ncap *= 2;
        char *ne = realloc(tp->events, ncap);
        if (!ne) {
            pthread_mutex_unlock(&tp->mu);
            return;
        }
        tp->events = ne;
        tp->events_cap = ncap;
    }
    memcpy(tp->events + tp->events_len, line, (size_t)n);
    tp->events_len += (size_t)n;
    pthread_mutex_unlock(&tp->mu);
}

static int test_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    test_plugin *tp = calloc(1, sizeof(*tp));
    if (!tp)
        return RMQ_ENOMEM;
    tp->api = api;
    tp->ctx = ctx;
    pthread_mutex_init(&tp->mu, NULL);
    pthread_cond_init(&tp->gate_cv, NULL);
    api->set_userdata(ctx, tp);
    int rc = 0;
    rc |= api->declare_executor(ctx, "slow", 1, 1);
    rc |= api->declare_executor(ctx, "calls", 2, 16);
    rc |= api->declare_executor(ctx, "drain", 4, 1000);
    rc |= api->declare_executor(ctx, "gated", 1, 16);
    rc |= api->register_processor(ctx, CODE_ECHO, on_echo, tp, NULL);
    rc |= api->register_processor(ctx, CODE_SLOW, on_slow, tp, "slow");
    rc |= api->register_processor(ctx, CODE_FAIL, on_fail, tp, NULL);
    rc |= api->register_processor(ctx, CODE_REJECTED, on_rejected, tp, NULL);
    rc |= api->register_processor(ctx, CODE_CALL, on_call, tp, "calls");
    rc |= api->register_client_processor(ctx, CODE_CLIENT_SIDE, on_client_side, tp);
    rc |= api->register_processor(ctx, CODE_EVENTS, on_events, tp, NULL);
    rc |= api->register_processor(ctx, CODE_CLOSE_ADDR, on_close_addr, tp, NULL);
    rc |= api->register_processor(ctx, CODE_CALL_ASYNC, on_call_async, tp, NULL);
    rc |= api->register_processor(ctx, CODE_ASYNC_LOG, on_async_log, tp, NULL);
    rc |= api->register_processor(ctx, CODE_BIG, on_big, tp, NULL);
    rc |= api->register_processor(ctx, CODE_DRAIN, on_slow, tp, "drain");
    rc |= api->register_processor(ctx, CODE_CANNED, on_canned, tp, NULL);
    rc |= api->register_processor(ctx, CODE_HOOK_COUNT, on_hook_count, tp, NULL);
    rc |= api->register_processor(ctx, CODE_HOLD_BODY, on_hold_body, tp, NULL);
    rc |= api->register_processor(ctx, CODE_GATED_ECHO, on_gated_echo, tp, "gated");
    rc |= api->register_processor(ctx, CODE_RELEASE, on_release, tp, NULL);
    rc |=
        api->register_processor_flags(ctx, CODE_MAIN_ONLY, on_echo, tp, NULL, RMQ_PROC_NOT_ON_VIP);
    rc |=
        api->register_processor_flags(ctx, CODE_FALLBACK, on_fallback, tp, NULL, RMQ_PROC_FALLBACK);
    /* unknown flag bits are refused */
    if (api->register_processor_flags(ctx, 7013, on_echo, tp, NULL, 0x100) != RMQ_EINVAL)
        rc |= RMQ_EINVAL;
    rc |= api->set_reject_hook(ctx, reject_hook, tp);
    rc |= api->add_rpc_hook(ctx, before_hook, after_hook, tp);
    rc |= api->add_channel_listener(ctx, on_channel, tp);
    if (rc) {
        pthread_cond_destroy(&tp->gate_cv);
        pthread_mutex_destroy(&tp->mu);
        free(tp);
        return RMQ_EINVAL;
    }
    return 0;
}

static void test_fini(rmq_plugin_ctx *ctx)
{
    test_plugin *tp = rmq_ctx_userdata(ctx);
    if (!tp)
        return;
    pthread_cond_destroy(&tp->gate_cv);
    pthread_mutex_destroy(&tp->mu);
    free(tp->events);
    free(tp);
}

RMQ_PLUGIN(.name = "hosttest", .version = "1.0.0", .description = "host integration test plugin",
           .init = test_init, .fini = test_fini, .quiesce = test_quiesce);
