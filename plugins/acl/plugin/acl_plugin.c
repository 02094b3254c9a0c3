/* acl_plugin.c — owns the plugin's life (settings, init/fini) and the RPC
 * before-hook that admits or refuses every request of the guarded server. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu.h>

#include <rmqhost/helpers.h>

#include "acl_check.h"
#include "acl_perm.h"
#include "acl_plugin.h"

#define MAX_STACK_FIELDS 48

static const rmq_setting_decl ACL_SETTINGS[] = {
    {"role", RMQ_SETTING_STRING, "broker",
     "broker (Java 4.9.8's PlainAccessValidator) or namesrv (rmqhost's NameServer policy)", 0, 0},
    {"aclFile", RMQ_SETTING_STRING, "",
     "plain_acl.yml (Java's format); relative: against state_dir", 0, 0},
    {"aclDir", RMQ_SETTING_STRING, "",
     "every *.yml/*.yaml below it is read too (as 4.9.8's conf/acl/)", 0, 0},
    {"allowAnonymousRead", RMQ_SETTING_BOOL, "false",
     "namesrv: read-only codes without AccessKey are admitted", 0, 0},
    {"watchIntervalMs", RMQ_SETTING_INT, "5000", "how often the ACL files are checked for changes",
     100, 3600000},
    {"failureLogIntervalMs", RMQ_SETTING_INT, "10000",
     "at most one refusal log line per peer per interval", 0, 3600000},
    {NULL, 0, NULL, NULL, 0, 0},
};

static bool audited_code(const acl_plugin *p, int32_t code)
{
    return p->namesrv ? !acl_namesrv_code_is_read(code) : acl_broker_code_needs_admin(code);
}

/* The refusal remark goes into the host's buffer for this call (SDK 1.7), so
 * refusals in flight on several IO threads never share storage. */
static int before_hook(rmq_channel_id ch, const rmq_cmd *cmd, rmq_remark_buf *remark, void *ud)
{
    acl_plugin *p = ud;
    const rmq_host_api *a = p->api;
    /* A plugin of this process calling through invoke_local (channel 0, peer
     * "local"; no connection has either): the proxy's translation of a gRPC
     * call it already had judged through "acl.check", as Java's proxy in
     * local mode calls the broker's processors past its remoting hooks. */
    const char *peer = a->cmd_peer(cmd);
    if (ch == 0 && peer && strcmp(peer, "local") == 0)
        return 0;
    acl_field stack_fields[MAX_STACK_FIELDS];
    size_t n = a->cmd_ext_count(cmd);
    acl_field *fields = n <= MAX_STACK_FIELDS ? stack_fields : malloc(n * sizeof(*fields));
    if (!fields) {
        rmq_remark_set(remark, "out of memory");
        return RMQ_RESPONSE_SYSTEM_ERROR;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (a->cmd_ext_at(cmd, i, &fields[k].key, &fields[k].value) == 0 && fields[k].key)
            k++;
    char ip[64];
    acl_peer_ip(a->cmd_peer(cmd), ip, sizeof(ip));
    acl_request r = {.code = a->cmd_code(cmd), .peer_ip = ip, .fields = fields, .nfields = k};
    r.body = a->cmd_body(cmd, &r.body_len);
    acl_verdict v;
    rcu_read_lock();
    const acl_config *cfg = rcu_dereference(p->cfg);
    if (p->namesrv)
        acl_check_namesrv(cfg, &r, p->allow_anonymous_read, &v);
    else
        acl_check_broker(cfg, &r, &v);
    rcu_read_unlock();
    int rc = 0;
    if (v.outcome != ACL_ALLOWED) {
        rmq_remark_set(remark, v.remark);
        acl_stats_refused(p, ip, v.outcome == ACL_REFUSED_AUTH, v.remark, r.code, v.access_key);
        rc = RMQ_RESPONSE_SYSTEM_ERROR;
    } else {
        atomic_fetch_add(v.white_listed ? &p->white_listed : &p->allowed, 1);
        if (audited_code(p, r.code)) {
            atomic_fetch_add(&p->audited, 1);
            a->log(p->ctx, RMQ_LOG_INFO, "audit: code %d admitted for accessKey=%s peer=%s%s",
                   r.code, v.access_key && *v.access_key ? v.access_key : "-",
                   a->cmd_peer(cmd) ? a->cmd_peer(cmd) : "?",
                   v.white_listed ? " (global white address)" : "");
        }
    }
    if (fields != stack_fields)
        free(fields);
    return rc;
}

static char *resolve_path(acl_plugin *p, const char *v)
{
    if (!v || !*v)
        return NULL;
    if (v[0] == '/')
        return strdup(v);
    const char *base = p->api->state_dir(p->ctx);
    size_t n = strlen(base) + strlen(v) + 2;
    char *r = malloc(n);
    if (r)
        snprintf(r, n, "%s/%s", base, v);
    return r;
}

static void plugin_free(acl_plugin *p)
{
    if (!p)
        return;
    acl_config_free(p->cfg);
    for (size_t i = 0; i < p->nstamps; i++)
        free(p->stamps[i].path);
    free(p->stamps);
    free(p->acl_file);
    free(p->acl_dir);
    acl_stats_free(p);
    pthread_mutex_destroy(&p->lock);
    pthread_mutex_destroy(&p->stats_lock);
    free(p);
}

static int acl_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    if (api->abi_minor < 7 ||
        api->size <
            offsetof(rmq_host_api, add_rpc_hook_remark) + sizeof(api->add_rpc_hook_remark) ||
        !api->add_rpc_hook_remark || !api->cmd_peer) {
        api->log(ctx, RMQ_LOG_ERROR,
                 "this host lacks cmd_peer or add_rpc_hook_remark (SDK ABI 1.7): cannot guard");
        return RMQ_EINVAL;
    }
    acl_plugin *p = calloc(1, sizeof(*p));
    if (!p)
        return RMQ_ENOMEM;
    p->ctx = ctx;
    p->api = api;
    pthread_mutex_init(&p->lock, NULL);
    pthread_mutex_init(&p->stats_lock, NULL);
    const char *role = api->setting_string(ctx, "role");
    if (role && strcmp(role, "namesrv") == 0) {
        p->namesrv = true;
    } else if (!role || strcmp(role, "broker") != 0) {
        api->log(ctx, RMQ_LOG_ERROR, "role must be \"broker\" or \"namesrv\", not \"%s\"",
                 role ? role : "");
        plugin_free(p);
        return RMQ_EINVAL;
    }
    p->allow_anonymous_read = api->setting_bool(ctx, "allowAnonymousRead");
    p->log_interval_ms = (uint64_t)api->setting_int(ctx, "failureLogIntervalMs");
    p->acl_file = resolve_path(p, api->setting_string(ctx, "aclFile"));
    p->acl_dir = resolve_path(p, api->setting_string(ctx, "aclDir"));
    if (!p->acl_file && !p->acl_dir) {
        api->log(ctx, RMQ_LOG_ERROR, "set aclFile or aclDir: without accounts nothing passes");
        plugin_free(p);
        return RMQ_EINVAL;
    }
    char err[600];
    if (acl_reload(p, "start", err, sizeof(err)) != 0) {
        api->log(ctx, RMQ_LOG_ERROR, "%s", err);
        plugin_free(p);
        return RMQ_EINVAL;
    }
    api->set_userdata(ctx, p);
    int rc = api->add_rpc_hook_remark(ctx, before_hook, NULL, p);
    if (rc == 0)
        rc = acl_watch_start(p, (uint64_t)api->setting_int(ctx, "watchIntervalMs"));
    if (rc == 0)
        rc = acl_stats_register(p);
    if (rc == 0 && !p->namesrv)
        rc = acl_admin_codes_register(p);
    if (rc == 0 && !p->namesrv)
        rc = acl_grpc_service_export(p);
    if (rc != 0) {
        plugin_free(p);
        return rc;
    }
    return RMQ_OK;
}

static void acl_fini(rmq_plugin_ctx *ctx)
{
    plugin_free(rmq_ctx_userdata(ctx));
}

RMQ_PLUGIN(.name = "acl", .version = "1.0.0",
           .description = "ACL 1.0 (plain_acl.yml, HmacSHA1 signatures) for a broker or NameServer",
           .settings = ACL_SETTINGS, .init = acl_init, .fini = acl_fini);
