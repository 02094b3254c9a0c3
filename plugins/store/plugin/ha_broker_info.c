/* ha_broker_info.c — broker.info acquire/release for the HA files (see
 * ha_broker_info.h). */
#include "ha_broker_info.h"

bool broker_info_with(store_plugin *sp, broker_info_fn fn, void *arg)
{
    const void *tbl = NULL;
    void *ud = NULL;
    rmq_service_ref ref;
    if (sp->api->service_acquire(sp->ctx, RMQ_BROKER_INFO_SERVICE, RMQ_BROKER_INFO_VERSION, &tbl,
                                 &ud, &ref) != 0)
        return false;
    fn(tbl, ud, arg);
    sp->api->service_release(sp->ctx, ref);
    return true;
}

typedef struct addrs_call {
    char *master, *ha;
    size_t master_len, ha_len;
    int rc;
} addrs_call;

static void call_master_addrs(const rmq_broker_info_v1 *bi, void *ud, void *arg)
{
    addrs_call *c = arg;
    if (BROKER_INFO_HAS(bi, master_addrs))
        c->rc = bi->master_addrs(ud, c->master, c->master_len, c->ha, c->ha_len);
}

int broker_info_master_addrs(store_plugin *sp, char *master, size_t master_len, char *ha,
                             size_t ha_len)
{
    addrs_call c = {master, ha, master_len, ha_len, -1};
    (void)broker_info_with(sp, call_master_addrs, &c);
    return c.rc;
}
