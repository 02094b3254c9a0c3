/* store_index.c — the key index of §10.15.6 in Java's file layout (header,
 * hash slots, entries; files named by creation time): loading, putting the
 * UNIQ_KEY and KEYS keys of a record, rolling to a new file when full,
 * flushing, deleting files behind the commit log, and QUERY_MESSAGE by key
 * (exact key match on the record itself, ascending commit-log offset). */
#include "store_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define LD(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define ST(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)

static int64_t index_file_size(const store_engine *e)
{
    return STORE_INDEX_HEADER + (int64_t)e->cfg.max_hash_slot_num * 4 +
           (int64_t)e->cfg.max_index_num * STORE_INDEX_ENTRY;
}

static void header_store(store_index_file *f)
{
    uint8_t *h = f->m->map;
    stored_put_be64(h, (uint64_t)f->begin_ts);
    stored_put_be64(h + 8, (uint64_t)f->end_ts);
    stored_put_be64(h + 16, (uint64_t)f->begin_phy);
    stored_put_be64(h + 24, (uint64_t)f->end_phy);
    stored_put_be32(h + 32, (uint32_t)f->slot_count);
    stored_put_be32(h + 36, (uint32_t)f->index_count);
}

static int idx_push(store_engine *e, store_index_file *f)
{
    if (e->nidx == e->idx_cap) {
        size_t nc = e->idx_cap ? e->idx_cap * 2 : 8;
        store_index_file **nv = realloc(e->idx, nc * sizeof *nv);
        if (!nv)
            return -ENOMEM;
        e->idx = nv;
        e->idx_cap = nc;
    }
    e->idx[e->nidx++] = f;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int index_load(store_engine *e, char *err, size_t errlen)
{
    DIR *d = opendir(e->index_dir);
    if (!d)
        return errno == ENOENT ? 0 : -errno;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strlen(de->d_name) != 17 || strspn(de->d_name, "0123456789") != 17)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn)
                break;
            names = nn;
        }
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", e->index_dir, names[i]);
        mfile *m;
        char lerr[256];
        if (rc == 0 && names[i] &&
            mfile_open(path, 0, index_file_size(e), false, false, &m, lerr, sizeof lerr) == 0) {
            mfile_advise_random(m);
            store_index_file *f = calloc(1, sizeof *f);
            if (!f) {
                mfile_close(m, false);
                rc = -ENOMEM;
            } else {
                f->m = m;
                snprintf(f->name, sizeof f->name, "%s", names[i]);
                const uint8_t *h = m->map;
                f->begin_ts = (int64_t)stored_be64(h);
                f->end_ts = (int64_t)stored_be64(h + 8);
                f->begin_phy = (int64_t)stored_be64(h + 16);
                f->end_phy = (int64_t)stored_be64(h + 24);
                f->slot_count = (int32_t)stored_be32(h + 32);
                f->index_count = (int32_t)stored_be32(h + 36);
                if (f->index_count <= 0)
                    f->index_count = 1;
                if (f->index_count > e->cfg.max_index_num)
                    f->index_count = e->cfg.max_index_num; /* damaged: taken as full */
                rc = idx_push(e, f);
            }
        } else if (rc == 0 && names[i]) {
            /* a file of another geometry: Java would not load it either */
            store_log(e, 1, "index file skipped: %s", lerr);
        }
        free(names[i]);
    }
    free(names);
    if (rc != 0)
        snprintf(err, errlen, "load index: %s", strerror(-rc));
    e->idx_last_phy = -1; /* nothing indexed yet */
    if (e->nidx && e->idx[e->nidx - 1]->index_count > 1) {
        e->idx_last_phy = e->idx[e->nidx - 1]->end_phy;
        e->idx_last_ts = e->idx[e->nidx - 1]->end_ts;
    }
    return rc;
}

void index_free(store_engine *e)
{
    for (size_t i = 0; i < e->nidx; i++) {
        mfile_close(e->idx[i]->m, false);
        free(e->idx[i]);
    }
    free(e->idx);
    e->idx = NULL;
    e->nidx = e->idx_cap = 0;
}

bool index_needs_file(store_engine *e, int keys)
{
    if (e->nidx == 0)
        return true;
    store_index_file *f = e->idx[e->nidx - 1];
    return (int64_t)f->index_count + keys > e->cfg.max_index_num;
}

static int64_t entries_at(const store_engine *e)
{
    return STORE_INDEX_HEADER + (int64_t)e->cfg.max_hash_slot_num * 4;
}

/* Blocks up to entry `count` of f (header and hash slots included, which
 * are written at random and so reserved whole), in 1 MiB chunks. */
static int back_entries(store_engine *e, store_index_file *f, int64_t count)
{
    int64_t need = entries_at(e) + count * STORE_INDEX_ENTRY;
    if (need <= atomic_load_explicit(&f->m->backed, memory_order_acquire))
        return 0;
    int64_t to = need + STORE_INDEX_BACK_CHUNK;
    int rc = mfile_back(e, f->m, to);
    if (rc != 0)
        rc = mfile_back(e, f->m, need); /* the chunk did not fit: just these */
    return rc;
}

int index_back_keys(store_engine *e, int keys)
{
    if (e->nidx == 0)
        return 0;
    store_index_file *f = e->idx[e->nidx - 1];
    return back_entries(e, f, (int64_t)f->index_count + keys);
}

int index_add_file(store_engine *e, char *err, size_t errlen)
{
    int64_t now = store_now_ms();
    char path[PATH_MAX];
    char name[32];
    for (int attempt = 0;; attempt++) {
        int64_t t = now + attempt;
        time_t s = (time_t)(t / 1000);
        struct tm tm;
        localtime_r(&s, &tm);
        snprintf(name, sizeof name, "%04d%02d%02d%02d%02d%02d%03d", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(t % 1000));
        if (e->nidx == 0 || strcmp(name, e->idx[e->nidx - 1]->name) > 0)
            break;
    }
    snprintf(path, sizeof path, "%s/%s", e->index_dir, name);
    if (atomic_load(&e->inject_errno)) {
        snprintf(err, errlen, "create %s: injected fault", path);
        return -atomic_load(&e->inject_errno);
    }
    mfile *m;
    int rc = mfile_open(path, 0, index_file_size(e), true, false, &m, err, errlen);
    if (rc != 0)
        return rc;
    /* header, slots and a first chunk of entries before anything is written */
    rc = mfile_back(e, m, entries_at(e) + STORE_INDEX_BACK_CHUNK);
    if (rc != 0) {
        snprintf(err, errlen, "reserve blocks for %s: %s", path, store_back_error(rc));
        mfile_close(m, true);
        return rc;
    }
    mfile_advise_random(m);
    store_index_file *f = calloc(1, sizeof *f);
    if (!f || idx_push(e, f) != 0) {
        free(f);
        mfile_close(m, true);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    f->m = m;
    snprintf(f->name, sizeof f->name, "%s", name);
    f->index_count = 1;
    if (e->nidx > 1) { /* continues where the full file ended */
        store_index_file *prev = e->idx[e->nidx - 2];
        f->begin_ts = prev->end_ts;
        f->end_ts = prev->end_ts;
        f->begin_phy = prev->end_phy;
        f->end_phy = prev->end_phy;
        atomic_store_explicit(&e->idx_full_end_ts, prev->end_ts, memory_order_relaxed);
    }
    header_store(f);
    return 0;
}

static int32_t key_hash(const char *k, size_t n)
{
    int32_t h = store_java_hash(k, n);
    if (h == INT32_MIN)
        return 0;
    return h < 0 ? -h : h;
}

static void put_key(store_engine *e, store_index_file *f, const char *key, size_t klen,
                    int64_t phys, int64_t ts)
{
    if (f->index_count >= e->cfg.max_index_num)
        return;
    /* normally reserved by the appender before the record was written; a
     * key that cannot get blocks is skipped (QUERY_MESSAGE misses it)
     * rather than written into a hole */
    if (back_entries(e, f, (int64_t)f->index_count + 1) != 0) {
        store_log(e, 1, "index key not written: no blocks for the index file");
        return;
    }
    int32_t kh = key_hash(key, klen);
    uint32_t slot = (uint32_t)kh % (uint32_t)e->cfg.max_hash_slot_num;
    uint8_t *sp = f->m->map + STORE_INDEX_HEADER + (size_t)slot * 4;
    int32_t slot_val = (int32_t)stored_be32(sp);
    if (slot_val <= 0 || slot_val > f->index_count)
        slot_val = 0;
    int64_t diff = (ts - f->begin_ts) / 1000;
    if (f->begin_ts <= 0 || diff < 0)
        diff = 0;
    else if (diff > INT32_MAX)
        diff = INT32_MAX;
    uint8_t *ep = f->m->map + STORE_INDEX_HEADER + (size_t)e->cfg.max_hash_slot_num * 4 +
                  (size_t)f->index_count * STORE_INDEX_ENTRY;
    stored_put_be32(ep, (uint32_t)kh);
    stored_put_be64(ep + 4, (uint64_t)phys);
    stored_put_be32(ep + 12, (uint32_t)diff);
    stored_put_be32(ep + 16, (uint32_t)slot_val);
    uint8_t be[4];
    stored_put_be32(be, (uint32_t)f->index_count);
    uint32_t v;
    memcpy(&v, be, 4);
    __atomic_store_n((uint32_t *)(void *)sp, v, __ATOMIC_RELEASE);
    if (f->index_count <= 1) {
        ST(f->begin_phy, phys);
        ST(f->begin_ts, ts);
    }
    if (slot_val == 0)
        f->slot_count++;
    ST(f->index_count, f->index_count + 1);
    ST(f->end_phy, phys);
    ST(f->end_ts, ts);
    header_store(f);
}

void index_put_record(store_engine *e, const uint8_t *topic, size_t topic_len, const char *props,
                      size_t props_len, int32_t sys_flag, int64_t phys, int64_t store_ts)
{
    if (e->nidx == 0 || (sys_flag & STORED_SYSFLAG_TX_MASK) == STORED_SYSFLAG_TX_ROLLBACK)
        return;
    store_index_file *f = e->idx[e->nidx - 1];
    char key[128 + 1 + 32768];
    memcpy(key, topic, topic_len);
    key[topic_len] = '#';
    const char *v;
    size_t vl;
    if (stored_props_get(props, props_len, "UNIQ_KEY", &v, &vl)) {
        memcpy(key + topic_len + 1, v, vl);
        put_key(e, f, key, topic_len + 1 + vl, phys, store_ts);
    }
    if (stored_props_get(props, props_len, "KEYS", &v, &vl)) {
        size_t i = 0;
        while (i < vl) {
            size_t j = i;
            while (j < vl && v[j] != ' ')
                j++;
            if (j > i) {
                memcpy(key + topic_len + 1, v + i, j - i);
                put_key(e, f, key, topic_len + 1 + (j - i), phys, store_ts);
            }
            i = j + 1;
        }
    }
    e->idx_last_phy = phys;
    e->idx_last_ts = store_ts;
}

int64_t index_full_end_ts(store_engine *e)
{
    return atomic_load_explicit(&e->idx_full_end_ts, memory_order_relaxed);
}

void index_delete_before(store_engine *e, int64_t cl_min)
{
    /* caller holds maps exclusively */
    size_t drop = 0;
    while (drop + 1 < e->nidx && e->idx[drop]->end_phy < cl_min)
        drop++;
    for (size_t i = 0; i < drop; i++) {
        store_log(e, 2, "delete index file %s", e->idx[i]->m->path);
        mfile_close(e->idx[i]->m, true);
        free(e->idx[i]);
    }
    if (drop == 0)
        return;
    memmove(e->idx, e->idx + drop, (e->nidx - drop) * sizeof *e->idx);
    e->nidx -= drop;
}

/* ---- QUERY_MESSAGE -------------------------------------------------------- */

static bool record_has_key(const stored_record *r, const char *topic, const char *key)
{
    size_t tl = strlen(topic), kl = strlen(key);
    if (r->topic_len != tl || memcmp(r->topic, topic, tl) != 0)
        return false;
    const char *v;
    size_t vl;
    if (stored_props_get(r->props, r->props_len, "UNIQ_KEY", &v, &vl) && vl == kl &&
        memcmp(v, key, kl) == 0)
        return true;
    if (stored_props_get(r->props, r->props_len, "KEYS", &v, &vl)) {
        size_t i = 0;
        while (i < vl) {
            size_t j = i;
            while (j < vl && v[j] != ' ')
                j++;
            if (j - i == kl && memcmp(v + i, key, kl) == 0)
                return true;
            i = j + 1;
        }
    }
    return false;
}

static bool time_matched(int64_t fb, int64_t fe, int64_t begin, int64_t end)
{
    return (begin < fb && end > fe) || (begin >= fb && begin <= fe) || (end >= fb && end <= fe);
}

static int cmp_off(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int store_query_by_key(store_engine *e, const char *topic, const char *key, int32_t max_num,
                       int64_t begin_ms, int64_t end_ms, store_query_result *out)
{
    memset(out, 0, sizeof *out);
    if (!e || !topic || !key)
        return -EINVAL;
    int32_t batch = atomic_load_explicit(&e->live.msgs_num_batch, memory_order_relaxed);
    int32_t limit = max_num < batch ? max_num : batch;
    if (limit <= 0)
        return 0;
    int64_t *offs = malloc((size_t)limit * sizeof *offs);
    if (!offs)
        return -ENOMEM;
    int32_t n = 0;
    char k[128 + 1 + 4096];
    int kl = snprintf(k, sizeof k, "%s#%s", topic, key);
    if (kl < 0 || (size_t)kl >= sizeof k) {
        free(offs);
        return 0;
    }
    int32_t kh = key_hash(k, (size_t)kl);
    int64_t committed = atomic_load_explicit(&e->committed, memory_order_acquire);
    pthread_rwlock_rdlock(&e->maps);
    if (e->nidx) {
        store_index_file *last = e->idx[e->nidx - 1];
        out->index_last_update_timestamp = LD(last->end_ts);
        out->index_last_update_phyoffset = LD(last->end_phy);
    }
    for (size_t fi = e->nidx; fi-- > 0 && n < limit;) {
        store_index_file *f = e->idx[fi];
        int64_t fb = LD(f->begin_ts), fe = LD(f->end_ts);
        int32_t count = LD(f->index_count);
        if (time_matched(fb, fe, begin_ms, end_ms)) {
            uint32_t slot = (uint32_t)kh % (uint32_t)e->cfg.max_hash_slot_num;
            uint8_t *sp = f->m->map + STORE_INDEX_HEADER + (size_t)slot * 4;
            uint32_t raw = __atomic_load_n((uint32_t *)(void *)sp, __ATOMIC_ACQUIRE);
            uint8_t be[4];
            memcpy(be, &raw, 4);
            int32_t pos = (int32_t)stored_be32(be);
            int guard = 0;
            while (pos > 0 && pos < count && n < limit && guard++ < 10000000) {
                const uint8_t *ep = f->m->map + STORE_INDEX_HEADER +
                                    (size_t)e->cfg.max_hash_slot_num * 4 +
                                    (size_t)pos * STORE_INDEX_ENTRY;
                int32_t h = (int32_t)stored_be32(ep);
                int64_t phys = (int64_t)stored_be64(ep + 4);
                int64_t diff = (int32_t)stored_be32(ep + 12);
                int32_t prev = (int32_t)stored_be32(ep + 16);
                int64_t ts = fb + diff * 1000;
                if (diff < 0 || ts < begin_ms / 1000 * 1000 - 1000)
                    break;
                if (h == kh && ts >= begin_ms / 1000 * 1000 - 1000 && ts <= end_ms) {
                    const uint8_t *p = cl_ptr(e, phys, 8);
                    stored_record r;
                    bool dup = false;
                    for (int32_t i = 0; i < n; i++)
                        dup |= offs[i] == phys;
                    if (!dup && p && phys < committed) {
                        int32_t sz = (int32_t)stored_be32(p);
                        const uint8_t *rp = sz > 0 ? cl_ptr(e, phys, sz) : NULL;
                        if (rp && phys + sz <= committed &&
                            stored_record_decode(rp, (size_t)sz, false, &r) == STORED_RECORD_OK &&
                            r.store_ts >= begin_ms && r.store_ts <= end_ms &&
                            record_has_key(&r, topic, key))
                            offs[n++] = phys;
                    }
                }
                if (prev <= 0 || prev >= pos)
                    break;
                pos = prev;
            }
        }
        if (fb < begin_ms)
            break;
    }
    qsort(offs, (size_t)n, sizeof *offs, cmp_off);
    size_t total = 0;
    for (int32_t i = 0; i < n; i++)
        total += stored_be32(cl_ptr(e, offs[i], 8));
    if (n > 0) {
        out->data = malloc(total);
        if (!out->data) {
            pthread_rwlock_unlock(&e->maps);
            free(offs);
            return -ENOMEM;
        }
        for (int32_t i = 0; i < n; i++) {
            int32_t sz = (int32_t)stored_be32(cl_ptr(e, offs[i], 8));
            memcpy(out->data + out->len, cl_ptr(e, offs[i], sz), (size_t)sz);
            out->len += (size_t)sz;
        }
        out->count = n;
    }
    pthread_rwlock_unlock(&e->maps);
    free(offs);
    return 0;
}
