/* filter_server_table.h — the broker's registry of filter servers
 * (RocketMQ 4.9.3 FilterServerManager, protocol.md §6.2): one entry per
 * connection that sent REGISTER_FILTER_SERVER, with its last refresh. */
#ifndef RMQ_FILTER_SERVER_TABLE_H
#define RMQ_FILTER_SERVER_TABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct filter_server_entry {
    uint64_t channel;
    char addr[128];          /* filterServerAddr as sent ("ip:port") */
    uint64_t last_update_ms; /* monotonic */
} filter_server_entry;

/* Thread-safe (one mutex): written by IO (register), EVENT (close) and
 * TIMER (expiry), read by broker-client-mgr every registration round. The
 * table is tiny and rarely read, so RCU would buy nothing. */
typedef struct filter_server_table {
    pthread_mutex_t lock;
    filter_server_entry *v; /* registration order */
    size_t n, cap;
} filter_server_table;

void filter_server_table_init(filter_server_table *t);
void filter_server_table_dispose(filter_server_table *t);

/* A known channel only refreshes its time (and address); a new one is
 * appended. Returns true when the entry is new. -1 on OOM. */
int filter_server_table_register(filter_server_table *t, uint64_t channel, const char *addr,
                                 uint64_t now_ms);
/* Remove the channel's entry; true if there was one. */
bool filter_server_table_remove(filter_server_table *t, uint64_t channel);
/* Remove up to cap entries idle for MORE than max_idle_ms; their channels
 * go to out[]. Returns how many were removed (call again while == cap). */
size_t filter_server_table_expire(filter_server_table *t, uint64_t now_ms, uint64_t max_idle_ms,
                                  uint64_t *out, size_t cap);
/* Calls fn per address under the lock (fn must not call back into t). */
size_t filter_server_table_for_each(filter_server_table *t, void (*fn)(void *ud, const char *addr),
                                    void *ud);
/* JSON array of addresses into buf; returns the needed length (snprintf-like). */
size_t filter_server_table_to_json(filter_server_table *t, char *buf, size_t len);
/* Snapshot copy (malloc'd, caller frees) for state export. */
filter_server_entry *filter_server_table_snapshot(filter_server_table *t, size_t *n);

#endif
