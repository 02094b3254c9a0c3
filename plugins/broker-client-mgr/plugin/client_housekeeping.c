/* client_housekeeping.c — owns ClientHousekeepingService: channel CLOSE /
 * IDLE / EXCEPTION remove the connection from every table and notify the
 * remaining consumers; a periodic scan expires silent clients (silently, as
 * 4.9.8) and closes their connections; the offset flush timer. */
#include "broker_context.h"

#include <stdlib.h>

static void on_channel_event(rmq_channel_event ev, rmq_channel_id ch, const char *peer, void *ud)
{
    bcm_ctx *c = ud;
    if (ev == RMQ_CHANNEL_CONNECT)
        return;
    bcm_notices ns = {0};
    pthread_mutex_lock(&c->lock);
    size_t np = bcm_producer_channel_closed(&c->producers, ch);
    bcm_consumer_channel_closed(&c->consumers, ch, &ns);
    pthread_mutex_unlock(&c->lock);
    if (np || ns.n)
        c->api->log(c->pctx, RMQ_LOG_INFO,
                    "client %s gone (event %d): %zu producer, %zu consumer entries removed",
                    peer ? peer : "?", (int)ev, np, ns.n);
    /* a closed connection always notifies, whatever the group's flag */
    bcm_deliver_notices(c, &ns, false, NULL);
    bcm_notices_free(&ns);
}

static void scan_timer(void *ud)
{
    bcm_ctx *c = ud;
    uint64_t *expired = NULL;
    size_t n = 0;
    uint64_t now = c->api->now_monotonic_ms();
    uint64_t timeout = (uint64_t)c->s.channel_expired_timeout_ms;
    pthread_mutex_lock(&c->lock);
    bcm_producer_expire(&c->producers, now, timeout, &expired, &n);
    bcm_consumer_expire(&c->consumers, now, timeout, &expired, &n);
    pthread_mutex_unlock(&c->lock);
    for (size_t i = 0; i < n; i++) {
        c->api->log(c->pctx, RMQ_LOG_WARN,
                    "client channel %llu expired (no heartbeat for %llu ms), closing",
                    (unsigned long long)expired[i], (unsigned long long)timeout);
        c->api->channel_close(c->pctx, expired[i]);
    }
    free(expired);
}

int bcm_register_housekeeping(bcm_ctx *c)
{
    rmq_timer_id id;
    int rc = c->api->add_channel_listener(c->pctx, on_channel_event, c);
    if (rc == 0)
        rc = c->api->add_timer(c->pctx, (uint64_t)c->s.housekeeping_period_ms,
                               (uint64_t)c->s.housekeeping_period_ms, scan_timer, c, "housekeeping",
                               &id);
    if (rc == 0)
        rc = c->api->add_timer(c->pctx, (uint64_t)c->s.flush_offset_interval_ms,
                               (uint64_t)c->s.flush_offset_interval_ms, bcm_flush_timer, c,
                               "housekeeping", &id);
    return rc;
}
