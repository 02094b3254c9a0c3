/* store_flusher.c — the flusher thread: ASYNC writes the commit log back
 * every flush_interval_ms; SYNC runs group commit (one sync — fdatasync in
 * write-through mode, else msync — covers every
 * waiter registered with store_wait_flush up to the written end; waiters past
 * sync_flush_timeout_ms, or not covered by a write or sync that failed, get
 * done(ud, false)). Also the "flush everything"
 * step (log, then queues and index, then checkpoint and state file) the
 * housekeeper runs once a second and close runs last (§10.15.5). */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Make the commit log over [from, to) durable: fdatasync of a segment
 * written with pwrite (its dirty pages are the range: nothing else writes
 * it), msync of the range of one written through the mapping. The
 * fdatasyncs run on duplicated descriptors after `maps` is released: held
 * across a sync, a writer waiting for `maps` (a new queue, a roll) would
 * hold every appender behind it for the sync's duration. */
static int flush_cl_range(store_engine *e, int64_t from, int64_t to)
{
    int inj = atomic_load(&e->inject_sync_errno);
    if (inj)
        return -inj;
    int rc = 0;
    int fds[4], nfd = 0;
    pthread_rwlock_rdlock(&e->maps);
    int64_t pos = from;
    while (pos < to) {
        mfile *f = cl_segment_in(e, &pos, to);
        if (!f)
            break;
        int64_t end = to < f->start + f->size ? to : f->start + f->size;
        int64_t a = (pos - f->start) / 4096 * 4096;
        int fd = atomic_load(&f->fd);
        int dfd = fd >= 0 && nfd < 4 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
        if (dfd >= 0)
            fds[nfd++] = dfd;
        else if (fd >= 0 ? fdatasync(fd) != 0
                         : msync(f->map + a, (size_t)(end - f->start - a), MS_SYNC) != 0)
            rc = -errno;
        pos = end;
    }
    pthread_rwlock_unlock(&e->maps);
    for (int i = 0; i < nfd; i++) {
        if (fdatasync(fds[i]) != 0 && rc == 0)
            rc = -errno;
        close(fds[i]);
    }
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

int64_t flush_commitlog(store_engine *e, bool *failed)
{
    int64_t ts = atomic_load_explicit(&e->committed_ts, memory_order_relaxed);
    bool bad = false;
    if (e->write_through) {
        /* the group's staged records: one write, then the sync */
        pthread_rwlock_rdlock(&e->maps);
        bad = cl_stage_drain(e) != 0;
        pthread_rwlock_unlock(&e->maps);
    }
    if (failed)
        *failed = bad;
    int64_t target = cl_file_end(e);
    int64_t done = atomic_load(&e->flushed);
    if (target > done) {
        int rc = flush_cl_range(e, done, target);
        if (rc != 0) {
            /* after a failed fsync the kernel may have dropped the dirty
             * pages and a retry may "succeed" without them: nothing up to
             * target is ever confirmed to a SYNC_FLUSH waiter */
            int64_t cur = atomic_load(&e->sync_fail_end);
            while (cur < target && !atomic_compare_exchange_weak(&e->sync_fail_end, &cur, target))
                ;
            atomic_store(&e->sync_failed, true);
            set_not_writeable(e, "commit-log flush failed", rc);
            if (failed)
                *failed = true;
            return done;
        }
        atomic_store(&e->sync_failed, false);
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
    int64_t synced = flush_commitlog(e, NULL);
    if (synced < safe)
        safe = synced; /* a failed write or sync: only what reached the disk */
    flush_logics(e);
    checkpoint_write(e, atomic_load(&e->flushed_ts), ts, index_full_end_ts(e));
    pthread_mutex_lock(&e->state_mu);
    e->durable_safe = safe;
    e->durable_safe_ts = ts;
    pthread_mutex_unlock(&e->state_mu);
    state_write(e, false);
}

static void run_callbacks(flush_waiter *w)
{
    while (w) {
        flush_waiter *n = w->next;
        w->done(w->ud, w->ok);
        free(w);
        w = n;
    }
}

/* Take the waiters the sync covered (or all) off the list, oldest first,
 * and answer them: on the completer thread under SYNC_FLUSH (the callbacks
 * encode and queue answers, ~2 us each: a group's worth would delay the
 * next sync), else here. */
static void complete_waiters(store_engine *e, bool all)
{
    int64_t flushed = atomic_load(&e->flushed);
    int64_t now = store_now_ms();
    flush_waiter *ready = NULL, **pp;
    pthread_mutex_lock(&e->flush_mu);
    pp = &e->waiters;
    while (*pp) {
        flush_waiter *w = *pp;
        bool unconfirmed = w->end_offset <= atomic_load(&e->sync_fail_end);
        if (w->end_offset <= flushed || now >= w->deadline_ms || all || unconfirmed) {
            *pp = w->next;
            w->ok = w->end_offset <= flushed && !unconfirmed;
            w->next = ready;
            ready = w;
        } else {
            pp = &w->next;
        }
    }
    pthread_mutex_unlock(&e->flush_mu);
    /* oldest first: the list was built newest first twice */
    flush_waiter *rev = NULL, *tail = ready;
    while (ready) {
        flush_waiter *n = ready->next;
        ready->next = rev;
        rev = ready;
        ready = n;
    }
    if (!rev)
        return;
    if (!e->completer_started) {
        run_callbacks(rev);
        return;
    }
    pthread_mutex_lock(&e->done_mu);
    if (e->done_tail)
        e->done_tail->next = rev;
    else
        e->done_head = rev;
    e->done_tail = tail;
    pthread_cond_signal(&e->done_cv);
    pthread_mutex_unlock(&e->done_mu);
}

static void completer_stop(store_engine *e);

static void *completer_main(void *arg)
{
    store_engine *e = arg;
    pthread_mutex_lock(&e->done_mu);
    for (;;) {
        while (!e->done_head && !e->completer_stop)
            pthread_cond_wait(&e->done_cv, &e->done_mu);
        flush_waiter *w = e->done_head;
        e->done_head = e->done_tail = NULL;
        if (!w && e->completer_stop)
            break;
        pthread_mutex_unlock(&e->done_mu);
        run_callbacks(w);
        pthread_mutex_lock(&e->done_mu);
    }
    pthread_mutex_unlock(&e->done_mu);
    return NULL;
}

/* SYNC_FLUSH group commit: sync as soon as a waiter's append is not
 * covered, without waiting for more appends to join. The sends that arrive
 * during a sync form the next group (with 128 in flight, ~60 per sync); the
 * covered ones are answered by the completer thread meanwhile. (Gathering
 * arrivals before each sync, tried before the completer existed, made the
 * groups larger but the cycle longer: 65-71k sends/s against 78-106k.) */
static void *flusher_main(void *arg)
{
    store_engine *e = arg;
    bool sync = e->cfg.flush_type == STORE_SYNC_FLUSH;
    for (;;) {
        /* read at each pass, as Java's flush service does */
        int64_t interval = atomic_load_explicit(&e->live.flush_interval_ms, memory_order_relaxed);
        if (interval <= 0)
            interval = 500;
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
        pthread_mutex_unlock(&e->flush_mu);
        bool failed = false;
        flush_commitlog(e, &failed);
        /* a failed write or sync answers the waiters it did not cover at
         * once (FLUSH_DISK_TIMEOUT), as Java's group commit does */
        complete_waiters(e, closing || failed);
        if (closing)
            break;
    }
    return NULL;
}

int flusher_start(store_engine *e)
{
    if (e->cfg.flush_type == STORE_SYNC_FLUSH) {
        int rc = pthread_create(&e->completer, NULL, completer_main, e);
        if (rc != 0)
            return -rc;
        e->completer_started = true;
    }
    int rc = pthread_create(&e->flusher, NULL, flusher_main, e);
    if (rc != 0) {
        completer_stop(e);
        return -rc;
    }
    e->flusher_started = true;
    return 0;
}

/* after the flusher: every waiter it handed over is answered first */
static void completer_stop(store_engine *e)
{
    if (!e->completer_started)
        return;
    pthread_mutex_lock(&e->done_mu);
    e->completer_stop = true;
    pthread_cond_signal(&e->done_cv);
    pthread_mutex_unlock(&e->done_mu);
    pthread_join(e->completer, NULL);
    e->completer_started = false;
}

void flusher_stop(store_engine *e)
{
    if (!e->flusher_started) {
        completer_stop(e);
        return;
    }
    pthread_mutex_lock(&e->flush_mu);
    atomic_store(&e->closing, true);
    pthread_cond_signal(&e->flush_cv);
    pthread_mutex_unlock(&e->flush_mu);
    pthread_join(e->flusher, NULL);
    e->flusher_started = false;
    completer_stop(e);
}

int store_wait_flush(store_engine *e, int64_t end_offset, void (*done)(void *ud, bool ok), void *ud)
{
    if (!e || !done)
        return -EINVAL;
    if (end_offset <= atomic_load(&e->sync_fail_end)) {
        done(ud, false); /* a failed sync covered it: never confirmed */
        return 0;
    }
    if (atomic_load(&e->flushed) >= end_offset) {
        done(ud, true);
        return 0;
    }
    flush_waiter *w = malloc(sizeof *w);
    if (!w)
        return -ENOMEM;
    w->end_offset = end_offset;
    w->deadline_ms =
        store_now_ms() + atomic_load_explicit(&e->live.sync_flush_timeout_ms, memory_order_relaxed);
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
