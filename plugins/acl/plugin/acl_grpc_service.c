/* acl_grpc_service.c — the service "acl.check" (SDK acl_service.h): the
 * broker's accounts judge the gRPC requests of 5.x clients that the proxy
 * plugin decodes, with the same configuration, statistics and audit log as
 * the remoting hook. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu.h>

#include <rmqhost/helpers.h>
#include <rmqhost/services/acl_service.h>

#include "acl_check.h"
#include "acl_perm.h"
#include "acl_plugin.h"

#define MAX_STACK_NEEDS 16

static uint8_t perm_of(uint32_t need)
{
    switch (need) {
    case RMQ_ACL_NEED_PUB: return ACL_PERM_PUB;
    case RMQ_ACL_NEED_SUB: return ACL_PERM_SUB;
    default: return ACL_PERM_ANY;
    }
}

static int check_grpc(void *ud, const rmq_acl_grpc_request *req, rmq_remark_buf *reason)
{
    acl_plugin *p = ud;
    if (!req || req->size < sizeof(*req))
        return RMQ_ACL_UNAUTHENTICATED;
    acl_grpc_need stack_needs[MAX_STACK_NEEDS];
    acl_grpc_need *needs =
        req->nneeds <= MAX_STACK_NEEDS ? stack_needs : malloc(req->nneeds * sizeof(*needs));
    if (!needs) {
        rmq_remark_set(reason, "out of memory");
        return RMQ_ACL_FORBIDDEN;
    }
    for (size_t i = 0; i < req->nneeds; i++)
        needs[i] = (acl_grpc_need){.name = req->needs[i].resource,
                                   .perm = perm_of(req->needs[i].need),
                                   .group = req->needs[i].group != 0};
    char ip[64];
    acl_peer_ip(req->peer, ip, sizeof(ip));
    acl_grpc_request r = {.peer_ip = ip,
                          .authorization = req->authorization,
                          .date_time = req->date_time,
                          .needs = needs,
                          .nneeds = req->nneeds};
    acl_verdict v;
    rcu_read_lock();
    acl_check_grpc(rcu_dereference(p->cfg), &r, &v);
    rcu_read_unlock();
    if (needs != stack_needs)
        free(needs);
    if (v.outcome == ACL_ALLOWED) {
        atomic_fetch_add(v.white_listed ? &p->white_listed : &p->allowed, 1);
        return RMQ_ACL_ADMITTED;
    }
    rmq_remark_set(reason, v.message);
    /* statistics keep a remoting code per refusal: 0 marks a gRPC call */
    acl_stats_refused(p, ip, v.outcome == ACL_REFUSED_AUTH, v.remark, 0, v.access_key);
    if (v.outcome == ACL_REFUSED_AUTH)
        return RMQ_ACL_UNAUTHENTICATED;
    return RMQ_ACL_FORBIDDEN;
}

static const rmq_acl_check_v1 ACL_CHECK_TABLE = {.size = sizeof(rmq_acl_check_v1),
                                                 .check_grpc = check_grpc};

int acl_grpc_service_export(acl_plugin *p)
{
    return p->api->export_service(p->ctx, RMQ_ACL_CHECK_SERVICE, RMQ_ACL_CHECK_VERSION,
                                  &ACL_CHECK_TABLE, p);
}
