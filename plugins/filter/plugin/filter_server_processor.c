/* filter_server_processor.c — REGISTER_FILTER_SERVER (301) of the legacy
 * broker (protocol.md §6.2): answer with this broker's name and id, keep the
 * connection in the registry, drop it on CLOSE/IDLE/EXCEPTION and after
 * filterServerMaxIdleTimeMillis without a refresh (closing the connection). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rmqhost/helpers.h>

#include "filter_plugin.h"

/* broker.info when broker-client-mgr is loaded; otherwise a Java broker's
 * defaults (brokerName = host name, brokerId 0). */
static void broker_identity(filter_plugin *fp, char *name, size_t name_len, int64_t *id)
{
    const void *table = NULL;
    void *tud = NULL;
    rmq_service_ref ref = 0;
    *id = 0;
    name[0] = '\0';
    if (fp->api->service_acquire(fp->pctx, RMQ_BROKER_INFO_SERVICE, RMQ_BROKER_INFO_VERSION, &table,
                                 &tud, &ref) == 0) {
        const rmq_broker_info_v1 *svc = table;
        rmq_broker_identity who;
        if (svc->identity(tud, &who) == 0) {
            snprintf(name, name_len, "%s", who.broker_name);
            *id = who.broker_id;
        }
        fp->api->service_release(fp->pctx, ref);
    }
    if (!name[0] && gethostname(name, name_len) != 0)
        snprintf(name, name_len, "localhost");
    name[name_len - 1] = '\0';
}

static int process_register_filter_server(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    filter_plugin *fp = ud;
    const rmq_host_api *a = fp->api;
    const char *addr = rmq_ext_str(a, cmd, "filterServerAddr");
    if (!addr) {
        a->request_fail(req, "org.apache.rocketmq.remoting.exception.RemotingCommandException: "
                             "the custom field <filterServerAddr> is null");
        return RMQ_EINVAL;
    }
    rmq_channel_id ch = a->request_channel(req);
    int added = filter_server_table_register(&fp->servers, ch, addr, a->now_monotonic_ms());
    if (added < 0)
        return RMQ_ENOMEM;
    if (added)
        a->log(fp->pctx, RMQ_LOG_INFO, "Receive a New Filter Server<%s> from %s", addr,
               a->request_peer(req));

    char name[128];
    int64_t id;
    broker_identity(fp, name, sizeof name, &id);
    rmq_cmd *resp = a->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (!resp)
        return RMQ_ENOMEM;
    a->cmd_ext_set(resp, "brokerName", name);
    rmq_ext_set_long(a, resp, "brokerId", id);
    return a->reply(req, resp);
}

static void on_channel_event(rmq_channel_event ev, rmq_channel_id ch, const char *peer, void *ud)
{
    filter_plugin *fp = ud;
    if (ev == RMQ_CHANNEL_CONNECT)
        return;
    if (filter_server_table_remove(&fp->servers, ch))
        fp->api->log(fp->pctx, RMQ_LOG_INFO,
                     "The Filter Server<%s> connection<%s> closed, remove it", peer ? peer : "?",
                     ev == RMQ_CHANNEL_CLOSE  ? "CLOSE"
                     : ev == RMQ_CHANNEL_IDLE ? "IDLE"
                                              : "EXCEPTION");
}

static void scan_expired(void *ud)
{
    filter_plugin *fp = ud;
    uint64_t expired[64];
    size_t n;
    do {
        n = filter_server_table_expire(&fp->servers, fp->api->now_monotonic_ms(),
                                       fp->server_max_idle_ms, expired, 64);
        for (size_t i = 0; i < n; i++) {
            fp->api->log(fp->pctx, RMQ_LOG_INFO,
                         "The Filter Server channel %llu expired, remove it",
                         (unsigned long long)expired[i]);
            fp->api->channel_close(fp->pctx, expired[i]);
        }
    } while (n == 64);
}

int filter_register_server_processing(filter_plugin *fp)
{
    int rc = fp->api->register_processor(fp->pctx, FILTER_REGISTER_FILTER_SERVER,
                                         process_register_filter_server, fp, NULL);
    if (rc == 0)
        rc = fp->api->add_channel_listener(fp->pctx, on_channel_event, fp);
    if (rc == 0)
        rc = fp->api->add_timer(fp->pctx, fp->server_scan_ms, fp->server_scan_ms, scan_expired, fp,
                                NULL, NULL);
    return rc;
}
