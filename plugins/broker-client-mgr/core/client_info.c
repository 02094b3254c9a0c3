/* client_info.c — the client entries both the producer and the consumer
 * tables keep per group: one way to add one. */
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
