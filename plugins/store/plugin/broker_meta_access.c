/* broker_meta_access.c — calls into broker-client-mgr's "broker.meta"
 * service (acquire, call, release: one operation per reference, so the
 * provider can be reloaded). Every function answers RMQ_ENOENT when the
 * service is absent. */
#include <string.h>

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

const char *perm_string(int32_t perm, char buf[4])
{
    buf[0] = (perm & RMQ_PERM_READ) ? 'R' : '-';
    buf[1] = (perm & RMQ_PERM_WRITE) ? 'W' : '-';
    buf[2] = (perm & RMQ_PERM_INHERIT) ? 'X' : '-';
    buf[3] = 0;
    return buf;
}
