/* request_signing.h — ACL 1.0 signatures on the calls broker-client-mgr makes
 * to NameServers (as 5.x brokers with accessKey/secretKey do). */
#ifndef BCM_REQUEST_SIGNING_H
#define BCM_REQUEST_SIGNING_H

#include "broker_context.h"

/* With settings accessKey and secretKey both set: add AccessKey and
 * Signature to `req` (after its ext fields and body are final). Otherwise
 * nothing. A failure is logged; the request goes unsigned. */
void bcm_sign_request(bcm_ctx *c, rmq_cmd *req);

#endif
