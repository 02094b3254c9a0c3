/* proxy_test_host.h — members of the host API table that the proxy's unit
 * tests (the plugin's sources driven through the testkit's table) replace
 * the same way: no channel listener is kept and nothing is logged. */
#ifndef PROXY_TEST_HOST_H
#define PROXY_TEST_HOST_H

#include <rmqhost/rmqhost.h>

static inline int no_listener(rmq_plugin_ctx *ctx, rmq_channel_event_fn fn, void *ud)
{
    (void)ctx, (void)fn, (void)ud;
    return 0;
}

static inline void quiet_log(rmq_plugin_ctx *ctx, rmq_log_level level, const char *fmt, ...)
{
    (void)ctx, (void)level, (void)fmt;
}

#endif
