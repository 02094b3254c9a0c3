/* ha_role.c — the broker's replication role: what each role starts (every
 * role listens on the HA port, as Java; a SLAVE also runs the client), the
 * brokerId that goes with it (masters 0, slaves >= 1, via broker.info), the
 * admin commands `ha` (status), `promote` (slave -> master without a
 * restart) and `demote MASTER_HA_ADDR` (master -> slave). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha.h"
#include "ha_broker_info.h"
#include "store_features.h"

static const char *role_name(ha_role r)
{
    return r == HA_SYNC_MASTER ? "SYNC_MASTER" : r == HA_SLAVE ? "SLAVE" : "ASYNC_MASTER";
}

/* Keep broker-client-mgr's brokerId in line with the role: 0 for masters
 * (Java forces it), >= 1 for slaves (Java refuses 0). */
typedef struct align_call {
    store_plugin *sp;
    ha_role role;
    bool force;
} align_call;

static void align_with(const rmq_broker_info_v1 *bi, void *ud, void *arg)
{
    const align_call *c = arg;
    store_plugin *sp = c->sp;
    ha_role role = c->role;
    bool force = c->force;
    rmq_broker_identity id;
    if (bi->identity(ud, &id) == 0 && BROKER_INFO_HAS(bi, set_broker_id)) {
        int64_t want = id.broker_id;
        if (role != HA_SLAVE && id.broker_id != 0)
            want = 0;
        else if (role == HA_SLAVE && id.broker_id == 0)
            want = 1;
        if (want != id.broker_id || force) {
            if (!force)
                sp->api->log(sp->ctx, RMQ_LOG_WARN,
                             "brokerRole %s needs brokerId %s: using %lld instead of %lld",
                             role_name(role), role == HA_SLAVE ? ">= 1" : "0", (long long)want,
                             (long long)id.broker_id);
            bi->set_broker_id(ud, want);
        }
    }
}

static void align_broker_id(store_plugin *sp, ha_role role, bool force)
{
    align_call c = {sp, role, force};
    (void)broker_info_with(sp, align_with, &c);
}

static void register_with(const rmq_broker_info_v1 *bi, void *ud, void *arg)
{
    (void)arg;
    if (BROKER_INFO_HAS(bi, register_now))
        bi->register_now(ud);
}

void ha_register_now(store_plugin *sp)
{
    (void)broker_info_with(sp, register_with, NULL);
}

static void apply_role(store_plugin *sp, ha_role role)
{
    atomic_store(&sp->role, (int)role);
    if (sp->engine)
        store_set_slave(sp->engine, role == HA_SLAVE);
}

int ha_start(store_plugin *sp)
{
    if (!sp->engine || sp->ha_m)
        return 0;
    apply_role(sp, ha_current_role(sp));
    int rc = ha_master_start(sp);
    if (rc == 0 && ha_current_role(sp) == HA_SLAVE)
        rc = ha_slave_start(sp);
    return rc;
}

void ha_stop(store_plugin *sp)
{
    ha_slave_stop(sp);
    ha_master_stop(sp);
}

static void status_write(store_plugin *sp, rmq_admin_call *call)
{
    const rmq_host_api *a = sp->api;
    ha_role r = ha_current_role(sp);
    int64_t max = sp->engine ? store_ha_max_offset(sp->engine) : 0;
    bool json = a->admin_wants_json(call);
    if (r == HA_SLAVE) {
        ha_slave_info si;
        ha_slave_info_get(sp, &si);
        /* a demoted master's comparison: "waiting" for a connection,
         * "comparing" on one, "done" once settled (set-aside file named) */
        const char *phase = si.rejoining      ? (si.rejoin_connected ? "comparing" : "waiting")
                            : si.set_aside[0] ? "done"
                                              : "none";
        if (json) {
            a->admin_write(call,
                           "{\"role\":\"SLAVE\",\"master\":\"%s\",\"connected\":%s,\"stopped\":%s,"
                           "\"why\":\"%s\",\"maxOffset\":%lld,\"connects\":%lld,",
                           si.master, si.connected ? "true" : "false",
                           si.stopped ? "true" : "false", si.why, (long long)si.max_offset,
                           (long long)si.reconnects);
            a->admin_write(call,
                           "\"rejoin\":{\"phase\":\"%s\",\"fromOffset\":%lld,\"comparedTo\":%lld,"
                           "\"logEnd\":%lld,\"setAside\":\"%s\"}}\n",
                           phase, (long long)si.rejoin_from, (long long)si.rejoin_pos,
                           (long long)si.rejoin_end, si.set_aside);
            return;
        }
        a->admin_write(call, "role SLAVE\nmaster %s (%s)\ncommitLogMaxOffset %lld\nconnects %lld\n",
                       si.master[0] ? si.master : "-", si.connected ? "connected" : "not connected",
                       (long long)si.max_offset, (long long)si.reconnects);
        if (si.rejoining)
            a->admin_write(call, "rejoin %s from %lld compared to %lld of log end %lld\n", phase,
                           (long long)si.rejoin_from, (long long)si.rejoin_pos,
                           (long long)si.rejoin_end);
        if (si.set_aside[0])
            a->admin_write(call, "rejoin set aside %s\n", si.set_aside);
        if (si.stopped)
            a->admin_write(call, "STOPPED: %s", si.why);
        return;
    }
    ha_slave_status st[16];
    int64_t push = 0;
    size_t n = ha_master_status(sp, st, 16, &push);
    if (json) {
        a->admin_write(call,
                       "{\"role\":\"%s\",\"maxOffset\":%lld,\"push2SlaveMaxOffset\":%lld,"
                       "\"slaves\":[",
                       role_name(r), (long long)max, (long long)push);
        for (size_t i = 0; i < n && i < 16; i++)
            a->admin_write(call,
                           "%s{\"peer\":\"%s\",\"ackOffset\":%lld,\"behindBytes\":%lld,"
                           "\"behindMs\":%lld,\"lastAckAgeMs\":%lld,\"bytesPerSecond\":%lld}",
                           i ? "," : "", st[i].peer, (long long)st[i].ack_offset,
                           (long long)st[i].behind_bytes, (long long)st[i].behind_ms,
                           (long long)st[i].ack_age_ms, (long long)st[i].rate_bps);
        a->admin_write(call, "]}\n");
        return;
    }
    a->admin_write(call, "role %s\ncommitLogMaxOffset %lld\npush2SlaveMaxOffset %lld\nslaves %zu\n",
                   role_name(r), (long long)max, (long long)push, n);
    for (size_t i = 0; i < n && i < 16; i++)
        a->admin_write(call,
                       "slave %s ack %lld behind %lld bytes %lld ms last ack %lld ms ago %lld "
                       "B/s\n",
                       st[i].peer, (long long)st[i].ack_offset, (long long)st[i].behind_bytes,
                       (long long)st[i].behind_ms, (long long)st[i].ack_age_ms,
                       (long long)st[i].rate_bps);
}

static int admin_ha(rmq_admin_call *call, int argc, const char *const *argv, void *ud)
{
    (void)argc;
    (void)argv;
    status_write(ud, call);
    return 0;
}

static int admin_promote(rmq_admin_call *call, int argc, const char *const *argv, void *ud)
{
    (void)argc;
    (void)argv;
    store_plugin *sp = ud;
    if (ha_current_role(sp) != HA_SLAVE) {
        sp->api->admin_write(call, "not a slave: nothing to promote\n");
        return RMQ_EINVAL;
    }
    ha_slave_stop(sp);
    int64_t cut = store_ha_end_replication(sp->engine);
    if (cut > 0)
        sp->api->log(sp->ctx, RMQ_LOG_WARN,
                     "promotion: dropped %lld bytes of a record the master had not finished "
                     "sending",
                     (long long)cut);
    apply_role(sp, HA_ASYNC_MASTER);
    align_broker_id(sp, HA_ASYNC_MASTER, true);
    /* kept where UPDATE_BROKER_CONFIG keeps the store's settings, so a
     * restart or a hot reload does not turn it back into a slave of a
     * master that may be gone (broker-client-mgr keeps brokerId 0) */
    int kept = store_role_keep(sp, "brokerRole", "ASYNC_MASTER");
    sp->api->log(sp->ctx, RMQ_LOG_WARN,
                 "promoted to master (ASYNC_MASTER) at commit-log offset %lld: accepting sends",
                 (long long)store_ha_max_offset(sp->engine));
    sp->api->admin_write(call, "promoted: ASYNC_MASTER, brokerId 0, commitLogMaxOffset %lld%s\n",
                         (long long)store_ha_max_offset(sp->engine),
                         kept ? " (NOT kept for a restart: see the log)" : "");
    return 0;
}

static int admin_demote(rmq_admin_call *call, int argc, const char *const *argv, void *ud)
{
    store_plugin *sp = ud;
    if (argc > 0)
        argc--, argv++; /* argv[0] is the command name, as main() */
    if (argc < 1 || strlen(argv[0]) < 6 || !strchr(argv[0], ':')) {
        sp->api->admin_write(call, "usage: demote MASTER_HA_HOST:PORT\n");
        return RMQ_EINVAL;
    }
    if (ha_current_role(sp) == HA_SLAVE) {
        sp->api->admin_write(call, "already a slave\n");
        return RMQ_EINVAL;
    }
    /* sends are refused from here on; before replicating, the slave
     * compares our log with the new master's and sets aside what it never
     * received (ha_rejoin.c): the divergent tail is never mixed in */
    ha_slave_status st[1];
    int64_t acked = 0;
    ha_master_status(sp, st, 1, &acked);
    apply_role(sp, HA_SLAVE);
    int marked = ha_rejoin_mark(sp, argv[0], acked);
    if (marked != 0)
        sp->api->log(sp->ctx, RMQ_LOG_ERROR,
                     "demote: cannot record the pending log comparison (%s): a divergent "
                     "tail will halt replication instead of being set aside",
                     strerror(-marked));
    snprintf(sp->set.ha_master_address, sizeof sp->set.ha_master_address, "%s", argv[0]);
    align_broker_id(sp, HA_SLAVE, true);
    int kept = store_role_keep(sp, "brokerRole", "SLAVE");
    if (kept == 0)
        kept = store_role_keep(sp, "haMasterAddress", argv[0]);
    int rc = ha_slave_start(sp);
    sp->api->log(sp->ctx, RMQ_LOG_WARN, "demoted to slave of %s at commit-log offset %lld", argv[0],
                 (long long)store_ha_max_offset(sp->engine));
    sp->api->admin_write(call, "demoted: SLAVE of %s, commitLogMaxOffset %lld%s\n", argv[0],
                         (long long)store_ha_max_offset(sp->engine),
                         kept ? " (NOT kept for a restart: see the log)" : "");
    return rc;
}

/* GET_ALL_DELAY_OFFSET (45): what a slave copies (§4.3). */
static int process_all_delay_offset(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    store_plugin *sp = ud;
    store_features *f = features_of(sp);
    char *body = f ? schedule_offsets_encode(f) : NULL;
    if (!body)
        return store_reply_code(sp, req, cmd, RC_SYSTEM_ERROR, "No delay offset in this broker");
    rmq_cmd *r = sp->api->cmd_new_response(cmd, RC_SUCCESS, NULL);
    if (!r) {
        free(body);
        return RMQ_ENOMEM;
    }
    sp->api->cmd_set_body(r, body, strlen(body), NULL, NULL);
    free(body);
    return sp->api->reply(req, r);
}

/* A slave copies the master's delay offsets every 10 s (the other tables
 * are broker-client-mgr's). */
static void delay_sync_tick(void *ud)
{
    store_plugin *sp = ud;
    store_features *f = features_of(sp);
    if (ha_current_role(sp) != HA_SLAVE || !f)
        return;
    char master[128] = "", ha[128] = "";
    (void)broker_info_master_addrs(sp, master, sizeof master, ha, sizeof ha);
    if (!master[0])
        return;
    rmq_cmd *req = sp->api->cmd_new_request(45);
    rmq_cmd *resp = NULL;
    if (!req || sp->api->invoke_sync_addr(sp->ctx, master, req, 3000, &resp) != 0 || !resp)
        return;
    size_t n = 0;
    const char *body = sp->api->cmd_body(resp, &n);
    if (sp->api->cmd_code(resp) == RC_SUCCESS && body && n)
        schedule_offsets_take(f, body, n);
    sp->api->cmd_free(resp);
}

static void align_tick(void *ud)
{
    store_plugin *sp = ud;
    align_broker_id(sp, ha_current_role(sp), false);
}

int ha_init(store_plugin *sp)
{
    atomic_store(&sp->role, (int)sp->set.role);
    int rc = ha_start(sp); /* a reload's deferred open starts it in import_state */
    if (rc == 0)
        rc = sp->api->register_admin_command(
            sp->ctx, "ha", "replication status (role, slaves, lag)", admin_ha, sp);
    if (rc == 0)
        rc = sp->api->register_admin_command(sp->ctx, "promote",
                                             "turn this slave into the master of its broker name",
                                             admin_promote, sp);
    if (rc == 0)
        rc = sp->api->register_admin_command(sp->ctx, "demote",
                                             "MASTER_HA_ADDR: turn this master into a slave of it",
                                             admin_demote, sp);
    if (rc == 0)
        rc = ha_rejoin_init(sp);
    if (rc == 0)
        rc = ha_gauges_init(sp);
    rmq_timer_id tid;
    if (rc == 0) /* broker.info may load after the store */
        rc = sp->api->add_timer(sp->ctx, 500, 0, align_tick, sp, NULL, &tid);
    if (rc == 0)
        rc = sp->api->register_processor(sp->ctx, 45, process_all_delay_offset, sp, "brokerAdmin");
    if (rc == 0)
        rc = sp->api->add_timer(sp->ctx, 3000, 10000, delay_sync_tick, sp, "brokerAdmin", &tid);
    return rc;
}

void ha_fini(store_plugin *sp)
{
    ha_stop(sp);
}
