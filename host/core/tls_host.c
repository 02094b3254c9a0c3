/* tls_host.c — the host's TLS endpoints: one per server (even when disabled,
 * so reload-config can turn TLS on) and one for outgoing connections; built
 * at start-up (so --check names a bad file), rebuilt by reload-config. */
#include <stdlib.h>
#include <string.h>

#include "tls_context.h"
#include "tls_host.h"

static void label_of(const rmq_host *h, const char *server, char *buf, size_t len)
{
    if (server)
        snprintf(buf, len, "%s: servers.%s.tls", h->conf.host_file, server);
    else
        snprintf(buf, len, "%s: tls_client", h->conf.host_file);
}

struct tls_endpoint *tls_server_endpoint(const server *s)
{
    return __atomic_load_n(&s->tls, __ATOMIC_ACQUIRE);
}

int tls_host_init(rmq_host *h, char *err, size_t errlen)
{
    char label[CONF_PATH_MAX + CONF_NAME_MAX + 32];
    for (size_t i = 0; i < h->nservers; i++) {
        const server_conf *sc = host_conf_server(&h->conf, h->servers[i].name);
        tls_conf off;
        tls_conf_defaults(&off, false);
        label_of(h, h->servers[i].name, label, sizeof(label));
        h->servers[i].tls = tls_endpoint_new(sc ? &sc->tls : &off, label, err, errlen);
        if (!h->servers[i].tls)
            return -1;
    }
    label_of(h, NULL, label, sizeof(label));
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

/* One entry per server the new files declare, the last for tls_client
 * (name ""). Keyed by name: a reload may add servers. */
typedef struct plan_entry {
    char name[CONF_NAME_MAX];
    tls_conf conf;
    SSL_CTX *ctx;
} plan_entry;

struct tls_reload_plan {
    size_t n;
    plan_entry *e;
};

void tls_host_reload_abandon(tls_reload_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        SSL_CTX_free(p->e[i].ctx);
        memset(p->e[i].conf.key_password, 0, sizeof(p->e[i].conf.key_password));
    }
    free(p->e);
    free(p);
}

/* What the running daemon was configured with for `name` ("" = client). */
static const tls_conf *running_conf(const rmq_host *h, const char *name)
{
    if (!name[0])
        return &h->conf.tls_client;
    const server_conf *sc = host_conf_server(&h->conf, name);
    return sc ? &sc->tls : NULL;
}

int tls_host_reload_prepare(rmq_host *h, const host_conf *nc, tls_reload_plan **out, char *msg,
                            size_t msglen)
{
    *out = NULL;
    tls_reload_plan *p = calloc(1, sizeof(*p));
    if (p) {
        p->n = nc->nservers + 1;
        p->e = calloc(p->n, sizeof(*p->e));
    }
    if (!p || !p->e) {
        tls_host_reload_abandon(p);
        snprintf(msg, msglen, "configuration not reloaded, nothing changed: out of memory");
        return -1;
    }
    for (size_t i = 0; i < p->n; i++) {
        plan_entry *e = &p->e[i];
        bool client = i == nc->nservers;
        snprintf(e->name, sizeof(e->name), "%s", client ? "" : nc->servers[i].name);
        e->conf = client ? nc->tls_client : nc->servers[i].tls;
        char why[1024], label[CONF_PATH_MAX + CONF_NAME_MAX + 32];
        label_of(h, client ? NULL : e->name, label, sizeof(label));
        const tls_conf *running = running_conf(h, e->name);
        if (running && tls_conf_keep_overrides(&e->conf, running, label, nc->conf_dir, why,
                                               sizeof(why)) != 0) {
            snprintf(msg, msglen, "configuration not reloaded, nothing changed: %s", why);
            tls_host_reload_abandon(p);
            return -1;
        }
        if (e->conf.mode == 0)
            continue;
        e->ctx = tls_ctx_build(&e->conf, why, sizeof(why));
        if (!e->ctx) {
            snprintf(msg, msglen, "configuration not reloaded, nothing changed: %s: ", label);
            size_t len = strlen(msg);
            snprintf(msg + len, msglen - len, "%s", why);
            tls_host_reload_abandon(p);
            return -1;
        }
    }
    *out = p;
    return 0;
}

void tls_host_reload_commit(rmq_host *h, tls_reload_plan *p, char *msg, size_t msglen)
{
    for (size_t i = 0; i < p->n; i++) {
        plan_entry *e = &p->e[i];
        tls_endpoint *ep = h->tls_client;
        if (e->name[0]) {
            server *s = host_server(h, e->name);
            if (!s)
                continue; /* not (yet) a server of this process */
            ep = tls_server_endpoint(s);
            if (!ep) {
                /* A server a reload declared: give it an endpoint now. */
                char err[256], label[CONF_PATH_MAX + CONF_NAME_MAX + 32];
                tls_conf off;
                tls_conf_defaults(&off, false);
                label_of(h, e->name, label, sizeof(label));
                ep = tls_endpoint_new(&off, label, err, sizeof(err));
                if (!ep)
                    continue;
                __atomic_store_n(&s->tls, ep, __ATOMIC_RELEASE);
            }
        }
        bool was_on = tls_endpoint_mode(ep) != 0;
        tls_endpoint_install(ep, &e->conf, e->ctx);
        e->ctx = NULL;
        if (was_on || e->conf.mode != 0) {
            size_t len = strlen(msg);
            if (len + 1 < msglen)
                snprintf(msg + len, msglen - len, "tls: %s%s%s: %s%s\n",
                         e->name[0] ? "servers." : "tls_client", e->name, e->name[0] ? ".tls" : "",
                         e->conf.client ? (e->conf.mode ? "enabled" : "disabled")
                                        : tls_mode_name(e->conf.mode),
                         e->conf.mode ? ", certificates re-read" : "");
        }
        tls_conf *cur = (tls_conf *)running_conf(h, e->name);
        if (cur)
            *cur = e->conf;
    }
    tls_host_reload_abandon(p);
}
