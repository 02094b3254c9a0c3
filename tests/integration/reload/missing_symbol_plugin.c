/* missing_symbol_plugin.c — test fixture: calls a function no library
 * defines, so dlopen(RTLD_NOW) fails with "undefined symbol". */
#include <rmqhost/rmqhost.h>

int rmq_reload_fixture_symbol_nobody_defines(void);

static int init_with_missing_symbol(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    (void)ctx;
    (void)api;
    return rmq_reload_fixture_symbol_nobody_defines();
}

RMQ_PLUGIN(.name = "victim", .version = "9.9.9", .init = init_with_missing_symbol);
