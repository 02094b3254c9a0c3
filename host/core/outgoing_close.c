/* outgoing_close.c — close_outgoing (ABI 1.15): a plugin ends the host's
 * outgoing connections to one address (a proxy's "broker#client" ones,
 * when that client is gone) instead of leaving them to the peer's idle
 * timeout. A connection being closed is "draining": no new request goes
 * on it (the next invoke_*_addr to the address dials a fresh one), what
 * was queued is still written, and the requests waiting on it get their
 * answer, or their error at their timeout, exactly once as always; it
 * closes as soon as nothing is left to write or to wait for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "tls_session.h"

int outgoing_close_addr(plugin_inst *p, const char *addr)
{
    rmq_host *h = p->host;
    if (!addr || !addr[0] || outgoing_addr_host_len(addr) == 0 ||
        strlen(addr) >= sizeof(((loop_task *)0)->addr))
        return RMQ_EINVAL;
    loop_task *t = calloc(1, sizeof(*t));
    if (!t)
        return RMQ_ENOMEM;
    t->type = LT_CLOSE_ADDR;
    snprintf(t->addr, sizeof(t->addr), "%s", addr);
    /* the loop of this address's calls: the close runs after every request
     * the plugin posted to it before */
    loop_post(outgoing_loop_of_addr(h, addr), t);
    return 0;
}

void loop_close_addr(io_loop *l, const char *addr)
{
    for (connection *c = l->conns; c;) {
        connection *n = c->next; /* conn_drain_check may unlink c */
        if (!c->srv && !c->closing && !c->draining && strcmp(c->addr_key, addr) == 0) {
            c->draining = true;
            HLOG_DEBUG(l->host, "closing outgoing connection %s once its calls are done", addr);
            conn_drain_check(c);
        }
        c = n;
    }
}

void conn_drain_check(connection *c)
{
    if (!c->draining || c->closing || !c->connected || c->writing || c->out.len > 0)
        return;
    if (c->tls && (!tls_session_established(c->tls) || tls_session_has_output(c->tls)))
        return;
    if (outgoing_has_calls_on(c->loop, c->id))
        return;
    conn_close(c, RMQ_CHANNEL_CLOSE);
}
