/* store_consume_queue.c — consume queues (§10.15.3): the (topic, queue id)
 * hash table, 20-byte entries in segment files under consumequeue/TOPIC/QID,
 * loading with the end found by binary search, truncation past the commit
 * log end, correctMinOffset, destruction. Structural changes run with `maps`
 * held exclusively (or during open/close); entry writes under append_mu. */
#include "store_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

uint32_t cq_hash(const char *topic, int32_t qid)
{
    uint32_t h = 2166136261u;
    for (const char *p = topic; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    h = (h ^ (uint32_t)qid) * 16777619u;
    return h;
}

store_cq *cq_find(store_engine *e, const char *topic, int32_t qid)
{
    if (e->cqs.nb == 0)
        return NULL;
    uint32_t h = cq_hash(topic, qid);
    for (store_cq *q = e->cqs.b[h & (e->cqs.nb - 1)]; q; q = q->next)
        if (q->hash == h && q->queue_id == qid && strcmp(q->topic, topic) == 0)
            return q;
    return NULL;
}

static int table_grow(cq_table *t)
{
    size_t nb = t->nb ? t->nb * 2 : 64;
    store_cq **b = calloc(nb, sizeof *b);
    if (!b)
        return -ENOMEM;
    for (size_t i = 0; i < t->nb; i++) {
        store_cq *q = t->b[i];
        while (q) {
            store_cq *nx = q->next;
            q->next = b[q->hash & (nb - 1)];
            b[q->hash & (nb - 1)] = q;
            q = nx;
        }
    }
    free(t->b);
    t->b = b;
    t->nb = nb;
    return 0;
}

store_cq *cq_alloc(store_engine *e, const char *topic, int32_t qid, char *err, size_t errlen)
{
    if (strlen(topic) > STORED_RECORD_MAX_TOPIC) {
        snprintf(err, errlen, "topic too long");
        return NULL;
    }
    size_t tl = strlen(topic);
    store_cq *q = calloc(1, sizeof *q + tl + 1);
    if (!q) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    memcpy(q->topic, topic, tl + 1);
    q->queue_id = qid;
    q->hash = cq_hash(topic, qid);
    q->e = e;
    q->files.file_size = e->cfg.cq_file_size;
    q->files.random_access = true;
    q->files.lazy_map = true;
    q->load_first_phys = -1;
    return q;
}

void cq_dir_path(const store_engine *e, const store_cq *q, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s/%d", e->cq_dir, q->topic, q->queue_id);
}

int cq_insert(store_engine *e, store_cq *q)
{
    if (e->cqs.count >= e->cqs.nb && table_grow(&e->cqs) != 0)
        return -ENOMEM;
    q->next = e->cqs.b[q->hash & (e->cqs.nb - 1)];
    e->cqs.b[q->hash & (e->cqs.nb - 1)] = q;
    e->cqs.count++;
    atomic_store(&e->cq_count_pub, e->cqs.count);
    return 0;
}

void cq_free_unlinked(store_cq *q)
{
    mfile_list_free(&q->files, false);
    free(q);
}

store_cq *cq_create(store_engine *e, const char *topic, int32_t qid, char *err, size_t errlen)
{
    store_cq *q = cq_alloc(e, topic, qid, err, errlen);
    if (q && cq_insert(e, q) != 0) {
        snprintf(err, errlen, "out of memory");
        cq_free_unlinked(q);
        return NULL;
    }
    return q;
}

static void cq_unlink(store_engine *e, store_cq *q)
{
    store_cq **pp = &e->cqs.b[q->hash & (e->cqs.nb - 1)];
    while (*pp && *pp != q)
        pp = &(*pp)->next;
    if (*pp) {
        *pp = q->next;
        e->cqs.count--;
        atomic_store(&e->cq_count_pub, e->cqs.count);
    }
}

static void cq_hot_remove(store_engine *e, store_cq *q)
{
    pthread_mutex_lock(&e->cq_hot_mu);
    for (int i = 0; i < e->cq_hot_n; i++)
        if (e->cq_hot[i] == q)
            e->cq_hot[i--] = e->cq_hot[--e->cq_hot_n];
    pthread_mutex_unlock(&e->cq_hot_mu);
}

/* The record with the largest entry is its queue's last one: when that
 * queue goes, the reach stays (nothing below it needs dispatching) but is
 * marked as no longer in a queue (append_mu held). */
static bool cov_mark_deleted(_Atomic int64_t *off, _Atomic int64_t *size, const store_cq *q)
{
    int64_t o = atomic_load(off), s = atomic_load(size);
    if (o >= 0 && s > 0 && q->max_phys_end == o + s) {
        atomic_store(size, -s);
        return true;
    }
    return false;
}

/* Marks the named record's queue as deleted; cq_state_after_delete then
 * writes the state file. */
static void cov_forget_queue(store_engine *e, const store_cq *q)
{
    bool live = cov_mark_deleted(&e->cov_off, &e->cov_size, q);
    bool named = cov_mark_deleted(&e->state_cov_off, &e->state_cov_size, q);
    if (live || named)
        e->cov_forgotten = true;
}

/* The state file says so at once, before the deletion is answered: a
 * kill -9 before the next periodic write would otherwise leave it naming a
 * record whose queue is gone, which no start can check, and that start
 * would load every queue and re-dispatch the deleted queue's last records
 * (store_recovery.c). After the whole topic is gone, so that the write
 * sees whether any queue is left. */
void cq_state_after_delete(store_engine *e)
{
    if (e->cov_forgotten && e->state_fd >= 0)
        state_write(e, false);
    e->cov_forgotten = false;
}

void cq_destroy(store_engine *e, store_cq *q, bool remove_files)
{
    if (remove_files)
        cov_forget_queue(e, q);
    cq_unlink(e, q);
    cq_hot_remove(e, q);
    mfile_list_free(&q->files, remove_files);
    if (remove_files) {
        char dir[PATH_MAX];
        cq_dir_path(e, q, dir, sizeof dir);
        rmdir(dir);
        snprintf(dir, sizeof dir, "%s/%s", e->cq_dir, q->topic);
        rmdir(dir); /* fails while other queues of the topic remain */
    }
    free(q);
}

void cq_detach(store_engine *e, store_cq *q)
{
    cov_forget_queue(e, q);
    cq_unlink(e, q);
    cq_hot_remove(e, q);
    mfile_list_free(&q->files, false);
    free(q);
}

void cq_table_free(store_engine *e)
{
    e->cq_hot_n = 0; /* the housekeeper has stopped */
    for (size_t i = 0; i < e->cqs.nb; i++) {
        store_cq *q = e->cqs.b[i];
        while (q) {
            store_cq *nx = q->next;
            mfile_list_free(&q->files, false);
            free(q);
            q = nx;
        }
    }
    free(e->cqs.b);
    memset(&e->cqs, 0, sizeof e->cqs);
}

uint8_t *cq_file_map(store_engine *e, mfile *f)
{
    uint8_t *m = mfile_mapped(f);
    uint32_t now = atomic_load_explicit(&e->cq_clock, memory_order_relaxed);
    if (atomic_load_explicit(&f->last_use, memory_order_relaxed) != now)
        atomic_store_explicit(&f->last_use, now, memory_order_relaxed);
    if (!atomic_load_explicit(&f->touched, memory_order_relaxed))
        atomic_store_explicit(&f->touched, 1, memory_order_relaxed);
    if (m)
        return m;
    pthread_mutex_lock(&e->cq_map_mu);
    if (!f->map && mfile_map(f) == 0) {
        mfile_advise_random(f);
        atomic_fetch_add(&e->cq_mapped, 1);
    }
    m = f->map;
    pthread_mutex_unlock(&e->cq_map_mu);
    return m;
}

static uint8_t *entry_ptr(const store_cq *q, int64_t index)
{
    int64_t pos = index * STORE_CQ_UNIT;
    mfile *f = mfile_list_find(&q->files, pos);
    uint8_t *m = f ? cq_file_map(q->e, f) : NULL;
    return m ? m + (pos - f->start) : NULL;
}

int cq_map_for(store_engine *e, store_cq *q, int64_t index)
{
    mfile *f = mfile_list_find(&q->files, index * STORE_CQ_UNIT);
    if (!f)
        return -ENOENT;
    return cq_file_map(e, f) ? 0 : -ENOMEM;
}

typedef struct mapped_file {
    uint32_t age; /* clock ticks since its last use */
    mfile *f;
} mapped_file;

static int older_first(const void *a, const void *b)
{
    uint32_t x = ((const mapped_file *)a)->age, y = ((const mapped_file *)b)->age;
    return x > y ? -1 : x < y;
}

/* Past the cap, the least recently used quarter of the cap goes (with
 * `maps` exclusive no reader holds a pointer into them); the clock ticks
 * once per trim, so "recent" means "since the last trim". */
void cq_unmap_cold(store_engine *e)
{
    int64_t cap = e->cfg.max_mapped_cq_files;
    if (cap <= 0 || atomic_load_explicit(&e->cq_mapped, memory_order_relaxed) <= cap)
        return;
    pthread_rwlock_wrlock(&e->maps);
    size_t n = 0, room = (size_t)atomic_load(&e->cq_mapped) + 64;
    mapped_file *v = malloc(room * sizeof *v);
    uint32_t now = atomic_load(&e->cq_clock);
    for (size_t b = 0; v && b < e->cqs.nb; b++)
        for (store_cq *q = e->cqs.b[b]; q; q = q->next)
            for (size_t i = 0; i < q->files.n; i++) {
                mfile *f = q->files.v[i];
                if (!f->map)
                    continue;
                if (n == room) {
                    mapped_file *nv = realloc(v, room * 2 * sizeof *v);
                    if (!nv)
                        continue;
                    v = nv;
                    room *= 2;
                }
                v[n++] = (mapped_file){now - atomic_load(&f->last_use), f};
            }
    size_t keep = (size_t)(cap - cap / 4), dropped = 0;
    if (v && n > keep) {
        qsort(v, n, sizeof *v, older_first);
        for (; dropped < n - keep; dropped++)
            mfile_unmap(v[dropped].f);
    }
    atomic_store(&e->cq_mapped, (int64_t)(n - dropped));
    atomic_fetch_add(&e->cq_clock, 1);
    pthread_rwlock_unlock(&e->maps);
    free(v);
}

/* The idle sweep: a pass starts CQ_SWEEP_EVERY_MS after the last one ended
 * and visits CQ_SWEEP_BUCKETS buckets per housekeeper tick (~3,000 queues,
 * a fraction of a ms under `maps` shared), so 400,000 queues take ~1.3 s a
 * pass. Why: up to maxMappedConsumeQueueFiles queue files stay mapped, and
 * every page an append or a read touched stays in the RSS with them (55 MB
 * for 8,192 one-message queues); a file idle for a whole pass gives its
 * pages back. MADV_DONTNEED on a shared file mapping only removes the
 * process's PTEs: the data stay in the page cache (dirty ones are written
 * back as usual) and the next access maps them again (a minor fault). The
 * mapping itself stays: no pointer a reader holds becomes invalid. */
#define CQ_SWEEP_EVERY_MS 2000
#define CQ_SWEEP_BUCKETS 4096

static void release_if_idle(mfile *f)
{
    uint8_t *m = mfile_mapped(f);
    if (!m)
        return;
    if (atomic_load_explicit(&f->touched, memory_order_relaxed)) {
        atomic_store_explicit(&f->touched, 0, memory_order_relaxed);
        f->released = false;
        return;
    }
    if (f->released)
        return;
    madvise(m, (size_t)f->size, MADV_DONTNEED);
    f->released = true;
}

void cq_release_idle(store_engine *e)
{
    if (atomic_load_explicit(&e->cq_mapped, memory_order_relaxed) == 0)
        return;
    int64_t now = store_now_ms();
    if (e->cq_sweep_next == 0 && now - e->cq_sweep_done_ms < CQ_SWEEP_EVERY_MS)
        return;
    pthread_rwlock_rdlock(&e->maps);
    size_t b = e->cq_sweep_next;
    size_t end = b + CQ_SWEEP_BUCKETS;
    if (end > e->cqs.nb)
        end = e->cqs.nb;
    for (; b < end; b++)
        for (store_cq *q = e->cqs.b[b]; q; q = q->next)
            for (size_t i = 0; i < q->files.n; i++)
                release_if_idle(q->files.v[i]);
    pthread_rwlock_unlock(&e->maps);
    e->cq_sweep_next = b >= e->cqs.nb ? 0 : b;
    if (e->cq_sweep_next == 0)
        e->cq_sweep_done_ms = now;
}

/* Entries faulted in ahead of a queue's end: 5 pages, one page being
 * ~204 entries, so a queue is looked at about once per 800 appends. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define CQ_PREFAULT_AHEAD (1024 * STORE_CQ_UNIT)
/* At least this far ahead: half a page, so a queue's second page is faulted
 * in once its first is half full (~100 entries ahead of the appender), not
 * with its first entry: 400,000 one-message queues held two pages each */
#define CQ_PREFAULT_MIN 2048

void cq_want_prefault(store_engine *e, store_cq *q)
{
    int64_t end = atomic_load_explicit(&q->max_offset, memory_order_relaxed) * STORE_CQ_UNIT;
    int64_t ahead = end < CQ_PREFAULT_MIN ? CQ_PREFAULT_MIN : end;
    if (ahead > CQ_PREFAULT_AHEAD)
        ahead = CQ_PREFAULT_AHEAD;
    if (end + ahead / 2 <= atomic_load_explicit(&q->prefault_end, memory_order_relaxed))
        return;
    pthread_mutex_lock(&e->cq_hot_mu);
    if (!q->pf_queued && e->cq_hot_n < (int)(sizeof e->cq_hot / sizeof e->cq_hot[0])) {
        q->pf_queued = true;
        e->cq_hot[e->cq_hot_n++] = q;
    }
    pthread_mutex_unlock(&e->cq_hot_mu);
}

/* A queue's entries are written by the appender through the mapping: the
 * first write to each 4 KiB page is a fault (the file is sparse and mapped
 * MADV_RANDOM), on a VM a first touch of fresh memory too. Faulting the
 * next pages in here keeps that off the appending (I/O) thread. Holding
 * `maps` shared keeps every queue and file of the list alive (they are
 * freed only under `maps` exclusive, which also removes them from the list). */
void cq_prefault_hot(store_engine *e)
{
    store_cq *hot[sizeof e->cq_hot / sizeof e->cq_hot[0]];
    pthread_rwlock_rdlock(&e->maps);
    pthread_mutex_lock(&e->cq_hot_mu);
    int n = e->cq_hot_n;
    memcpy(hot, e->cq_hot, (size_t)n * sizeof hot[0]);
    for (int i = 0; i < n; i++)
        hot[i]->pf_queued = false;
    e->cq_hot_n = 0;
    pthread_mutex_unlock(&e->cq_hot_mu);
    for (int i = 0; i < n; i++) {
        store_cq *q = hot[i];
        int64_t end = atomic_load_explicit(&q->max_offset, memory_order_acquire) * STORE_CQ_UNIT;
        int64_t from = atomic_load(&q->prefault_end);
        if (from < end)
            from = end;
        /* ahead by what the queue already holds, up to CQ_PREFAULT_AHEAD:
         * 100,000 queues of one message each must not fault in 20 KiB
         * apiece */
        int64_t ahead = end < CQ_PREFAULT_MIN ? CQ_PREFAULT_MIN : end;
        int64_t to = end + (ahead < CQ_PREFAULT_AHEAD ? ahead : CQ_PREFAULT_AHEAD);
        from = from / 4096 * 4096;
        while (from < to) {
            mfile *f = mfile_list_find(&q->files, from);
            uint8_t *m = f ? cq_file_map(e, f) : NULL;
            if (!m)
                break; /* the next file does not exist yet */
            int64_t stop = to < f->start + f->size ? to : f->start + f->size;
            int64_t a = from - f->start;
            madvise(m + a, (size_t)(stop - f->start - a), MADV_POPULATE_WRITE);
            from = stop;
        }
        if (from > atomic_load(&q->prefault_end))
            atomic_store(&q->prefault_end, from);
    }
    pthread_rwlock_unlock(&e->maps);
}

bool cq_has_file_for(const store_cq *q, int64_t index)
{
    return mfile_list_find(&q->files, index * STORE_CQ_UNIT) != NULL;
}

int cq_add_file_for(store_engine *e, store_cq *q, int64_t index, char *err, size_t errlen)
{
    int64_t fs = q->files.file_size;
    int64_t start = index * STORE_CQ_UNIT / fs * fs;
    char dir[PATH_MAX];
    cq_dir_path(e, q, dir, sizeof dir);
    int rc = store_mkdirs(dir);
    if (rc != 0) {
        snprintf(err, errlen, "mkdir %s: %s", dir, strerror(-rc));
        return rc;
    }
    char path[PATH_MAX];
    store_name20(path, sizeof path, dir, start);
    mfile *f;
    if (atomic_load(&e->inject_errno)) {
        snprintf(err, errlen, "injected fault");
        return -atomic_load(&e->inject_errno);
    }
    rc = mfile_open_unmapped(path, q, start, fs, true, &f, err, errlen);
    if (rc != 0)
        return rc;
    /* keep the list ordered: new files normally come last */
    rc = mfile_list_push(&q->files, f);
    if (rc != 0) {
        mfile_close(f, true);
        return rc;
    }
    for (size_t i = q->files.n - 1; i > 0 && q->files.v[i - 1]->start > f->start; i--) {
        mfile *t = q->files.v[i - 1];
        q->files.v[i - 1] = q->files.v[i];
        q->files.v[i] = t;
    }
    return 0;
}

/* Blocks for entry `index` and the chunk after it (store_backing.c): the
 * appender reserves before it writes a record, so a full disk refuses the
 * put instead of faulting on the queue's mapping. 0 or -errno. */
int cq_back_entry(store_engine *e, store_cq *q, int64_t index)
{
    int64_t pos = index * STORE_CQ_UNIT;
    mfile *f = mfile_list_find(&q->files, pos);
    if (!f)
        return -ENOENT;
    int64_t need = pos - f->start + STORE_CQ_UNIT;
    if (need <= atomic_load_explicit(&f->backed, memory_order_acquire))
        return 0;
    /* ahead by what the file already holds, 4 KiB to STORE_CQ_BACK_CHUNK:
     * 400,000 queues of one message each reserving 64 KiB apiece took
     * 26 GB of disk for 8 MB of entries */
    int64_t chunk = need < 4096 ? 4096 : need > STORE_CQ_BACK_CHUNK ? STORE_CQ_BACK_CHUNK : need;
    chunk = (chunk + 4095) / 4096 * 4096;
    int64_t to = (need + chunk - 1) / chunk * chunk;
    int rc = mfile_back(e, f, to);
    if (rc != 0 && to > need)
        rc = mfile_back(e, f, need); /* the chunk did not fit: this entry alone */
    return rc;
}

static void write_entry(uint8_t *p, int64_t phys, int32_t size, int64_t tags)
{
    stored_put_be64(p, (uint64_t)phys);
    stored_put_be32(p + 8, (uint32_t)size);
    stored_put_be64(p + 12, (uint64_t)tags);
}

int cq_write_entry(store_engine *e, store_cq *q, int64_t index, int64_t phys, int32_t size,
                   int64_t tags)
{
    uint8_t *p = entry_ptr(q, index);
    if (!p)
        return -ENOENT;
    write_entry(p, phys, size, tags);
    q->max_phys_end = phys + size;
    cq_note_covered(e, phys, size); /* the queues' reach, kept in the state file */
    return 0;
}

int cq_put_entry(store_engine *e, store_cq *q, int64_t index, int64_t phys, int32_t size,
                 int64_t tags, bool publish)
{
    uint8_t *p = entry_ptr(q, index);
    if (!p)
        return -ENOENT;
    int rc = cq_back_entry(e, q, index);
    if (rc != 0)
        return rc;
    int64_t max = atomic_load_explicit(&q->max_offset, memory_order_relaxed);
    write_entry(p, phys, size, tags);
    q->max_phys_end = phys + size;
    cq_note_covered(e, phys, size);
    if (publish && index + 1 > max)
        atomic_store_explicit(&q->max_offset, index + 1, memory_order_release);
    return 0;
}

void cq_fill_blank(store_engine *e, store_cq *q, int64_t from, int64_t to)
{
    /* a gap below a recovered entry (entries lost): padded like
     * ConsumeQueue.fillPreBlank so offsets stay positional */
    for (int64_t i = from; i < to; i++) {
        uint8_t *b = entry_ptr(q, i);
        if (b && cq_back_entry(e, q, i) == 0)
            write_entry(b, 0, INT32_MAX, 0);
    }
}

bool cq_get_entry(const store_cq *q, int64_t index, store_cq_entry *out)
{
    const uint8_t *p = entry_ptr(q, index);
    if (!p)
        return false;
    out->phys_offset = (int64_t)stored_be64(p);
    out->size = (int32_t)stored_be32(p + 8);
    out->tags_code = (int64_t)stored_be64(p + 12);
    return true;
}

bool cq_read_entry(const store_cq *q, int64_t index, store_cq_entry *out)
{
    mfile *f = mfile_list_find(&q->files, index * STORE_CQ_UNIT);
    if (!f)
        return false;
    if (mfile_mapped(f))
        return cq_get_entry(q, index, out);
    uint8_t b[STORE_CQ_UNIT];
    char buf[PATH_MAX];
    int fd = open(mfile_path(f, buf, sizeof buf), O_RDONLY | O_CLOEXEC);
    bool ok = fd >= 0 && pread(fd, b, sizeof b, index * STORE_CQ_UNIT - f->start) == sizeof b;
    if (fd >= 0)
        close(fd);
    if (ok) {
        out->phys_offset = (int64_t)stored_be64(b);
        out->size = (int32_t)stored_be32(b + 8);
        out->tags_code = (int64_t)stored_be64(b + 12);
    }
    return ok;
}

static bool entry_valid(const store_cq *q, int64_t index)
{
    store_cq_entry en;
    return cq_get_entry(q, index, &en) && en.phys_offset >= 0 && en.size > 0;
}

static bool pread_entry_valid(int fd, int64_t pos)
{
    uint8_t b[STORE_CQ_UNIT];
    if (pread(fd, b, sizeof b, pos) != (ssize_t)sizeof b)
        return false;
    return (int64_t)stored_be64(b) >= 0 && (int32_t)stored_be32(b + 8) > 0;
}

#define CQ_READ_WHOLE (1024 * STORE_CQ_UNIT)

/* The queue's end: the first invalid entry of the last file (the valid
 * entries form a prefix: they are written in order). Probed with pread and
 * bounded by the file's first hole: faulting sparse pages of thousands of
 * queue files in through their mappings made a start take seconds. */
static void cq_find_end(store_cq *q)
{
    if (q->files.n == 0)
        return;
    mfile *last = q->files.v[q->files.n - 1];
    int64_t lo = last->start / STORE_CQ_UNIT, hi = lo + last->size / STORE_CQ_UNIT;
    char pbuf[PATH_MAX];
    int fd = open(mfile_path(last, pbuf, sizeof pbuf), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        off_t hole = lseek(fd, 0, SEEK_HOLE);
        if (hole >= 0 && hole < last->size)
            hi = lo + (hole + STORE_CQ_UNIT - 1) / STORE_CQ_UNIT;
    }
    /* A short queue (most of them, with 100,000 topics) is read whole with
     * one pread instead of a pread per probe: start-up makes a few system
     * calls per queue. */
    uint8_t head[CQ_READ_WHOLE];
    int64_t base = lo;
    ssize_t got = -1;
    if (fd >= 0 && (hi - lo) * STORE_CQ_UNIT <= (int64_t)sizeof head)
        got =
            pread(fd, head, (size_t)((hi - lo) * STORE_CQ_UNIT), lo * STORE_CQ_UNIT - last->start);
    /* invariant: entries < lo valid, entries >= hi invalid */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        const uint8_t *p = head + (mid - base) * STORE_CQ_UNIT;
        bool valid = got >= (mid - base + 1) * STORE_CQ_UNIT
                         ? (int64_t)stored_be64(p) >= 0 && (int32_t)stored_be32(p + 8) > 0
                     : fd >= 0 ? pread_entry_valid(fd, (mid * STORE_CQ_UNIT) - last->start)
                               : entry_valid(q, mid);
        if (valid)
            lo = mid + 1;
        else
            hi = mid;
    }
    atomic_store(&q->max_offset, lo);
    int64_t first = q->files.v[0]->start / STORE_CQ_UNIT;
    atomic_store(&q->min_offset, first);
    uint8_t b[STORE_CQ_UNIT];
    if (lo > first) {
        /* the last entry (maybe in an earlier file) and the first one */
        mfile *lf = mfile_list_find(&q->files, (lo - 1) * STORE_CQ_UNIT);
        const uint8_t *in_head = lo - 1 >= base && got >= (lo - base) * STORE_CQ_UNIT
                                     ? head + (lo - 1 - base) * STORE_CQ_UNIT
                                     : NULL; /* already read: no second pread */
        if (in_head)
            q->max_phys_end = (int64_t)stored_be64(in_head) + (int32_t)stored_be32(in_head + 8);
        else if (fd >= 0 && lf == last &&
                 pread(fd, b, sizeof b, (lo - 1) * STORE_CQ_UNIT - last->start) ==
                     (ssize_t)sizeof b)
            q->max_phys_end = (int64_t)stored_be64(b) + (int32_t)stored_be32(b + 8);
        else {
            store_cq_entry en;
            if (cq_get_entry(q, lo - 1, &en))
                q->max_phys_end = en.phys_offset + en.size;
        }
        if (q->files.v[0] == last && got >= STORE_CQ_UNIT) {
            q->load_first_phys = (int64_t)stored_be64(head); /* base is the file's start */
        } else {
            int ffd = q->files.v[0] == last ? fd
                                            : open(mfile_path(q->files.v[0], pbuf, sizeof pbuf),
                                                   O_RDONLY | O_CLOEXEC);
            if (ffd >= 0 && pread(ffd, b, sizeof b, 0) == (ssize_t)sizeof b)
                q->load_first_phys = (int64_t)stored_be64(b);
            if (ffd >= 0 && ffd != fd)
                close(ffd);
        }
    }
    if (fd >= 0)
        close(fd);
}

int cq_read_topic(store_engine *e, const char *topic, store_cq **head, char *err, size_t errlen)
{
    *head = NULL;
    char tdir[PATH_MAX];
    snprintf(tdir, sizeof tdir, "%s/%s", e->cq_dir, topic);
    DIR *td = opendir(tdir);
    if (!td)
        return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
    struct dirent *qe;
    int rc = 0;
    while (rc == 0 && (qe = readdir(td)) != NULL) {
        char *end;
        long qid = strtol(qe->d_name, &end, 10);
        if (qe->d_name[0] < '0' || qe->d_name[0] > '9' || *end || qid > INT32_MAX)
            continue; /* non-numeric dirs are skipped, as Java does */
        store_cq *q = cq_alloc(e, topic, (int32_t)qid, err, errlen);
        if (!q) {
            rc = -ENOMEM;
            break;
        }
        q->next = *head;
        *head = q;
        char dir[PATH_MAX];
        cq_dir_path(e, q, dir, sizeof dir);
        rc = mfile_list_load(&q->files, dir, err, errlen);
        if (rc == 0)
            cq_find_end(q);
    }
    closedir(td);
    if (rc != 0) {
        while (*head) {
            store_cq *nx = (*head)->next;
            cq_free_unlinked(*head);
            *head = nx;
        }
    }
    return rc;
}

void cq_drop_expired_files(store_engine *e, store_cq *q, int64_t cl_min)
{
    (void)e;
    while (q->files.n > 1) {
        mfile *f = q->files.v[0];
        int64_t last_ix = (f->start + f->size) / STORE_CQ_UNIT - 1;
        store_cq_entry en;
        if (!cq_get_entry(q, last_ix, &en) || en.phys_offset >= cl_min)
            break;
        mfile_list_drop_first(&q->files, true);
    }
}

/* First index in [lo, hi) whose entry's commit-log offset is >= off (hi if none). */
static int64_t lower_bound_phys(const store_cq *q, int64_t lo, int64_t hi, int64_t off)
{
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        store_cq_entry en;
        if (cq_get_entry(q, mid, &en) && en.phys_offset < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void cq_truncate_past(store_engine *e, store_cq *q, int64_t cl_end)
{
    (void)e;
    if (q->files.n == 0)
        return;
    int64_t first = q->files.v[0]->start / STORE_CQ_UNIT;
    int64_t max = atomic_load(&q->max_offset);
    int64_t cut = lower_bound_phys(q, first, max, cl_end);
    if (cut >= max)
        return;
    for (int64_t i = cut; i < max; i++) {
        uint8_t *p = entry_ptr(q, i);
        if (p)
            memset(p, 0, STORE_CQ_UNIT);
    }
    while (q->files.n > 1 && q->files.v[q->files.n - 1]->start > cut * STORE_CQ_UNIT)
        mfile_list_drop_last(&q->files, true);
    atomic_store(&q->max_offset, cut);
    if (atomic_load(&q->min_offset) > cut)
        atomic_store(&q->min_offset, cut);
    store_cq_entry en;
    q->max_phys_end = (cut > first && cq_get_entry(q, cut - 1, &en)) ? en.phys_offset + en.size : 0;
}

void cq_correct_min(store_engine *e, store_cq *q, int64_t cl_min)
{
    (void)e;
    if (q->files.n == 0)
        return;
    int64_t first = q->files.v[0]->start / STORE_CQ_UNIT;
    int64_t max = atomic_load(&q->max_offset);
    int64_t lo = atomic_load(&q->min_offset);
    if (lo < first)
        lo = first;
    store_cq_entry en;
    bool known = lo == first && q->load_first_phys >= cl_min;
    q->load_first_phys = -1; /* valid for the start-up correction only */
    if (known) {
        atomic_store(&q->min_offset, lo); /* known from loading: nothing expired */
        return;
    }
    if (lo < max && cq_get_entry(q, lo, &en) && en.phys_offset >= cl_min) {
        atomic_store(&q->min_offset, lo); /* the common case: nothing expired */
        return;
    }
    int64_t m = lower_bound_phys(q, lo, max, cl_min);
    atomic_store(&q->min_offset, m);
}
