/* test_proxy_cluster_unregister.c — cluster mode's registrations of a 5.x
 * client (proxy_clients.c, proxy_cluster_clients.c, the plugin's own
 * sources) when the client terminates while a HEART_BEAT for it is being
 * decided: the periodic pass (the timer's function) or a relayed Heartbeat
 * copies the client, then resolves its brokers (a NameServer call), then
 * posts. The test holds that thread inside its NameServer call, terminates
 * the client on the main thread (UNREGISTER_CLIENT and the close of the
 * tagged connection are posted), then lets it go: nothing may be posted to
 * the client's connection after the close — a HEART_BEAT there would dial
 * a new connection and register a gone client at the broker. Without the
 * registration gate (proxy_reg_gate.c) the held thread posts its
 * HEART_BEAT after the close and both cases fail. A control case shows
 * the same pass does post the HEART_BEAT for a client still there. The
 * host API is the testkit's (real rmq_cmd) with the outgoing calls, timer
 * and gRPC call members replaced by recorders.
 * Local mode's HEART_BEAT is a synchronous in-process call that cannot be
 * held under the gate: a termination during it is undone after it (one
 * more UNREGISTER_CLIENT), which the last case checks by holding the
 * in-process HEART_BEAT until the client's UNREGISTER_CLIENT went. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmqhost/testkit.h>

#include "proxy_cluster.h"
#include "proxy_internal.h"
#include "proxy_test_host.h"

#define HEART_BEAT 34
#define UNREGISTER_CLIENT 35
#define CLOSE_MARK (-1) /* a close_outgoing in the record */
#define NAMESRV "127.0.0.1:9876"
#define BROKER "127.0.0.1:10911"
#define CLIENT_ID "client-gone@1"
#define MAX_EVENTS 64
#define LOCAL_BROKER "broker" /* local mode: the in-process broker server */

/* What the proxy posted, in order: request codes (or CLOSE_MARK) and the
 * addresses they went to. */
typedef struct fake_host {
    rmq_host_api api; /* first: the plugin's px->api points here */
    const rmq_host_api *kit;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int codes[MAX_EVENTS];
    char addrs[MAX_EVENTS][160];
    size_t n;
    rmq_timer_fn timer_fn; /* the periodic pass, as add_timer got it */
    void *timer_ud;
    /* the thread held inside its first NameServer call */
    bool hold_armed, held, released;
    pthread_t hold_thread;
} fake_host;

static fake_host *host_of(rmq_plugin_ctx *ctx)
{
    return (fake_host *)(uintptr_t)ctx; /* the test passes its fake_host as ctx */
}

static void record(fake_host *h, int code, const char *addr)
{
    pthread_mutex_lock(&h->mu);
    assert_true(h->n < MAX_EVENTS);
    h->codes[h->n] = code;
    snprintf(h->addrs[h->n], sizeof h->addrs[0], "%s", addr);
    h->n++;
    pthread_mutex_unlock(&h->mu);
}

static int rec_oneway(rmq_plugin_ctx *ctx, const char *addr, rmq_cmd *req, uint32_t timeout_ms)
{
    (void)timeout_ms;
    fake_host *h = host_of(ctx);
    record(h, h->kit->cmd_code(req), addr);
    h->kit->cmd_free(req);
    return 0;
}

static int rec_close(rmq_plugin_ctx *ctx, const char *addr)
{
    record(host_of(ctx), CLOSE_MARK, addr);
    return 0;
}

/* The NameServer's route of every topic: one broker, b1, at BROKER. The
 * held thread waits here until the test releases it. */
static int fake_namesrv(rmq_plugin_ctx *ctx, const char *addr, rmq_cmd *req, uint32_t timeout_ms,
                        rmq_cmd **resp)
{
    (void)timeout_ms;
    fake_host *h = host_of(ctx);
    assert_string_equal(addr, NAMESRV);
    assert_int_equal(h->kit->cmd_code(req), 105);
    h->kit->cmd_free(req);
    pthread_mutex_lock(&h->mu);
    if (h->hold_armed && pthread_equal(pthread_self(), h->hold_thread)) {
        h->hold_armed = false;
        h->held = true;
        pthread_cond_broadcast(&h->cv);
        while (!h->released)
            pthread_cond_wait(&h->cv, &h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    static const char route[] =
        "{\"queueDatas\":[{\"brokerName\":\"b1\",\"readQueueNums\":4,\"writeQueueNums\":4,"
        "\"perm\":6,\"topicSysFlag\":0}],\"brokerDatas\":[{\"cluster\":\"c1\",\"brokerName\":"
        "\"b1\",\"brokerAddrs\":{\"0\":\"" BROKER "\"}}]}";
    rmq_cmd *r = rmq_tk_response(0, NULL);
    assert_non_null(r);
    assert_int_equal(rmq_tk_set_body(r, route, strlen(route)), 0);
    *resp = r;
    return 0;
}

/* Local mode's in-process broker: records each request under
 * LOCAL_BROKER as the broker applies it; the held thread's HEART_BEAT is
 * applied only once the test releases it. */
static int fake_local(rmq_plugin_ctx *ctx, const char *server, rmq_cmd *req, uint32_t timeout_ms,
                      rmq_cmd **resp)
{
    (void)timeout_ms;
    fake_host *h = host_of(ctx);
    assert_string_equal(server, LOCAL_BROKER);
    int code = h->kit->cmd_code(req);
    h->kit->cmd_free(req);
    pthread_mutex_lock(&h->mu);
    if (code == HEART_BEAT && h->hold_armed && pthread_equal(pthread_self(), h->hold_thread)) {
        h->hold_armed = false;
        h->held = true;
        pthread_cond_broadcast(&h->cv);
        while (!h->released)
            pthread_cond_wait(&h->cv, &h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    record(h, code, LOCAL_BROKER);
    *resp = rmq_tk_response(0, NULL);
    assert_non_null(*resp);
    return 0;
}

static int rec_timer(rmq_plugin_ctx *ctx, uint64_t first_ms, uint64_t period_ms, rmq_timer_fn fn,
                     void *ud, const char *executor, rmq_timer_id *out_id)
{
    (void)first_ms, (void)period_ms, (void)executor;
    fake_host *h = host_of(ctx);
    h->timer_fn = fn;
    h->timer_ud = ud;
    *out_id = 1;
    return 0;
}

static const char *call_metadata(const rmq_grpc_call *call, const char *name)
{
    (void)call;
    if (strcmp(name, "x-mq-language") == 0)
        return "GOLANG";
    if (strcmp(name, "x-mq-client-version") == 0)
        return "5.0.1";
    return NULL;
}

static const char *call_peer(const rmq_grpc_call *call)
{
    (void)call;
    return "127.0.0.1:50000";
}

static rmq_channel_id call_channel(const rmq_grpc_call *call)
{
    (void)call;
    return 7;
}

typedef struct fixture {
    rmq_testkit *kit;
    fake_host h;
    proxy px;
    char tagged[160]; /* the client's own connection to the broker */
} fixture;

/* A cluster-mode (local false) or local-mode proxy whose one client, a
 * producer of TopicG, sent its Settings. */
static void start_mode(fixture *f, bool local)
{
    memset(f, 0, sizeof *f);
    f->kit = rmq_tk_new();
    assert_non_null(f->kit);
    char err[256];
    if (rmq_tk_start(f->kit, err, sizeof err) != 0)
        fail_msg("testkit start: %s", err);
    fake_host *h = &f->h;
    h->kit = rmq_tk_api(f->kit);
    h->api = *h->kit;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->api.log = quiet_log;
    h->api.add_channel_listener = no_listener;
    h->api.add_timer = rec_timer;
    h->api.invoke_oneway_addr = rec_oneway;
    h->api.invoke_sync_addr = fake_namesrv;
    h->api.close_outgoing = rec_close;
    h->api.invoke_local = fake_local;
    h->api.grpc_metadata = call_metadata;
    h->api.grpc_call_peer = call_peer;
    h->api.grpc_call_channel = call_channel;
    assert_true(h->api.abi_minor >= 15);
    proxy *px = &f->px;
    px->api = &h->api;
    px->ctx = (rmq_plugin_ctx *)(void *)h;
    px->local_timeout_ms = 3000;
    if (local) {
        px->broker_server = LOCAL_BROKER;
    } else {
        const char *why = NULL;
        px->cluster = proxy_cluster_new(NAMESRV, &why);
        assert_non_null(px->cluster);
    }
    assert_int_equal(proxy_clients_init(px), 0);
    assert_int_equal(proxy_clients_start_heartbeats(px, "grpc"), 0);
    assert_true(local || h->timer_fn);

    Apache__Rocketmq__V2__Resource topic = APACHE__ROCKETMQ__V2__RESOURCE__INIT;
    Apache__Rocketmq__V2__Resource *topics[] = {&topic};
    Apache__Rocketmq__V2__Publishing pub = APACHE__ROCKETMQ__V2__PUBLISHING__INIT;
    Apache__Rocketmq__V2__Settings s = APACHE__ROCKETMQ__V2__SETTINGS__INIT;
    topic.name = "TopicG";
    pub.n_topics = 1;
    pub.topics = topics;
    s.client_type = APACHE__ROCKETMQ__V2__CLIENT_TYPE__PRODUCER;
    s.pub_sub_case = APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_PUBLISHING;
    s.publishing = &pub;
    proxy_clients_settings(px, (rmq_grpc_call *)(void *)f, CLIENT_ID, &s);
    char tag[PROXY_CLIENT_TAG_LEN + 1];
    proxy_client_tag(CLIENT_ID, tag);
    if (local)
        snprintf(f->tagged, sizeof f->tagged, "%s", LOCAL_BROKER);
    else
        snprintf(f->tagged, sizeof f->tagged, "%s#%s", BROKER, tag);
}

static void start(fixture *f)
{
    start_mode(f, false);
}

static void stop(fixture *f)
{
    proxy_clients_fini(&f->px);
    if (f->px.cluster)
        proxy_cluster_free(f->px.cluster);
    pthread_cond_destroy(&f->h.cv);
    pthread_mutex_destroy(&f->h.mu);
    rmq_tk_free(f->kit);
}

static size_t count(fixture *f, int code)
{
    size_t k = 0;
    for (size_t i = 0; i < f->h.n; i++)
        k += f->h.codes[i] == code && strcmp(f->h.addrs[i], f->tagged) == 0;
    return k;
}

/* Every record on the client's connection after its close: none. */
static void assert_nothing_after_close(fixture *f)
{
    size_t close_at = f->h.n;
    for (size_t i = 0; i < f->h.n; i++)
        if (f->h.codes[i] == CLOSE_MARK && strcmp(f->h.addrs[i], f->tagged) == 0)
            close_at = i;
    assert_true(close_at < f->h.n); /* it was closed */
    assert_int_equal(count(f, UNREGISTER_CLIENT), 1);
    for (size_t i = close_at + 1; i < f->h.n; i++)
        if (strcmp(f->h.addrs[i], f->tagged) == 0)
            fail_msg("request code %d posted to %s after its close: the gone client is "
                     "registered again",
                     f->h.codes[i], f->tagged);
}

typedef enum path { PERIODIC_PASS, RELAYED_HEARTBEAT } path;

typedef struct runner {
    fixture *f;
    path p;
    Apache__Rocketmq__V2__Status st;
} runner;

static void *run(void *arg)
{
    runner *r = arg;
    fixture *f = r->f;
    if (r->p == PERIODIC_PASS) {
        f->h.timer_fn(f->h.timer_ud);
    } else {
        Apache__Rocketmq__V2__HeartbeatRequest req = APACHE__ROCKETMQ__V2__HEARTBEAT_REQUEST__INIT;
        req.client_type = APACHE__ROCKETMQ__V2__CLIENT_TYPE__PRODUCER;
        char why[256] = "";
        proxy_clients_heartbeat(&f->px, (rmq_grpc_call *)(void *)f, CLIENT_ID, &req, &r->st, why,
                                sizeof why);
    }
    return NULL;
}

/* Runs r's path on a thread and returns once that thread is held (in its
 * NameServer call, or local mode's in-process HEART_BEAT). */
static pthread_t run_held(runner *r)
{
    fixture *f = r->f;
    pthread_t th;
    pthread_mutex_lock(&f->h.mu);
    f->h.hold_armed = true;
    assert_int_equal(pthread_create(&th, NULL, run, r), 0);
    f->h.hold_thread = th;
    while (!f->h.held)
        pthread_cond_wait(&f->h.cv, &f->h.mu);
    pthread_mutex_unlock(&f->h.mu);
    return th;
}

/* Lets the held thread go and waits for it to end. */
static void release_and_join(fixture *f, pthread_t th)
{
    pthread_mutex_lock(&f->h.mu);
    f->h.released = true;
    pthread_cond_broadcast(&f->h.cv);
    pthread_mutex_unlock(&f->h.mu);
    assert_int_equal(pthread_join(th, NULL), 0);
}

/* The HEART_BEAT path p runs on a thread held inside its NameServer call
 * (after it copied the client) while the client terminates. */
static void terminate_inside(path p)
{
    fixture f;
    start(&f);
    runner r = {.f = &f, .p = p, .st = APACHE__ROCKETMQ__V2__STATUS__INIT};
    pthread_t th = run_held(&r);
    /* the HEART_BEAT is decided; now the client goes */
    proxy_clients_terminate(&f.px, CLIENT_ID);
    assert_int_equal(count(&f, HEART_BEAT), 0);
    assert_int_equal(count(&f, UNREGISTER_CLIENT), 1);
    assert_int_equal(count(&f, CLOSE_MARK), 1);
    release_and_join(&f, th);
    assert_nothing_after_close(&f);
    assert_int_equal(count(&f, HEART_BEAT), 0);
    stop(&f);
}

static void periodic_pass_inside_termination_posts_nothing_after(void **state)
{
    (void)state;
    terminate_inside(PERIODIC_PASS);
}

static void relayed_heartbeat_inside_termination_posts_nothing_after(void **state)
{
    (void)state;
    terminate_inside(RELAYED_HEARTBEAT);
}

/* The control: the same two paths for a client that stays post its
 * HEART_BEAT on its own connection (the gate lets them through), and its
 * later termination unregisters and closes it after them. */
static void heartbeats_of_a_present_client_are_posted(void **state)
{
    (void)state;
    fixture f;
    start(&f);
    f.h.timer_fn(f.h.timer_ud);
    assert_int_equal(count(&f, HEART_BEAT), 1);
    runner r = {.f = &f, .p = RELAYED_HEARTBEAT, .st = APACHE__ROCKETMQ__V2__STATUS__INIT};
    run(&r);
    assert_int_equal(r.st.code, APACHE__ROCKETMQ__V2__CODE__OK);
    assert_int_equal(count(&f, HEART_BEAT), 2);
    proxy_clients_terminate(&f.px, CLIENT_ID);
    assert_nothing_after_close(&f);
    assert_int_equal(count(&f, HEART_BEAT), 2);
    stop(&f);
}

/* Local mode: a relayed Heartbeat's in-process HEART_BEAT that the broker
 * applies after the terminating client's UNREGISTER_CLIENT is followed by
 * one more UNREGISTER_CLIENT, so the broker's last word on the client is
 * its removal. */
static void local_heartbeat_applied_after_termination_is_undone(void **state)
{
    (void)state;
    fixture f;
    start_mode(&f, true);
    size_t settings_hb = count(&f, HEART_BEAT); /* the Settings' registration */
    runner r = {.f = &f, .p = RELAYED_HEARTBEAT, .st = APACHE__ROCKETMQ__V2__STATUS__INIT};
    pthread_t th = run_held(&r);
    proxy_clients_terminate(&f.px, CLIENT_ID);
    assert_int_equal(count(&f, UNREGISTER_CLIENT), 1);
    release_and_join(&f, th);
    assert_int_equal(count(&f, HEART_BEAT), settings_hb + 1); /* applied late */
    size_t last = f.h.n;
    for (size_t i = 0; i < f.h.n; i++)
        if (f.h.codes[i] == HEART_BEAT || f.h.codes[i] == UNREGISTER_CLIENT)
            last = i;
    assert_true(last < f.h.n);
    if (f.h.codes[last] != UNREGISTER_CLIENT)
        fail_msg("the broker's last request for the gone client was code %d: it stays listed",
                 f.h.codes[last]);
    stop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(heartbeats_of_a_present_client_are_posted),
        cmocka_unit_test(periodic_pass_inside_termination_posts_nothing_after),
        cmocka_unit_test(relayed_heartbeat_inside_termination_posts_nothing_after),
        cmocka_unit_test(local_heartbeat_applied_after_termination_is_undone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
