/* proxy_cluster.h — cluster mode's half of the backend (proxy_backend.h):
 * the NameServer list of namesrvAddr and the broker address book learnt
 * from the routes it answers, and the outgoing remoting calls over them. */
#ifndef PROXY_CLUSTER_H
#define PROXY_CLUSTER_H

#include "proxy_internal.h"

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

#endif
