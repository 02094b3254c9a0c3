/* proxy_backend.c — the proxy's remoting requests to the NameServer and the
 * brokers, by mode (proxy_backend.h): invoke_local to this process's
 * servers, or outgoing remoting to the cluster (proxy_cluster.c). */
#include <stdio.h>
#include <string.h>

#include "proxy_backend.h"
#include "proxy_cluster.h"

int proxy_backend_init(proxy *px)
{
    const rmq_host_api *api = px->api;
    const char *mode = api->setting_string(px->ctx, "proxyMode");
    if (!mode || strcmp(mode, "local") == 0)
        return RMQ_OK;
    if (strcmp(mode, "cluster") != 0) {
        api->log(px->ctx, RMQ_LOG_ERROR, "proxyMode \"%s\": neither \"local\" nor \"cluster\"",
                 mode);
        return RMQ_EINVAL;
    }
    const char *why = NULL;
    px->cluster = proxy_cluster_new(api->setting_string(px->ctx, "namesrvAddr"), &why);
    if (!px->cluster) {
        api->log(px->ctx, RMQ_LOG_ERROR, "proxyMode \"cluster\": %s", why);
        return why ? RMQ_EINVAL : RMQ_ENOMEM;
    }
    return RMQ_OK;
}

void proxy_backend_fini(proxy *px)
{
    proxy_cluster_free(px->cluster);
    px->cluster = NULL;
}

bool proxy_backend_is_cluster(const proxy *px)
{
    return px->cluster != NULL;
}

const char *proxy_backend_namesrv_label(const proxy *px)
{
    return px->cluster ? "namesrvAddr" : px->namesrv_server;
}

const char *proxy_backend_broker_label(const proxy *px)
{
    return px->cluster ? "broker" : px->broker_server;
}

int proxy_namesrv_call(proxy *px, rmq_cmd *req, rmq_cmd **resp)
{
    if (!px->cluster)
        return px->api->invoke_local(px->ctx, px->namesrv_server, req, px->local_timeout_ms, resp);
    return proxy_cluster_namesrv_call(px, px->cluster, req, resp);
}

int proxy_broker_call(proxy *px, const char *topic, const char *broker, rmq_cmd *req,
                      rmq_cmd **resp)
{
    const rmq_host_api *api = px->api;
    if (!px->cluster)
        return api->invoke_local(px->ctx, px->broker_server, req, px->local_timeout_ms, resp);
    char addr[128];
    int rc = proxy_cluster_broker_addr(px, px->cluster, topic, broker, addr, sizeof addr);
    if (rc != 0) {
        api->cmd_free(req);
        return rc;
    }
    return api->invoke_sync_addr(px->ctx, addr, req, px->local_timeout_ms, resp);
}

int proxy_broker_call_async(proxy *px, const char *topic, const char *broker, rmq_cmd *req,
                            int64_t wait_ms, rmq_response_fn cb, void *ud)
{
    const rmq_host_api *api = px->api;
    if (!px->cluster)
        return api->invoke_local_async(px->ctx, px->broker_server, req, cb, ud);
    char addr[128];
    int rc = proxy_cluster_broker_addr(px, px->cluster, topic, broker, addr, sizeof addr);
    if (rc != 0) {
        api->cmd_free(req);
        return rc;
    }
    int64_t t = (wait_ms > 0 ? wait_ms : 0) + px->local_timeout_ms;
    return api->invoke_async_addr(px->ctx, addr, req, (uint32_t)(t > UINT32_MAX ? UINT32_MAX : t),
                                  cb, ud);
}

void proxy_cluster_learn(proxy *px, const void *broker_datas)
{
    if (px->cluster)
        proxy_cluster_remember(px->cluster, broker_datas);
}
