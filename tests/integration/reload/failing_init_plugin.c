/* failing_init_plugin.c — test fixture: loads fine, registers a processor,
 * then fails init; the host must discard it and keep the old generation. */
#include <rmqhost/rmqhost.h>

static int answer(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    (void)req;
    (void)cmd;
    (void)ud;
    return RMQ_EINVAL;
}

static int failing_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    api->register_processor(ctx, 9001, answer, NULL, NULL);
    api->log(ctx, RMQ_LOG_ERROR, "refusing to start, on purpose");
    return RMQ_EINVAL;
}

RMQ_PLUGIN(.name = "victim", .version = "9.9.9", .init = failing_init);
