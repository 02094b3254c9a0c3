/* namesrv_housekeeping.c — Java's BrokerHousekeepingService and the
 * not-active-broker scan: channel CLOSE/IDLE/EXCEPTION remove the brokers of
 * that channel at once; the periodic scan expires silent brokers and, after
 * removals that freed much, returns free heap to the OS. Never closes a
 * channel or trims the heap while holding the writer lock. */
#include <stdlib.h>

#include "heap_return.h"
#include "namesrv_plugin.h"

static void on_channel_event(rmq_channel_event ev, rmq_channel_id ch, const char *peer, void *ud)
{
    namesrv_plugin *ns = ud;
    if (ev == RMQ_CHANNEL_CONNECT)
        return;
    namesrv_core_lock(&ns->core);
    size_t n = route_table_channel_destroyed(&ns->core.routes, ch, peer);
    if (n > 0 && namesrv_core_publish(&ns->core) != 0)
        ns->api->log(ns->ctx, RMQ_LOG_ERROR, "out of memory re-encoding routes");
    namesrv_core_unlock(&ns->core);
    if (n > 0)
        ns->api->log(ns->ctx, RMQ_LOG_INFO,
                     "channel %s destroyed (event %d): removed %zu broker(s) registered on it",
                     peer ? peer : "?", (int)ev, n);
}

typedef struct channel_list {
    uint64_t *ids;
    size_t n;
    size_t cap;
} channel_list;

static void collect_channel(void *ud, uint64_t channel)
{
    channel_list *l = ud;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        uint64_t *ids = realloc(l->ids, nc * sizeof(*ids));
        if (!ids)
            return;
        l->ids = ids;
        l->cap = nc;
    }
    l->ids[l->n++] = channel;
}

static void on_scan_timer(void *ud)
{
    namesrv_plugin *ns = ud;
    channel_list closing = {0};
    namesrv_core_lock(&ns->core);
    size_t n = route_table_scan_expired(&ns->core.routes, ns->api->now_monotonic_ms(),
                                        collect_channel, &closing);
    if (n > 0 && namesrv_core_publish(&ns->core) != 0)
        ns->api->log(ns->ctx, RMQ_LOG_ERROR, "out of memory re-encoding routes");
    /* removals by this scan, UNREGISTER_BROKER and closed channels since the
     * last return */
    uint64_t removed = ns->core.routes.qd_removed - ns->trim_mark;
    bool trim = ns->trim_after_removed > 0 && removed >= ns->trim_after_removed;
    if (trim)
        ns->trim_mark = ns->core.routes.qd_removed;
    namesrv_core_unlock(&ns->core);
    /* the CLOSE events these trigger later find nothing left to clean */
    for (size_t i = 0; i < closing.n; i++)
        ns->api->channel_close(ns->ctx, closing.ids[i]);
    free(closing.ids);
    if (n > 0)
        ns->api->log(ns->ctx, RMQ_LOG_WARN, "expired %zu broker(s) not heard from in time", n);
    long before, after;
    if (trim && heap_return_to_os(&before, &after))
        ns->api->log(ns->ctx, RMQ_LOG_INFO,
                     "returned free heap to the OS after %llu (topic, broker) removals: "
                     "RSS %ld kB -> %ld kB",
                     (unsigned long long)removed, before, after);
}

int namesrv_start_housekeeping(namesrv_plugin *ns)
{
    int rc = ns->api->add_channel_listener(ns->ctx, on_channel_event, ns);
    if (rc != 0)
        return rc;
    uint64_t period = (uint64_t)ns->core.cfg.scan_not_active_broker_interval_ms;
    uint64_t first = period < 5000 ? period : 5000; /* Java: first run 5 s after start */
    return ns->api->add_timer(ns->ctx, first, period, on_scan_timer, ns, NAMESRV_EXECUTOR,
                              &ns->scan_timer);
}
