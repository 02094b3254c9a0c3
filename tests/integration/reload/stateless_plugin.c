/* stateless_plugin.c — test fixture: answers code 9101 with SUCCESS and has
 * no export_state/import_state, so a reload must warn that state is reset. */
#include <rmqhost/rmqhost.h>

static const rmq_host_api *host_api_of(void *ud)
{
    return ud;
}

static int answer(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    const rmq_host_api *api = host_api_of(ud);
    rmq_cmd *resp = api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    return resp ? api->reply(req, resp) : RMQ_ENOMEM;
}

static int stateless_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    return api->register_processor(ctx, 9101, answer, (void *)api, NULL);
}

RMQ_PLUGIN(.name = "stateless", .version = "1.0.0", .init = stateless_init);
