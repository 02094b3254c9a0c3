/* kit_fixture_plugin.c — a plugin linked into the kit's own tests, with one
 * request code per host feature the kit must reproduce: inline and executor
 * processors, defer answered by a timer or by an outgoing call's answer,
 * blocking calls on the wrong thread, failures, hooks, services, events,
 * channel events and state export/import. */
#include "kit_fixture_plugin.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct fixture_state {
    const rmq_host_api *api;
    rmq_plugin_ctx *ctx;
    atomic_long count;
    atomic_int idles;
    uint64_t tick_at[KF_MAX_TICKS];
    atomic_int ticks;
    _Atomic(rmq_deferred *) held; /* code 3, answered at the next tick */
    atomic_int exec_ticks;
    _Atomic uint64_t exec_tick_at;
} fixture_state;

typedef struct remote_wait {
    fixture_state *s;
    rmq_deferred *d;
} remote_wait;

static rmq_cmd *answer(fixture_state *s, const rmq_cmd *req, const char *key, long long v)
{
    rmq_cmd *r = s->api->cmd_new_response(req, 0, NULL);
    char num[32];
    snprintf(num, sizeof(num), "%lld", v);
    if (r && key)
        s->api->cmd_ext_set(r, key, num);
    return r;
}

static int on_count(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    fixture_state *s = ud;
    return s->api->reply(req, answer(s, cmd, "count", atomic_fetch_add(&s->count, 1) + 1));
}

static int on_exec(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    fixture_state *s = ud;
    const char *gate = s->api->cmd_ext_get(cmd, "gate");
    if (gate) {
        char running[1100];
        snprintf(running, sizeof(running), "%s.running", gate);
        FILE *fp = fopen(running, "w");
        if (fp)
            fclose(fp);
    }
    while (gate && access(gate, F_OK) != 0)
        usleep(1000);
    return s->api->reply(req, answer(s, cmd, NULL, 0));
}

static int on_defer(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    (void)cmd;
    fixture_state *s = ud;
    atomic_store(&s->held, s->api->defer(req));
    return RMQ_DEFERRED;
}

static void on_tick(void *ud)
{
    fixture_state *s = ud;
    int n = atomic_fetch_add(&s->ticks, 1);
    if (n < KF_MAX_TICKS)
        s->tick_at[n] = s->api->now_monotonic_ms();
    rmq_deferred *d = atomic_exchange(&s->held, NULL);
    if (d)
        s->api->deferred_reply(
            d, answer(s, s->api->deferred_cmd(d), "at", (long long)s->api->now_monotonic_ms()));
}

/* Bound to executor "work": runs there, while the clock reads its due time. */
static void on_exec_tick(void *ud)
{
    fixture_state *s = ud;
    atomic_store(&s->exec_tick_at, s->api->now_monotonic_ms());
    atomic_fetch_add(&s->exec_ticks, 1);
}

static int on_exec_ticks(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    fixture_state *s = ud;
    rmq_cmd *r = answer(s, cmd, "ticks", atomic_load(&s->exec_ticks));
    char at[32];
    snprintf(at, sizeof(at), "%llu", (unsigned long long)atomic_load(&s->exec_tick_at));
    s->api->cmd_ext_set(r, "at", at);
    return s->api->reply(req, r);
}

static void on_remote_answer(int err, const rmq_cmd *resp, void *ud)
{
    remote_wait *w = ud;
    const rmq_host_api *api = w->s->api;
    rmq_cmd *r = api->cmd_new_response(api->deferred_cmd(w->d), err ? 1 : 0, NULL);
    if (r && resp && api->cmd_remark(resp))
        api->cmd_ext_set(r, "remote", api->cmd_remark(resp));
    if (r && err) {
        char num[16];
        snprintf(num, sizeof(num), "%d", err);
        api->cmd_ext_set(r, "err", num);
    }
    api->deferred_reply(w->d, r);
    free(w);
}

static int on_remote(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    (void)cmd;
    fixture_state *s = ud;
    remote_wait *w = malloc(sizeof(*w));
    if (!w)
        return RMQ_ENOMEM;
    w->s = s;
    w->d = s->api->defer(req);
    rmq_cmd *out = s->api->cmd_new_request(77);
    s->api->cmd_ext_set(out, "from", "fixture");
    int rc = s->api->invoke_async_addr(s->ctx, "10.0.0.1:9876", out, 3000, on_remote_answer, w);
    if (rc != 0)
        on_remote_answer(rc, NULL, w);
    return RMQ_DEFERRED;
}

static int on_sync_io(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    fixture_state *s = ud;
    rmq_cmd *resp = NULL;
    int rc = s->api->invoke_sync(s->ctx, s->api->request_channel(req), s->api->cmd_new_request(78),
                                 1000, &resp);
    s->api->cmd_free(resp);
    return s->api->reply(req, answer(s, cmd, "rc", rc));
}

static int on_sync_exec(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    fixture_state *s = ud;
    rmq_cmd *resp = NULL;
    int rc =
        s->api->invoke_sync_addr(s->ctx, "10.0.0.2:9876", s->api->cmd_new_request(78), 3000, &resp);
    rmq_cmd *r = answer(s, cmd, "rc", rc);
    if (resp && s->api->cmd_remark(resp))
        s->api->cmd_ext_set(r, "remote", s->api->cmd_remark(resp));
    s->api->cmd_free(resp);
    return s->api->reply(req, r);
}

static int on_fail(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    (void)cmd;
    fixture_state *s = ud;
    s->api->request_fail(req, "fixture refuses");
    return RMQ_EINVAL;
}

static int on_service(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    fixture_state *s = ud;
    const void *table;
    void *tud;
    rmq_service_ref ref;
    int rc = s->api->service_acquire(s->ctx, "kf.math", 1, &table, &tud, &ref);
    if (rc != 0)
        return rc;
    int sum = ((const kf_math *)table)->add(tud, 2, 3);
    s->api->service_release(s->ctx, ref);
    return s->api->reply(req, answer(s, cmd, "sum", sum));
}

static int on_publish(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    fixture_state *s = ud;
    size_t len;
    const void *body = s->api->cmd_body(cmd, &len);
    s->api->publish_event(s->ctx, "kf.event", body, len);
    return s->api->reply(req, answer(s, cmd, NULL, 0));
}

static int on_idles(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    fixture_state *s = ud;
    return s->api->reply(req, answer(s, cmd, "idles", atomic_load(&s->idles)));
}

static int on_ticks(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    fixture_state *s = ud;
    int n = atomic_load(&s->ticks);
    char body[KF_MAX_TICKS * 24] = "";
    size_t off = 0;
    for (int i = 0; i < n && i < KF_MAX_TICKS; i++)
        off += (size_t)snprintf(body + off, sizeof(body) - off, "%s%llu", i ? "," : "",
                                (unsigned long long)s->tick_at[i]);
    rmq_cmd *r = answer(s, cmd, "ticks", n);
    s->api->cmd_set_body(r, body, off, NULL, NULL);
    return s->api->reply(req, r);
}

static bool reject(const rmq_cmd *cmd, void *ud)
{
    fixture_state *s = ud;
    return s->api->cmd_ext_get(cmd, "reject") != NULL;
}

static int before(rmq_channel_id ch, const rmq_cmd *req, const char **remark, void *ud)
{
    (void)ch;
    fixture_state *s = ud;
    if (s->api->cmd_code(req) != KF_CODE_HOOKED)
        return 0;
    *remark = "hook said no";
    return 16;
}

static void on_channel(rmq_channel_event ev, rmq_channel_id ch, const char *peer, void *ud)
{
    (void)ch;
    (void)peer;
    fixture_state *s = ud;
    if (ev == RMQ_CHANNEL_IDLE)
        atomic_fetch_add(&s->idles, 1);
}

static const rmq_setting_decl settings[] = {
    {.name = "start", .type = RMQ_SETTING_INT, .default_value = "0", .min = 0, .max = 100},
    {.name = "tick_ms", .type = RMQ_SETTING_INT, .default_value = "100", .min = 1, .max = 60000},
    {.name = NULL},
};

static int on_queue_info(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    fixture_state *s = ud;
    size_t length = 99, capacity = 99;
    uint64_t wait = 99;
    int rc = s->api->executor_queue_info(s->ctx, s->api->cmd_ext_get(cmd, "name"), &length,
                                         &capacity, &wait);
    rmq_cmd *r = answer(s, cmd, "rc", rc);
    char num[32];
    snprintf(num, sizeof(num), "%zu", length);
    s->api->cmd_ext_set(r, "length", num);
    snprintf(num, sizeof(num), "%zu", capacity);
    s->api->cmd_ext_set(r, "capacity", num);
    snprintf(num, sizeof(num), "%llu", (unsigned long long)wait);
    s->api->cmd_ext_set(r, "wait", num);
    return s->api->reply(req, r);
}

static int fixture_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    fixture_state *s = calloc(1, sizeof(*s));
    if (!s)
        return RMQ_ENOMEM;
    s->api = api;
    s->ctx = ctx;
    atomic_store(&s->count, api->setting_int(ctx, "start"));
    api->set_userdata(ctx, s);
    uint64_t tick = (uint64_t)api->setting_int(ctx, "tick_ms");
    int rc = api->declare_executor(ctx, "work", 1, 1);
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_COUNT, on_count, s, NULL);
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_EXEC, on_exec, s, "work");
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_DEFER, on_defer, s, NULL);
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_REMOTE, on_remote, s, NULL);
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_SYNC_IO, on_sync_io, s, NULL);
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_SYNC_EXEC, on_sync_exec, s, "work");
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_FAIL, on_fail, s, NULL);
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_HOOKED, on_count, s, NULL);
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_SERVICE, on_service, s, NULL);
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_PUBLISH, on_publish, s, "work");
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_IDLES, on_idles, s, NULL);
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_TICKS, on_ticks, s, NULL);
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_EXEC_TICKS, on_exec_ticks, s, NULL);
    rc = rc ? rc : api->register_processor(ctx, KF_CODE_QUEUE_INFO, on_queue_info, s, NULL);
    rc = rc ? rc : api->set_reject_hook(ctx, reject, s);
    rc = rc ? rc : api->add_rpc_hook(ctx, before, NULL, s);
    rc = rc ? rc : api->add_channel_listener(ctx, on_channel, s);
    rc = rc ? rc : api->add_timer(ctx, tick, tick, on_tick, s, NULL, NULL);
    rc = rc ? rc : api->add_timer(ctx, 250, 250, on_exec_tick, s, "work", NULL);
    if (rc != 0)
        free(s);
    return rc;
}

static void fixture_fini(rmq_plugin_ctx *ctx)
{
    fixture_state *s = rmq_ctx_userdata(ctx);
    rmq_deferred *d = atomic_exchange(&s->held, NULL);
    if (d)
        s->api->deferred_reply(d, NULL);
    free(s);
}

static int fixture_export(rmq_plugin_ctx *ctx, void **blob, size_t *len)
{
    fixture_state *s = rmq_ctx_userdata(ctx);
    long *v = malloc(sizeof(*v));
    if (!v)
        return RMQ_ENOMEM;
    *v = atomic_load(&s->count);
    *blob = v;
    *len = sizeof(*v);
    return 0;
}

static int fixture_import(rmq_plugin_ctx *ctx, uint32_t version, const void *blob, size_t len)
{
    fixture_state *s = rmq_ctx_userdata(ctx);
    if (version != 1 || len != sizeof(long))
        return RMQ_EINVAL;
    long v;
    memcpy(&v, blob, sizeof(v));
    atomic_store(&s->count, v);
    return 0;
}

static void fixture_quiesce(rmq_plugin_ctx *ctx)
{
    fixture_state *s = rmq_ctx_userdata(ctx);
    rmq_deferred *d = atomic_exchange(&s->held, NULL);
    if (d)
        s->api->deferred_reply(d, s->api->cmd_new_response(s->api->deferred_cmd(d), 1, "bye"));
}

const rmq_plugin_descriptor kit_fixture_descriptor = {
    .abi_major = RMQ_ABI_MAJOR,
    .abi_minor = RMQ_ABI_MINOR,
    .descriptor_size = sizeof(rmq_plugin_descriptor),
    .state_version = 1,
    .name = "fixture",
    .version = "1.0",
    .settings = settings,
    .init = fixture_init,
    .fini = fixture_fini,
    .export_state = fixture_export,
    .import_state = fixture_import,
    .quiesce = fixture_quiesce,
};
