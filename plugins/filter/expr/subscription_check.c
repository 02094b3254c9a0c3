/* subscription_check.c — CHECK_CLIENT_CONFIG's verdict on one subscription
 * (protocol.md §6.7 steps 2–5): which response code and remark Java gives.
 * Stores nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_engine.h"

int32_t rmq_fx_check(bool enable_property_filter, const rmq_fx_options *opt, const char *type,
                     const char *expression, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!type || !type[0] || strcmp(type, "TAG") == 0)
        return RMQ_FILTER_CHECK_SUCCESS;
    if (!enable_property_filter) {
        if (err && errlen)
            snprintf(err, errlen, "The broker does not support consumer to filter message by %s",
                     type);
        return RMQ_FILTER_CHECK_SYSTEM_ERROR;
    }
    struct rmq_filter_expr *e = NULL;
    const char *text = expression ? expression : "";
    int rc = rmq_fx_compile(type, text, strlen(text), opt, &e, err, errlen, NULL);
    free(e);
    if (rc == 0)
        return RMQ_FILTER_CHECK_SUCCESS;
    if (rc == RMQ_ENOMEM)
        return RMQ_FILTER_CHECK_SYSTEM_ERROR;
    return RMQ_FILTER_CHECK_SUBSCRIPTION_PARSE_FAILED;
}
