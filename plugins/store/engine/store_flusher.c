/* store_flusher.c — the flusher thread: ASYNC writes the commit log back
 * every flush_interval_ms; SYNC runs group commit (one msync covers every
 * waiter registered with store_wait_flush up to the written end; waiters past
 * sync_flush_timeout_ms get done(ud, false)). Also the "flush everything"
 * step (log, then queues and index, then checkpoint and state file) the
 * housekeeper runs once a second and close runs last (§10.15.5). */
#include "store_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* Make the commit log over [from, to) durable: fdatasync of a segment
 * written with pwrite (its dirty pages are the range: nothing else writes
 * it), msync of the range of one written through the mapping. */
static int flush_cl_range(store_engine *e, int64_t from, int64_t to)
{
    int rc = 0;
    pthread_rwlock_rdlock(&e->maps);
    int64_t pos = from;
    while (pos < to) {
        mfile *f = mfile_list_find(&e->cl, pos);
        if (!f) {
            mfile *first = e->cl.n ? e->cl.v[0] : NULL;
            if (first && pos < first->start) {
                pos = first->start; /* deleted by retention meanwhile */
                continue;
            }
            break;
        }
        int64_t end = to < f->start + f->size ? to : f->start + f->size;
        int64_t a = (pos - f->start) / 4096 * 4096;
        int fd = atomic_load(&f->fd);
        if (fd >= 0 ? fdatasync(fd) != 0
                    : msync(f->map + a, (size_t)(end - f->start - a), MS_SYNC) != 0)
            rc = -errno;
        pos = end;
    }
    pthread_rwlock_unlock(&e->maps);
    return rc;
}

/* Consume queues and the index are made durable for the whole file system
 * at once (one journal commit) rather than file by file: thousands of queues
 * would cost thousands of fsyncs a second. */
static void flush_logics(store_engine *e)
{
    if (syncfs(e->root_fd) != 0)
        store_log(e, 1, "syncfs %s: %s", e->root, strerror(errno));
}

int64_t flush_commitlog(store_engine *e)
{
    int64_t target = atomic_load_explicit(&e->committed, memory_order_acquire);
    int64_t ts = atomic_load_explicit(&e->committed_ts, memory_order_relaxed);
    int64_t done = atomic_load(&e->flushed);
    if (target > done) {
        int rc = flush_cl_range(e, done, target);
        if (rc != 0) {
            set_not_writeable(e, "commit-log flush failed", rc);
            return done;
        }
        /* flusher and housekeeper may both flush: never move backwards */
        int64_t cur = atomic_load(&e->flushed);
        while (cur < target && !atomic_compare_exchange_weak(&e->flushed, &cur, target))
            ;
        atomic_store(&e->flushed_ts, ts);
    }
    return target;
}

void flush_all_now(store_engine *e)
{
    int64_t safe = atomic_load_explicit(&e->committed, memory_order_acquire);
    int64_t ts = atomic_load(&e->committed_ts);
    flush_commitlog(e);
    flush_logics(e);
    checkpoint_write(e, atomic_load(&e->flushed_ts), ts, index_full_end_ts(e));
    e->durable_safe = safe;
    e->durable_safe_ts = ts;
    state_write(e, false);
}

static void complete_waiters(store_engine *e, bool all)
{
    int64_t flushed = atomic_load(&e->flushed);
    int64_t now = store_now_ms();
    flush_waiter *ready = NULL, **pp;
    pthread_mutex_lock(&e->flush_mu);
    pp = &e->waiters;
    while (*pp) {
        flush_waiter *w = *pp;
        if (w->end_offset <= flushed || now >= w->deadline_ms || all) {
            *pp = w->next;
            w->next = ready;
            ready = w;
        } else {
            pp = &w->next;
        }
    }
    pthread_mutex_unlock(&e->flush_mu);
    /* oldest first: the list was built newest first twice */
    flush_waiter *rev = NULL;
    while (ready) {
        flush_waiter *n = ready->next;
        ready->next = rev;
        rev = ready;
        ready = n;
    }
    while (rev) {
        flush_waiter *n = rev->next;
        rev->done(rev->ud, rev->end_offset <= flushed);
        free(rev);
        rev = n;
    }
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* SYNC group commit: before syncing, let the appends that are arriving
 * join. Why: the first send of a burst wakes the flusher; syncing at once
 * would cover that send alone and make the rest of the burst (pipelined
 * clients send dozens at a time) wait for it and then for a second sync —
 * two syncs per round trip instead of one. So wait while the log end keeps
 * moving (GATHER_STEP_US without a new append ends the wait), at most about
 * the last sync's duration (the wait then costs at most what it saves),
 * within [GATHER_MIN_US, GATHER_MAX_US]. */
#define GATHER_STEP_US 50
#define GATHER_MIN_US 100
#define GATHER_MAX_US 2000
static void gather_group(store_engine *e, int64_t last_sync_us)
{
    int64_t cap = last_sync_us < GATHER_MIN_US   ? GATHER_MIN_US
                  : last_sync_us > GATHER_MAX_US ? GATHER_MAX_US
                                                 : last_sync_us;
    int64_t t0 = now_us();
    int64_t seen = atomic_load(&e->committed);
    for (;;) {
        struct timespec ts = {0, GATHER_STEP_US * 1000};
        nanosleep(&ts, NULL);
        int64_t cur = atomic_load(&e->committed);
        if (cur == seen || atomic_load(&e->closing) || now_us() - t0 >= cap)
            return;
        seen = cur;
    }
}

static void *flusher_main(void *arg)
{
    store_engine *e = arg;
    bool sync = e->cfg.flush_type == STORE_SYNC_FLUSH;
    int64_t last_sync_us = 0;
    if (sync)
        prctl(PR_SET_TIMERSLACK, 1UL); /* the gathering sleeps are short */
    int64_t interval = e->cfg.flush_interval_ms > 0 ? e->cfg.flush_interval_ms : 500;
    for (;;) {
        pthread_mutex_lock(&e->flush_mu);
        bool pending = e->waiters && atomic_load(&e->flushed) < atomic_load(&e->committed);
        if (!atomic_load(&e->closing) && (!sync || !pending)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            int64_t wait_ms = sync ? (e->waiters ? 1 : 10) : interval;
            ts.tv_sec += wait_ms / 1000;
            ts.tv_nsec += (wait_ms % 1000) * 1000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&e->flush_cv, &e->flush_mu, &ts);
        }
        bool closing = atomic_load(&e->closing);
        bool gather =
            sync && !closing && e->waiters && atomic_load(&e->flushed) < atomic_load(&e->committed);
        pthread_mutex_unlock(&e->flush_mu);
        if (gather && !getenv("RMQ_NOGATHER"))
            gather_group(e, last_sync_us);
        int64_t t0 = now_us();
        int64_t before = atomic_load(&e->flushed);
        flush_commitlog(e);
        if (atomic_load(&e->flushed) > before)
            last_sync_us = now_us() - t0;
        complete_waiters(e, closing);
        if (closing)
            break;
    }
    return NULL;
}

int flusher_start(store_engine *e)
{
    int rc = pthread_create(&e->flusher, NULL, flusher_main, e);
    if (rc != 0)
        return -rc;
    e->flusher_started = true;
    return 0;
}

void flusher_stop(store_engine *e)
{
    if (!e->flusher_started)
        return;
    pthread_mutex_lock(&e->flush_mu);
    atomic_store(&e->closing, true);
    pthread_cond_signal(&e->flush_cv);
    pthread_mutex_unlock(&e->flush_mu);
    pthread_join(e->flusher, NULL);
    e->flusher_started = false;
}

int store_wait_flush(store_engine *e, int64_t end_offset, void (*done)(void *ud, bool ok), void *ud)
{
    if (!e || !done)
        return -EINVAL;
    if (atomic_load(&e->flushed) >= end_offset) {
        done(ud, true);
        return 0;
    }
    flush_waiter *w = malloc(sizeof *w);
    if (!w)
        return -ENOMEM;
    w->end_offset = end_offset;
    w->deadline_ms = store_now_ms() + e->cfg.sync_flush_timeout_ms;
    w->done = done;
    w->ud = ud;
    pthread_mutex_lock(&e->flush_mu);
    if (!e->flusher_started || atomic_load(&e->closing)) {
        pthread_mutex_unlock(&e->flush_mu);
        free(w);
        return -ESHUTDOWN;
    }
    w->next = e->waiters;
    e->waiters = w;
    pthread_cond_signal(&e->flush_cv);
    pthread_mutex_unlock(&e->flush_mu);
    return 0;
}
