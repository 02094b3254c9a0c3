/* host_lifecycle.c — start-up and shutdown order of the daemon: lock the
 * state directory, load plugins, bind the servers they need, start the
 * threads, init plugins, go live, accept; and the reverse on SIGTERM with a
 * bounded drain of in-flight requests. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <urcu.h>

#include "host.h"
#include "tls_host.h"

#define SERVER_ONEWAY_SEMAPHORE 256
#define SERVER_ASYNC_SEMAPHORE 64

server *host_server(rmq_host *h, const char *name)
{
    for (size_t i = 0; i < h->nservers; i++)
        if (strcmp(h->servers[i].name, name) == 0)
            return &h->servers[i];
    return NULL;
}

int host_init(rmq_host *h, const host_conf *conf, const char *exe_dir, char *err, size_t errlen)
{
    memset(h, 0, sizeof(*h));
    h->conf = *conf; /* takes ownership of the arrays */
    h->lock_fd = -1;
    snprintf(h->exe_dir, sizeof(h->exe_dir), "%s", exe_dir);
    int level = host_log_level_parse(h->conf.log_level);
    if (level < 0) {
        snprintf(err, errlen, "%s: log_level '%s' is not error, warn, info or debug",
                 h->conf.host_file, h->conf.log_level);
        return -1;
    }
    host_log_init(&h->log, level);
    host_api_fill(&h->api);
    pthread_mutex_init(&h->registry_mu, NULL);
    pthread_mutex_init(&h->local_async_mu, NULL);
    pthread_cond_init(&h->hold_cv, NULL);
    /* up to four frames of the largest size Java accepts stay pooled */
    frame_pool_init(&h->large_frames, 4 * (size_t)h->conf.max_frame_bytes);
    /* fixed slots: connections point at their server, and reload-config may
     * declare new servers */
    h->servers_cap = h->conf.nservers > HOST_SERVERS_MAX ? h->conf.nservers : HOST_SERVERS_MAX;
    h->servers = calloc(h->servers_cap + 1, sizeof(server));
    if (!h->servers) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    h->nservers = h->conf.nservers;
    for (size_t i = 0; i < h->nservers; i++) {
        server *s = &h->servers[i];
        s->host = h;
        s->fd = -1;
        s->vip_fd = -1;
        snprintf(s->name, sizeof(s->name), "%s", h->conf.servers[i].name);
        snprintf(s->vip_spec, sizeof(s->vip_spec), "%s", h->conf.servers[i].vip_listen);
        snprintf(s->listen_spec, sizeof(s->listen_spec), "%s", h->conf.servers[i].listen);
        s->idle_ms = h->conf.servers[i].idle_seconds * 1000;
        s->protocol = h->conf.servers[i].protocol;
        s->oneway_limit = SERVER_ONEWAY_SEMAPHORE;
        s->async_limit = SERVER_ASYNC_SEMAPHORE;
    }
    if (tls_host_init(h, err, errlen) != 0) { /* certificates: --check names a bad file */
        tls_host_destroy(h);
        free(h->servers);
        h->servers = NULL;
        host_conf_free(&h->conf);
        return -1;
    }
    for (size_t i = 0; i < h->conf.nplugins; i++) {
        plugin_conf *p = &h->conf.plugins[i];
        if (p->enabled && p->server[0]) {
            server *s = host_server(h, p->server);
            if (s)
                s->needed = true;
        }
    }
    return 0;
}

/* Connections are descriptors: the soft limit goes up to the hard one, and
 * the log says how many connections that leaves (the hard limit itself can
 * only be raised by a privileged parent, e.g. systemd's LimitNOFILE). */
static void raise_nofile(rmq_host *h)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    rlim_t old = rl.rlim_cur;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            rl.rlim_cur = old;
    }
    if (rl.rlim_cur == RLIM_INFINITY)
        return;
    HLOG_INFO(h,
              "open-file limit %lu (was %lu, hard limit %lu): connections are capped at "
              "fewer than %lu",
              (unsigned long)rl.rlim_cur, (unsigned long)old, (unsigned long)rl.rlim_max,
              (unsigned long)rl.rlim_cur);
}

static int add_live(rmq_host *h, plugin_inst *p)
{
    pthread_mutex_lock(&h->registry_mu);
    plugin_inst **np = realloc(h->plugins, (h->nplugins + 1) * sizeof(*np));
    if (!np) {
        pthread_mutex_unlock(&h->registry_mu);
        return RMQ_ENOMEM;
    }
    h->plugins = np;
    np[h->nplugins++] = p;
    p->state = PLUGIN_LIVE;
    pthread_mutex_unlock(&h->registry_mu);
    return 0;
}

int host_write_listen_addrs(rmq_host *h)
{
    char buf[4096];
    size_t n = 0;
    for (size_t i = 0; i < h->nservers; i++) {
        server *s = &h->servers[i];
        if (!s->listening)
            continue;
        bool v6 = strchr(s->bound_host, ':') != NULL;
        int w = snprintf(buf + n, sizeof(buf) - n, "%s %s%s%s:%d\n", s->name, v6 ? "[" : "",
                         s->bound_host, v6 ? "]" : "", s->bound_port);
        if (w < 0 || (size_t)w >= sizeof(buf) - n)
            break;
        n += (size_t)w;
        if (s->vip_fd < 0)
            continue;
        v6 = strchr(s->vip_bound_host, ':') != NULL;
        w = snprintf(buf + n, sizeof(buf) - n, "%s.vip %s%s%s:%d\n", s->name, v6 ? "[" : "",
                     s->vip_bound_host, v6 ? "]" : "", s->vip_bound_port);
        if (w < 0 || (size_t)w >= sizeof(buf) - n)
            break;
        n += (size_t)w;
    }
    char path[CONF_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/listen.addrs", h->conf.state_dir);
    return atomic_file_write(path, buf, n);
}

int host_start(rmq_host *h, char *err, size_t errlen)
{
    if (h->conf.log_file[0]) {
        int rc = host_log_open_file(&h->log, h->conf.log_file);
        if (rc != 0) {
            snprintf(err, errlen, "cannot open log_file %s: %s", h->conf.log_file, strerror(-rc));
            return -1;
        }
    }
    if (state_dir_prepare(h, err, errlen) != 0)
        return -1;
    raise_nofile(h);
    h->started_at_ms = host_wall_ms();
    atomic_store(&h->next_opaque, 1);

    /* Load every enabled plugin first: a bad .so or setting stops start-up
     * before any port is opened (unless the plugin is optional). */
    plugin_inst **loaded = calloc(h->conf.nplugins + 1, sizeof(*loaded));
    if (!loaded) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t nloaded = 0;
    for (size_t i = 0; i < h->conf.nplugins; i++) {
        plugin_conf *pc = &h->conf.plugins[i];
        if (!pc->enabled)
            continue;
        char perr[1024];
        plugin_inst *p = plugin_load(h, pc, 1, perr, sizeof(perr));
        if (!p) {
            if (pc->optional) {
                HLOG_WARN(h, "%s; continuing without it (optional)", perr);
                server *s = host_server(h, pc->server);
                (void)s;
                continue;
            }
            snprintf(err, errlen, "%s", perr);
            goto fail;
        }
        p->srv = pc->server[0] ? host_server(h, pc->server) : NULL;
        loaded[nloaded++] = p;
    }
    for (size_t i = 0; i < h->nservers; i++) {
        server *s = &h->servers[i];
        bool used = false;
        for (size_t k = 0; k < nloaded; k++)
            used |= loaded[k]->srv == s;
        if (used && server_bind(h, s, err, errlen) != 0)
            goto fail;
    }

    h->nloops = h->conf.io_threads > 0 ? h->conf.io_threads : (int)uv_available_parallelism();
    if (h->nloops < 1)
        h->nloops = 1;
    h->loops = calloc((size_t)h->nloops, sizeof(io_loop));
    if (!h->loops) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (int i = 0; i < h->nloops; i++) {
        if (io_loop_start(&h->loops[i], h, i) != 0 || io_loop_run_thread(&h->loops[i]) != 0) {
            snprintf(err, errlen, "cannot start io thread %d", i);
            h->nloops = i;
            goto fail;
        }
    }
    /* Wait until every loop knows its thread id (used to refuse blocking
     * calls on I/O threads). */
    for (int i = 0; i < h->nloops; i++)
        while (!h->loops[i].tid)
            usleep(100);
    if (timers_start(h) != 0) {
        snprintf(err, errlen, "cannot start the housekeeping thread");
        goto fail;
    }
    for (size_t i = 0; i < h->nservers; i++)
        if (h->servers[i].listening &&
            event_thread_start(&h->servers[i].events, &h->servers[i]) != 0) {
            snprintf(err, errlen, "cannot start the event thread of server %s", h->servers[i].name);
            goto fail;
        }

    for (size_t i = 0; i < nloaded; i++) {
        plugin_inst *p = loaded[i];
        char perr[1024];
        if (plugin_run_init(p, perr, sizeof(perr)) != 0) {
            if (p->conf.optional) {
                HLOG_WARN(h, "%s; continuing without it (optional)", perr);
                plugin_unload(p);
                loaded[i] = NULL;
                continue;
            }
            snprintf(err, errlen, "%s", perr);
            goto fail;
        }
        if (add_live(h, p) != 0) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        loaded[i] = NULL;
        HLOG_INFO(h, "plugin %s %s loaded (server %s, generation %u)", p->conf.name,
                  p->desc->version ? p->desc->version : "?", p->srv ? p->srv->name : "-",
                  p->generation);
    }
    free(loaded);
    loaded = NULL;
    for (size_t i = 0; i < h->nservers; i++)
        if (h->servers[i].listening)
            server_rebuild_bindings(h, &h->servers[i]);
    for (size_t i = 0; i < h->nplugins; i++)
        timers_activate(h, h->plugins[i]);
    for (size_t i = 0; i < h->nservers; i++) {
        server *s = &h->servers[i];
        if (!s->listening)
            continue;
        server_start_accepting(h, s);
        bool v6 = strchr(s->bound_host, ':') != NULL;
        HLOG_INFO(h, "server %s listening on %s%s%s:%d", s->name, v6 ? "[" : "", s->bound_host,
                  v6 ? "]" : "", s->bound_port);
        if (s->vip_fd >= 0)
            HLOG_INFO(h, "server %s also listening on %s (VIP)", s->name, s->vip_spec);
    }
    h->started = true;
    if (host_write_listen_addrs(h) != 0)
        HLOG_WARN(h, "cannot write %s/listen.addrs", h->conf.state_dir);
    return 0;
fail:
    if (loaded) {
        for (size_t i = 0; i < nloaded; i++)
            if (loaded[i])
                plugin_unload(loaded[i]);
        free(loaded);
    }
    return -1;
}

static void post_all(rmq_host *h, loop_task_type type)
{
    for (int i = 0; i < h->nloops; i++) {
        loop_task *t = calloc(1, sizeof(*t));
        if (!t)
            continue;
        t->type = type;
        loop_post(&h->loops[i], t);
    }
}

void host_shutdown(rmq_host *h)
{
    if (h->stopping)
        return;
    h->stopping = true;
    if (h->nloops > 0) {
        for (size_t i = 0; i < h->nservers; i++)
            if (h->servers[i].listening)
                server_stop_accepting(h, &h->servers[i]);
        post_all(h, LT_STOP_READING);
        /* Requests a plugin holds on purpose (long-polling PULLs) would keep
         * the drain below waiting for their own timeout. */
        for (size_t i = h->nplugins; i-- > 0;)
            plugin_quiesce(h->plugins[i]);
        /* What was accepted is answered; bounded so a stuck handler cannot
         * keep the process alive. */
        uint64_t deadline = host_now_ms() + (uint64_t)h->conf.drain_timeout_ms;
        while (atomic_load(&h->inflight_requests) > 0 && host_now_ms() < deadline)
            usleep(2000);
        if (atomic_load(&h->inflight_requests) > 0)
            HLOG_WARN(h, "%ld requests still in flight after %d ms; stopping anyway",
                      atomic_load(&h->inflight_requests), h->conf.drain_timeout_ms);
    }
    /* Plugins leave in reverse order of loading; loops still run so fini may
     * talk to the network (e.g. UNREGISTER_BROKER). */
    for (size_t i = h->nplugins; i-- > 0;) {
        plugin_inst *p = h->plugins[i];
        pthread_mutex_lock(&h->registry_mu);
        p->state = PLUGIN_DRAINING;
        pthread_mutex_unlock(&h->registry_mu);
        if (p->srv && p->srv->listening)
            server_rebuild_bindings(h, p->srv);
        plugin_unload(p);
        pthread_mutex_lock(&h->registry_mu);
        h->nplugins = i;
        pthread_mutex_unlock(&h->registry_mu);
    }
    for (size_t i = 0; i < h->nservers; i++)
        event_thread_stop(&h->servers[i].events);
    if (h->nloops > 0) {
        post_all(h, LT_STOP);
        for (int i = 0; i < h->nloops; i++)
            io_loop_join(&h->loops[i]);
        if (h->timer_thread)
            timers_stop(h);
    }
    for (size_t i = 0; i < h->nservers; i++) {
        server *s = &h->servers[i];
        /* no I/O loop runs any more: nothing posts channel events */
        event_thread_destroy(&s->events);
        server_close_listeners(s);
        server_bindings *b = rcu_xchg_pointer(&s->bindings, NULL);
        bindings_free(b);
    }
    char path[CONF_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/listen.addrs", h->conf.state_dir);
    unlink(path);
}

void host_destroy(rmq_host *h)
{
    free(h->plugins);
    h->plugins = NULL;
    free(h->loops);
    h->loops = NULL;
    tls_host_destroy(h);
    free(h->servers);
    h->servers = NULL;
    if (h->lock_fd >= 0)
        close(h->lock_fd);
    host_conf_free(&h->conf);
    pthread_mutex_destroy(&h->registry_mu);
    pthread_mutex_destroy(&h->local_async_mu);
    pthread_cond_destroy(&h->hold_cv);
    frame_pool_destroy(&h->large_frames);
    for (size_t i = 0; i < h->nconf_overrides; i++)
        free(h->conf_overrides[i]);
    free(h->conf_overrides);
    host_log_close(&h->log);
}
