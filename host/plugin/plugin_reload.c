/* plugin_reload.c — hot reload of one plugin generation under traffic, and
 * starting/stopping plugins in a running daemon. Runs on the control thread
 * only; never parses configuration files and never talks to the admin
 * socket (admin/ decides what to do, this file does it without losing a
 * request). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_reload.h"

static void say(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *msg, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
}

bool plugin_hold_request(plugin_inst *p, rmq_request *req)
{
    rmq_host *h = p->host;
    pthread_mutex_lock(&h->registry_mu);
    bool held = atomic_load(&p->held);
    if (held) {
        req->held_next = NULL;
        if (p->held_tail)
            p->held_tail->held_next = req;
        else
            p->held_head = req;
        p->held_tail = req;
    }
    pthread_mutex_unlock(&h->registry_mu);
    return held;
}

/* Ends the hold and hands every queued request to whatever the server's
 * bindings now say (the new generation after a swap, the old one after a
 * rollback); service consumers and event publishers waiting for the swap go
 * on. */
static size_t hold_release(plugin_inst *p)
{
    rmq_host *h = p->host;
    pthread_mutex_lock(&h->registry_mu);
    atomic_store(&p->held, false);
    rmq_request *list = p->held_head;
    p->held_head = p->held_tail = NULL;
    pthread_cond_broadcast(&h->hold_cv);
    pthread_mutex_unlock(&h->registry_mu);
    size_t n = 0;
    while (list) {
        rmq_request *next = list->held_next;
        list->held_next = NULL;
        dispatch_resume(list);
        list = next;
        n++;
    }
    return n;
}

/* Polls: inflight is a plain counter bumped on hot paths, not worth a
 * condition variable for an operation an operator starts by hand. */
static bool wait_drained(plugin_inst *p, int timeout_ms)
{
    uint64_t deadline = host_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
    while (atomic_load(&p->inflight) > 0) {
        if (host_now_ms() >= deadline)
            return false;
        usleep(100);
    }
    return true;
}

/* Undo timers_cancel_plugin after a refused reload: the old generation goes
 * on serving with its timers. */
static void timers_revive(rmq_host *h, plugin_inst *p)
{
    if (!p->timers)
        return;
    pthread_mutex_lock(&h->timer_mu);
    for (timer_rec *t = p->timers; t; t = t->next) {
        atomic_store(&t->cancelled, false);
        atomic_store(&t->running, 0);
        t->closed = false;
        t->started = false;
    }
    pthread_mutex_unlock(&h->timer_mu);
    timers_activate(h, p);
}

plugin_inst *plugin_find_live(rmq_host *h, const char *name)
{
    plugin_inst *found = NULL;
    pthread_mutex_lock(&h->registry_mu);
    for (size_t i = 0; i < h->nplugins && !found; i++)
        if (h->plugins[i]->state == PLUGIN_LIVE && strcmp(h->plugins[i]->conf.name, name) == 0)
            found = h->plugins[i];
    pthread_mutex_unlock(&h->registry_mu);
    return found;
}

static int retire(rmq_host *h, plugin_retired *r, plugin_inst *old)
{
    /* A short grace: usually only a response being encoded is left. */
    if (wait_drained(old, 200)) {
        plugin_unload(old);
        return 0;
    }
    plugin_inst **ni = realloc(r->items, (r->n + 1) * sizeof(*ni));
    if (!ni) {
        plugin_unload(old); /* waits: better late than leaking a mapped .so */
        return 0;
    }
    r->items = ni;
    ni[r->n++] = old;
    HLOG_WARN(h,
              "plugin %s generation %u still referenced (%ld in flight: requests, timer "
              "ticks, service references or pending calls); unloaded once released",
              old->conf.name, old->generation, atomic_load(&old->inflight));
    return 1;
}

size_t plugin_retired_sweep(rmq_host *h, plugin_retired *r, char *why, size_t whylen)
{
    size_t keep = 0;
    if (why && whylen)
        why[0] = 0;
    for (size_t i = 0; i < r->n; i++) {
        plugin_inst *p = r->items[i];
        long n = atomic_load(&p->inflight);
        if (n == 0) {
            HLOG_INFO(h, "plugin %s generation %u released; unloading", p->conf.name,
                      p->generation);
            plugin_unload(p);
            continue;
        }
        if (keep == 0 && why && whylen)
            say(why, whylen, "plugin %s generation %u: %ld references left", p->conf.name,
                p->generation, n);
        r->items[keep++] = p;
    }
    r->n = keep;
    if (keep == 0) {
        free(r->items);
        r->items = NULL;
    }
    return keep;
}

void plugin_retired_drain(rmq_host *h, plugin_retired *r)
{
    (void)h;
    for (size_t i = 0; i < r->n; i++)
        plugin_unload(r->items[i]);
    free(r->items);
    r->items = NULL;
    r->n = 0;
}

/* The refused-reload path: everything the old generation had is restored
 * before the new one is thrown away. */
static int refuse(rmq_host *h, plugin_inst *old, plugin_inst *np, bool held, char *msg,
                  size_t msglen, const char *why)
{
    if (held) {
        timers_revive(h, old);
        /* it serves on: it may hold gRPC calls and call asynchronously again */
        atomic_store(&old->quiesced, false);
        hold_release(old);
    }
    if (np)
        plugin_unload(np);
    say(msg, msglen, "reload of %s refused: %s; generation %u keeps serving", old->conf.name, why,
        old->generation);
    HLOG_ERROR(h, "%s", msg);
    return -1;
}

int plugin_reload(rmq_host *h, plugin_retired *r, const char *name, const plugin_conf *pc,
                  char *msg, size_t msglen)
{
    plugin_inst *old = plugin_find_live(h, name);
    if (!old) {
        say(msg, msglen, "no running plugin named '%s'", name);
        return -1;
    }
    const plugin_conf *use = pc ? pc : &old->conf;
    char err[1536];
    if (strcmp(use->server, old->conf.server) != 0) {
        say(err, sizeof(err), "its server changes from '%s' to '%s' (disable and enable it)",
            old->conf.server, use->server);
        return refuse(h, old, NULL, false, msg, msglen, err);
    }
    /* 1. the new generation is loaded and inited while the old one serves */
    plugin_inst *np = plugin_load(h, use, old->generation + 1, err, sizeof(err));
    if (!np)
        return refuse(h, old, NULL, false, msg, msglen, err);
    np->srv = old->srv;
    if (plugin_run_init(np, err, sizeof(err)) != 0)
        return refuse(h, old, np, false, msg, msglen, err);

    /* 2. hold new requests, stop timers, drain what runs */
    uint64_t hold_ns = request_stats_now_ns();
    atomic_store(&old->held, true);
    timers_cancel_plugin(h, old);
    /* what the old generation deferred is answered now, not at its timer;
     * its gRPC calls held and local calls pending end too (plugin_quiesce) */
    plugin_quiesce(old);
    if (!wait_drained(old, h->conf.drain_timeout_ms)) {
        say(err, sizeof(err), "generation %u did not drain within %d ms (%ld in flight)",
            old->generation, h->conf.drain_timeout_ms, atomic_load(&old->inflight));
        return refuse(h, old, np, true, msg, msglen, err);
    }

    /* 3. state transfer; the blob carries the exporter's format version */
    char warn[256] = "";
    if (old->desc->export_state && np->desc->import_state) {
        void *blob = NULL;
        size_t len = 0;
        int rc = old->desc->export_state((rmq_plugin_ctx *)old, &blob, &len);
        if (rc != 0) {
            free(blob);
            say(err, sizeof(err), "generation %u could not export its state: %s", old->generation,
                rmq_strerror(rc));
            return refuse(h, old, np, true, msg, msglen, err);
        }
        rc = np->desc->import_state((rmq_plugin_ctx *)np, old->desc->state_version, blob, len);
        free(blob);
        if (rc != 0) {
            say(err, sizeof(err), "the new %s %s refused state format version %u of %s: %s",
                np->desc->name, np->desc->version ? np->desc->version : "?",
                old->desc->state_version, old->desc->version ? old->desc->version : "?",
                rmq_strerror(rc));
            return refuse(h, old, np, true, msg, msglen, err);
        }
    } else {
        say(warn, sizeof(warn), "; warning: %s has no state export/import, its state is reset",
            name);
        HLOG_WARN(h, "plugin %s has no state export/import: its state is reset by the reload",
                  name);
    }

    /* 4. swap, release the held requests to the new generation */
    pthread_mutex_lock(&h->registry_mu);
    for (size_t i = 0; i < h->nplugins; i++)
        if (h->plugins[i] == old)
            h->plugins[i] = np;
    np->state = PLUGIN_LIVE;
    old->state = PLUGIN_DRAINING;
    atomic_store(&np->served, atomic_load(&old->served));
    pthread_mutex_unlock(&h->registry_mu);
    if (np->srv && np->srv->listening)
        server_rebuild_bindings(h, np->srv);
    timers_activate(h, np);
    size_t released = hold_release(old);
    uint64_t held_us = (request_stats_now_ns() - hold_ns) / 1000u;

    /* 5. the old generation goes once nothing refers to it (retire may free
     * it: nothing of `old` is read after) */
    uint32_t old_gen = old->generation;
    int retired = retire(h, r, old);
    say(msg, msglen,
        "%s reloaded: generation %u -> %u (%s %s); requests held %llu us, %zu "
        "released to the new generation%s%s",
        name, old_gen, np->generation, np->desc->name, np->desc->version ? np->desc->version : "?",
        (unsigned long long)held_us, released,
        retired ? "; the old generation is still referenced and will be unloaded once released"
                : "",
        warn);
    HLOG_INFO(h, "%s", msg);
    return 0;
}

static void unbind_server(server *s)
{
    event_thread_stop(&s->events);
    server_close_listeners(s);
    s->listening = false;
}

int plugin_start(rmq_host *h, const plugin_conf *pc, char *msg, size_t msglen)
{
    if (plugin_find_live(h, pc->name)) {
        say(msg, msglen, "plugin %s is already running", pc->name);
        return -1;
    }
    server *s = NULL;
    if (pc->server[0] && !(s = host_server(h, pc->server))) {
        say(msg, msglen,
            "%s:%d: plugin '%s' binds to server '%s', which the running host.conf "
            "does not declare (a new server needs a restart)",
            pc->file, pc->line, pc->name, pc->server);
        return -1;
    }
    char err[1536];
    plugin_inst *p = plugin_load(h, pc, 1, err, sizeof(err));
    if (!p) {
        say(msg, msglen, "cannot start %s: %s", pc->name, err);
        return -1;
    }
    p->srv = s;
    bool bound_now = false;
    if (s && !s->listening) {
        if (server_bind(h, s, err, sizeof(err)) != 0) {
            plugin_unload(p);
            say(msg, msglen, "cannot start %s: %s", pc->name, err);
            return -1;
        }
        bound_now = true;
        if (!event_thread_running(&s->events) && event_thread_start(&s->events, s) != 0) {
            unbind_server(s);
            plugin_unload(p);
            say(msg, msglen, "cannot start %s: no event thread for server %s", pc->name, s->name);
            return -1;
        }
    }
    if (plugin_run_init(p, err, sizeof(err)) != 0) {
        plugin_unload(p);
        if (bound_now)
            unbind_server(s);
        say(msg, msglen, "cannot start %s: %s", pc->name, err);
        return -1;
    }
    pthread_mutex_lock(&h->registry_mu);
    plugin_inst **np = realloc(h->plugins, (h->nplugins + 1) * sizeof(*np));
    if (np) {
        h->plugins = np;
        np[h->nplugins++] = p;
        p->state = PLUGIN_LIVE;
    }
    pthread_mutex_unlock(&h->registry_mu);
    if (!np) {
        plugin_unload(p);
        if (bound_now)
            unbind_server(s);
        say(msg, msglen, "cannot start %s: out of memory", pc->name);
        return -1;
    }
    if (s)
        server_rebuild_bindings(h, s);
    timers_activate(h, p);
    if (bound_now) {
        s->needed = true;
        server_start_accepting(h, s);
        if (host_write_listen_addrs(h) != 0)
            HLOG_WARN(h, "cannot rewrite %s/listen.addrs", h->conf.state_dir);
    }
    if (s)
        say(msg, msglen, "plugin %s %s started (server %s on %s:%d, generation %u)", pc->name,
            p->desc->version ? p->desc->version : "?", s->name, s->bound_host, s->bound_port,
            p->generation);
    else
        say(msg, msglen, "plugin %s %s started (no server, generation %u)", pc->name,
            p->desc->version ? p->desc->version : "?", p->generation);
    HLOG_INFO(h, "%s", msg);
    return 0;
}

int plugin_stop(rmq_host *h, plugin_retired *r, const char *name, char *msg, size_t msglen)
{
    plugin_inst *p = plugin_find_live(h, name);
    if (!p) {
        say(msg, msglen, "no running plugin named '%s'", name);
        return -1;
    }
    pthread_mutex_lock(&h->registry_mu);
    size_t k = 0;
    for (size_t i = 0; i < h->nplugins; i++)
        if (h->plugins[i] != p)
            h->plugins[k++] = h->plugins[i];
    h->nplugins = k;
    p->state = PLUGIN_DRAINING;
    pthread_mutex_unlock(&h->registry_mu);
    if (p->srv && p->srv->listening)
        server_rebuild_bindings(h, p->srv);
    timers_cancel_plugin(h, p);
    plugin_quiesce(p); /* before the drain, as for a reload */
    uint32_t gen = p->generation;
    int retired =
        wait_drained(p, h->conf.drain_timeout_ms) ? (plugin_unload(p), 0) : retire(h, r, p);
    say(msg, msglen, "plugin %s stopped (generation %u)%s", name, gen,
        retired ? "; still referenced, unloaded once released" : "");
    HLOG_INFO(h, "%s", msg);
    return 0;
}
