/* proxy_backend.h — where the proxy's remoting requests go. The handlers
 * name what a request is about (the NameServer, or a broker by the
 * brokerName of the route, receipt handle or transaction id) and the
 * backend decides how it travels:
 *  - "local" mode (proxyMode = "local", the default): invoke_local to the
 *    host.conf servers namesrvServer / brokerServer of this process, as
 *    Java's proxy in local mode;
 *  - "cluster" mode: outgoing remoting to the NameServers of namesrvAddr
 *    and to the master (brokerId 0) of the named broker as the NameServer's
 *    routes give its address, as Java's proxy in cluster mode
 *    (proxy_cluster.c). */
#ifndef PROXY_BACKEND_H
#define PROXY_BACKEND_H

#include <stdbool.h>

#include "proxy_internal.h"

/* Reads proxyMode and namesrvAddr; RMQ_EINVAL (logged) for a mode it does
 * not know or cluster mode without a NameServer address. */
int proxy_backend_init(proxy *px);
void proxy_backend_fini(proxy *px);

/* true in cluster mode */
bool proxy_backend_is_cluster(const proxy *px);

/* A request to a NameServer (GET_ROUTEINFO_BY_TOPIC). Ownership of req
 * passes; 0 with *resp (caller frees) or a negative rmq error. */
int proxy_namesrv_call(proxy *px, rmq_cmd *req, rmq_cmd **resp);

/* A request to the broker `broker` (a brokerName of topic's route). NULL or
 * "" broker: the first broker of topic's route (cluster mode). In cluster
 * mode a broker name the proxy has not seen in a route yet is looked up in
 * topic's route first; RMQ_ENOENT when no route names it. */
int proxy_broker_call(proxy *px, const char *topic, const char *broker, rmq_cmd *req,
                      rmq_cmd **resp);

/* The same without blocking: cb exactly once (rmq_response_fn semantics of
 * invoke_local_async / invoke_async_addr). wait_ms: how long the broker may
 * hold the request (a POP's pollTime); cluster mode's outgoing call times
 * out localCallTimeoutMs after it. 0, or the error (cb not called, req
 * freed). */
int proxy_broker_call_async(proxy *px, const char *topic, const char *broker, rmq_cmd *req,
                            int64_t wait_ms, rmq_response_fn cb, void *ud);

/* Cluster mode: remember the master addresses of a route's brokerDatas (a
 * jansson array, as GET_ROUTEINFO_BY_TOPIC's body has it). No-op in local
 * mode. */
void proxy_cluster_learn(proxy *px, const void *broker_datas);

/* What the error messages name as the far end: the NameServer or broker
 * server of local mode, "namesrvAddr"/"broker" in cluster mode. */
const char *proxy_backend_namesrv_label(const proxy *px);
const char *proxy_backend_broker_label(const proxy *px);

#endif
