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

#include "ha_frame.h"

/* ---- master (ha_master.c) ---- */
/* The HA port: haListenPort, else the broker server's port + 1. */
int ha_master_port(store_plugin *sp);
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
    int64_t behind_ms;  /* since the slave last held everything; 0 when caught up */
    int64_t ack_age_ms; /* since its last report (-1: none yet) */
    int64_t rate_bps;   /* acknowledged bytes per second, last window */
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
    /* a demoted master's pending comparison (ha_rejoin.c) */
    bool rejoining;
    bool rejoin_connected; /* comparing on a live connection */
    int64_t rejoin_from, rejoin_pos, rejoin_end;
    char set_aside[300]; /* the file the last rejoin set aside ("" none) */
} ha_slave_info;
void ha_slave_info_get(store_plugin *sp, ha_slave_info *out);

/* ---- a demoted master rejoining (ha_rejoin.c) ---- */
typedef struct ha_rejoin {
    bool active;      /* comparing our log with the master's stream */
    bool compared;    /* this connection brought data */
    int64_t from;     /* this connection's first report (a file start) */
    int64_t floor_hi; /* > 0: retrying lower since the first record at it differed */
    int64_t pos;      /* compared up to */
    int64_t end;      /* our log end */
    int64_t empty_at; /* offset of the last empty frame (-1: data came since) */
    int64_t rec, prev_off, prev_size; /* our next record boundary; the record before */
    int64_t stamp_ms;                 /* when demoted: names the set-aside file, so a rerun after a
                                       * crash rewrites the same file instead of adding another */
    char master[128];
    char set_aside[300]; /* the .commitlog file written when settling ("" none) */
} ha_rejoin;
typedef enum ha_rejoin_rc {
    HA_REJOIN_MORE,      /* the frame matched our log: next frame */
    HA_REJOIN_APPEND,    /* all of our log matched: append the frame past *used */
    HA_REJOIN_RECONNECT, /* settled (log cut) or retrying lower: reconnect */
    HA_REJOIN_FAILED,    /* halt replication with `why` */
} ha_rejoin_rc;
/* Demotion: remember to compare from the file start at or below `acked`
 * (what our slaves acknowledged; 0 unknown) before replicating. */
int ha_rejoin_mark(store_plugin *sp, const char *master, int64_t acked);
/* Slave start: a pending rejoin (kept across restarts) into *rj. */
void ha_rejoin_load(store_plugin *sp, ha_rejoin *rj);
/* A connection starts: the offset to report first. */
int64_t ha_rejoin_begin(store_plugin *sp, ha_rejoin *rj);
ha_rejoin_rc ha_rejoin_frame(store_plugin *sp, ha_rejoin *rj, int64_t phys, const uint8_t *body,
                             int32_t len, int32_t *used, char *why, size_t why_cap);
/* The master closed a connection that brought no data although we had
 * sent it a keep-alive (a Java master closes when our offset exceeds its
 * log end): compare lower, as for heartbeats only. */
ha_rejoin_rc ha_rejoin_master_closed(store_plugin *sp, ha_rejoin *rj, char *why, size_t why_cap);
/* The admin command `ha-setaside`. */
int ha_rejoin_init(store_plugin *sp);
/* `ha-setaside resend FILE [ADDR]` (ha_resend.c): FILE's records (in dir)
 * sent to the master; the command's exit status. */
int ha_resend(store_plugin *sp, rmq_admin_call *call, const char *dir, const char *file,
              const char *addr);

/* ---- figures (ha_gauges.c): SDK 1.10 gauges ---- */
int ha_gauges_init(store_plugin *sp);

/* ---- roles (ha_role.c) ---- */
/* Start what the configured role needs; the admin commands "ha",
 * "promote", "demote"; the slave's config sync timer. */
int ha_init(store_plugin *sp);
void ha_fini(store_plugin *sp);
/* Threads and the HA port of the current role; stopped before the engine
 * closes (reload export) and started once it is open. */
int ha_start(store_plugin *sp);
/* Ask broker-client-mgr (service broker.info) to register with the
 * NameServers at once; nothing when it is absent or too old. Any thread. */
void ha_register_now(store_plugin *sp);
void ha_stop(store_plugin *sp);
static inline ha_role ha_current_role(store_plugin *sp)
{
    return (ha_role)atomic_load(&sp->role);
}

#endif
