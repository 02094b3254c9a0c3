/* tls_host.c — the host's TLS endpoints: one per server (even when disabled,
 * so reload-config can turn TLS on) and one for outgoing connections; built
 * at start-up (so --check names a bad file), rebuilt by reload-config. */
#include <stdlib.h>
#include <string.h>

#include "tls_context.h"
#include "tls_host.h"

int tls_host_init(rmq_host *h, char *err, size_t errlen)
{
    char label[CONF_PATH_MAX + CONF_NAME_MAX + 32];
    for (size_t i = 0; i < h->nservers; i++) {
        const server_conf *sc = host_conf_server(&h->conf, h->servers[i].name);
        snprintf(label, sizeof(label), "%s: servers.%s.tls", h->conf.host_file, h->servers[i].name);
        h->servers[i].tls = tls_endpoint_new(&sc->tls, label, err, errlen);
        if (!h->servers[i].tls)
            return -1;
    }
    snprintf(label, sizeof(label), "%s: tls_client", h->conf.host_file);
    h->tls_client = tls_endpoint_new(&h->conf.tls_client, label, err, errlen);
    return h->tls_client ? 0 : -1;
}

void tls_host_destroy(rmq_host *h)
{
    for (size_t i = 0; h->servers && i < h->nservers; i++) {
        tls_endpoint_free(h->servers[i].tls);
        h->servers[i].tls = NULL;
    }
    tls_endpoint_free(h->tls_client);
    h->tls_client = NULL;
}

/* Slot nservers is the outgoing side. */
struct tls_reload_plan {
    size_t n;
    tls_conf *confs;
    SSL_CTX **ctxs;
    bool *present;
};

void tls_host_reload_abandon(tls_reload_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        SSL_CTX_free(p->ctxs[i]);
    free(p->confs);
    free(p->ctxs);
    free(p->present);
    free(p);
}

int tls_host_reload_prepare(rmq_host *h, const host_conf *nc, tls_reload_plan **out, char *msg,
                            size_t msglen)
{
    *out = NULL;
    tls_reload_plan *p = calloc(1, sizeof(*p));
    size_t n = h->nservers + 1;
    if (p) {
        p->n = n;
        p->confs = calloc(n, sizeof(*p->confs));
        p->ctxs = calloc(n, sizeof(*p->ctxs));
        p->present = calloc(n, sizeof(*p->present));
    }
    if (!p || !p->confs || !p->ctxs || !p->present) {
        tls_host_reload_abandon(p);
        snprintf(msg, msglen, "configuration not reloaded, nothing changed: out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const tls_conf *t;
        if (i < h->nservers) {
            const server_conf *sc = host_conf_server(nc, h->servers[i].name);
            if (!sc)
                continue; /* a removed server keeps running as it is until restart */
            t = &sc->tls;
        } else {
            t = &nc->tls_client;
        }
        p->confs[i] = *t;
        p->present[i] = true;
        char why[1024];
        const tls_conf *running = i < h->nservers
                                      ? &host_conf_server(&h->conf, h->servers[i].name)->tls
                                      : &h->conf.tls_client;
        if (tls_conf_keep_overrides(&p->confs[i], running, "-o", nc->conf_dir, why, sizeof(why)) !=
            0) {
            snprintf(msg, msglen, "configuration not reloaded, nothing changed: %s", why);
            tls_host_reload_abandon(p);
            return -1;
        }
        t = &p->confs[i];
        if (t->mode == 0)
            continue;
        p->ctxs[i] = tls_ctx_build(t, why, sizeof(why));
        if (!p->ctxs[i]) {
            snprintf(msg, msglen, "configuration not reloaded, nothing changed: %s: %s%s%s",
                     nc->host_file, i < h->nservers ? "servers." : "tls_client",
                     i < h->nservers ? h->servers[i].name : "", i < h->nservers ? ".tls" : "");
            size_t len = strlen(msg);
            snprintf(msg + len, msglen - len, ": %s", why);
            tls_host_reload_abandon(p);
            return -1;
        }
    }
    *out = p;
    return 0;
}

static void note(char *msg, size_t msglen, const char *what, const tls_conf *t)
{
    size_t len = strlen(msg);
    if (len + 1 < msglen)
        snprintf(msg + len, msglen - len, "tls: %s: %s%s\n", what,
                 t->client ? (t->mode ? "enabled" : "disabled") : tls_mode_name(t->mode),
                 t->mode ? ", certificates re-read" : "");
}

void tls_host_reload_commit(rmq_host *h, tls_reload_plan *p, char *msg, size_t msglen)
{
    for (size_t i = 0; i < p->n; i++) {
        if (!p->present[i])
            continue;
        tls_endpoint *ep = i < h->nservers ? h->servers[i].tls : h->tls_client;
        tls_conf *cur = i < h->nservers
                            ? &((server_conf *)host_conf_server(&h->conf, h->servers[i].name))->tls
                            : &h->conf.tls_client;
        bool was_on = tls_endpoint_mode(ep) != 0;
        tls_endpoint_install(ep, &p->confs[i], p->ctxs[i]);
        p->ctxs[i] = NULL;
        if (was_on || p->confs[i].mode != 0) {
            char what[CONF_NAME_MAX + 32];
            snprintf(what, sizeof(what), "%s%s%s", i < h->nservers ? "servers." : "tls_client",
                     i < h->nservers ? h->servers[i].name : "", i < h->nservers ? ".tls" : "");
            note(msg, msglen, what, &p->confs[i]);
        }
        *cur = p->confs[i];
    }
    tls_host_reload_abandon(p);
}
