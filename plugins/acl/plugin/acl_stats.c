/* acl_stats.c — owns refusal accounting: counters per peer address, the
 * rate-limited log of refusals and the admin command "<instance>-stats". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu.h>

#include "acl_plugin.h"

static acl_peer_stat *peer_slot(acl_plugin *p, const char *ip)
{
    for (size_t i = 0; i < p->npeers; i++)
        if (strcmp(p->peers[i].ip, ip) == 0)
            return &p->peers[i];
    if (p->npeers == ACL_MAX_PEERS)
        return NULL;
    acl_peer_stat *n = realloc(p->peers, (p->npeers + 1) * sizeof(*n));
    if (!n)
        return NULL;
    p->peers = n;
    acl_peer_stat *s = &n[p->npeers++];
    memset(s, 0, sizeof(*s));
    snprintf(s->ip, sizeof(s->ip), "%s", ip);
    return s;
}

void acl_stats_refused(acl_plugin *p, const char *ip, bool auth, const char *remark, int32_t code,
                       const char *access_key)
{
    atomic_fetch_add(auth ? &p->refused_auth : &p->refused_perm, 1);
    uint64_t now = p->api->now_monotonic_ms();
    bool log = false;
    uint64_t suppressed = 0;
    pthread_mutex_lock(&p->stats_lock);
    acl_peer_stat *s = peer_slot(p, ip);
    if (!s) {
        p->peers_dropped++;
    } else {
        if (auth)
            s->auth_failures++;
        else
            s->perm_refusals++;
        snprintf(s->last_remark, sizeof(s->last_remark), "%s", remark);
        if (s->last_log_ms == 0 || now - s->last_log_ms >= p->log_interval_ms) {
            log = true;
            suppressed = s->suppressed;
            s->suppressed = 0;
            s->last_log_ms = now ? now : 1;
        } else {
            s->suppressed++;
        }
    }
    pthread_mutex_unlock(&p->stats_lock);
    if (log)
        p->api->log(p->ctx, RMQ_LOG_WARN,
                    "refused code %d from %s (accessKey=%s): %s [%llu more from this peer not "
                    "logged since the last line]",
                    code, ip, access_key ? access_key : "-", remark,
                    (unsigned long long)suppressed);
}

static int stats_cmd(rmq_admin_call *call, int argc, const char *const *argv, void *ud)
{
    (void)argv;
    acl_plugin *p = ud;
    const rmq_host_api *a = p->api;
    if (argc > 1) {
        a->admin_write(call, "usage: %s-stats\n", a->plugin_name(p->ctx));
        return 2;
    }
    bool json = a->admin_wants_json(call);
    unsigned long gen = 0, keys = 0;
    rcu_read_lock();
    const acl_config *c = rcu_dereference(p->cfg);
    if (c) {
        gen = (unsigned long)c->generation;
        keys = (unsigned long)c->nkeys;
    }
    rcu_read_unlock();
    pthread_mutex_lock(&p->lock);
    char last_error[sizeof(p->last_error)];
    memcpy(last_error, p->last_error, sizeof(last_error));
    pthread_mutex_unlock(&p->lock);
    if (json)
        a->admin_write(call,
                       "{\"role\":\"%s\",\"generation\":%lu,\"accounts\":%lu,\"allowed\":%lu,"
                       "\"whiteListed\":%lu,\"refusedAuth\":%lu,\"refusedPerm\":%lu,"
                       "\"audited\":%lu,\"reloads\":%lu,\"reloadFailures\":%lu,\"peers\":[",
                       p->namesrv ? "namesrv" : "broker", gen, keys, atomic_load(&p->allowed),
                       atomic_load(&p->white_listed), atomic_load(&p->refused_auth),
                       atomic_load(&p->refused_perm), atomic_load(&p->audited),
                       atomic_load(&p->reloads), atomic_load(&p->reload_failures));
    else
        a->admin_write(call,
                       "role %s, generation %lu, %lu accounts\n"
                       "allowed %lu, white-listed %lu, refused: %lu authentication, %lu "
                       "permission; audited %lu\nreloads %lu, refused reloads %lu%s%s\n",
                       p->namesrv ? "namesrv" : "broker", gen, keys, atomic_load(&p->allowed),
                       atomic_load(&p->white_listed), atomic_load(&p->refused_auth),
                       atomic_load(&p->refused_perm), atomic_load(&p->audited),
                       atomic_load(&p->reloads), atomic_load(&p->reload_failures),
                       last_error[0] ? "\nlast refused reload: " : "", last_error);
    pthread_mutex_lock(&p->stats_lock);
    for (size_t i = 0; i < p->npeers; i++) {
        const acl_peer_stat *s = &p->peers[i];
        if (json)
            a->admin_write(call, "%s{\"peer\":\"%s\",\"authFailures\":%llu,\"permRefusals\":%llu}",
                           i ? "," : "", s->ip, (unsigned long long)s->auth_failures,
                           (unsigned long long)s->perm_refusals);
        else
            a->admin_write(call, "peer %s: %llu failed authentications, %llu refused permissions\n",
                           s->ip, (unsigned long long)s->auth_failures,
                           (unsigned long long)s->perm_refusals);
    }
    if (json)
        a->admin_write(call, "],\"peersNotTracked\":%llu}\n", (unsigned long long)p->peers_dropped);
    pthread_mutex_unlock(&p->stats_lock);
    return 0;
}

int acl_stats_register(acl_plugin *p)
{
    char name[64];
    snprintf(name, sizeof(name), "%s-stats", p->api->plugin_name(p->ctx));
    return p->api->register_admin_command(
        p->ctx, name, "refusal counters per peer, reloads (--json)", stats_cmd, p);
}

void acl_stats_free(acl_plugin *p)
{
    free(p->peers);
    p->peers = NULL;
    p->npeers = 0;
}
