/* bad_abi_plugin.c — test fixture: a descriptor that claims a future plugin
 * ABI major; the host must refuse it before reading anything else. */
#include <rmqhost/rmqhost.h>

static int never_called(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    (void)ctx;
    (void)api;
    return RMQ_EINVAL;
}

RMQ_EXPORT const rmq_plugin_descriptor rmq_plugin = {
    .abi_major = RMQ_ABI_MAJOR + 1,
    .abi_minor = 0,
    .descriptor_size = sizeof(rmq_plugin_descriptor),
    .name = "victim",
    .version = "9.9.9",
    .init = never_called,
};
