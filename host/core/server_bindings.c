/* server_bindings.c — builds the immutable dispatch table of a server from
 * the live plugin generations bound to it and publishes it with RCU, so I/O
 * threads look codes up without locks while a reload swaps generations. */
#include <stdlib.h>
#include <string.h>
#include <urcu.h>

#include "host.h"

static int cmp_code(const void *a, const void *b)
{
    int32_t x = ((const code_entry *)a)->code, y = ((const code_entry *)b)->code;
    return (x > y) - (x < y);
}

const proc_entry *bindings_lookup(const server_bindings *b, int32_t code)
{
    const proc_entry *e = NULL;
    if (code >= 0 && code < PROC_DIRECT_CODES) {
        e = &b->direct[code];
    } else {
        size_t lo = 0, hi = b->nsparse;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (b->sparse[mid].code < code)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < b->nsparse && b->sparse[lo].code == code)
            e = &b->sparse[lo].e;
    }
    if (e && e->fn)
        return e;
    return b->deflt.fn ? &b->deflt : NULL;
}

/* Whether `e` goes into `slot`. A fallback binding (RMQ_PROC_FALLBACK)
 * yields to a plain one whatever the plugin order, so the table is the same
 * after any sequence of loads and reloads; between two plain (or two
 * fallback) bindings the later plugin wins, with a warning. */
static bool bindings_take_slot(rmq_host *h, const server *s, const proc_entry *slot,
                               const proc_entry *e, int32_t code)
{
    if (!slot->fn)
        return true;
    bool slot_fb = (slot->flags & RMQ_PROC_FALLBACK) != 0;
    bool e_fb = (e->flags & RMQ_PROC_FALLBACK) != 0;
    if (slot_fb != e_fb)
        return slot_fb;
    HLOG_WARN(h, "server %s: code %d registered by %s replaces %s's", s->name, code,
              e->plugin->conf.name, slot->plugin->conf.name);
    return true;
}

static int cmp_grpc(const void *a, const void *b)
{
    return strcmp(((const grpc_method_entry *)a)->path, ((const grpc_method_entry *)b)->path);
}

const grpc_method_entry *bindings_lookup_grpc(const server_bindings *b, const char *path)
{
    size_t lo = 0, hi = b->ngrpc;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(b->grpc[mid].path, path);
        if (c == 0)
            return &b->grpc[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void bindings_free(server_bindings *b)
{
    if (!b)
        return;
    free(b->grpc);
    free(b->sparse);
    free(b->rejects);
    free(b->listeners);
    free(b->hooks);
    free(b);
}

int server_rebuild_bindings(rmq_host *h, server *s)
{
    server_bindings *b = calloc(1, sizeof(*b));
    if (!b)
        return RMQ_ENOMEM;
    size_t nsparse = 0, nl = 0, nh = 0, nr = 0, ng = 0;
    for (size_t i = 0; i < h->nplugins; i++) {
        plugin_inst *p = h->plugins[i];
        if (p->srv != s || p->state != PLUGIN_LIVE)
            continue;
        for (size_t k = 0; k < p->nprocs; k++)
            if (p->procs[k].code < 0 || p->procs[k].code >= PROC_DIRECT_CODES)
                nsparse++;
        nl += p->nlisteners;
        nh += p->nhooks;
        ng += p->ngrpc_methods;
        nr += p->reject.fn != NULL;
    }
    b->sparse = calloc(nsparse + 1, sizeof(code_entry));
    b->listeners = calloc(nl + 1, sizeof(listener_entry));
    b->hooks = calloc(nh + 1, sizeof(hook_entry));
    b->rejects = calloc(nr + 1, sizeof(reject_entry));
    b->grpc = calloc(ng + 1, sizeof(grpc_method_entry));
    if (!b->sparse || !b->listeners || !b->hooks || !b->rejects || !b->grpc) {
        bindings_free(b);
        return RMQ_ENOMEM;
    }
    for (size_t i = 0; i < h->nplugins; i++) {
        plugin_inst *p = h->plugins[i];
        if (p->srv != s || p->state != PLUGIN_LIVE)
            continue;
        for (size_t k = 0; k < p->nprocs; k++) {
            staged_proc *sp = &p->procs[k];
            proc_entry *slot = NULL;
            if (sp->code >= 0 && sp->code < PROC_DIRECT_CODES) {
                slot = &b->direct[sp->code];
            } else {
                for (size_t j = 0; j < b->nsparse && !slot; j++)
                    if (b->sparse[j].code == sp->code)
                        slot = &b->sparse[j].e;
                if (!slot) {
                    b->sparse[b->nsparse] = (code_entry){sp->code, {0}};
                    slot = &b->sparse[b->nsparse++].e;
                }
            }
            if (bindings_take_slot(h, s, slot, &sp->e, sp->code))
                *slot = sp->e;
        }
        if (p->deflt.fn)
            b->deflt = p->deflt;
        if (p->reject.fn)
            b->rejects[b->nrejects++] = p->reject;
        for (size_t k = 0; k < p->nlisteners; k++)
            b->listeners[b->nlisteners++] = p->listeners[k];
        for (size_t k = 0; k < p->nhooks; k++)
            b->hooks[b->nhooks++] = p->hooks[k];
        /* a path bound by two plugins: the later one wins, with a warning */
        for (size_t k = 0; k < p->ngrpc_methods; k++) {
            grpc_method_entry *slot = NULL;
            for (size_t j = 0; j < b->ngrpc && !slot; j++)
                if (strcmp(b->grpc[j].path, p->grpc_methods[k].path) == 0)
                    slot = &b->grpc[j];
            if (slot)
                HLOG_WARN(h, "server %s: gRPC method %s registered by %s replaces %s's", s->name,
                          slot->path, p->conf.name, slot->plugin->conf.name);
            else
                slot = &b->grpc[b->ngrpc++];
            *slot = p->grpc_methods[k];
        }
    }
    qsort(b->sparse, b->nsparse, sizeof(code_entry), cmp_code);
    qsort(b->grpc, b->ngrpc, sizeof(grpc_method_entry), cmp_grpc);
    server_bindings *old = rcu_xchg_pointer(&s->bindings, b);
    if (old) {
        synchronize_rcu();
        bindings_free(old);
    }
    return 0;
}
