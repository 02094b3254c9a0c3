/* acl_check.h — the verdict on one request: Java 4.9.8's
 * PlainAccessValidator/PlainPermissionManager for a broker, rmqhost's policy
 * for a NameServer (docs/acl.md). Pure: no host, no I/O. */
#ifndef ACL_CHECK_H
#define ACL_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl_config.h"
#include "acl_signature.h"

typedef struct acl_request {
    int32_t code;
    const char *peer_ip; /* without port */
    acl_field *fields;   /* ext fields (reordered by the check) */
    size_t nfields;
    const void *body;
    size_t body_len;
} acl_request;

typedef enum acl_outcome {
    ACL_ALLOWED = 0,
    ACL_REFUSED_AUTH = 1, /* no/unknown key or bad signature: a failed authentication */
    ACL_REFUSED_PERM = 2  /* authenticated, not permitted */
} acl_outcome;

typedef struct acl_verdict {
    acl_outcome outcome;
    bool white_listed;      /* admitted by a global white address */
    const char *access_key; /* from the request (borrowed), NULL if none */
    char remark[512];       /* refusal: Java's AclException simple description */
    char message[400];      /* refusal: the exception's message alone (gRPC answers) */
    char ak_buf[256];       /* gRPC: the key parsed from the header (access_key points here) */
} acl_verdict;

/* One resource a gRPC request touches (PlainAccessResource.parse of a
 * GeneratedMessageV3 in Java 5.1). perm: ACL_PERM_PUB, _SUB or _ANY. */
typedef struct acl_grpc_need {
    const char *name;
    uint8_t perm;
    bool group; /* name is a consumer group: checked as %RETRY%<name> */
} acl_grpc_need;

typedef struct acl_grpc_request {
    const char *peer_ip;       /* without port */
    const char *authorization; /* "MQv2-HMAC-SHA1 Credential=AK, ..., Signature=hex" */
    const char *date_time;     /* x-mq-date-time: the signed content */
    const acl_grpc_need *needs;
    size_t nneeds;
} acl_grpc_request;

void acl_check_broker(const acl_config *c, acl_request *r, acl_verdict *v);
void acl_check_namesrv(const acl_config *c, acl_request *r, bool allow_anonymous_read,
                       acl_verdict *v);
/* A 5.x client's gRPC request, in Java 5.1's PlainPermissionManager.validate
 * order (global white address, key, account, account white address,
 * signature over x-mq-date-time, permissions). */
void acl_check_grpc(const acl_config *c, const acl_grpc_request *r, acl_verdict *v);

#endif
