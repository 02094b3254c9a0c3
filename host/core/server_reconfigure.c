/* server_reconfigure.c — what reload-config (and SIGHUP) changes besides
 * plugins: servers added, moved to another address or removed, and the host
 * settings that do not depend on the number of I/O threads. A moved server
 * keeps accepting on its old socket until the new one listens; a port that
 * cannot be bound changes nothing. The -o overrides of the command line are
 * kept here and re-applied to every reload. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "message_text.h"

/* ---- -o overrides -------------------------------------------------------- */

int host_keep_overrides(rmq_host *h, char *const *kv, size_t n)
{
    if (n == 0)
        return 0;
    h->conf_overrides = calloc(n, sizeof(char *));
    if (!h->conf_overrides)
        return -1;
    for (size_t i = 0; i < n; i++) {
        h->conf_overrides[i] = strdup(kv[i]);
        if (!h->conf_overrides[i])
            return -1;
        h->nconf_overrides++;
    }
    return 0;
}

int host_apply_overrides(const rmq_host *h, host_conf *c, char *err, size_t errlen)
{
    for (size_t i = 0; i < h->nconf_overrides; i++)
        if (host_conf_override(c, h->conf_overrides[i], err, errlen) != 0)
            return -1;
    return 0;
}

/* ---- servers -------------------------------------------------------------- */

/* One listener to move: the new socket is bound before anything changes. */
typedef struct server_move {
    server *s;
    uv_os_sock_t fd;
    char spec[128];
    char bound_host[64];
    int bound_port;
} server_move;

struct server_plan {
    server_move *moves;
    size_t nmoves;
};

static void plan_free(server_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nmoves; i++)
        if (p->moves[i].fd >= 0)
            close(p->moves[i].fd);
    free(p->moves);
    free(p);
}

/* The spec names the address the server already listens on (e.g. the port
 * a ":0" picked, now written down): no move. */
static bool listens_at(const server *s, const char *spec)
{
    if (strcmp(s->listen_spec, spec) == 0)
        return true;
    char bound[128];
    bool v6 = strchr(s->bound_host, ':') != NULL;
    snprintf(bound, sizeof(bound), "%s%s%s:%d", v6 ? "[" : "", s->bound_host, v6 ? "]" : "",
             s->bound_port);
    return strcmp(bound, spec) == 0;
}

static bool server_will_listen(const host_conf *nc, const char *name)
{
    for (size_t i = 0; i < nc->nplugins; i++)
        if (nc->plugins[i].enabled && strcmp(nc->plugins[i].server, name) == 0)
            return true;
    return false;
}

static int trial_bind(rmq_host *h, const server_conf *sc, char *err, size_t errlen)
{
    server tmp;
    memset(&tmp, 0, sizeof(tmp));
    tmp.host = h;
    tmp.fd = -1;
    snprintf(tmp.name, sizeof(tmp.name), "%s", sc->name);
    snprintf(tmp.listen_spec, sizeof(tmp.listen_spec), "%s", sc->listen);
    if (server_bind(h, &tmp, err, errlen) != 0)
        return -1;
    close(tmp.fd);
    return 0;
}

int servers_prepare(rmq_host *h, const host_conf *nc, server_plan **out, char *msg, size_t msglen)
{
    *out = NULL;
    size_t added = 0;
    for (size_t i = 0; i < nc->nservers; i++)
        if (!host_server(h, nc->servers[i].name))
            added++;
    if (h->nservers + added > h->servers_cap) {
        snprintf(msg, msglen,
                 "configuration not reloaded, nothing changed: more than %zu servers need a "
                 "restart",
                 h->servers_cap);
        return -1;
    }
    server_plan *p = calloc(1, sizeof(*p));
    if (!p || !(p->moves = calloc(nc->nservers + 1, sizeof(*p->moves)))) {
        free(p);
        snprintf(msg, msglen, "configuration not reloaded, nothing changed: out of memory");
        return -1;
    }
    for (size_t i = 0; i < nc->nservers; i++) {
        const server_conf *sc = &nc->servers[i];
        server *s = host_server(h, sc->name);
        if ((!s || !s->listening) && server_will_listen(nc, sc->name)) {
            /* a plugin will bind it: make sure it can, before anything changes */
            char err[512];
            if (trial_bind(h, sc, err, sizeof(err)) != 0) {
                snprintf(msg, msglen, "configuration not reloaded, nothing changed: %s:%d: %s",
                         sc->file, sc->line, err);
                plan_free(p);
                return -1;
            }
            continue;
        }
        if (!s || !s->listening || listens_at(s, sc->listen))
            continue;
        /* bind on a scratch server: server_bind only fills these fields */
        server tmp;
        memset(&tmp, 0, sizeof(tmp));
        tmp.host = h;
        tmp.fd = -1;
        snprintf(tmp.name, sizeof(tmp.name), "%s", sc->name);
        snprintf(tmp.listen_spec, sizeof(tmp.listen_spec), "%s", sc->listen);
        char err[512];
        if (server_bind(h, &tmp, err, sizeof(err)) != 0) {
            snprintf(msg, msglen, "configuration not reloaded, nothing changed: %s:%d: %s",
                     sc->file, sc->line, err);
            plan_free(p);
            return -1;
        }
        server_move *m = &p->moves[p->nmoves++];
        m->s = s;
        m->fd = tmp.fd;
        snprintf(m->spec, sizeof(m->spec), "%s", sc->listen);
        snprintf(m->bound_host, sizeof(m->bound_host), "%s", tmp.bound_host);
        m->bound_port = tmp.bound_port;
    }
    *out = p;
    return 0;
}

/* The swap runs on loop 0, which owns the listeners' poll and timer
 * handles: close both, and once libuv has let go of them, watch the new
 * socket with the same handles. */
typedef struct swap_job {
    io_loop *l0;
    server_move *m;
    int pending_closes;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
} swap_job;

static void swap_finish(io_loop *l0, swap_job *j)
{
    server *s = j->m->s;
    close(s->fd);
    s->fd = j->m->fd;
    j->m->fd = -1;
    snprintf(s->listen_spec, sizeof(s->listen_spec), "%s", j->m->spec);
    snprintf(s->bound_host, sizeof(s->bound_host), "%s", j->m->bound_host);
    s->bound_port = j->m->bound_port;
    if (s->fd >= 0)
        server_poll_start(l0, s);
    pthread_mutex_lock(&j->mu);
    j->done = true;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

static void on_listener_handle_closed(uv_handle_t *hd)
{
    swap_job *j = hd->data;
    if (--j->pending_closes == 0)
        swap_finish(j->l0, j);
}

/* One of the old listener's handles on loop 0: the swap finishes when the
 * last of them has closed. */
static void close_listener_handle(swap_job *j, uv_handle_t *hd)
{
    hd->data = j;
    j->pending_closes++;
    uv_close(hd, on_listener_handle_closed);
}

static void swap_on_loop0(io_loop *l0, void *arg)
{
    swap_job *j = arg;
    server *s = j->m->s;
    j->l0 = l0;
    if (s->polling) {
        uv_poll_stop(&s->poll);
        close_listener_handle(j, (uv_handle_t *)&s->poll);
        s->polling = false;
    }
    if (s->backoff_inited) {
        uv_timer_stop(&s->accept_backoff);
        close_listener_handle(j, (uv_handle_t *)&s->accept_backoff);
        s->backoff_inited = false;
    }
    if (j->pending_closes == 0)
        swap_finish(l0, j);
}

/* Until loop 0 has finished the job, then its lock goes. No deadline: the
 * job lives in the caller's frame, so the caller must not return while
 * loop 0 can still run it (a stuck loop 0 blocks the reload). */
static void swap_wait_end(swap_job *j)
{
    pthread_mutex_lock(&j->mu);
    while (!j->done)
        pthread_cond_wait(&j->cv, &j->mu);
    pthread_mutex_unlock(&j->mu);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
}

static int swap_listener(rmq_host *h, server_move *m)
{
    swap_job j = {.m = m};
    pthread_mutex_init(&j.mu, NULL);
    pthread_cond_init(&j.cv, NULL);
    loop_task *t = calloc(1, sizeof(*t));
    if (!t)
        return -1;
    t->type = LT_CALL;
    t->fn = swap_on_loop0;
    t->arg = &j;
    loop_post(&h->loops[0], t);
    swap_wait_end(&j);
    return 0;
}

static void declare_server(rmq_host *h, const server_conf *sc)
{
    server *s = &h->servers[h->nservers];
    memset(s, 0, sizeof(*s));
    s->host = h;
    s->fd = -1;
    snprintf(s->name, sizeof(s->name), "%s", sc->name);
    snprintf(s->listen_spec, sizeof(s->listen_spec), "%s", sc->listen);
    s->idle_ms = sc->idle_seconds * 1000;
    s->protocol = sc->protocol;
    s->oneway_limit = h->servers[0].oneway_limit ? h->servers[0].oneway_limit : 256;
    s->async_limit = h->servers[0].async_limit ? h->servers[0].async_limit : 64;
    /* readers walk servers[0..nservers): the slot is complete before it counts */
    __atomic_store_n(&h->nservers, h->nservers + 1, __ATOMIC_RELEASE);
}

void servers_commit(rmq_host *h, const host_conf *nc, server_plan *plan, char *msg, size_t msglen)
{
    for (size_t i = 0; plan && i < plan->nmoves; i++) {
        server_move *m = &plan->moves[i];
        char old[128];
        snprintf(old, sizeof(old), "%s", m->s->listen_spec);
        swap_listener(h, m);
        msg_append(msg, msglen, "server %s moved from %s to %s:%d\n", m->s->name, old,
                   m->s->bound_host, m->s->bound_port);
        HLOG_INFO(h, "server %s moved from %s to %s:%d", m->s->name, old, m->s->bound_host,
                  m->s->bound_port);
    }
    for (size_t i = 0; i < nc->nservers; i++) {
        const server_conf *sc = &nc->servers[i];
        server *s = host_server(h, sc->name);
        if (!s) {
            declare_server(h, sc);
            msg_append(msg, msglen, "server %s declared (%s; listens once a plugin binds to it)\n",
                       sc->name, sc->listen);
            continue;
        }
        if (strcmp(s->listen_spec, sc->listen) != 0 && (!s->listening || listens_at(s, sc->listen)))
            snprintf(s->listen_spec, sizeof(s->listen_spec), "%s", sc->listen);
        int idle_ms = sc->idle_seconds * 1000;
        if (s->idle_ms != idle_ms) {
            __atomic_store_n(&s->idle_ms, idle_ms, __ATOMIC_RELAXED);
            msg_append(msg, msglen, "server %s: channel_max_idle_seconds %d\n", s->name,
                       sc->idle_seconds);
        }
    }
    plan_free(plan);
    if (h->started && host_write_listen_addrs(h) != 0)
        HLOG_WARN(h, "cannot rewrite %s/listen.addrs", h->conf.state_dir);
}

/* Stops accepting on loop 0, then closes the socket once the handles are
 * gone (the same dance as a move, without a new socket). */
static void retire_on_loop0(io_loop *l0, void *arg)
{
    swap_on_loop0(l0, arg);
}

void servers_retire_removed(rmq_host *h, const host_conf *nc, char *msg, size_t msglen)
{
    for (size_t i = 0; i < h->nservers; i++) {
        server *s = &h->servers[i];
        if (!s->listening || host_conf_server(nc, s->name))
            continue;
        /* a "move" to no socket: swap_finish closes the old one */
        server_move m = {.s = s, .fd = -1};
        snprintf(m.spec, sizeof(m.spec), "%s", s->listen_spec);
        swap_job j = {.m = &m};
        pthread_mutex_init(&j.mu, NULL);
        pthread_cond_init(&j.cv, NULL);
        loop_task *t = calloc(1, sizeof(*t));
        if (!t)
            continue;
        t->type = LT_CALL;
        t->fn = retire_on_loop0;
        t->arg = &j;
        s->listening = false; /* swap_finish must not poll fd -1 */
        loop_post(&h->loops[0], t);
        swap_wait_end(&j);
        msg_append(msg, msglen,
                   "server %s removed: no longer listening on %s:%d (open connections stay until "
                   "they close)\n",
                   s->name, s->bound_host, s->bound_port);
        HLOG_INFO(h, "server %s removed", s->name);
    }
    if (h->started && host_write_listen_addrs(h) != 0)
        HLOG_WARN(h, "cannot rewrite %s/listen.addrs", h->conf.state_dir);
}

/* ---- host settings -------------------------------------------------------- */

void host_settings_apply(rmq_host *h, const host_conf *nc, char *msg, size_t msglen)
{
    host_conf *c = &h->conf;
    /* need a restart: the daemon was built around them */
    const char *restart[4];
    size_t nr = 0;
    if (strcmp(c->state_dir, nc->state_dir))
        restart[nr++] = "state_dir";
    if (strcmp(c->admin_socket, nc->admin_socket))
        restart[nr++] = "admin_socket";
    if (c->io_threads != nc->io_threads)
        restart[nr++] = "io_threads";
    if (strcmp(c->metrics_listen, nc->metrics_listen))
        restart[nr++] = "metrics_listen";
    for (size_t i = 0; i < nr; i++)
        msg_append(msg, msglen, "warning: %s changed in %s; it applies at the next restart\n",
                   restart[i], c->host_file);

    if (strcmp(c->log_level, nc->log_level)) {
        int level = host_log_level_parse(nc->log_level);
        if (level >= 0) {
            __atomic_store_n(&h->log.level, level, __ATOMIC_RELAXED);
            snprintf(c->log_level, sizeof(c->log_level), "%s", nc->log_level);
            msg_append(msg, msglen, "log_level %s\n", c->log_level);
        }
    }
    if (strcmp(c->log_file, nc->log_file)) {
        int rc = nc->log_file[0] ? host_log_open_file(&h->log, nc->log_file) : 0;
        if (rc == 0 && nc->log_file[0]) {
            snprintf(c->log_file, sizeof(c->log_file), "%s", nc->log_file);
            msg_append(msg, msglen, "log_file %s\n", c->log_file);
        } else if (!nc->log_file[0]) {
            msg_append(msg, msglen, "warning: log_file removed; it applies at the next restart\n");
        } else {
            msg_append(msg, msglen, "warning: cannot open log_file %s: %s; log unchanged\n",
                       nc->log_file, strerror(-rc));
        }
    }
    if (strcmp(c->plugin_dir, nc->plugin_dir)) {
        snprintf(c->plugin_dir, sizeof(c->plugin_dir), "%s", nc->plugin_dir);
        msg_append(msg, msglen, "plugin_dir %s\n", c->plugin_dir[0] ? c->plugin_dir : "(default)");
    }
#define APPLY_NUM(field, fmt)                                                                      \
    if (c->field != nc->field) {                                                                   \
        __atomic_store_n(&c->field, nc->field, __ATOMIC_RELAXED);                                  \
        msg_append(msg, msglen, #field " " fmt "\n", nc->field);                                   \
    }
    APPLY_NUM(max_frame_bytes, "%ld")
    APPLY_NUM(write_high_water, "%ld")
    APPLY_NUM(write_low_water, "%ld")
    APPLY_NUM(drain_timeout_ms, "%d")
#undef APPLY_NUM
}
