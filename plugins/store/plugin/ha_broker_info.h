/* ha_broker_info.h — the store's calls into broker-client-mgr's
 * "broker.info" table (brokerId, master addresses, re-registration), each
 * one acquire/check-size/call/release, so the HA files (ha_role.c,
 * ha_resend.c, ha_slave.c) do not repeat the service handling. */
#ifndef STORE_HA_BROKER_INFO_H
#define STORE_HA_BROKER_INFO_H

#include <stddef.h>

#include <rmqhost/services/broker_service.h>

#include "store_plugin.h"

/* Calls fn(bi, table_ud, arg) with broker.info held, then releases it.
 * false (fn not called) when the service is not there (broker-client-mgr
 * not loaded, or not yet). fn checks `size` before using appended members
 * (BROKER_INFO_HAS). */
typedef void (*broker_info_fn)(const rmq_broker_info_v1 *bi, void *table_ud, void *arg);
bool broker_info_with(store_plugin *sp, broker_info_fn fn, void *arg);

/* Whether the provider's table has `member` (appended after v1's first
 * release) and fills it. */
#define BROKER_INFO_HAS(bi, member)                                                                \
    ((bi)->size >= offsetof(rmq_broker_info_v1, member) + sizeof(bi)->member && (bi)->member)

/* master_addrs into master/ha: its return value, or -1 when broker.info or
 * its master_addrs is missing (the buffers are then left as they were). */
int broker_info_master_addrs(store_plugin *sp, char *master, size_t master_len, char *ha,
                             size_t ha_len);

#endif
