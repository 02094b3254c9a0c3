/* testkit_doubles.c — the kit's own plugin, loaded before the plugins under
 * test on the same server: it exports the services and subscribes the
 * events the test registered as doubles, and listens to channel events to
 * learn which rmq_channel_id the host gave each of the kit's connections. */
#include <string.h>

#include "testkit_internal.h"

static void on_channel(rmq_channel_event ev, rmq_channel_id ch, const char *peer, void *ud)
{
    if (ev == RMQ_CHANNEL_CONNECT)
        tk_channel_learned(ud, ch, peer);
}

static int doubles_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    rmq_testkit *kit = tk_of_host(((plugin_inst *)(void *)ctx)->host);
    for (size_t i = 0; i < kit->nservices; i++) {
        const tk_service *s = &kit->services[i];
        int rc = api->export_service(ctx, s->name, s->version, s->table, s->table_ud);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < kit->nsubs; i++) {
        int rc = api->subscribe_event(ctx, kit->subs[i].event, kit->subs[i].fn, kit->subs[i].ud);
        if (rc)
            return rc;
    }
    return api->add_channel_listener(ctx, on_channel, kit);
}

const rmq_plugin_descriptor tk_doubles_descriptor = {
    .abi_major = RMQ_ABI_MAJOR,
    .abi_minor = RMQ_ABI_MINOR,
    .descriptor_size = sizeof(rmq_plugin_descriptor),
    .name = TK_DOUBLES_NAME,
    .version = "1",
    .description = "test doubles and channel bookkeeping of librmqhost-testkit",
    .init = doubles_init,
};
