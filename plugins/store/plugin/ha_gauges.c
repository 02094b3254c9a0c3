/* ha_gauges.c — replication figures for `rmqhostctl stats` and the metrics
 * endpoint (SDK 1.10 gauges): on a master, per connected slave (label
 * slave="ip:port" of its HA connection; a master has a few) its
 * acknowledged offset, bytes and seconds behind, age of its last report and
 * acknowledged bytes per second; on every role the commit-log end and the
 * number of slaves; on a slave whether it is connected and replicating. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ha.h"

static void report(void *ud, rmq_gauge_sink *sink)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    if (!sp->engine)
        return;
    ha_role r = ha_current_role(sp);
    const char *role[] = {"role",
                          r == HA_SLAVE         ? "SLAVE"
                          : r == HA_SYNC_MASTER ? "SYNC_MASTER"
                                                : "ASYNC_MASTER",
                          NULL};
    a->gauge(sink, "ha_commitlog_max_offset", "Commit-log end (bytes).", role,
             (double)store_ha_max_offset(sp->engine));
    if (r == HA_SLAVE) {
        ha_slave_info si;
        ha_slave_info_get(sp, &si);
        const char *m[] = {"master", si.master[0] ? si.master : "-", NULL};
        a->gauge(sink, "ha_master_connected", "1 when this slave is connected to its master.", m,
                 si.connected ? 1 : 0);
        a->gauge(sink, "ha_replication_stopped",
                 "1 when this slave halted replication (rmqhostctl ha says why).", m,
                 si.stopped ? 1 : 0);
        return;
    }
    ha_slave_status st[16];
    int64_t push = 0;
    size_t n = ha_master_status(sp, st, 16, &push);
    a->gauge(sink, "ha_slaves", "Connected slaves.", NULL, (double)n);
    if (n > 16)
        n = 16;
    static const struct {
        const char *name, *help;
        size_t off;
        double scale;
    } fig[] = {
        {"ha_slave_ack_offset", "Commit-log offset the slave acknowledged.",
         offsetof(ha_slave_status, ack_offset), 1},
        {"ha_slave_behind_bytes", "Commit-log bytes the slave has not acknowledged.",
         offsetof(ha_slave_status, behind_bytes), 1},
        {"ha_slave_behind_seconds", "Time since the slave last held all of the log.",
         offsetof(ha_slave_status, behind_ms), 0.001},
        {"ha_slave_last_ack_age_seconds", "Time since the slave's last offset report.",
         offsetof(ha_slave_status, ack_age_ms), 0.001},
        {"ha_slave_transfer_bytes_per_second",
         "Bytes per second the slave acknowledged over the last window.",
         offsetof(ha_slave_status, rate_bps), 1},
    };
    for (size_t f = 0; f < sizeof fig / sizeof fig[0]; f++)
        for (size_t i = 0; i < n; i++) {
            const char *l[] = {"slave", st[i].peer, NULL};
            int64_t v;
            memcpy(&v, (const char *)&st[i] + fig[f].off, sizeof v);
            a->gauge(sink, fig[f].name, fig[f].help, l, (double)v * fig[f].scale);
        }
}

int ha_gauges_init(store_plugin *sp)
{
    const rmq_host_api *a = sp->api;
    if (a->abi_minor < 10 || !a->register_gauges)
        return 0; /* an older host: `rmqhostctl ha` still has the figures */
    return a->register_gauges(sp->ctx, report, sp);
}
