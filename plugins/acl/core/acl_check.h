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
} acl_verdict;

void acl_check_broker(const acl_config *c, acl_request *r, acl_verdict *v);
void acl_check_namesrv(const acl_config *c, acl_request *r, bool allow_anonymous_read,
                       acl_verdict *v);

#endif
