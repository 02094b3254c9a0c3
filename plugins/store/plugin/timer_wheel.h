/* timer_wheel.h — the on-disk timing wheel of timer messages (5.x
 * TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS). One slot file per
 * precision-wide time bucket under <dir>/ holds fixed-size entries (commit-log
 * offset, size, delivery time) appended in arrival order; the progress
 * (next bucket to deliver, entries of it done, the caller's enqueue offset)
 * is a small checkpoint file, written (and fsynced) by the wheel's own
 * writer thread (timer_checkpoint_writer.h) so delivery never waits for a
 * disk. Memory is fixed whatever the number of pending timers: a million
 * timers cost slot files, not RAM. Not thread-safe: one thread adds and
 * delivers. No store dependency (unit-tested alone). */
#ifndef STORE_TIMER_WHEEL_H
#define STORE_TIMER_WHEEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timer_checkpoint_writer.h"

typedef struct timer_wheel timer_wheel;

typedef struct timer_entry {
    int64_t phys_offset; /* commit-log offset of the rmq_sys_wheel_timer record */
    int64_t deliver_ms;  /* TIMER_OUT_MS */
    int32_t size;        /* its size */
    /* a recall (TIMER_DEL_UNIQKEY) marker: handed to `deliver` before the
     * other entries of its bucket, never delivered as a message */
    bool deleting;
} timer_entry;

#define TIMER_ENTRY_BYTES 24 /* on disk: phys (8) deliver (8) size (4) magic (4), big-endian */

/* Opens (creating) the wheel in `dir` with its checkpoint at `checkpoint`.
 * A missing checkpoint starts at the bucket of now_ms. Slot files of buckets
 * already delivered (a crash between checkpoint and unlink) are removed.
 * 0, or -errno. */
int timer_wheel_open(const char *dir, const char *checkpoint, int64_t precision_ms, int64_t now_ms,
                     timer_wheel **out);
/* Persists the checkpoint (slot files synced first) and frees the wheel. */
void timer_wheel_close(timer_wheel *w);

/* The caller's own durable cursor (the consume-queue offset up to which
 * timers were added), saved with the checkpoint. */
int64_t timer_wheel_enqueue_offset(const timer_wheel *w);
void timer_wheel_set_enqueue_offset(timer_wheel *w, int64_t off);

/* Appends e to its bucket's slot file. 1: its bucket was already delivered
 * (deliver it now yourself), 0: added, -errno: not written. */
int timer_wheel_add(timer_wheel *w, const timer_entry *e);

/* Delivers every entry of the buckets that start at or before now_ms, oldest
 * bucket first, in arrival order within a bucket: deliver returns true when
 * done with the entry, false to stop (retried from that entry next call).
 * Before a bucket's entries (and again when a call resumes a bucket), its
 * `deleting` entries are each handed to deliver once (Java's timer reads a
 * slot's delete markers first), so a recall added after the message it
 * cancels still precedes it; their return value is ignored.
 * At most max_entries entries per call. Returns the number delivered, or
 * -errno on an I/O error. A finished bucket is handed to the checkpoint
 * writer, which removes its file once the checkpoint saying so is on disk;
 * this call never waits for that. */
typedef bool (*timer_deliver_fn)(void *ud, const timer_entry *e);
long timer_wheel_deliver_due(timer_wheel *w, int64_t now_ms, size_t max_entries,
                             timer_deliver_fn deliver, void *ud);

/* Hands the progress to the checkpoint writer if anything changed since
 * the last hand-over (or the last write failed) and returns at once: the
 * writer syncs the slot files written to first, so a checkpoint never
 * claims entries the disk lacks. Returns the last write's result (0 or
 * -errno), for logging. For the delivery thread. */
int timer_wheel_checkpoint_async(timer_wheel *w);
/* The same, then waits until that checkpoint is written: 0 or -errno. For
 * a clean close and tests. */
int timer_wheel_checkpoint(timer_wheel *w);
/* Tests: replaces the checkpoint file's fsync (see timer_ckpt_sync_fn). */
void timer_wheel_set_checkpoint_sync_hook(timer_wheel *w, timer_ckpt_sync_fn fn, void *ud);

/* Bucket bookkeeping, for tests and logs. */
int64_t timer_wheel_next_bucket(const timer_wheel *w);
int64_t timer_wheel_bucket_of(const timer_wheel *w, int64_t deliver_ms);

#endif
