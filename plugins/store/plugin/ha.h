/* ha.h — master/slave replication in RocketMQ 4.9.8's HA protocol
 * (protocol-ha.md): the master's listener and per-slave streams
 * (ha_master.c), the SYNC_MASTER replica wait, the slave's client
 * (ha_slave.c), the frame reader both share (ha_frame.c) and the role
 * changes (ha_role.c). */
#ifndef STORE_HA_H
#define STORE_HA_H

#include <stddef.h>
#include <stdint.h>

#include "store_plugin.h"

#define HA_HEADER 12               /* phyOffset int64 BE + bodySize int32 BE */
#define HA_MAX_BODY (4194304 - 12) /* a Java slave's 4 MiB buffer */

/* ---- frame reader (ha_frame.c): slave side of §2.3, any byte stream ---- */
typedef struct ha_frame_reader {
    uint8_t *buf;
    size_t cap, len;
} ha_frame_reader;
typedef enum { HA_FRAME_MORE = 0, HA_FRAME_OK = 1, HA_FRAME_BAD = -1 } ha_frame_rc;
int ha_frame_reader_init(ha_frame_reader *r, size_t cap);
void ha_frame_reader_free(ha_frame_reader *r);
/* Room to receive into (may be 0 when a frame fills the buffer: BAD). */
uint8_t *ha_frame_reader_space(ha_frame_reader *r, size_t *room);
void ha_frame_reader_added(ha_frame_reader *r, size_t n);
/* The next whole frame: OK with *phys, *body, *len (valid until consumed),
 * MORE when incomplete, BAD when its size is negative or exceeds max_body. */
ha_frame_rc ha_frame_next(ha_frame_reader *r, size_t max_body, int64_t *phys, const uint8_t **body,
                          int32_t *len);
void ha_frame_consume(ha_frame_reader *r);
/* Big-endian helpers */
void ha_put_be64(uint8_t *p, int64_t v);
int64_t ha_get_be64(const uint8_t *p);

/* ---- master (ha_master.c) ---- */
/* Listen on the HA port (a port in use is warned about, not fatal). */
int ha_master_start(store_plugin *sp);
void ha_master_stop(store_plugin *sp);
/* After every append: wake idle slave streams. Cheap when none waits. */
void ha_master_notify(store_plugin *sp);
/* SYNC_MASTER: call done(ud, code) with 0 once a slave acknowledged
 * end_offset, RC_FLUSH_SLAVE_TIMEOUT after slaveTimeout, or
 * RC_SLAVE_NOT_AVAILABLE at once when no usable slave is connected. May
 * call done on this thread before returning. */
void ha_master_wait_replica(store_plugin *sp, int64_t end_offset, void (*done)(void *ud, int code),
                            void *ud);
typedef struct ha_slave_status {
    char peer[64];
    int64_t ack_offset;
    int64_t behind_bytes;
    int64_t behind_ms; /* since the slave last held everything; 0 when caught up */
} ha_slave_status;
/* Connected slaves into out[0..max); returns how many are connected. */
size_t ha_master_status(store_plugin *sp, ha_slave_status *out, size_t max,
                        int64_t *push2slave_max);

/* ---- slave (ha_slave.c) ---- */
int ha_slave_start(store_plugin *sp);
void ha_slave_stop(store_plugin *sp);
typedef struct ha_slave_info {
    char master[128];
    bool connected;
    bool stopped; /* divergence or a file-size mismatch: replication halted */
    char why[256];
    int64_t max_offset;
    int64_t reconnects;
} ha_slave_info;
void ha_slave_info_get(store_plugin *sp, ha_slave_info *out);

/* ---- roles (ha_role.c) ---- */
/* Start what the configured role needs; the admin commands "ha",
 * "promote", "demote"; the slave's config sync timer. */
int ha_init(store_plugin *sp);
void ha_fini(store_plugin *sp);
/* Threads and the HA port of the current role; stopped before the engine
 * closes (reload export) and started once it is open. */
int ha_start(store_plugin *sp);
void ha_stop(store_plugin *sp);
static inline ha_role ha_current_role(store_plugin *sp)
{
    return (ha_role)atomic_load(&sp->role);
}

#endif
