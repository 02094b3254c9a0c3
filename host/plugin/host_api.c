/* host_api.c — the rmq_host_api function table handed to plugins: thin,
 * checked wrappers over the host's internals. Registration calls only
 * record into the calling plugin generation (made live later); nothing here
 * lets a plugin reach host state it does not own. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu.h>

#include "host.h"
#include "tls_context.h"

int outgoing_oneway(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                    uint32_t timeout_ms);
int outgoing_async(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                   uint32_t timeout_ms, rmq_response_fn cb, void *ud);
int outgoing_sync(plugin_inst *p, rmq_channel_id ch, const char *addr, rmq_cmd *req,
                  uint32_t timeout_ms, rmq_cmd **resp);
void request_run_after_hooks(rmq_request *req, const rmq_cmd *resp);

#define P(ctx) ((plugin_inst *)(void *)(ctx))

uint64_t host_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t host_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void api_log(rmq_plugin_ctx *ctx, rmq_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    host_log_v(&P(ctx)->host->log, (int)level, P(ctx)->conf.name, fmt, ap);
    va_end(ap);
}

static const char *api_plugin_name(rmq_plugin_ctx *ctx)
{
    return P(ctx)->conf.name;
}

static const char *setting_or_warn(rmq_plugin_ctx *ctx, const char *name, rmq_setting_type t)
{
    plugin_inst *p = P(ctx);
    for (size_t i = 0; i < p->nsettings; i++) {
        if (strcmp(p->settings[i].decl->name, name) == 0) {
            if (p->settings[i].decl->type != t)
                host_log_write(&p->host->log, RMQ_LOG_WARN, p->conf.name,
                               "setting '%s' read with the wrong type", name);
            return p->settings[i].value;
        }
    }
    host_log_write(&p->host->log, RMQ_LOG_WARN, p->conf.name, "asked for undeclared setting '%s'",
                   name);
    return NULL;
}

static const char *api_setting_string(rmq_plugin_ctx *ctx, const char *name)
{
    return setting_or_warn(ctx, name, RMQ_SETTING_STRING);
}

static int64_t api_setting_int(rmq_plugin_ctx *ctx, const char *name)
{
    const char *v = setting_or_warn(ctx, name, RMQ_SETTING_INT);
    return v ? strtoll(v, NULL, 10) : 0;
}

static bool api_setting_bool(rmq_plugin_ctx *ctx, const char *name)
{
    const char *v = setting_or_warn(ctx, name, RMQ_SETTING_BOOL);
    return v && strcmp(v, "true") == 0;
}

static double api_setting_double(rmq_plugin_ctx *ctx, const char *name)
{
    const char *v = setting_or_warn(ctx, name, RMQ_SETTING_DOUBLE);
    return v ? strtod(v, NULL) : 0.0;
}

static const char *api_state_dir(rmq_plugin_ctx *ctx)
{
    return P(ctx)->host->conf.state_dir;
}

static int api_server_address(rmq_plugin_ctx *ctx, char *host, size_t host_len, int *port)
{
    server *s = P(ctx)->srv;
    if (!s || !s->listening)
        return RMQ_ENOENT;
    if (host && host_len)
        snprintf(host, host_len, "%s", s->bound_host);
    if (port)
        *port = s->bound_port;
    return 0;
}

static void api_set_userdata(rmq_plugin_ctx *ctx, void *data)
{
    P(ctx)->head.userdata = data;
}

static void *api_get_userdata(rmq_plugin_ctx *ctx)
{
    return P(ctx)->head.userdata;
}

static uint64_t api_now_mono(void)
{
    return host_now_ms();
}

static uint64_t api_now_wall(void)
{
    return host_wall_ms();
}

static int need_init(plugin_inst *p, const char *what)
{
    if (p->in_init)
        return 0;
    host_log_write(&p->host->log, RMQ_LOG_ERROR, p->conf.name, "%s may only be called from init",
                   what);
    return RMQ_EINVAL;
}

static executor *find_executor(plugin_inst *p, const char *name)
{
    char full[128];
    snprintf(full, sizeof(full), "%s/%s", p->conf.name, name);
    for (size_t i = 0; i < p->nexecutors; i++)
        if (strcmp(p->executors[i]->name, full) == 0)
            return p->executors[i];
    return NULL;
}

static int api_declare_executor(rmq_plugin_ctx *ctx, const char *name, int threads,
                                int queue_capacity)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "declare_executor");
    if (rc)
        return rc;
    if (!name || !name[0] || threads < 1 || threads > 1024 || queue_capacity < 1)
        return RMQ_EINVAL;
    if (find_executor(p, name))
        return RMQ_EEXIST;
    executor **ne = realloc(p->executors, (p->nexecutors + 1) * sizeof(*ne));
    if (!ne)
        return RMQ_ENOMEM;
    p->executors = ne;
    executor *ex = calloc(1, sizeof(*ex));
    if (!ex)
        return RMQ_ENOMEM;
    char full[128];
    snprintf(full, sizeof(full), "%s/%s", p->conf.name, name);
    rc = executor_start(ex, p->host, full, threads, queue_capacity);
    if (rc) {
        free(ex);
        return rc;
    }
    ex->owner = p;
    p->executors[p->nexecutors++] = ex;
    return 0;
}

static int api_set_executor_queue_timeout(rmq_plugin_ctx *ctx, const char *name,
                                          uint64_t max_wait_ms, const char *remark_prefix)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "set_executor_queue_timeout");
    if (rc)
        return rc;
    executor *ex = name ? find_executor(p, name) : NULL;
    if (!ex)
        return RMQ_ENOENT;
    snprintf(ex->busy_remark, sizeof(ex->busy_remark), "%s",
             remark_prefix ? remark_prefix : "[TIMEOUT_CLEAN_QUEUE]system busy");
    atomic_store(&ex->max_wait_ms, max_wait_ms);
    return 0;
}

/* Any thread: only the wait changes (an atomic the dispatcher loads per
 * request); the remark was written in init, before any request ran. */
static int api_set_executor_queue_wait(rmq_plugin_ctx *ctx, const char *name, uint64_t max_wait_ms)
{
    executor *ex = name ? find_executor(P(ctx), name) : NULL;
    if (!ex)
        return RMQ_ENOENT;
    atomic_store(&ex->max_wait_ms, max_wait_ms);
    return 0;
}

/* Any thread: the client endpoint lives as long as the host; its mode is
 * an atomic reload-config changes. */
static bool api_outgoing_tls(rmq_plugin_ctx *ctx)
{
    return tls_endpoint_mode(P(ctx)->host->tls_client) != 0;
}

/* Any thread: the executor list is fixed once init has returned, and during
 * init only the plugin's own thread changes it. */
static int api_executor_queue_info(rmq_plugin_ctx *ctx, const char *name, size_t *length,
                                   size_t *capacity, uint64_t *head_wait_ms)
{
    executor *ex = name ? find_executor(P(ctx), name) : NULL;
    if (!ex)
        return RMQ_ENOENT;
    executor_queue_info(ex, length, capacity, head_wait_ms);
    return 0;
}

static int resolve_executor(plugin_inst *p, const char *name, executor **out)
{
    *out = NULL;
    if (!name)
        return 0;
    *out = find_executor(p, name);
    if (!*out) {
        host_log_write(&p->host->log, RMQ_LOG_ERROR, p->conf.name,
                       "unknown executor '%s' (declare it first)", name);
        return RMQ_ENOENT;
    }
    return 0;
}

static int api_register_processor_flags(rmq_plugin_ctx *ctx, int32_t code, rmq_processor_fn fn,
                                        void *ud, const char *executor_name, uint32_t flags)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "register_processor");
    if (rc)
        return rc;
    if (!fn || (flags & ~(RMQ_PROC_FALLBACK | RMQ_PROC_NOT_ON_VIP)))
        return RMQ_EINVAL;
    if (!p->srv) {
        host_log_write(&p->host->log, RMQ_LOG_ERROR, p->conf.name,
                       "register_processor: the plugin is bound to no server");
        return RMQ_ENOENT;
    }
    if (p->srv->protocol == SERVER_PROTOCOL_GRPC) {
        /* nothing would ever reach it: gRPC servers dispatch by method path */
        host_log_write(&p->host->log, RMQ_LOG_ERROR, p->conf.name,
                       "register_processor %d: server '%s' speaks gRPC (register_grpc_method)",
                       code, p->srv->name);
        return RMQ_EINVAL;
    }
    executor *ex;
    if ((rc = resolve_executor(p, executor_name, &ex)))
        return rc;
    for (size_t i = 0; i < p->nprocs; i++)
        if (p->procs[i].code == code)
            return RMQ_EEXIST;
    staged_proc *np = realloc(p->procs, (p->nprocs + 1) * sizeof(*np));
    if (!np)
        return RMQ_ENOMEM;
    p->procs = np;
    np[p->nprocs++] = (staged_proc){code, {fn, ud, ex, p, flags}};
    return 0;
}

/* ABI 1.8: a gRPC method on the plugin's (gRPC) server. */
static int api_register_grpc_method(rmq_plugin_ctx *ctx, const char *path, rmq_grpc_kind kind,
                                    rmq_grpc_handler_fn fn, void *ud, const char *executor_name)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "register_grpc_method");
    if (rc)
        return rc;
    if (!fn || !path || path[0] != '/' || !strchr(path + 1, '/') ||
        (kind != RMQ_GRPC_UNARY && kind != RMQ_GRPC_SERVER_STREAMING &&
         kind != RMQ_GRPC_BIDI_STREAMING))
        return RMQ_EINVAL;
    if (!p->srv || p->srv->protocol != SERVER_PROTOCOL_GRPC) {
        host_log_write(&p->host->log, RMQ_LOG_ERROR, p->conf.name,
                       "register_grpc_method %s: server '%s' is not a gRPC server (host.conf: "
                       "protocol = \"grpc\")",
                       path, p->srv ? p->srv->name : "(none)");
        return p->srv ? RMQ_EINVAL : RMQ_ENOENT;
    }
    executor *ex;
    if ((rc = resolve_executor(p, executor_name, &ex)))
        return rc;
    for (size_t i = 0; i < p->ngrpc_methods; i++)
        if (strcmp(p->grpc_methods[i].path, path) == 0)
            return RMQ_EEXIST;
    grpc_method_entry *nm = realloc(p->grpc_methods, (p->ngrpc_methods + 1) * sizeof(*nm));
    if (!nm)
        return RMQ_ENOMEM;
    p->grpc_methods = nm;
    char *copy = strdup(path);
    if (!copy)
        return RMQ_ENOMEM;
    nm[p->ngrpc_methods++] = (grpc_method_entry){copy, kind, fn, ud, ex, p};
    return 0;
}

static int api_invoke_local(rmq_plugin_ctx *ctx, const char *server, rmq_cmd *req,
                            uint32_t timeout_ms, rmq_cmd **resp)
{
    plugin_inst *p = P(ctx);
    return local_invoke(p->host, p, server, req, timeout_ms, resp);
}

static int api_invoke_local_async(rmq_plugin_ctx *ctx, const char *server, rmq_cmd *req,
                                  rmq_response_fn cb, void *ud)
{
    plugin_inst *p = P(ctx);
    return local_invoke_async(p->host, p, server, req, cb, ud);
}

static int api_register_processor(rmq_plugin_ctx *ctx, int32_t code, rmq_processor_fn fn, void *ud,
                                  const char *executor_name)
{
    return api_register_processor_flags(ctx, code, fn, ud, executor_name, 0);
}

static int api_set_default_processor(rmq_plugin_ctx *ctx, rmq_processor_fn fn, void *ud,
                                     const char *executor_name)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "set_default_processor");
    if (rc)
        return rc;
    executor *ex;
    if ((rc = resolve_executor(p, executor_name, &ex)))
        return rc;
    p->deflt = (proc_entry){fn, ud, ex, p, 0};
    return 0;
}

static int api_set_reject_hook(rmq_plugin_ctx *ctx, rmq_reject_fn fn, void *ud)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "set_reject_hook");
    if (rc)
        return rc;
    p->reject = (reject_entry){fn, ud, p};
    return 0;
}

static int api_add_channel_listener(rmq_plugin_ctx *ctx, rmq_channel_event_fn fn, void *ud)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "add_channel_listener");
    if (rc)
        return rc;
    if (!fn)
        return RMQ_EINVAL;
    listener_entry *nl = realloc(p->listeners, (p->nlisteners + 1) * sizeof(*nl));
    if (!nl)
        return RMQ_ENOMEM;
    p->listeners = nl;
    nl[p->nlisteners++] = (listener_entry){fn, ud, p};
    return 0;
}

static int api_register_client_processor(rmq_plugin_ctx *ctx, int32_t code,
                                         rmq_client_request_fn fn, void *ud)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "register_client_processor");
    if (rc)
        return rc;
    if (!fn)
        return RMQ_EINVAL;
    for (size_t i = 0; i < p->nclient_procs; i++)
        if (p->client_procs[i].code == code)
            return RMQ_EEXIST;
    client_proc_entry *n = realloc(p->client_procs, (p->nclient_procs + 1) * sizeof(*n));
    if (!n)
        return RMQ_ENOMEM;
    p->client_procs = n;
    n[p->nclient_procs++] = (client_proc_entry){code, fn, ud};
    return 0;
}

static int add_hook(plugin_inst *p, const char *what, hook_entry e)
{
    int rc = need_init(p, what);
    if (rc)
        return rc;
    if (!e.before && !e.before_remark && !e.after)
        return RMQ_EINVAL;
    hook_entry *nh = realloc(p->hooks, (p->nhooks + 1) * sizeof(*nh));
    if (!nh)
        return RMQ_ENOMEM;
    p->hooks = nh;
    e.plugin = p;
    nh[p->nhooks++] = e;
    return 0;
}

static int api_add_rpc_hook(rmq_plugin_ctx *ctx, rmq_rpc_before_fn before, rmq_rpc_after_fn after,
                            void *ud)
{
    return add_hook(P(ctx), "add_rpc_hook",
                    (hook_entry){.before = before, .after = after, .ud = ud});
}

/* ABI 1.7: the before hook writes its remark into the host's buffer. */
static int api_add_rpc_hook_remark(rmq_plugin_ctx *ctx, rmq_rpc_before_remark_fn before,
                                   rmq_rpc_after_fn after, void *ud)
{
    return add_hook(P(ctx), "add_rpc_hook_remark",
                    (hook_entry){.before_remark = before, .after = after, .ud = ud});
}

static int api_add_timer(rmq_plugin_ctx *ctx, uint64_t first_ms, uint64_t period_ms,
                         rmq_timer_fn fn, void *ud, const char *executor_name, rmq_timer_id *out_id)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "add_timer");
    if (rc)
        return rc;
    if (!fn)
        return RMQ_EINVAL;
    executor *ex;
    if ((rc = resolve_executor(p, executor_name, &ex)))
        return rc;
    timer_rec *t = calloc(1, sizeof(*t));
    if (!t)
        return RMQ_ENOMEM;
    t->id = atomic_fetch_add(&p->host->next_timer_id, 1) + 1;
    t->plugin = p;
    t->first_ms = first_ms;
    t->period_ms = period_ms;
    t->fn = fn;
    t->ud = ud;
    t->ex = ex;
    t->next = p->timers;
    p->timers = t;
    if (out_id)
        *out_id = t->id;
    return 0;
}

static int api_cancel_timer(rmq_plugin_ctx *ctx, rmq_timer_id id)
{
    return timers_cancel(P(ctx)->host, id);
}

static int api_export_service(rmq_plugin_ctx *ctx, const char *name, uint32_t version,
                              const void *table, void *table_ud)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "export_service");
    if (rc)
        return rc;
    if (!name || !table || strlen(name) >= sizeof(((service_rec *)0)->name))
        return RMQ_EINVAL;
    service_rec *ns = realloc(p->services, (p->nservices + 1) * sizeof(*ns));
    if (!ns)
        return RMQ_ENOMEM;
    p->services = ns;
    service_rec *s = &ns[p->nservices++];
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "%s", name);
    s->version = version;
    s->table = table;
    s->table_ud = table_ud;
    s->plugin = p;
    return 0;
}

static int api_register_gauges(rmq_plugin_ctx *ctx, rmq_gauges_fn fn, void *ud)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "register_gauges");
    if (rc)
        return rc;
    if (!fn)
        return RMQ_EINVAL;
    p->gauges_fn = fn;
    p->gauges_ud = ud;
    return 0;
}

static int api_register_admin_command(rmq_plugin_ctx *ctx, const char *name, const char *usage,
                                      rmq_admin_fn fn, void *ud)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "register_admin_command");
    if (rc)
        return rc;
    if (!name || !fn || strlen(name) >= sizeof(((admin_cmd_rec *)0)->name))
        return RMQ_EINVAL;
    admin_cmd_rec *na = realloc(p->admin_cmds, (p->nadmin + 1) * sizeof(*na));
    if (!na)
        return RMQ_ENOMEM;
    p->admin_cmds = na;
    admin_cmd_rec *a = &na[p->nadmin++];
    memset(a, 0, sizeof(*a));
    snprintf(a->name, sizeof(a->name), "%s", name);
    snprintf(a->usage, sizeof(a->usage), "%s", usage ? usage : "");
    a->fn = fn;
    a->ud = ud;
    a->plugin = p;
    return 0;
}

static int api_subscribe_event(rmq_plugin_ctx *ctx, const char *event, rmq_event_fn fn, void *ud)
{
    plugin_inst *p = P(ctx);
    int rc = need_init(p, "subscribe_event");
    if (rc)
        return rc;
    if (!event || !fn || strlen(event) >= sizeof(((event_sub *)0)->name))
        return RMQ_EINVAL;
    event_sub *ns = realloc(p->subs, (p->nsubs + 1) * sizeof(*ns));
    if (!ns)
        return RMQ_ENOMEM;
    p->subs = ns;
    event_sub *s = &ns[p->nsubs++];
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "%s", event);
    s->fn = fn;
    s->ud = ud;
    s->plugin = p;
    return 0;
}

/* Services and events look across live generations under the registry
 * mutex; the reference count on the provider keeps it from being unloaded
 * while a consumer uses its table. While the provider is held for a reload
 * (between drain and swap) a consumer that may block waits for the swap, so
 * nothing it does through the table is lost with the old generation's state;
 * on an I/O thread it cannot wait and gets the old generation (reads only). */
static int api_service_acquire(rmq_plugin_ctx *ctx, const char *name, uint32_t min_version,
                               const void **table, void **table_ud, rmq_service_ref *ref)
{
    plugin_inst *self = P(ctx);
    rmq_host *h = self->host;
    bool may_wait = !host_on_io_thread(h);
    int rc;
    pthread_mutex_lock(&h->registry_mu);
    for (;;) {
        rc = RMQ_ENOENT;
        plugin_inst *held_provider = NULL;
        for (size_t i = 0; i < h->nplugins && rc != 0 && !held_provider; i++) {
            plugin_inst *p = h->plugins[i];
            if (p->state != PLUGIN_LIVE)
                continue;
            for (size_t k = 0; k < p->nservices; k++) {
                service_rec *s = &p->services[k];
                if (strcmp(s->name, name) != 0 || s->version < min_version)
                    continue;
                if (may_wait && atomic_load(&p->held) &&
                    strcmp(p->conf.name, self->conf.name) != 0) {
                    held_provider = p;
                    break;
                }
                atomic_fetch_add(&p->inflight, 1);
                *table = s->table;
                if (table_ud)
                    *table_ud = s->table_ud;
                if (ref)
                    *ref = (rmq_service_ref)(uintptr_t)p;
                rc = 0;
                break;
            }
        }
        if (!held_provider)
            break;
        pthread_cond_wait(&h->hold_cv, &h->registry_mu);
    }
    pthread_mutex_unlock(&h->registry_mu);
    return rc;
}

static void api_service_release(rmq_plugin_ctx *ctx, rmq_service_ref ref)
{
    (void)ctx;
    plugin_inst *p = (plugin_inst *)(uintptr_t)ref;
    if (p)
        atomic_fetch_sub(&p->inflight, 1);
}

/* Event payloads may point into the publisher's memory (valid during the
 * call only), so an event cannot be queued for a generation held by a
 * reload: a publisher that may block waits until the swap and delivers to
 * the generation serving then. On an I/O thread it cannot wait; events are
 * published from executors and event threads. */
static int api_publish_event(rmq_plugin_ctx *ctx, const char *event, const void *data, size_t len)
{
    plugin_inst *self = P(ctx);
    rmq_host *h = self->host;
    bool may_wait = !host_on_io_thread(h);
    /* Snapshot under the mutex, call outside it so a subscriber may publish. */
    event_sub snap[32];
    size_t n;
    pthread_mutex_lock(&h->registry_mu);
    for (;;) {
        bool wait = false;
        n = 0;
        for (size_t i = 0; i < h->nplugins && !wait; i++) {
            plugin_inst *p = h->plugins[i];
            if (p->state != PLUGIN_LIVE)
                continue;
            for (size_t k = 0; k < p->nsubs && n < 32; k++) {
                if (strcmp(p->subs[k].name, event) != 0)
                    continue;
                if (may_wait && p != self && atomic_load(&p->held)) {
                    wait = true;
                    break;
                }
                snap[n++] = p->subs[k];
            }
        }
        if (!wait)
            break;
        pthread_cond_wait(&h->hold_cv, &h->registry_mu);
    }
    for (size_t i = 0; i < n; i++)
        atomic_fetch_add(&snap[i].plugin->inflight, 1);
    pthread_mutex_unlock(&h->registry_mu);
    for (size_t i = 0; i < n; i++) {
        snap[i].fn(event, data, len, snap[i].ud);
        atomic_fetch_sub(&snap[i].plugin->inflight, 1);
    }
    return 0;
}

/* ---- commands ---- */
static int32_t api_cmd_code(const rmq_cmd *c)
{
    return c->code;
}
static int32_t api_cmd_flag(const rmq_cmd *c)
{
    return c->flag;
}
static int32_t api_cmd_opaque(const rmq_cmd *c)
{
    return c->opaque;
}
static int32_t api_cmd_version(const rmq_cmd *c)
{
    return c->version;
}
static int32_t api_cmd_language(const rmq_cmd *c)
{
    return c->language;
}
static int api_cmd_serialize_type(const rmq_cmd *c)
{
    return c->serialize_type;
}
static const char *api_cmd_remark(const rmq_cmd *c)
{
    return c->remark;
}

static const char *api_cmd_peer(const rmq_cmd *c)
{
    return c ? c->peer : NULL;
}

static size_t api_cmd_ext_count(const rmq_cmd *c)
{
    return c->ext_count;
}

static int api_cmd_ext_at(const rmq_cmd *c, size_t i, const char **key, const char **value)
{
    if (i >= c->ext_count)
        return RMQ_ENOENT;
    if (key)
        *key = c->ext[i].key;
    if (value)
        *value = c->ext[i].value;
    return 0;
}

static const void *api_cmd_body(const rmq_cmd *c, size_t *len)
{
    if (len)
        *len = c->body_len;
    return c->body;
}

static int api_cmd_set_code(rmq_cmd *c, int32_t code)
{
    c->code = code;
    return 0;
}

static int api_cmd_set_language(rmq_cmd *c, int32_t language)
{
    if (!c || language < 0 || language > 255)
        return RMQ_EINVAL;
    c->language = language;
    return 0;
}

static int api_cmd_set_version(rmq_cmd *c, int32_t version)
{
    if (!c || version < INT16_MIN || version > INT16_MAX)
        return RMQ_EINVAL;
    c->version = version;
    return 0;
}

static int api_cmd_set_body(rmq_cmd *c, const void *data, size_t len, rmq_free_fn free_fn,
                            void *free_ud)
{
    return rmq_cmd_set_body(c, data, len, (rmq_body_free_fn)free_fn, free_ud);
}

static int api_cmd_set_ext_present(rmq_cmd *c)
{
    if (!c)
        return RMQ_EINVAL;
    c->has_ext = true;
    return 0;
}

static rmq_cmd *api_cmd_new_request(int32_t code)
{
    rmq_cmd *c = rmq_cmd_new();
    if (c)
        c->code = code;
    return c;
}

/* ---- requests ---- */
static rmq_channel_id api_request_channel(const rmq_request *r)
{
    return r->channel;
}
static const char *api_request_peer(const rmq_request *r)
{
    return r->peer;
}

static int api_reply(rmq_request *req, rmq_cmd *resp)
{
    if (!resp)
        return RMQ_EINVAL;
    if (req->replied) {
        host_log_write(&req->host->log, RMQ_LOG_WARN, req->entry.plugin->conf.name,
                       "second reply to request code %d ignored", req->cmd->code);
        rmq_cmd_free(resp);
        return RMQ_EINVAL;
    }
    req->replied = true;
    request_run_after_hooks(req, resp);
    if (req->oneway) {
        rmq_cmd_free(resp);
        return 0;
    }
    request_send_response(req, resp);
    return 0;
}

static void api_request_fail(rmq_request *req, const char *remark)
{
    free(req->fail_remark);
    req->fail_remark = remark ? strdup(remark) : NULL;
}

static rmq_deferred *api_defer(rmq_request *req)
{
    if (!req->deferred)
        atomic_fetch_add(&req->holds, 1); /* released by deferred_reply */
    req->deferred = true;
    return (rmq_deferred *)(void *)req;
}

static int api_deferred_reply(rmq_deferred *d, rmq_cmd *resp)
{
    rmq_request *req = (rmq_request *)(void *)d;
    int rc = 0;
    if (resp)
        rc = api_reply(req, resp);
    else
        request_run_after_hooks(req, NULL);
    request_release(req);
    return rc;
}

static const rmq_cmd *api_deferred_cmd(const rmq_deferred *d)
{
    return ((const rmq_request *)(const void *)d)->cmd;
}

static rmq_channel_id api_deferred_channel(const rmq_deferred *d)
{
    return ((const rmq_request *)(const void *)d)->channel;
}

/* ---- channels ---- */
static int api_channel_peer(rmq_plugin_ctx *ctx, rmq_channel_id ch, char *buf, size_t len)
{
    rmq_host *h = P(ctx)->host;
    io_loop *l = host_loop_of(h, ch);
    if (!l)
        return RMQ_ENOENT;
    if (!loop_is_current(l))
        return RMQ_EWOULDBLOCK; /* peer strings are passed with every event/request */
    connection *c = loop_find_conn(l, ch);
    if (!c)
        return RMQ_ENOENT;
    snprintf(buf, len, "%s", c->peer);
    return 0;
}

static int api_channel_close(rmq_plugin_ctx *ctx, rmq_channel_id ch)
{
    rmq_host *h = P(ctx)->host;
    io_loop *l = host_loop_of(h, ch);
    if (!l)
        return RMQ_ENOENT;
    loop_task *t = calloc(1, sizeof(*t));
    if (!t)
        return RMQ_ENOMEM;
    t->type = LT_CLOSE;
    t->channel = ch;
    loop_post(l, t);
    return 0;
}

/* ---- outgoing ---- */
static const outgoing_transport SOCKETS = {outgoing_oneway, outgoing_async, outgoing_sync,
                                           outgoing_close_addr};

static const outgoing_transport *transport(plugin_inst *p)
{
    return p->host->outgoing ? p->host->outgoing : &SOCKETS;
}

static int api_invoke_oneway(rmq_plugin_ctx *ctx, rmq_channel_id ch, rmq_cmd *req, uint32_t t)
{
    return transport(P(ctx))->oneway(P(ctx), ch, NULL, req, t);
}
static int api_invoke_oneway_addr(rmq_plugin_ctx *ctx, const char *a, rmq_cmd *req, uint32_t t)
{
    return a ? transport(P(ctx))->oneway(P(ctx), 0, a, req, t) : (rmq_cmd_free(req), RMQ_EINVAL);
}
static int api_invoke_async(rmq_plugin_ctx *ctx, rmq_channel_id ch, rmq_cmd *req, uint32_t t,
                            rmq_response_fn cb, void *ud)
{
    return transport(P(ctx))->async(P(ctx), ch, NULL, req, t, cb, ud);
}
static int api_invoke_async_addr(rmq_plugin_ctx *ctx, const char *a, rmq_cmd *req, uint32_t t,
                                 rmq_response_fn cb, void *ud)
{
    return a ? transport(P(ctx))->async(P(ctx), 0, a, req, t, cb, ud)
             : (rmq_cmd_free(req), RMQ_EINVAL);
}
static int api_invoke_sync(rmq_plugin_ctx *ctx, rmq_channel_id ch, rmq_cmd *req, uint32_t t,
                           rmq_cmd **resp)
{
    return transport(P(ctx))->sync(P(ctx), ch, NULL, req, t, resp);
}
static int api_invoke_sync_addr(rmq_plugin_ctx *ctx, const char *a, rmq_cmd *req, uint32_t t,
                                rmq_cmd **resp)
{
    if (!a) {
        *resp = NULL;
        rmq_cmd_free(req);
        return RMQ_EINVAL;
    }
    return transport(P(ctx))->sync(P(ctx), 0, a, req, t, resp);
}

static int api_close_outgoing(rmq_plugin_ctx *ctx, const char *addr)
{
    const outgoing_transport *t = transport(P(ctx));
    if (!addr || !addr[0] || outgoing_addr_host_len(addr) == 0)
        return RMQ_EINVAL;
    return t->close_addr ? t->close_addr(P(ctx), addr) : 0;
}

/* ---- files ---- */
static int api_write_file_atomic(rmq_plugin_ctx *ctx, const char *path, const void *data,
                                 size_t len)
{
    int rc = atomic_file_write(path, data, len);
    if (rc != 0)
        host_log_write(&P(ctx)->host->log, RMQ_LOG_ERROR, P(ctx)->conf.name, "cannot write %s: %s",
                       path, strerror(-rc));
    return rc == 0 ? 0 : RMQ_EIO;
}

static int api_read_file_with_backup(rmq_plugin_ctx *ctx, const char *path,
                                     bool (*valid)(const char *, size_t, void *), void *ud,
                                     char **data, size_t *len)
{
    bool used_backup = false;
    int rc = file_read_with_backup(path, valid, ud, data, len, &used_backup);
    if (rc == 0 && used_backup)
        host_log_write(&P(ctx)->host->log, RMQ_LOG_WARN, P(ctx)->conf.name,
                       "%s is missing, empty or corrupt; loaded %s.bak instead", path, path);
    return rc;
}

/* ---- admin output ---- */
static void api_admin_write(rmq_admin_call *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    byte_buf_vappendf(&call->out, fmt, ap);
    va_end(ap);
}

static bool api_admin_wants_json(const rmq_admin_call *call)
{
    return call->json;
}

void host_api_fill(rmq_host_api *a)
{
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->abi_major = RMQ_ABI_MAJOR;
    a->abi_minor = RMQ_ABI_MINOR;
    a->log = api_log;
    a->plugin_name = api_plugin_name;
    a->setting_string = api_setting_string;
    a->setting_int = api_setting_int;
    a->setting_bool = api_setting_bool;
    a->setting_double = api_setting_double;
    a->state_dir = api_state_dir;
    a->server_address = api_server_address;
    a->set_userdata = api_set_userdata;
    a->get_userdata = api_get_userdata;
    a->now_monotonic_ms = api_now_mono;
    a->now_wall_ms = api_now_wall;
    a->declare_executor = api_declare_executor;
    a->register_processor = api_register_processor;
    a->set_default_processor = api_set_default_processor;
    a->set_reject_hook = api_set_reject_hook;
    a->add_channel_listener = api_add_channel_listener;
    a->add_rpc_hook = api_add_rpc_hook;
    a->add_timer = api_add_timer;
    a->cancel_timer = api_cancel_timer;
    a->export_service = api_export_service;
    a->register_admin_command = api_register_admin_command;
    a->subscribe_event = api_subscribe_event;
    a->service_acquire = api_service_acquire;
    a->service_release = api_service_release;
    a->publish_event = api_publish_event;
    a->cmd_code = api_cmd_code;
    a->cmd_flag = api_cmd_flag;
    a->cmd_opaque = api_cmd_opaque;
    a->cmd_version = api_cmd_version;
    a->cmd_language = api_cmd_language;
    a->cmd_language_name = rmq_language_name;
    a->cmd_serialize_type = api_cmd_serialize_type;
    a->cmd_remark = api_cmd_remark;
    a->cmd_ext_get = rmq_cmd_ext_get;
    a->cmd_ext_count = api_cmd_ext_count;
    a->cmd_ext_at = api_cmd_ext_at;
    a->cmd_body = api_cmd_body;
    a->cmd_ext_set = rmq_cmd_ext_set;
    a->cmd_set_remark = rmq_cmd_set_remark;
    a->cmd_set_code = api_cmd_set_code;
    a->cmd_set_language = api_cmd_set_language;
    a->cmd_set_version = api_cmd_set_version;
    a->close_outgoing = api_close_outgoing;
    a->cmd_set_body = api_cmd_set_body;
    a->cmd_new_response = rmq_cmd_new_response;
    a->cmd_new_request = api_cmd_new_request;
    a->cmd_free = rmq_cmd_free;
    a->request_channel = api_request_channel;
    a->request_peer = api_request_peer;
    a->reply = api_reply;
    a->request_fail = api_request_fail;
    a->defer = api_defer;
    a->deferred_reply = api_deferred_reply;
    a->deferred_cmd = api_deferred_cmd;
    a->deferred_channel = api_deferred_channel;
    a->channel_peer = api_channel_peer;
    a->channel_close = api_channel_close;
    a->invoke_oneway = api_invoke_oneway;
    a->invoke_oneway_addr = api_invoke_oneway_addr;
    a->invoke_async = api_invoke_async;
    a->invoke_async_addr = api_invoke_async_addr;
    a->invoke_sync = api_invoke_sync;
    a->invoke_sync_addr = api_invoke_sync_addr;
    a->write_file_atomic = api_write_file_atomic;
    a->read_file_with_backup = api_read_file_with_backup;
    a->admin_write = api_admin_write;
    a->admin_wants_json = api_admin_wants_json;
    a->cmd_set_ext_present = api_cmd_set_ext_present;
    a->set_executor_queue_timeout = api_set_executor_queue_timeout;
    /* 1.4 */
    a->register_processor_flags = api_register_processor_flags;
    /* 1.5 */
    a->cmd_peer = api_cmd_peer;
    /* 1.6 */
    a->executor_queue_info = api_executor_queue_info;
    /* 1.7 */
    a->add_rpc_hook_remark = api_add_rpc_hook_remark;
    /* 1.8 */
    a->register_grpc_method = api_register_grpc_method;
    a->invoke_local = api_invoke_local;
    grpc_api_fill(a); /* the gRPC entries of 1.8 and grpc_hold/grpc_release of 1.11 */
    /* 1.9 */
    a->set_executor_queue_wait = api_set_executor_queue_wait;
    a->outgoing_tls = api_outgoing_tls;
    /* 1.10 */
    a->register_gauges = api_register_gauges;
    a->gauge = admin_stats_gauge;
    /* 1.11 */
    a->invoke_local_async = api_invoke_local_async;
    a->register_client_processor = api_register_client_processor;
}
