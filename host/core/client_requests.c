/* client_requests.c — requests a peer sends on a connection this host
 * dialled (invoke_*_addr): served by the processor a live plugin registered
 * for the code with register_client_processor (ABI 1.12), as Java's
 * NettyRemotingClient serves a broker's CHECK_TRANSACTION_STATE to the
 * client that sent HEART_BEAT; otherwise REQUEST_CODE_NOT_SUPPORTED. */
#include <stdio.h>

#include "host.h"

/* The processor of `code` among the live generations (the first loaded),
 * its plugin's inflight count taken so it outlives the call; false when
 * none, or when its generation is held by a hot reload (the hand-over must
 * not see a new call: the peer asks again, as a broker's next check round
 * does). */
static bool find_processor(rmq_host *h, int32_t code, client_proc_entry *out, plugin_inst **owner)
{
    bool found = false;
    pthread_mutex_lock(&h->registry_mu);
    for (size_t i = 0; i < h->nplugins && !found; i++) {
        plugin_inst *p = h->plugins[i];
        if (p->state != PLUGIN_LIVE)
            continue;
        for (size_t k = 0; k < p->nclient_procs && !found; k++) {
            if (p->client_procs[k].code != code)
                continue;
            found = true;
            if (atomic_load(&p->held))
                break;
            *out = p->client_procs[k];
            *owner = p;
            atomic_fetch_add(&p->inflight, 1);
        }
    }
    pthread_mutex_unlock(&h->registry_mu);
    return found && *owner;
}

void client_request_dispatch(connection *c, rmq_cmd *cmd)
{
    rmq_host *h = c->loop->host;
    client_proc_entry e;
    plugin_inst *owner = NULL;
    rmq_cmd *resp = NULL;
    if (find_processor(h, cmd->code, &e, &owner)) {
        /* the address dialled: with its "#tag" on a tagged connection */
        resp = e.fn(c->addr_key[0] ? c->addr_key : c->peer, cmd, e.ud);
        atomic_fetch_sub(&owner->inflight, 1);
    } else if (!(cmd->flag & RMQ_FLAG_ONEWAY)) {
        char remark[64];
        snprintf(remark, sizeof(remark), " request type %d not supported", cmd->code);
        resp = rmq_cmd_new_response(cmd, RMQ_RESPONSE_REQUEST_CODE_NOT_SUPPORTED, remark);
    }
    if (resp && !(cmd->flag & RMQ_FLAG_ONEWAY)) {
        resp->opaque = cmd->opaque;
        resp->flag |= RMQ_FLAG_RESPONSE;
        resp->flag &= ~RMQ_FLAG_ONEWAY;
        resp->serialize_type = cmd->serialize_type;
        if (conn_queue_cmd(c, resp) != 0)
            HLOG_WARN(h, "cannot encode answer %d to %s", cmd->code, c->peer);
    }
    if (resp)
        rmq_cmd_free(resp);
    rmq_cmd_free(cmd);
}
