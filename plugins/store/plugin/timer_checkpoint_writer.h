/* timer_checkpoint_writer.h — the timer wheel's checkpoint written off the
 * delivery thread. The wheel hands over a copy of its progress (cheap, under
 * a mutex); this writer's own thread syncs the slot files, writes the
 * checkpoint file durably (temporary file, fsync, rename, directory fsync)
 * and only then removes the slot files of the buckets that checkpoint
 * passes. States handed over while a write is under way are merged: the
 * newest progress is written next, the buckets to remove accumulate. So a
 * slow fsync delays nothing but the checkpoint; after kill -9 the wheel
 * restarts from the last checkpoint written, as before (it may repeat
 * deliveries made after it, never lose a timer). No store dependency. */
#ifndef STORE_TIMER_CHECKPOINT_WRITER_H
#define STORE_TIMER_CHECKPOINT_WRITER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct timer_ckpt_writer timer_ckpt_writer;

typedef struct timer_ckpt_state {
    int64_t next_bucket; /* buckets before it are delivered */
    int64_t pos;         /* entries of next_bucket delivered */
    int64_t enqueue_off; /* the caller's enqueue cursor */
    int64_t precision_ms;
} timer_ckpt_state;

/* The checkpoint file's fsync, replaceable by tests (a hook that blocks
 * shows what waits for it). 0 or -errno. */
typedef int (*timer_ckpt_sync_fn)(void *ud, int fd);

/* Starts the writer thread for the checkpoint at `path`; slot files are
 * `<wheel_dir>/<bucket>`, synced through dir_fd (an fd of wheel_dir the
 * caller keeps open until timer_ckpt_writer_stop). 0 or -errno. */
int timer_ckpt_writer_start(const char *path, const char *wheel_dir, int dir_fd,
                            timer_ckpt_writer **out);
/* Writes what is still handed over (a stop is a clean close), joins the
 * thread, frees. */
void timer_ckpt_writer_stop(timer_ckpt_writer *w);

/* Hands over *s to be written: sync_slots says slot files were appended to
 * since the last hand-over (synced before the checkpoint that counts them);
 * passed_bucket >= 0 is a delivered bucket whose file is removed once a
 * checkpoint with next_bucket beyond it is on disk. Never waits for I/O.
 * Returns a ticket for timer_ckpt_writer_wait. (Out of memory, a passed
 * bucket's file stays until the next open removes it.) */
uint64_t timer_ckpt_writer_submit(timer_ckpt_writer *w, const timer_ckpt_state *s, bool sync_slots,
                                  int64_t passed_bucket);
/* Waits until the write that covers `ticket` was tried: its result (0 or
 * -errno). For a clean close and tests, never the delivery thread. */
int timer_ckpt_writer_wait(timer_ckpt_writer *w, uint64_t ticket);
/* The result of the last write tried (0 or -errno), without waiting. */
int timer_ckpt_writer_last_error(timer_ckpt_writer *w);
/* Whether the last write failed and its state still waits for a retry. */
bool timer_ckpt_writer_needs_retry(timer_ckpt_writer *w);

void timer_ckpt_writer_set_sync_hook(timer_ckpt_writer *w, timer_ckpt_sync_fn fn, void *ud);

#endif
