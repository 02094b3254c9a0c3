/* consumer_notifier.c — owns what the broker tells others when a consumer
 * group changes: oneway NOTIFY_CONSUMER_IDS_CHANGED (40) to the group's
 * connections, and the "broker.consumer_group" SDK event. Never called with
 * the tables lock held (sending and subscribers may take time). */
#include "broker_context.h"

#include <rmqhost/services/proxy_client_call_event.h>

#include <stdlib.h>
#include <string.h>

/* Java waits at most 10 ms for a oneway permit (protocol.md §5.12). */
#define NOTIFY_TIMEOUT_MS 10

void bcm_notify_group(bcm_ctx *c, const char *group, const uint64_t *channels, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* a 5.x client behind the gRPC endpoint: Java's GrpcClientChannel
         * drops this notice (those clients do not rebalance) */
        if (channels[i] & RMQ_PROXY_CHANNEL_BIT)
            continue;
        rmq_cmd *req = c->api->cmd_new_request(BCM_NOTIFY_CONSUMER_IDS_CHANGED);
        if (!req)
            return;
        c->api->cmd_ext_set(req, "consumerGroup", group);
        int rc = c->api->invoke_oneway(c->pctx, channels[i], req, NOTIFY_TIMEOUT_MS);
        if (rc != 0)
            c->api->log(c->pctx, RMQ_LOG_WARN,
                        "NOTIFY_CONSUMER_IDS_CHANGED to channel %llu of group %s failed: %s",
                        (unsigned long long)channels[i], group, rmq_strerror(rc));
    }
}

void bcm_publish_group_event(bcm_ctx *c, rmq_consumer_group_event_kind kind, const char *group,
                             const char *client_id, const bcm_subscription *subs, size_t nsubs)
{
    rmq_consumer_subscription *v = NULL;
    if (nsubs) {
        v = calloc(nsubs, sizeof *v);
        if (!v)
            return;
        for (size_t i = 0; i < nsubs; i++) {
            v[i].topic = subs[i].topic;
            v[i].expression_type = subs[i].expression_type;
            v[i].sub_string = subs[i].sub_string;
            v[i].sub_version = subs[i].sub_version;
        }
    }
    rmq_consumer_group_event ev = {.size = sizeof ev,
                                   .kind = kind,
                                   .group = group,
                                   .client_id = client_id,
                                   .subs = v,
                                   .sub_count = nsubs};
    c->api->publish_event(c->pctx, RMQ_BROKER_CONSUMER_GROUP_EVENT, &ev, sizeof ev);
    free(v);
}

static bool group_wants_notify(bcm_ctx *c, const char *group)
{
    pthread_mutex_lock(&c->lock);
    json_t *cfg = json_object_get(c->groups.groups, group);
    /* an unknown group config counts as enabled (Java: sgc == null → true) */
    bool on = !cfg || !json_is_false(json_object_get(cfg, "notifyConsumerIdsChangedEnable"));
    pthread_mutex_unlock(&c->lock);
    return on;
}

void bcm_deliver_notices(bcm_ctx *c, bcm_notices *ns, bool notify_flag_applies,
                         const char *client_id)
{
    for (size_t i = 0; i < ns->n; i++) {
        bcm_group_notice *n = &ns->v[i];
        if (n->removed)
            bcm_publish_group_event(c, RMQ_CONSUMER_GROUP_UNREGISTER, n->group, client_id, NULL, 0);
        if (!n->changed)
            continue;
        bool notify = c->s.notify_consumer_ids_changed_enable;
        if (notify && notify_flag_applies)
            notify = group_wants_notify(c, n->group);
        if (notify)
            bcm_notify_group(c, n->group, n->channels, n->nchannels);
        bcm_publish_group_event(c, RMQ_CONSUMER_GROUP_CHANGE, n->group, client_id, n->subs,
                                n->nsubs);
    }
}
