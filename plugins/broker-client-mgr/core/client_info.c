/* client_info.c — the client entries both the producer and the consumer
 * tables keep per group: one way to add one and one way to tell it expired. */
#include "client_info.h"

#include <stdlib.h>
#include <string.h>

int bcm_client_append(bcm_client **arr, size_t *n, size_t *cap, const bcm_client *info)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        bcm_client *v = realloc(*arr, nc * sizeof *v);
        if (!v)
            return -1;
        *arr = v;
        *cap = nc;
    }
    bcm_client *c = &(*arr)[*n];
    *c = *info;
    c->client_id = strdup(info->client_id ? info->client_id : "");
    if (!c->client_id)
        return -1;
    (*n)++;
    return 0;
}

bool bcm_client_expired(const bcm_client *c, uint64_t now_ms, uint64_t timeout_ms,
                        uint64_t **expired, size_t *nexpired)
{
    if (now_ms <= c->last_update_ms || now_ms - c->last_update_ms <= timeout_ms)
        return false;
    uint64_t *v = realloc(*expired, (*nexpired + 1) * sizeof *v);
    if (v) {
        *expired = v;
        v[(*nexpired)++] = c->channel;
    }
    return true;
}
