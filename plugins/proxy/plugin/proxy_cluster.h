/* proxy_cluster.h — cluster mode's half of the backend (proxy_backend.h):
 * the NameServer list of namesrvAddr and the broker address book learnt
 * from the routes it answers, and the outgoing remoting calls over them. */
#ifndef PROXY_CLUSTER_H
#define PROXY_CLUSTER_H

#include "proxy_internal.h"
#include "proxy_reg_gate.h"

typedef struct proxy_cluster proxy_cluster;

/* namesrv_addr: "host:port[;host:port...]" as Java's namesrvAddr. NULL with
 * *why set when it names none. */
proxy_cluster *proxy_cluster_new(const char *namesrv_addr, const char **why);
void proxy_cluster_free(proxy_cluster *c);

int proxy_cluster_namesrv_call(proxy *px, proxy_cluster *c, rmq_cmd *req, rmq_cmd **resp);
/* broker's master address into addr; RMQ_ENOENT when no route named it
 * (or, with broker NULL/"", when topic's route has no broker). */
int proxy_cluster_broker_addr(proxy *px, proxy_cluster *c, const char *topic, const char *broker,
                              char *addr, size_t cap);
void proxy_cluster_remember(proxy_cluster *c, const void *broker_datas);
/* The name of the broker whose master is at addr ("ip:port"), from the
 * routes read so far; false when none (proxy_cluster.c). */
bool proxy_cluster_broker_name(proxy_cluster *c, const char *addr, char *name, size_t cap);

/* A client registration request (`code`: HEART_BEAT or UNREGISTER_CLIENT,
 * ext fields kv, body may be NULL) of client_id, with its language and
 * version (MQVersion ordinal; < 0: the host's), sent oneway on the client's
 * own connection to the master of every broker of the topics in subs
 * (topic names, or SubscriptionData objects): how many took it
 * (proxy_cluster_clients.c). With a gate (proxy_reg_gate.h), nothing is
 * posted once the gate is shut (the client is gone): 0. */
struct json_t;
int proxy_cluster_client_call(proxy *px, int code, const char *client_id, int32_t language,
                              int32_t version, const struct json_t *subs, const char *const *kv,
                              const char *body, proxy_reg_gate *gate);
/* After a client's UNREGISTER_CLIENTs: close its own connections to the
 * brokers of the topics in subs (host ABI 1.15 close_outgoing; the requests
 * sent on them before are still written), so a broker holds no connection
 * of a gone client until its idle timeout. How many were closed; 0 on an
 * older host (the broker closes them after 120 s idle). */
int proxy_cluster_client_close(proxy *px, const char *client_id, const struct json_t *subs);

/* Cluster mode: serve the brokers' CHECK_TRANSACTION_STATE on the proxy's
 * outgoing connections (proxy_cluster_check.c). */
int proxy_cluster_check_init(proxy *px);

#endif
