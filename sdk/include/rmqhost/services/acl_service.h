/* acl_service.h — what an ACL plugin offers the plugins that serve other
 * protocols than remoting: the service "acl.check", which authenticates and
 * authorises one request described by its credentials and the resources it
 * touches. The remoting path needs no service (the ACL plugin's RPC hook
 * sees every remoting request); a gRPC endpoint (plugins/proxy) decodes its
 * own messages, names their resources here and lets the plugin that owns
 * the accounts decide, as Java 5's proxy hands PlainAccessValidator the
 * AccessResource it parsed from a gRPC message.
 * Header-only; include it next to rmqhost.h. */
#ifndef RMQHOST_SERVICES_ACL_SERVICE_H
#define RMQHOST_SERVICES_ACL_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include <rmqhost/rmqhost.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- service "acl.check", version 1 --------------------------------------- */
#define RMQ_ACL_CHECK_SERVICE "acl.check"
#define RMQ_ACL_CHECK_VERSION 1

/* What a request needs on one resource (Java's Permission). ANY: PUB or SUB
 * will do (QueryRoute). */
#define RMQ_ACL_NEED_PUB 1u
#define RMQ_ACL_NEED_SUB 2u
#define RMQ_ACL_NEED_ANY 3u

typedef struct rmq_acl_need {
    const char *resource; /* topic, or consumer group when `group` */
    uint32_t need;        /* RMQ_ACL_NEED_* */
    uint32_t group;       /* nonzero: `resource` is a group (checked as %RETRY%<group>) */
} rmq_acl_need;

/* One gRPC request of a RocketMQ 5.x client: the metadata it was signed
 * with (`authorization: MQv2-HMAC-SHA1 Credential=<AK>, SignedHeaders=
 * x-mq-date-time, Signature=<hex HMAC-SHA1 of x-mq-date-time with SK>`). */
typedef struct rmq_acl_grpc_request {
    uint32_t size;             /* sizeof(rmq_acl_grpc_request) of the caller */
    const char *peer;          /* "ip:port" of the client */
    const char *authorization; /* metadata `authorization`; NULL when absent */
    const char *date_time;     /* metadata `x-mq-date-time`; NULL when absent */
    const char *rpc;           /* method name, for the plugin's logs ("SendMessage") */
    const rmq_acl_need *needs;
    size_t nneeds;
} rmq_acl_grpc_request;

/* Verdicts of check_grpc. */
#define RMQ_ACL_ADMITTED 0
#define RMQ_ACL_UNAUTHENTICATED 1 /* no/unknown key, malformed header, bad signature */
#define RMQ_ACL_FORBIDDEN 2       /* authenticated, but not permitted */

/* The table exported under "acl.check" (only by an ACL plugin guarding a
 * broker: its accounts are the broker's). Obtain it with
 * api->service_acquire(ctx, RMQ_ACL_CHECK_SERVICE, RMQ_ACL_CHECK_VERSION, ...);
 * no provider means no ACL. Any thread; never blocks (reads the plugin's
 * published configuration). */
typedef struct rmq_acl_check_v1 {
    uint32_t size; /* sizeof(rmq_acl_check_v1) of the provider */
    /* RMQ_ACL_ADMITTED, or a refusal with its reason (the Java exception's
     * message, e.g. "No acl config for AK") written into `reason` (host-style
     * buffer: reason->data of reason->cap bytes; may be NULL). */
    int (*check_grpc)(void *table_ud, const rmq_acl_grpc_request *req, rmq_remark_buf *reason);
} rmq_acl_check_v1;

#ifdef __cplusplus
}
#endif
#endif
