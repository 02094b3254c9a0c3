/* kit_remark_plugins.c — two small plugins for the before-hook remark tests:
 * "newhook" registers with add_rpc_hook_remark (ABI 1.7) and builds each
 * refusal's remark from the request; "oldhook" declares ABI 1.6 and uses
 * add_rpc_hook with a static remark, as a plugin built before 1.7 does. */
#include <stdlib.h>
#include <string.h>

#include <rmqhost/helpers.h>

#include "kit_remark_plugins.h"

static int answer_ok(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    return rmq_answer_ok(ud, req, cmd);
}

static int new_before(rmq_channel_id ch, const rmq_cmd *req, rmq_remark_buf *remark, void *ud)
{
    (void)ch;
    const rmq_host_api *api = ud;
    int32_t code = api->cmd_code(req);
    if (code == KR_CODE_SILENT)
        return KR_REFUSED_SILENT;
    if (code != KR_CODE_NEW)
        return 0;
    const char *who = api->cmd_ext_get(req, "who");
    if (who) {
        rmq_remark_printf(remark, "no entry for %s", who);
        return KR_REFUSED_NEW;
    }
    int64_t len;
    if (rmq_ext_long(api, req, "len", &len) == 0) {
        /* write straight into the buffer, as far as it goes */
        size_t n = (size_t)len < remark->cap - 1 ? (size_t)len : remark->cap - 1;
        memset(remark->data, 'x', n);
        remark->data[n] = '\0';
        return KR_REFUSED_NEW;
    }
    return 0;
}

static int new_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    if (api->abi_minor < 7 || !api->add_rpc_hook_remark)
        return RMQ_EINVAL;
    void *ud = (void *)api;
    int rc = api->register_processor(ctx, KR_CODE_NEW, answer_ok, ud, NULL);
    rc = rc ? rc : api->register_processor(ctx, KR_CODE_SILENT, answer_ok, ud, NULL);
    rc = rc ? rc : api->add_rpc_hook_remark(ctx, new_before, NULL, ud);
    return rc;
}

static void no_fini(rmq_plugin_ctx *ctx)
{
    (void)ctx;
}

const rmq_plugin_descriptor kit_remark_hook_descriptor = {
    .abi_major = RMQ_ABI_MAJOR,
    .abi_minor = RMQ_ABI_MINOR,
    .descriptor_size = sizeof(rmq_plugin_descriptor),
    .name = "newhook",
    .version = "1.0",
    .init = new_init,
    .fini = no_fini,
};

static int old_before(rmq_channel_id ch, const rmq_cmd *req, const char **remark, void *ud)
{
    (void)ch;
    const rmq_host_api *api = ud;
    if (api->cmd_code(req) != KR_CODE_OLD || !api->cmd_ext_get(req, "deny"))
        return 0;
    *remark = "old hook says no";
    return KR_REFUSED_OLD;
}

static int old_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    void *ud = (void *)api;
    int rc = api->register_processor(ctx, KR_CODE_OLD, answer_ok, ud, NULL);
    return rc ? rc : api->add_rpc_hook(ctx, old_before, NULL, ud);
}

/* What a plugin compiled against the 1.6 header carries: the host must not
 * ask it for anything 1.7 added. */
const rmq_plugin_descriptor kit_old_hook_descriptor = {
    .abi_major = 1,
    .abi_minor = 6,
    .descriptor_size = sizeof(rmq_plugin_descriptor),
    .name = "oldhook",
    .version = "1.0",
    .init = old_init,
    .fini = no_fini,
};
