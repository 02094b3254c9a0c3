/* store_recovery.c — start-up recovery (§10.15.4) and the engine's own state
 * file. The scan starts as late as is safe: at the clean-stop end recorded in
 * `rmqhost_store_state` (verified, no scan at all), else at the state file's
 * "written offset" when the machine has not rebooted since (every record
 * below it had its queue entries and index keys in the page cache, which a
 * killed process does not lose), else at its "durable offset" (those entries
 * were flushed to disk), else where Java starts (third-to-last file on a normal start,
 * the checkpoint-matched file after a crash); never after the largest
 * consume-queue end, so records no queue covers are re-dispatched. Records
 * are walked until the first invalid one; the torn tail is zeroed, later
 * segments removed, queues cut back to the log end, min offsets corrected.
 *
 * rmqhost_store_state (140 bytes, big-endian; Java ignores unknown files):
 *   0 "RMQHST03"  8 clean flag (int32)  12 flags (int32; 1: the queue of the
 *   record named at 120 was deleted since; 2: no queue existed at all)
 *   16 clean end offset  24 last record offset  32 last record size
 *   40 durable offset  48 its store time  56 commit-log file size
 *   64 largest consume-queue end (offset + size) at the clean stop
 *   72 written offset  80 boot id (/proc/sys/kernel/random/boot_id, 40 bytes)
 *   120 offset and 128 size of the record with the largest queue entry below
 *   the written offset (-1: none)  136 CRC-32 of bytes 0..135
 * ("RMQHST02", 124 bytes with the CRC at 120, is still read: its start loads
 * every queue.)
 * Consume queues are loaded on first use (store_cq_lazy.c): the queues'
 * reach (the largest queue end, which must cover what recovery does not
 * re-dispatch) is checked on the one queue holding the record named at 120
 * — its entry must name that record (and, for a clean stop, be the queue's
 * last) — and when that fails every queue is loaded and the largest end
 * taken, as before. When that record's queue was deleted (its topic, by
 * DELETE_TOPIC_IN_BROKER or a clean-up), a clean stop, or a kill -9 on the
 * same boot, is still accepted if the record is intact and its queue is
 * still absent: the reach then is that record's end, nothing after it
 * having been queued (it would have replaced the record named). The
 * deletion writes the state before it is answered, and the record named
 * is never replaced by a lower one of a living queue (a crash start would
 * re-dispatch, and so bring back, the deleted queue's records above it).
 * Queues loaded later are cut at the recovered end.
 * Written every 100 ms (written offset) and after each full flush (durable
 * offset, once a second); each write only names data already in the page
 * cache (written) or on disk (durable).
 * A clean-stop end is trusted only if the record before it is intact, the
 * bytes after it are still zero (nothing appended since, e.g. by a Java
 * broker) and the consume queues still reach as far as they did. */
#include "store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#define STATE_SIZE 140
#define STATE_SIZE_V2 124

typedef struct state_rec {
    bool valid, clean, has_cov, cov_gone, cq_none;
    int64_t end, last_off, last_size, safe, safe_ts, covered, written, cov_off, cov_size;
    bool same_boot;
} state_rec;

static int64_t cq_covered(store_engine *e)
{
    int64_t covered = 0;
    for (size_t i = 0; i < e->cqs.nb; i++)
        for (store_cq *q = e->cqs.b[i]; q; q = q->next)
            if (q->max_phys_end > covered)
                covered = q->max_phys_end;
    return covered;
}

void state_write(store_engine *e, bool clean)
{
    pthread_mutex_lock(&e->state_mu);
    int64_t written = cl_file_end(e); /* not what is only staged in memory */
    /* the record with the largest queue entry, if it is in the file;
     * else the one named last time (below an earlier written offset) */
    int64_t cov = atomic_load_explicit(&e->cov_off, memory_order_acquire);
    int64_t cov_size = atomic_load_explicit(&e->cov_size, memory_order_relaxed);
    if (cov >= 0 && cov + (cov_size < 0 ? -cov_size : cov_size) <= written) {
        atomic_store(&e->state_cov_off, cov);
        atomic_store(&e->state_cov_size, cov_size);
    } else {
        cov = atomic_load(&e->state_cov_off);
        cov_size = atomic_load(&e->state_cov_size);
    }
    bool gone = cov_size < 0; /* its queue was deleted (cq_destroy) */
    bool none = atomic_load(&e->cq_count_pub) == 0 && atomic_load(&e->lazy_left) == 0;
    if (gone)
        cov_size = -cov_size;
    uint8_t b[STATE_SIZE] = {0};
    memcpy(b, "RMQHST03", 8);
    stored_put_be32(b + 8, clean ? 1 : 0);
    stored_put_be32(b + 12, (gone ? 1 : 0) | (none ? 2 : 0));
    stored_put_be64(b + 16, (uint64_t)(clean ? e->write_pos : -1));
    stored_put_be64(b + 24,
                    (uint64_t)atomic_load_explicit(&e->last_rec_offset, memory_order_relaxed));
    stored_put_be64(b + 32,
                    (uint64_t)atomic_load_explicit(&e->last_rec_size, memory_order_relaxed));
    stored_put_be64(b + 40, (uint64_t)e->durable_safe);
    stored_put_be64(b + 48, (uint64_t)e->durable_safe_ts);
    stored_put_be64(b + 56, (uint64_t)e->cfg.commitlog_file_size);
    stored_put_be64(b + 64, (uint64_t)(clean ? (cov >= 0 ? cov + cov_size : 0) : -1));
    stored_put_be64(b + 72, (uint64_t)written);
    memcpy(b + 80, e->boot_id, 40);
    stored_put_be64(b + 120, (uint64_t)cov);
    stored_put_be64(b + 128, (uint64_t)cov_size);
    stored_put_be32(b + 136, (uint32_t)crc32(0, b, 136));
    if (pwrite(e->state_fd, b, sizeof b, 0) != (ssize_t)sizeof b)
        store_log(e, 1, "write %s: %s", STORE_STATE_FILE, strerror(errno));
    pthread_mutex_unlock(&e->state_mu);
}

static state_rec state_read(store_engine *e)
{
    state_rec s = {0};
    uint8_t b[STATE_SIZE];
    ssize_t got = pread(e->state_fd, b, sizeof b, 0);
    bool v3 = got == STATE_SIZE && memcmp(b, "RMQHST03", 8) == 0 &&
              stored_be32(b + 136) == (uint32_t)crc32(0, b, 136);
    bool v2 = !v3 && got >= STATE_SIZE_V2 && memcmp(b, "RMQHST02", 8) == 0 &&
              stored_be32(b + 120) == (uint32_t)crc32(0, b, 120);
    if ((!v3 && !v2) || (int64_t)stored_be64(b + 56) != e->cfg.commitlog_file_size)
        return s;
    s.valid = true;
    s.has_cov = v3;
    s.cov_off = v3 ? (int64_t)stored_be64(b + 120) : -1;
    s.cov_size = v3 ? (int64_t)stored_be64(b + 128) : 0;
    s.cov_gone = v3 && (stored_be32(b + 12) & 1);
    s.cq_none = v3 && (stored_be32(b + 12) & 2);
    s.clean = stored_be32(b + 8) == 1;
    s.end = (int64_t)stored_be64(b + 16);
    s.last_off = (int64_t)stored_be64(b + 24);
    s.last_size = (int64_t)stored_be64(b + 32);
    s.safe = (int64_t)stored_be64(b + 40);
    s.safe_ts = (int64_t)stored_be64(b + 48);
    s.covered = (int64_t)stored_be64(b + 64);
    s.written = (int64_t)stored_be64(b + 72);
    s.same_boot = e->boot_id[0] && memcmp(b + 80, e->boot_id, 40) == 0;
    return s;
}

void checkpoint_write(store_engine *e, int64_t physic_ts, int64_t logics_ts, int64_t index_ts)
{
    uint8_t *p = e->checkpoint->map;
    /* a checkpoint found sparse (Java's is) gets its block first */
    int rc = mfile_back(NULL, e->checkpoint, STORE_CHECKPOINT_SIZE);
    if (rc != 0) {
        store_log(e, 1, "checkpoint not written: %s", store_back_error(rc));
        return;
    }
    if (physic_ts > 0)
        stored_put_be64(p, (uint64_t)physic_ts);
    if (logics_ts > 0)
        stored_put_be64(p + 8, (uint64_t)logics_ts);
    stored_put_be64(p + 16, (uint64_t)index_ts);
    msync(p, STORE_CHECKPOINT_SIZE, MS_SYNC);
}

static int64_t cl_end_of_files(store_engine *e)
{
    return e->cl.n ? e->cl.v[e->cl.n - 1]->start + e->cl.v[e->cl.n - 1]->size : 0;
}

/* Is `off` where a record (or nothing yet) starts? */
static bool boundary_ok(store_engine *e, int64_t off)
{
    mfile *f = mfile_list_find(&e->cl, off);
    if (!f)
        return off == cl_end_of_files(e) && off >= (e->cl.n ? e->cl.v[0]->start : 0);
    const uint8_t *p = f->map + (off - f->start);
    int64_t left = f->start + f->size - off;
    stored_record r;
    stored_record_rc rc = stored_record_decode(p, (size_t)left, false, &r);
    if (rc == STORED_RECORD_OK)
        return r.phys_offset == off;
    if (rc == STORED_RECORD_BLANK)
        return r.total_size == left;
    return left >= 8 && stored_be64(p) == 0; /* end of data */
}

/* Does the queue of the record at [off, off + size) have the entry naming
 * it (the queue's last one when `last`)? With `gone` (its queue was
 * deleted): is that queue still absent? Loads that one topic. */
static bool record_in_queue(store_engine *e, int64_t off, int64_t size, bool last, bool gone)
{
    mfile *f = mfile_list_find(&e->cl, off);
    stored_record r;
    if (!f || size <= 0 || off + size > f->start + f->size ||
        stored_record_decode(f->map + (off - f->start), (size_t)size, e->cfg.check_crc_on_recover,
                             &r) != STORED_RECORD_OK ||
        r.phys_offset != off || r.total_size != size || r.topic_len == 0 ||
        memchr(r.topic, '/', r.topic_len) || r.queue_id < 0 || r.queue_offset < 0)
        return false;
    char topic[128];
    memcpy(topic, r.topic, r.topic_len);
    topic[r.topic_len] = 0;
    if (!cq_ensure_topic(e, topic, false))
        return false;
    store_cq *q = cq_find(e, topic, r.queue_id);
    if (gone)
        return q == NULL;
    store_cq_entry en;
    int64_t max = q ? atomic_load(&q->max_offset) : 0;
    return q && r.queue_offset < max && (!last || r.queue_offset == max - 1) &&
           cq_read_entry(q, r.queue_offset, &en) && en.phys_offset == off && en.size == size;
}

/* After a start that loaded every queue: the record of the largest entry,
 * unless the record named already reaches further (its queue was deleted:
 * naming a lower one would make a start after a crash re-dispatch the
 * deleted queue's records above it) and is still in the log. */
static void cov_from_table(store_engine *e)
{
    store_cq *best = NULL;
    for (size_t i = 0; i < e->cqs.nb; i++)
        for (store_cq *q = e->cqs.b[i]; q; q = q->next)
            if (atomic_load(&q->max_offset) > 0 && (!best || q->max_phys_end > best->max_phys_end))
                best = q;
    int64_t cur = atomic_load(&e->cov_off), cur_size = atomic_load(&e->cov_size);
    int64_t cur_end = cur < 0 ? -1 : cur + (cur_size < 0 ? -cur_size : cur_size);
    if (best && best->max_phys_end <= cur_end && cur >= atomic_load(&e->cl_min_offset))
        return;
    store_cq_entry en;
    if (best && cq_get_entry(best, atomic_load(&best->max_offset) - 1, &en)) {
        atomic_store(&e->cov_off, en.phys_offset);
        atomic_store(&e->cov_size, en.size);
    }
}

/* How far the consume queues reach: from the record the state file names
 * when its queue confirms it (exact: a clean stop's largest end, else a
 * lower bound, which only makes recovery re-dispatch a little more), else
 * the largest end of every queue, all loaded now. -1 when they cannot be
 * loaded. */
static int64_t queues_reach(store_engine *e, const state_rec *s, bool exact, char *err,
                            size_t errlen)
{
    /* a deleted queue is trusted after a clean stop (everything flushed,
     * the deletion included) or a kill -9 on the same boot (the state
     * written since the deletion and every queue entry below its written
     * offset are in the page cache, which a killed process does not lose;
     * the deletion writes the state before it is answered), not after a
     * reboot; and while consumequeue/ still holds topics or held none
     * when the state was written (else it was lost wholesale: every queue
     * is rebuilt); the loaded queues must not reach further (every queue,
     * when all are loaded) */
    bool gone = s->cov_gone && (exact || s->same_boot) && (e->lazy_n > 0 || s->cq_none);
    if ((atomic_load(&e->lazy_left) > 0 || gone) && s->has_cov && s->cov_off >= 0 &&
        record_in_queue(e, s->cov_off, s->cov_size, exact, gone) &&
        (!gone || !exact || cq_covered(e) < s->cov_off + s->cov_size)) {
        atomic_store(&e->cov_off, s->cov_off);
        atomic_store(&e->cov_size, gone ? -s->cov_size : s->cov_size);
        int64_t reach = s->cov_off + s->cov_size;
        if (gone && cq_covered(e) > reach) {
            /* after a crash only: the topic re-created and sent to after
             * the last state write; its queues, loaded by the check, reach
             * further (as trusted as the fallback's loaded queues) */
            reach = cq_covered(e);
            cov_from_table(e);
        }
        return reach;
    }
    if (atomic_load(&e->lazy_left) > 0) {
        store_log(e, 2, "recovery: loading every consume queue to find how far they reach");
        if (cq_load_all(e, err, errlen) != 0)
            return -1;
    }
    return cq_covered(e);
}

/* s->covered is checked last (it may load every queue) */
static bool clean_state_ok(store_engine *e, const state_rec *s, char *err, size_t errlen)
{
    if (!s->valid || !s->clean || s->end < 0 || s->end > cl_end_of_files(e) ||
        (e->cl.n && s->end < e->cl.v[0]->start))
        return false;
    if (s->last_size > 0) {
        mfile *f = mfile_list_find(&e->cl, s->last_off);
        stored_record r;
        if (!f || s->last_off + s->last_size > f->start + f->size ||
            stored_record_decode(f->map + (s->last_off - f->start), (size_t)s->last_size, false,
                                 &r) != STORED_RECORD_OK ||
            r.phys_offset != s->last_off)
            return false;
        if (s->last_off + s->last_size != s->end) {
            /* only a blank and a segment change may separate them */
            if (s->end != f->start + f->size && !(mfile_list_find(&e->cl, s->end) &&
                                                  mfile_list_find(&e->cl, s->end)->start == s->end))
                return false;
        }
    }
    mfile *f = mfile_list_find(&e->cl, s->end);
    if (f && f->start + f->size - s->end >= 8 && stored_be64(f->map + (s->end - f->start)) != 0)
        return false; /* something was appended after our clean stop */
    return s->covered == queues_reach(e, s, true, err, errlen);
}

static const int64_t java_delay_ms[] = {1000,   5000,   10000,   30000,   60000,   120000,
                                        180000, 240000, 300000,  360000,  420000,  480000,
                                        540000, 600000, 1200000, 1800000, 3600000, 7200000};

static int64_t recovered_tags(const stored_record *r)
{
    const char *v;
    size_t vl;
    if (r->topic_len == 19 && memcmp(r->topic, "SCHEDULE_TOPIC_XXXX", 19) == 0 &&
        stored_props_get(r->props, r->props_len, "DELAY", &v, &vl) && vl < 12) {
        char num[16];
        memcpy(num, v, vl);
        num[vl] = 0;
        long lvl = strtol(num, NULL, 10);
        int n = (int)(sizeof java_delay_ms / sizeof java_delay_ms[0]);
        if (lvl > n)
            lvl = n;
        if (lvl >= 1)
            return r->store_ts + java_delay_ms[lvl - 1];
        return r->store_ts + 1000;
    }
    if (stored_props_get(r->props, r->props_len, "TAGS", &v, &vl))
        return store_java_hash(v, vl);
    return 0;
}

void store_dispatch(store_engine *e, const uint8_t *rec, int64_t phys, bool recovering)
{
    stored_record r;
    if (stored_record_decode(rec, stored_be32(rec), false, &r) != STORED_RECORD_OK)
        return;
    char topic[128];
    memcpy(topic, r.topic, r.topic_len);
    topic[r.topic_len] = 0;
    char err[256];
    int tx = r.sys_flag & STORED_SYSFLAG_TX_MASK;
    /* fields outside the body CRC may be damaged: a topic that is not one
     * directory name, a negative queue, or a queue offset far past the
     * queue's end (filling the gap would create files without end) get no
     * queue entry */
    bool sane = r.topic_len > 0 && !memchr(r.topic, '/', r.topic_len) && strcmp(topic, ".") &&
                strcmp(topic, "..") && r.queue_id >= 0 && r.queue_offset >= 0;
    if (!sane && tx != STORED_SYSFLAG_TX_PREPARED && tx != STORED_SYSFLAG_TX_ROLLBACK)
        store_log(e, 1, "recovery: record at %lld has an unusable topic/queue, not enqueued",
                  (long long)phys);
    /* the topic's queues from disk first (recovery holds no lock;
     * replication holds append_mu and `maps` exclusively) */
    if (sane && !cq_ensure_topic(e, topic, !recovering))
        sane = false;
    if (sane && tx != STORED_SYSFLAG_TX_PREPARED && tx != STORED_SYSFLAG_TX_ROLLBACK) {
        store_cq *q = cq_find(e, topic, r.queue_id);
        if (!q)
            q = cq_create(e, topic, r.queue_id, err, sizeof err);
        int64_t per_file = e->cfg.cq_file_size / STORE_CQ_UNIT;
        if (q && r.queue_offset > atomic_load(&q->max_offset) + per_file) {
            store_log(e, 1,
                      "recovery: record at %lld has queue offset %lld, far past the end %lld of "
                      "%s/%d: not enqueued",
                      (long long)phys, (long long)r.queue_offset,
                      (long long)atomic_load(&q->max_offset), topic, r.queue_id);
        } else if (q && r.queue_offset >= atomic_load(&q->max_offset)) {
            int64_t first = atomic_load(&q->max_offset);
            for (int64_t i = first; i <= r.queue_offset; i++)
                if (!cq_has_file_for(q, i) && cq_add_file_for(e, q, i, err, sizeof err) != 0)
                    store_log(e, 0, "recovery: %s", err);
            cq_fill_blank(e, q, first, r.queue_offset);
            int rc =
                cq_put_entry(e, q, r.queue_offset, phys, r.total_size, recovered_tags(&r), true);
            if (rc != 0) /* no blocks for it: the queue ends here, the store refuses puts */
                store_log(e, 0, "recovery: no queue entry for the record at %lld: %s",
                          (long long)phys, store_back_error(rc));
        } else if (q) {
            cq_note_covered(e, phys, r.total_size); /* its queue has it already */
        }
    }
    /* messageIndexEnable as it is now: a slave's dispatch runs while the
     * broker runs, and an update may flip it */
    if (atomic_load_explicit(&e->live.message_index_enable, memory_order_relaxed) &&
        tx != STORED_SYSFLAG_TX_ROLLBACK && phys > e->idx_last_phy) {
        if (index_needs_file(e, 64) && index_add_file(e, err, sizeof err) != 0)
            store_log(e, 0, "recovery: %s", err);
        index_put_record(e, (const uint8_t *)r.topic, r.topic_len, r.props, r.props_len, r.sys_flag,
                         phys, r.store_ts);
    }
}

/* Walk records from `start`; returns the end of the valid data. */
static int64_t scan(store_engine *e, int64_t start, int64_t *dispatched)
{
    int64_t pos = start;
    for (;;) {
        mfile *f = mfile_list_find(&e->cl, pos);
        if (!f)
            break;
        const uint8_t *p = f->map + (pos - f->start);
        int64_t left = f->start + f->size - pos;
        stored_record r;
        stored_record_rc rc =
            stored_record_decode(p, (size_t)left, e->cfg.check_crc_on_recover, &r);
        if (rc == STORED_RECORD_BLANK && r.total_size == left) {
            if (!mfile_list_find(&e->cl, f->start + f->size))
                break; /* the blank is rewritten by the next roll */
            pos = f->start + f->size;
            continue;
        }
        if (rc != STORED_RECORD_OK || r.phys_offset != pos) {
            if (rc != STORED_RECORD_BAD_MAGIC || stored_be64(p) != 0)
                store_log(e, 1, "recovery: commit log ends at %lld (%s)", (long long)pos,
                          rc == STORED_RECORD_OK ? "PHYSICALOFFSET mismatch"
                                                 : stored_record_rc_name(rc));
            break;
        }
        store_dispatch(e, p, pos, true);
        (*dispatched)++;
        e->last_rec_offset = pos;
        e->last_rec_size = r.total_size;
        atomic_store(&e->committed_ts, r.store_ts);
        pos += r.total_size;
    }
    return pos;
}

/* Zero a torn tail after `end` (unless the end is a verified clean stop)
 * and drop the segments beyond it. */
static void cut_tail(store_engine *e, int64_t end, bool trusted)
{
    mfile *f = mfile_list_find(&e->cl, end);
    if (f && !trusted) {
        int64_t stop = end + 4 * 1048576 + e->cfg.max_message_size;
        if (stop > f->start + f->size)
            stop = f->start + f->size;
        int64_t pos = end;
        bool touched = false;
        while (pos < stop) {
            int64_t next = (pos / 4096 + 1) * 4096;
            if (next > stop)
                next = stop;
            uint8_t *p = f->map + (pos - f->start);
            size_t n = (size_t)(next - pos);
            bool zero = p[0] == 0 && memcmp(p, p + 1, n - 1) == 0;
            if (!zero) {
                memset(p, 0, n);
                touched = true;
            }
            pos = next;
        }
        if (touched) {
            int64_t a = (end - f->start) / 4096 * 4096;
            msync(f->map + a, (size_t)(stop - f->start - a), MS_SYNC);
            store_log(e, 1, "recovery: zeroed a torn tail after %lld", (long long)end);
        }
    }
    while (e->cl.n > 0 && e->cl.v[e->cl.n - 1]->start > end) {
        store_log(e, 1, "recovery: removing segment %s past the end", e->cl.v[e->cl.n - 1]->path);
        mfile_list_drop_last(&e->cl, true);
    }
    /* a segment starting exactly at the end with nothing in it stays */
}

int store_recover(store_engine *e, bool clean, char *err, size_t errlen)
{
    int64_t t0 = store_now_ms();
    int64_t cl_min = e->cl.n ? e->cl.v[0]->start : 0;
    state_rec s = state_read(e);
    int64_t end = -1, dispatched = 0;
    const char *how = "clean-stop state";
    /* queues loaded meanwhile are cut and corrected below with the rest */
    e->lazy_recovering = true;
    atomic_store(&e->lazy_cut_end, INT64_MAX);
    atomic_store(&e->cl_min_offset, cl_min);
    err[0] = 0;
    if (clean && clean_state_ok(e, &s, err, errlen)) {
        end = s.end;
        e->last_rec_offset = s.last_off;
        e->last_rec_size = s.last_size;
        atomic_store(&e->committed_ts, s.safe_ts);
    } else if (e->cl.n == 0) {
        end = 0;
        how = "empty commit log";
    } else {
        int64_t start;
        if (s.valid && s.same_boot && s.written >= cl_min && s.written <= cl_end_of_files(e) &&
            boundary_ok(e, s.written)) {
            start = s.written;
            how = "state written offset, same boot";
        } else if (s.valid && s.safe >= cl_min && s.safe <= cl_end_of_files(e) &&
                   boundary_ok(e, s.safe)) {
            start = s.safe;
            how = "state durable offset";
        } else if (clean) {
            start = e->cl.v[e->cl.n >= 3 ? e->cl.n - 3 : 0]->start;
            how = "normal (third-to-last segment)";
        } else {
            const uint8_t *cp = e->checkpoint->map;
            int64_t physic = (int64_t)stored_be64(cp), logics = (int64_t)stored_be64(cp + 8);
            int64_t min_ts = (physic < logics ? physic : logics) - 3000;
            if (min_ts < 0)
                min_ts = 0;
            start = cl_min;
            for (size_t i = e->cl.n; i-- > 0;) {
                stored_record r;
                if (stored_record_decode(e->cl.v[i]->map, (size_t)e->cl.v[i]->size, false, &r) ==
                        STORED_RECORD_OK &&
                    r.store_ts != 0 && r.store_ts <= min_ts) {
                    start = e->cl.v[i]->start;
                    break;
                }
            }
            how = "abnormal (checkpoint)";
        }
        /* records no consume queue covers yet must be re-dispatched */
        int64_t covered = queues_reach(e, &s, false, err, errlen);
        if (covered < 0)
            return -EIO;
        if (covered < start) {
            if (covered < cl_min || !boundary_ok(e, covered))
                covered = cl_min;
            if (covered < start)
                start = covered;
        }
        end = scan(e, start, &dispatched);
    }
    if (err[0])
        return -EIO; /* the queues could not be loaded */
    cut_tail(e, end, dispatched == 0 && strcmp(how, "clean-stop state") == 0);
    e->recovery_wrote = dispatched > 0 || strcmp(how, "clean-stop state") != 0;
    e->write_pos = end;
    atomic_store(&e->committed, end);
    atomic_store(&e->cl_min_offset, cl_min);
    for (size_t i = 0; i < e->cqs.nb; i++)
        for (store_cq *q = e->cqs.b[i]; q; q = q->next) {
            if (q->max_phys_end > end)
                cq_truncate_past(e, q, end);
            cq_correct_min(e, q, cl_min);
        }
    if (atomic_load(&e->lazy_left) == 0)
        cov_from_table(e);
    else if (atomic_load(&e->cov_off) >= end)
        atomic_store(&e->cov_off, -1); /* cannot happen: the entries were checked below it */
    atomic_store(&e->lazy_cut_end, end);
    e->lazy_recovering = false;
    if (e->idx_last_phy >= end)
        e->idx_last_phy = end - 1;
    store_log(e, 2,
              "store recovered (%s, %s): commit log [%lld, %lld), %lld records scanned, "
              "%zu queues loaded, %zu topics' queues to load on use, %lld ms",
              clean ? "normal" : "after a crash", how, (long long)cl_min, (long long)end,
              (long long)dispatched, e->cqs.count, (size_t)atomic_load(&e->lazy_left),
              (long long)(store_now_ms() - t0));
    e->durable_safe = end; /* made true by the flush store_open runs next */
    e->durable_safe_ts = atomic_load(&e->committed_ts);
    return 0;
}
