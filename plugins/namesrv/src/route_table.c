/* route_table.c — RouteInfoManager semantics: registration, un-registration,
 * channel destruction, expiry and admin edits of the route tables. Owns the
 * tables and the list of topics whose encoded route went stale; must not
 * encode, lock, log or do I/O (callers do). */
#include "route_table.h"

#include <stdlib.h>
#include <string.h>

#include "broker_topic_index.h"

/* ---- small helpers -------------------------------------------------------- */

static char *dupstr(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The QueueData's broker names belong to the broker-topic index. */
static void topic_free(topic_entry *te)
{
    free(te->qds);
    free(te->name);
    free(te);
}

static void broker_free(broker_data *bd)
{
    for (size_t i = 0; i < bd->naddr; i++)
        free(bd->addrs[i].addr);
    free(bd->addrs);
    free(bd->frames);
    free(bd->name);
    free(bd->cluster);
    free(bd);
}

static void cluster_free(cluster_entry *ce)
{
    for (size_t i = 0; i < ce->n; i++)
        free(ce->brokers[i]);
    free(ce->brokers);
    free(ce->name);
    free(ce);
}

static void live_free(live_info *li)
{
    free(li->addr);
    free(li->ha_addr);
    free(li);
}

static void filter_free(filter_entry *fe)
{
    for (size_t i = 0; i < fe->n; i++)
        free(fe->servers[i]);
    free(fe->servers);
    free(fe->addr);
    free(fe);
}

void route_table_init(route_table *rt, int64_t default_timeout_ms)
{
    memset(rt, 0, sizeof(*rt));
    rmq_str_map_init(&rt->topics);
    rmq_str_map_init(&rt->brokers);
    rmq_str_map_init(&rt->clusters);
    rmq_str_map_init(&rt->live);
    rmq_str_map_init(&rt->filters);
    rmq_str_map_init(&rt->broker_topics);
    rt->default_timeout_ms = default_timeout_ms;
}

void route_table_destroy(route_table *rt)
{
    rmq_str_map_iter it;
    void *v;
    rmq_str_map_iter_init(&it, &rt->topics);
    while (rmq_str_map_iter_next(&it, NULL, &v))
        topic_free(v);
    rmq_str_map_iter_init(&it, &rt->brokers);
    while (rmq_str_map_iter_next(&it, NULL, &v))
        broker_free(v);
    rmq_str_map_iter_init(&it, &rt->clusters);
    while (rmq_str_map_iter_next(&it, NULL, &v))
        cluster_free(v);
    rmq_str_map_iter_init(&it, &rt->live);
    while (rmq_str_map_iter_next(&it, NULL, &v))
        live_free(v);
    rmq_str_map_iter_init(&it, &rt->filters);
    while (rmq_str_map_iter_next(&it, NULL, &v))
        filter_free(v);
    broker_topics_clear(&rt->broker_topics);
    rmq_str_map_destroy(&rt->topics);
    rmq_str_map_destroy(&rt->brokers);
    rmq_str_map_destroy(&rt->clusters);
    rmq_str_map_destroy(&rt->live);
    rmq_str_map_destroy(&rt->filters);
    for (size_t i = 0; i < rt->ndirty; i++)
        free(rt->dirty[i]);
    free(rt->dirty);
    memset(rt, 0, sizeof(*rt));
}

void register_result_free(register_result *r)
{
    free(r->master_addr);
    free(r->ha_addr);
    r->master_addr = NULL;
    r->ha_addr = NULL;
}

/* ---- dirty tracking ------------------------------------------------------- */

static void push_dirty_name(route_table *rt, const char *name)
{
    if (rt->ndirty == rt->dirty_cap) {
        size_t nc = rt->dirty_cap ? rt->dirty_cap * 2 : 64;
        char **d = realloc(rt->dirty, nc * sizeof(*d));
        if (!d) {
            rt->all_dirty = true; /* degrade to a full rebuild rather than lose a change */
            return;
        }
        rt->dirty = d;
        rt->dirty_cap = nc;
    }
    char *copy = strdup(name);
    if (!copy) {
        rt->all_dirty = true;
        return;
    }
    rt->dirty[rt->ndirty++] = copy;
}

static void mark_topic(route_table *rt, topic_entry *te)
{
    if (te->dirty)
        return;
    te->dirty = true;
    push_dirty_name(rt, te->name);
}

void route_table_mark_dirty(route_table *rt, const char *topic)
{
    topic_entry *te = rmq_str_map_get(&rt->topics, topic);
    if (te)
        mark_topic(rt, te);
    else
        push_dirty_name(rt, topic);
}

char **route_table_take_dirty(route_table *rt, size_t *n, bool *all)
{
    char **d = rt->dirty;
    *n = rt->ndirty;
    *all = rt->all_dirty;
    for (size_t i = 0; i < rt->ndirty; i++) {
        topic_entry *te = rmq_str_map_get(&rt->topics, d[i]);
        if (te)
            te->dirty = false;
    }
    if (rt->all_dirty) {
        rmq_str_map_iter it;
        void *v;
        rmq_str_map_iter_init(&it, &rt->topics);
        while (rmq_str_map_iter_next(&it, NULL, &v))
            ((topic_entry *)v)->dirty = false;
    }
    rt->dirty = NULL;
    rt->ndirty = 0;
    rt->dirty_cap = 0;
    rt->all_dirty = false;
    return d;
}

/* ---- queue data ----------------------------------------------------------- */

static queue_data *qd_find(topic_entry *te, const char *broker_name)
{
    for (size_t i = 0; i < te->nqd; i++)
        if (strcmp(te->qds[i].broker_name, broker_name) == 0)
            return &te->qds[i];
    return NULL;
}

/* Returns 1 if something changed, 0 if identical, -1 on OOM. */
static int qd_upsert(route_table *rt, topic_entry *te, const char *broker_name, int32_t perm,
                     int32_t rq, int32_t wq, int32_t sysflag)
{
    queue_data *q = qd_find(te, broker_name);
    if (q) {
        if (q->perm == perm && q->read_queue_nums == rq && q->write_queue_nums == wq &&
            q->topic_sys_flag == sysflag)
            return 0;
        q->perm = perm;
        q->read_queue_nums = rq;
        q->write_queue_nums = wq;
        q->topic_sys_flag = sysflag;
        return 1;
    }
    if (te->nqd == te->qd_cap) {
        /* from 1: most topics live on one broker name */
        size_t nc = te->qd_cap ? te->qd_cap * 2 : 1;
        queue_data *nq = realloc(te->qds, nc * sizeof(*nq));
        if (!nq)
            return -1;
        te->qds = nq;
        te->qd_cap = nc;
    }
    uint32_t slot;
    const char *bn = broker_topics_add(&rt->broker_topics, broker_name, te, &slot);
    if (!bn)
        return -1;
    size_t pos = te->nqd;
    while (pos > 0 && strcmp(te->qds[pos - 1].broker_name, broker_name) > 0)
        pos--;
    memmove(&te->qds[pos + 1], &te->qds[pos], (te->nqd - pos) * sizeof(*te->qds));
    te->qds[pos] = (queue_data){bn, perm, rq, wq, sysflag, slot};
    te->nqd++;
    return 1;
}

static void qd_remove_at(route_table *rt, topic_entry *te, size_t i)
{
    broker_topics_drop(&rt->broker_topics, te, &te->qds[i]);
    memmove(&te->qds[i], &te->qds[i + 1], (te->nqd - i - 1) * sizeof(*te->qds));
    te->nqd--;
    rt->qd_removed++;
}

static bool qd_remove(route_table *rt, topic_entry *te, const char *broker_name)
{
    queue_data *q = qd_find(te, broker_name);
    if (!q)
        return false;
    qd_remove_at(rt, te, (size_t)(q - te->qds));
    return true;
}

static topic_entry *topic_get_or_create(route_table *rt, const char *name)
{
    topic_entry *te = rmq_str_map_get(&rt->topics, name);
    if (te)
        return te;
    te = calloc(1, sizeof(*te));
    if (!te)
        return NULL;
    te->name = strdup(name);
    int err;
    if (!te->name || (rmq_str_map_put(&rt->topics, te->name, te, &err), err)) {
        free(te->name);
        free(te);
        return NULL;
    }
    return te;
}

static void topic_remove(route_table *rt, topic_entry *te)
{
    rmq_str_map_remove(&rt->topics, te->name);
    if (!te->dirty) /* else its name is listed already */
        push_dirty_name(rt, te->name);
    while (te->nqd > 0)
        qd_remove_at(rt, te, te->nqd - 1);
    topic_free(te);
}

/* Drops one broker name's QueueData from its topics; empty topics go. */
static void remove_broker_from_topics(route_table *rt, const char *broker_name)
{
    broker_topics *bt = broker_topics_take(&rt->broker_topics, broker_name);
    if (!bt)
        return;
    for (uint32_t k = 0; k < bt->n; k++) {
        topic_entry *te = bt->topics[k];
        for (size_t i = 0; i < te->nqd; i++) {
            if (te->qds[i].broker_name != bt->name)
                continue;
            memmove(&te->qds[i], &te->qds[i + 1], (te->nqd - i - 1) * sizeof(*te->qds));
            te->nqd--;
            rt->qd_removed++;
            break;
        }
        if (te->nqd == 0)
            topic_remove(rt, te);
        else
            mark_topic(rt, te);
    }
    broker_topics_free(bt);
}

/* The broker's addresses (or filter servers) changed: its topics' routes too. */
static void mark_broker_topics(route_table *rt, const char *broker_name)
{
    const broker_topics *bt = broker_topics_get(&rt->broker_topics, broker_name);
    for (uint32_t k = 0; bt && k < bt->n; k++)
        mark_topic(rt, bt->topics[k]);
}

/* ---- broker data / clusters ----------------------------------------------- */

const char *broker_data_addr(const broker_data *bd, int64_t id)
{
    for (size_t i = 0; i < bd->naddr; i++)
        if (bd->addrs[i].id == id)
            return bd->addrs[i].addr;
    return NULL;
}

static void bd_remove_at(broker_data *bd, size_t i)
{
    free(bd->addrs[i].addr);
    memmove(&bd->addrs[i], &bd->addrs[i + 1], (bd->naddr - i - 1) * sizeof(*bd->addrs));
    bd->naddr--;
}

/* put(id, addr); returns 1 if the map changed, 0 if identical, -1 OOM. *was_new
 * tells whether the id had no entry (Java's "oldAddr == null"). */
static int bd_put(broker_data *bd, int64_t id, const char *addr, bool *was_new)
{
    for (size_t i = 0; i < bd->naddr; i++) {
        if (bd->addrs[i].id == id) {
            *was_new = false;
            if (strcmp(bd->addrs[i].addr, addr) == 0)
                return 0;
            char *a = strdup(addr);
            if (!a)
                return -1;
            free(bd->addrs[i].addr);
            bd->addrs[i].addr = a;
            return 1;
        }
    }
    *was_new = true;
    if (bd->naddr == bd->addr_cap) {
        size_t nc = bd->addr_cap ? bd->addr_cap * 2 : 2;
        broker_addr *na = realloc(bd->addrs, nc * sizeof(*na));
        if (!na)
            return -1;
        bd->addrs = na;
        bd->addr_cap = nc;
    }
    char *a = strdup(addr);
    if (!a)
        return -1;
    size_t pos = bd->naddr;
    while (pos > 0 && bd->addrs[pos - 1].id > id)
        pos--;
    memmove(&bd->addrs[pos + 1], &bd->addrs[pos], (bd->naddr - pos) * sizeof(*bd->addrs));
    bd->addrs[pos] = (broker_addr){id, a};
    bd->naddr++;
    return 1;
}

static int cluster_add(route_table *rt, const char *cluster, const char *broker_name)
{
    cluster_entry *ce = rmq_str_map_get(&rt->clusters, cluster);
    if (!ce) {
        ce = calloc(1, sizeof(*ce));
        if (!ce || !(ce->name = strdup(cluster))) {
            free(ce);
            return -1;
        }
        int err;
        rmq_str_map_put(&rt->clusters, ce->name, ce, &err);
        if (err) {
            cluster_free(ce);
            return -1;
        }
    }
    size_t pos = 0;
    for (; pos < ce->n; pos++) {
        int c = strcmp(ce->brokers[pos], broker_name);
        if (c == 0)
            return 0;
        if (c > 0)
            break;
    }
    if (ce->n == ce->cap) {
        size_t nc = ce->cap ? ce->cap * 2 : 4;
        char **nb = realloc(ce->brokers, nc * sizeof(*nb));
        if (!nb)
            return -1;
        ce->brokers = nb;
        ce->cap = nc;
    }
    char *bn = strdup(broker_name);
    if (!bn)
        return -1;
    memmove(&ce->brokers[pos + 1], &ce->brokers[pos], (ce->n - pos) * sizeof(*ce->brokers));
    ce->brokers[pos] = bn;
    ce->n++;
    return 0;
}

static void cluster_remove_broker(route_table *rt, cluster_entry *ce, const char *broker_name)
{
    for (size_t i = 0; i < ce->n; i++) {
        if (strcmp(ce->brokers[i], broker_name) == 0) {
            free(ce->brokers[i]);
            memmove(&ce->brokers[i], &ce->brokers[i + 1], (ce->n - i - 1) * sizeof(char *));
            ce->n--;
            break;
        }
    }
    if (ce->n == 0) {
        rmq_str_map_remove(&rt->clusters, ce->name);
        cluster_free(ce);
    }
}

/* The BrokerData goes, and with it its name's QueueData. */
static void remove_broker_data(route_table *rt, broker_data *bd, const char *only_cluster)
{
    rmq_str_map_remove(&rt->brokers, bd->name);
    if (only_cluster) {
        cluster_entry *ce = rmq_str_map_get(&rt->clusters, only_cluster);
        if (ce)
            cluster_remove_broker(rt, ce, bd->name);
    } else {
        rmq_str_map_iter it;
        void *v;
        rmq_str_map_iter_init(&it, &rt->clusters);
        while (rmq_str_map_iter_next(&it, NULL, &v))
            cluster_remove_broker(rt, v, bd->name);
    }
    remove_broker_from_topics(rt, bd->name);
    broker_free(bd);
}

/* ---- live / filter tables ------------------------------------------------- */

static void filter_remove(route_table *rt, const char *addr)
{
    filter_entry *fe = rmq_str_map_remove(&rt->filters, addr);
    if (fe)
        filter_free(fe);
}

static bool filter_same(const filter_entry *fe, const register_body *b)
{
    if (!fe || fe->n != b->nfilters)
        return false;
    for (size_t i = 0; i < fe->n; i++)
        if (strcmp(fe->servers[i], b->filter_servers[i]) != 0)
            return false;
    return true;
}

static int filter_store(route_table *rt, const char *addr, const register_body *b)
{
    filter_entry *fe = calloc(1, sizeof(*fe));
    if (!fe)
        return -1;
    fe->addr = strdup(addr);
    fe->servers = calloc(b->nfilters, sizeof(char *));
    if (!fe->addr || !fe->servers) {
        filter_free(fe);
        return -1;
    }
    for (size_t i = 0; i < b->nfilters; i++) {
        fe->servers[i] = strdup(b->filter_servers[i]);
        if (!fe->servers[i]) {
            filter_free(fe);
            return -1;
        }
        fe->n++;
    }
    filter_remove(rt, addr);
    int err;
    rmq_str_map_put(&rt->filters, fe->addr, fe, &err);
    if (err) {
        filter_free(fe);
        return -1;
    }
    return 0;
}

static void live_remove(route_table *rt, const char *addr)
{
    live_info *li = rmq_str_map_remove(&rt->live, addr);
    if (li)
        live_free(li);
}

/* ---- registration --------------------------------------------------------- */

#define SPLIT_FRAMES_MAX 4096u /* 100,000 topics in frames of 25 */

static bool frame_known(const route_table *rt, const broker_data *bd, const body_fingerprint *fp)
{
    if (bd->frames_epoch != rt->qd_epoch || !fp->form)
        return false;
    for (size_t i = 0; i < bd->nframes; i++)
        if (body_fingerprint_equal(&bd->frames[i], fp))
            return true;
    return false;
}

/* After a parsed master body was applied: remember it as a frame the table
 * equals (when it does), forget every frame when QueueData changed under
 * them. */
static void frame_note(const route_table *rt, broker_data *bd, const body_fingerprint *fp,
                       bool equal, bool modified)
{
    if (bd->frames_epoch != rt->qd_epoch || modified) {
        bd->nframes = 0;
        bd->frames_epoch = rt->qd_epoch;
    }
    if (!equal || !fp || !fp->form || !fp->filters_empty || frame_known(rt, bd, fp) ||
        bd->nframes >= SPLIT_FRAMES_MAX)
        return;
    if (bd->nframes == bd->frames_cap) {
        size_t nc = bd->frames_cap ? bd->frames_cap * 2 : 4;
        body_fingerprint *nf = realloc(bd->frames, nc * sizeof(*nf));
        if (!nf)
            return; /* only a shortcut lost */
        bd->frames = nf;
        bd->frames_cap = nc;
    }
    bd->frames[bd->nframes++] = *fp;
}

int route_table_register(route_table *rt, const register_request *req, uint64_t now_ms,
                         register_result *res)
{
    res->master_addr = NULL;
    res->ha_addr = NULL;
    static const data_version zero_dv = {0, 0, 0, false};
    const data_version *dv = req->body ? &req->body->dv : req->dv ? req->dv : &zero_dv;
    if (req->topics_unparsed) {
        /* checked before anything changes: the caller parses and retries */
        const broker_data *known = rmq_str_map_get(&rt->brokers, req->broker_name);
        bool known_body =
            known && req->fp &&
            ((known->fp_epoch == rt->qd_epoch && body_fingerprint_equal(&known->fp, req->fp)) ||
             frame_known(rt, known, req->fp));
        if (req->broker_id != 0 || !known_body)
            return ROUTE_NEED_BODY;
    }

    /* 1. cluster -> broker name (never removed from a previous cluster) */
    if (cluster_add(rt, req->cluster, req->broker_name) != 0)
        return -1;

    /* 2. BrokerData, created on first sight with this cluster */
    bool register_first = false;
    broker_data *bd = rmq_str_map_get(&rt->brokers, req->broker_name);
    if (!bd) {
        bd = calloc(1, sizeof(*bd));
        if (!bd)
            return -1;
        bd->name = strdup(req->broker_name);
        bd->cluster = dupstr(req->cluster);
        int err = !bd->name || !bd->cluster;
        if (!err)
            rmq_str_map_put(&rt->brokers, bd->name, bd, &err);
        if (err) {
            broker_free(bd);
            return -1;
        }
        register_first = true;
    }

    /* 3. the address moves between ids: drop it under any other id */
    bool addrs_changed = false;
    for (size_t i = 0; i < bd->naddr;) {
        if (bd->addrs[i].id != req->broker_id && strcmp(bd->addrs[i].addr, req->broker_addr) == 0) {
            bd_remove_at(bd, i);
            addrs_changed = true;
        } else {
            i++;
        }
    }

    /* 4. put id -> addr */
    bool was_new;
    int pr = bd_put(bd, req->broker_id, req->broker_addr, &was_new);
    if (pr < 0)
        return -1;
    if (pr > 0)
        addrs_changed = true;
    register_first |= was_new;

    /* 5. master only: queue data when first, changed, or missing for a topic.
     * A body whose fingerprint matched needs nothing: the QueueData of this
     * name already equal its topics (whatever its DataVersion says). */
    if (req->broker_id == 0 && !req->topics_unparsed) {
        const live_info *li = rmq_str_map_get(&rt->live, req->broker_addr);
        bool changed = register_first || !li || !data_version_equal(&li->dv, dv);
        const register_body *b = req->body;
        /* the table equals this body's topics afterwards; an existing
         * QueueData was modified (other frames may no longer match) */
        bool frame_equal = true, modified = false;
        for (size_t i = 0; b && i < b->ntopics; i++) {
            const rb_topic *t = &b->topics[i];
            if (!t->name)
                continue;
            topic_entry *te = topic_get_or_create(rt, t->name);
            if (!te)
                return -1;
            const queue_data *q = qd_find(te, req->broker_name);
            if (!changed && q) {
                if (q->perm != t->perm || q->read_queue_nums != t->read_queue_nums ||
                    q->write_queue_nums != t->write_queue_nums ||
                    q->topic_sys_flag != t->topic_sys_flag)
                    frame_equal = false;
                continue;
            }
            int u = qd_upsert(rt, te, req->broker_name, t->perm, t->read_queue_nums,
                              t->write_queue_nums, t->topic_sys_flag);
            if (u < 0)
                return -1;
            if (u > 0) {
                modified |= q != NULL;
                mark_topic(rt, te);
            }
        }
        if (b)
            frame_note(rt, bd, req->fp, frame_equal, modified);
        bool keep = b && req->fp && body_fingerprint_equal(&bd->fp, req->fp) &&
                    bd->fp_epoch == rt->qd_epoch;
        if (b && changed && req->fp && req->fp->form) {
            /* every topic of the body was applied: the table equals it */
            bd->fp = *req->fp;
            bd->fp_epoch = rt->qd_epoch;
        } else if (b && !keep) {
            bd->fp.form = 0; /* a mix of bodies, or an unknown one */
        }
    }
    if (addrs_changed)
        mark_broker_topics(rt, req->broker_name);

    /* 6. live entry, replaced */
    live_info *li = calloc(1, sizeof(*li));
    if (!li)
        return -1;
    li->addr = strdup(req->broker_addr);
    li->ha_addr = dupstr(req->ha_addr);
    li->last_update_ms = now_ms;
    li->dv = *dv;
    li->channel = req->channel;
    li->timeout_ms = req->heartbeat_timeout_ms;
    if (!li->addr || (req->ha_addr && !li->ha_addr)) {
        live_free(li);
        return -1;
    }
    live_remove(rt, req->broker_addr);
    int err;
    rmq_str_map_put(&rt->live, li->addr, li, &err);
    if (err) {
        live_free(li);
        return -1;
    }

    /* 7. filter servers (an unparsed body's list is empty: the fingerprint
     * is only stored for such bodies' shortcut, see the processor) */
    if (req->topics_unparsed && req->fp->has_filter_list) {
        if (rmq_str_map_get(&rt->filters, req->broker_addr)) {
            filter_remove(rt, req->broker_addr);
            mark_broker_topics(rt, req->broker_name);
        }
    } else if (req->body && req->body->has_filter_list) {
        filter_entry *fe = rmq_str_map_get(&rt->filters, req->broker_addr);
        if (req->body->nfilters == 0) {
            if (fe) {
                filter_remove(rt, req->broker_addr);
                mark_broker_topics(rt, req->broker_name);
            }
        } else if (!filter_same(fe, req->body)) {
            if (filter_store(rt, req->broker_addr, req->body) != 0)
                return -1;
            mark_broker_topics(rt, req->broker_name);
        }
    }

    /* 8. slaves learn their master */
    if (req->broker_id != 0) {
        const char *master = broker_data_addr(bd, 0);
        const live_info *ml = master ? rmq_str_map_get(&rt->live, master) : NULL;
        if (ml) {
            res->master_addr = strdup(master);
            res->ha_addr = dupstr(ml->ha_addr);
        }
    }
    return 0;
}

/* ---- removal -------------------------------------------------------------- */

void route_table_unregister(route_table *rt, const char *cluster, const char *broker_name,
                            const char *broker_addr, int64_t broker_id)
{
    if (broker_addr) {
        live_remove(rt, broker_addr);
        filter_remove(rt, broker_addr);
    }
    broker_data *bd = broker_name ? rmq_str_map_get(&rt->brokers, broker_name) : NULL;
    if (!bd)
        return;
    for (size_t i = 0; i < bd->naddr; i++) {
        if (bd->addrs[i].id == broker_id) {
            bd_remove_at(bd, i);
            break;
        }
    }
    if (bd->naddr == 0) {
        /* only the named cluster forgets the name (Java); the other cluster
         * entries of a name registered twice stay */
        rmq_str_map_remove(&rt->brokers, bd->name);
        cluster_entry *ce = cluster ? rmq_str_map_get(&rt->clusters, cluster) : NULL;
        if (ce)
            cluster_remove_broker(rt, ce, bd->name);
        remove_broker_from_topics(rt, bd->name);
        broker_free(bd);
    } else {
        mark_broker_topics(rt, bd->name);
    }
}

/* Java's onChannelDestroy cleanup for one broker address. */
static void cleanup_addr(route_table *rt, const char *addr_in)
{
    char *addr = strdup(addr_in); /* addr_in may live in the entry we free */
    if (!addr)
        return;
    live_remove(rt, addr);
    filter_remove(rt, addr);
    rmq_str_map_iter it;
    void *v;
    rmq_str_map_iter_init(&it, &rt->brokers);
    while (rmq_str_map_iter_next(&it, NULL, &v)) {
        broker_data *bd = v;
        bool hit = false;
        for (size_t i = 0; i < bd->naddr;) {
            if (strcmp(bd->addrs[i].addr, addr) == 0) {
                bd_remove_at(bd, i);
                hit = true;
            } else {
                i++;
            }
        }
        if (!hit)
            continue;
        /* removing the iterator's current entry is safe (rmq_str_map_iter) */
        if (bd->naddr == 0)
            remove_broker_data(rt, bd, NULL);
        else
            mark_broker_topics(rt, bd->name);
    }
    free(addr);
}

size_t route_table_channel_destroyed(route_table *rt, uint64_t channel, const char *peer_addr)
{
    char **addrs = NULL;
    size_t n = 0, cap = 0;
    rmq_str_map_iter it;
    void *v;
    rmq_str_map_iter_init(&it, &rt->live);
    while (channel && rmq_str_map_iter_next(&it, NULL, &v)) {
        live_info *li = v;
        if (li->channel != channel)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            char **na = realloc(addrs, cap * sizeof(*na));
            if (!na)
                break;
            addrs = na;
        }
        addrs[n] = strdup(li->addr);
        if (addrs[n])
            n++;
    }
    size_t removed = 0;
    if (n == 0) {
        /* Java falls back to the peer address; a live entry under that address
         * registered over another connection is fresher and must survive. */
        if (peer_addr && !rmq_str_map_get(&rt->live, peer_addr)) {
            bool known = false;
            rmq_str_map_iter_init(&it, &rt->brokers);
            while (!known && rmq_str_map_iter_next(&it, NULL, &v)) {
                broker_data *bd = v;
                for (size_t i = 0; i < bd->naddr && !known; i++)
                    known = strcmp(bd->addrs[i].addr, peer_addr) == 0;
            }
            if (known) {
                cleanup_addr(rt, peer_addr);
                removed = 1;
            }
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            cleanup_addr(rt, addrs[i]);
            free(addrs[i]);
        }
        removed = n;
    }
    free(addrs);
    return removed;
}

size_t route_table_scan_expired(route_table *rt, uint64_t now_ms,
                                void (*close_channel)(void *ud, uint64_t channel), void *ud)
{
    size_t removed = 0;
    for (;;) {
        /* restart after each removal: cleanup edits the live map */
        live_info *victim = NULL;
        rmq_str_map_iter it;
        void *v;
        rmq_str_map_iter_init(&it, &rt->live);
        while (rmq_str_map_iter_next(&it, NULL, &v)) {
            live_info *li = v;
            int64_t timeout = li->timeout_ms > 0 ? li->timeout_ms : rt->default_timeout_ms;
            if (li->last_update_ms + (uint64_t)timeout < now_ms) {
                victim = li;
                break;
            }
        }
        if (!victim)
            break;
        if (close_channel && victim->channel)
            close_channel(ud, victim->channel);
        cleanup_addr(rt, victim->addr);
        removed++;
    }
    return removed;
}

void route_table_query_data_version(route_table *rt, const char *broker_addr,
                                    const data_version *dv, uint64_t now_ms, bool *changed,
                                    data_version *stored, bool *has_stored)
{
    live_info *li = broker_addr ? rmq_str_map_get(&rt->live, broker_addr) : NULL;
    *changed = !li || !data_version_equal(&li->dv, dv);
    if (li && !*changed)
        li->last_update_ms = now_ms;
    *has_stored = li != NULL;
    if (li)
        *stored = li->dv;
}

bool route_table_heartbeat(route_table *rt, const char *broker_addr, uint64_t now_ms)
{
    live_info *li = broker_addr ? rmq_str_map_get(&rt->live, broker_addr) : NULL;
    if (li)
        li->last_update_ms = now_ms;
    return li != NULL;
}

int route_table_set_write_perm(route_table *rt, const char *broker_name, bool wipe)
{
    if (!broker_name)
        return 0;
    int count = 0;
    const broker_topics *bt = broker_topics_get(&rt->broker_topics, broker_name);
    for (uint32_t k = 0; bt && k < bt->n; k++) {
        topic_entry *te = bt->topics[k];
        queue_data *q = qd_find(te, broker_name);
        if (!q)
            continue;
        int32_t np = wipe ? (q->perm & ~PERM_WRITE) : (PERM_READ | PERM_WRITE);
        if (np != q->perm) {
            q->perm = np;
            rt->qd_epoch++;
            mark_topic(rt, te);
        }
        count++;
    }
    return count;
}

void route_table_delete_topic(route_table *rt, const char *topic, const char *cluster)
{
    topic_entry *te = topic ? rmq_str_map_get(&rt->topics, topic) : NULL;
    if (!te)
        return;
    rt->qd_epoch++; /* a later re-registration must restore what goes */
    if (!cluster || !*cluster) {
        topic_remove(rt, te);
        return;
    }
    cluster_entry *ce = rmq_str_map_get(&rt->clusters, cluster);
    if (!ce)
        return;
    bool touched = false;
    for (size_t i = 0; i < ce->n; i++)
        touched |= qd_remove(rt, te, ce->brokers[i]);
    if (te->nqd == 0)
        topic_remove(rt, te);
    else if (touched)
        mark_topic(rt, te);
}

bool route_table_register_topic(route_table *rt, const char *topic, const queue_data *qds, size_t n)
{
    if (!topic || n == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (!qds[i].broker_name || !rmq_str_map_get(&rt->brokers, qds[i].broker_name))
            return false;
    topic_entry *te = topic_get_or_create(rt, topic);
    if (!te)
        return false;
    rt->qd_epoch++;
    for (size_t i = 0; i < n; i++) {
        int u = qd_upsert(rt, te, qds[i].broker_name, qds[i].perm, qds[i].read_queue_nums,
                          qds[i].write_queue_nums, qds[i].topic_sys_flag);
        if (u > 0)
            mark_topic(rt, te);
    }
    return true;
}

/* ---- lookups -------------------------------------------------------------- */

bool route_table_broker_fingerprint(const route_table *rt, const char *broker_name,
                                    body_fingerprint *out)
{
    const broker_data *bd = broker_name ? rmq_str_map_get(&rt->brokers, broker_name) : NULL;
    if (!bd)
        return false;
    if (bd->fp.form != 0 && bd->fp_epoch == rt->qd_epoch && bd->fp.filters_empty) {
        *out = bd->fp;
        return true;
    }
    /* split frames share the bytes before their DataVersion: any of them
     * tells whether a frame can be fingerprinted without parsing */
    if (bd->nframes > 0 && bd->frames_epoch == rt->qd_epoch) {
        *out = bd->frames[0];
        return true;
    }
    return false;
}

bool route_table_broker_has_frames(const route_table *rt, const char *broker_name)
{
    const broker_data *bd = broker_name ? rmq_str_map_get(&rt->brokers, broker_name) : NULL;
    return bd && bd->nframes > 1 && bd->frames_epoch == rt->qd_epoch;
}

const topic_entry *route_table_topic(const route_table *rt, const char *topic)
{
    return topic ? rmq_str_map_get(&rt->topics, topic) : NULL;
}

const broker_data *route_table_broker(const route_table *rt, const char *broker_name)
{
    return broker_name ? rmq_str_map_get(&rt->brokers, broker_name) : NULL;
}

const live_info *route_table_live(const route_table *rt, const char *broker_addr)
{
    return broker_addr ? rmq_str_map_get(&rt->live, broker_addr) : NULL;
}

const cluster_entry *route_table_cluster(const route_table *rt, const char *cluster)
{
    return cluster ? rmq_str_map_get(&rt->clusters, cluster) : NULL;
}

const filter_entry *route_table_filter(const route_table *rt, const char *broker_addr)
{
    return broker_addr ? rmq_str_map_get(&rt->filters, broker_addr) : NULL;
}

/* ---- restore -------------------------------------------------------------- */

int route_table_restore_broker_addr(route_table *rt, const char *broker_name, const char *cluster,
                                    int64_t id, const char *addr)
{
    broker_data *bd = rmq_str_map_get(&rt->brokers, broker_name);
    if (!bd) {
        bd = calloc(1, sizeof(*bd));
        if (!bd)
            return -1;
        bd->name = strdup(broker_name);
        bd->cluster = dupstr(cluster);
        int err = !bd->name || (cluster && !bd->cluster);
        if (!err)
            rmq_str_map_put(&rt->brokers, bd->name, bd, &err);
        if (err) {
            broker_free(bd);
            return -1;
        }
    }
    rt->all_dirty = true;
    if (!addr)
        return 0;
    bool was_new;
    return bd_put(bd, id, addr, &was_new) < 0 ? -1 : 0;
}

int route_table_restore_cluster(route_table *rt, const char *cluster, const char *broker_name)
{
    rt->all_dirty = true;
    return cluster_add(rt, cluster, broker_name);
}

int route_table_restore_queue(route_table *rt, const char *topic, const queue_data *qd)
{
    topic_entry *te = topic_get_or_create(rt, topic);
    if (!te)
        return -1;
    rt->all_dirty = true;
    rt->qd_epoch++;
    return qd_upsert(rt, te, qd->broker_name, qd->perm, qd->read_queue_nums, qd->write_queue_nums,
                     qd->topic_sys_flag) < 0
               ? -1
               : 0;
}

int route_table_restore_live(route_table *rt, const live_info *src)
{
    live_info *li = calloc(1, sizeof(*li));
    if (!li)
        return -1;
    *li = *src;
    li->addr = strdup(src->addr);
    li->ha_addr = dupstr(src->ha_addr);
    if (!li->addr || (src->ha_addr && !li->ha_addr)) {
        live_free(li);
        return -1;
    }
    live_remove(rt, li->addr);
    int err;
    rmq_str_map_put(&rt->live, li->addr, li, &err);
    if (err) {
        live_free(li);
        return -1;
    }
    return 0;
}

int route_table_restore_filter(route_table *rt, const char *addr, const char *const *servers,
                               size_t n)
{
    register_body tmp;
    register_body_init(&tmp);
    tmp.filter_servers = (const char **)(uintptr_t)servers;
    tmp.nfilters = n;
    rt->all_dirty = true;
    return filter_store(rt, addr, &tmp);
}
