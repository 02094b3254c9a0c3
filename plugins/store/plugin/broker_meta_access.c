/* broker_meta_access.c — calls into broker-client-mgr's "broker.meta"
 * service (acquire, call, release: one operation per reference, so the
 * provider can be reloaded). Every function answers RMQ_ENOENT when the
 * service is absent. */
#include <stddef.h>
#include <string.h>

#include "coarse_clock.h"
#include "send_put.h"
#include "store_plugin.h"

#define WITH_META(expr_on_table)                                                                   \
    const void *tbl;                                                                               \
    void *ud;                                                                                      \
    rmq_service_ref ref;                                                                           \
    int rc_ = sp->api->service_acquire(sp->ctx, RMQ_BROKER_META_SERVICE, RMQ_BROKER_META_VERSION,  \
                                       &tbl, &ud, &ref);                                           \
    if (rc_ != 0)                                                                                  \
        return RMQ_ENOENT;                                                                         \
    const rmq_broker_meta_service *m = tbl;                                                        \
    rc_ = (expr_on_table);                                                                         \
    sp->api->service_release(sp->ctx, ref);                                                        \
    return rc_

int meta_broker_config(store_plugin *sp, rmq_broker_config *out)
{
    WITH_META(m->broker_config(ud, out));
}

int meta_broker_config_cached(store_plugin *sp, rmq_broker_config *out, store_addr *store_host)
{
    uint64_t now = coarse_now_ms(); /* every send and pull: the cheap clock */
    pthread_mutex_lock(&sp->bc_mu);
    if (sp->bc_at_ms == 0 || now - sp->bc_at_ms >= 1000) {
        rmq_broker_config fresh;
        sp->bc_valid = meta_broker_config(sp, &fresh) == 0;
        if (sp->bc_valid) {
            sp->bc = fresh;
            send_store_host(sp, &sp->bc, &sp->bc_store_host);
        } else {
            send_store_host(sp, NULL, &sp->bc_store_host);
        }
        sp->bc_at_ms = now;
    }
    bool valid = sp->bc_valid;
    if (valid)
        *out = sp->bc;
    if (store_host)
        *store_host = sp->bc_store_host;
    pthread_mutex_unlock(&sp->bc_mu);
    return valid ? 0 : RMQ_ENOENT;
}

void meta_broker_config_or_default(store_plugin *sp, rmq_broker_config *out)
{
    if (meta_broker_config_cached(sp, out, NULL) != 0) {
        memset(out, 0, sizeof *out);
        out->broker_permission = RMQ_PERM_READ | RMQ_PERM_WRITE;
        out->auto_create_subscription_group = true;
    }
}

int meta_topic_get(store_plugin *sp, const char *topic, rmq_topic_config *out)
{
    WITH_META(m->topic_get(ud, topic, out));
}

int meta_topic_create_in_send(store_plugin *sp, const char *topic, const char *default_topic,
                              int32_t default_queue_nums, int32_t sys_flag, rmq_topic_config *out)
{
    WITH_META(m->topic_create_in_send(ud, topic, default_topic, default_queue_nums, sys_flag, out));
}

int meta_topic_create_in_send_back(store_plugin *sp, const char *topic, int32_t queue_nums,
                                   int32_t perm, int32_t sys_flag, rmq_topic_config *out)
{
    WITH_META(m->topic_create_in_send_back(ud, topic, queue_nums, perm, sys_flag, out));
}

int meta_group_get(store_plugin *sp, const char *group, bool auto_create,
                   rmq_subscription_group_config *out)
{
    WITH_META(m->group_get(ud, group, auto_create, out));
}

int meta_consumer_subscription(store_plugin *sp, const char *group, const char *topic,
                               rmq_consumer_sub_info *out)
{
    WITH_META(m->consumer_subscription(ud, group, topic, out));
}

int meta_offset_commit(store_plugin *sp, const char *group, const char *topic, int32_t queue_id,
                       int64_t offset)
{
    WITH_META(m->offset_commit(ud, group, topic, queue_id, offset));
}

int meta_offset_query(store_plugin *sp, const char *group, const char *topic, int32_t queue_id,
                      int64_t *out)
{
    WITH_META((*out = m->offset_query(ud, group, topic, queue_id), 0));
}

int meta_producer_channel(store_plugin *sp, const char *group, uint64_t *out)
{
    WITH_META((*out = m->producer_channel(ud, group), 0));
}

int meta_producer_channel_by_client(store_plugin *sp, const char *client_id, uint64_t *out)
{
    WITH_META(m->size > offsetof(rmq_broker_meta_service, producer_channel_by_client) &&
                      m->producer_channel_by_client
                  ? (*out = m->producer_channel_by_client(ud, client_id), 0)
                  : RMQ_ENOENT);
}

const char *perm_string(int32_t perm, char buf[4])
{
    buf[0] = (perm & RMQ_PERM_READ) ? 'R' : '-';
    buf[1] = (perm & RMQ_PERM_WRITE) ? 'W' : '-';
    buf[2] = (perm & RMQ_PERM_INHERIT) ? 'X' : '-';
    buf[3] = 0;
    return buf;
}
