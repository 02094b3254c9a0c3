/* timer_checkpoint_writer.c — the timer wheel's checkpoint thread (see
 * timer_checkpoint_writer.h). Ordering kept from the synchronous version:
 * slot files are synced before a checkpoint that counts their entries, and
 * a delivered bucket's file is removed only after a checkpoint that passes
 * it is on disk. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "timer_checkpoint_writer.h"

struct timer_ckpt_writer {
    char path[1100];
    char dir[1024];
    int dir_fd;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work; /* a state handed over, or stop */
    pthread_cond_t done; /* a write was tried */
    /* handed over, not yet taken by the thread */
    timer_ckpt_state state;
    bool have_state;
    bool sync_slots;
    int64_t *passed; /* delivered buckets whose files wait for a checkpoint */
    size_t npassed, cappassed;
    uint64_t submitted, tried; /* tickets */
    int last_rc;
    bool retry; /* the last write failed: the next hand-over writes again */
    bool stop;
    timer_ckpt_sync_fn sync;
    void *sync_ud;
};

static int fsync_fd(void *ud, int fd)
{
    (void)ud;
    return fsync(fd) == 0 ? 0 : -errno;
}

static int write_state(timer_ckpt_writer *w, const timer_ckpt_state *s, bool sync_slots,
                       timer_ckpt_sync_fn sync, void *sync_ud)
{
    /* every slot file appended to since the last checkpoint: one call syncs
     * them all (Linux), whichever the delivery thread has open or closed */
    if (sync_slots && syncfs(w->dir_fd) != 0)
        return -errno;
    char text[256];
    int n = snprintf(text, sizeof text,
                     "nextBucket=%" PRId64 "\nbucketPos=%" PRId64 "\nenqueueOffset=%" PRId64
                     "\nprecisionMs=%" PRId64 "\n",
                     s->next_bucket, s->pos, s->enqueue_off, s->precision_ms);
    char tmp[1110];
    snprintf(tmp, sizeof tmp, "%s.tmp", w->path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (write(fd, text, (size_t)n) != n)
        rc = errno ? -errno : -EIO;
    if (rc == 0)
        rc = sync(sync_ud, fd);
    close(fd);
    if (rc == 0 && rename(tmp, w->path) != 0)
        rc = -errno;
    if (rc != 0)
        return rc;
    /* the rename itself: sync the checkpoint's directory */
    char d[1100];
    snprintf(d, sizeof d, "%s", w->path);
    char *slash = strrchr(d, '/');
    if (slash) {
        *slash = '\0';
        int dfd = open(d[0] ? d : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
    }
    return 0;
}

/* Under mu. false: out of memory (the file stays until the next open). */
static bool push_passed(timer_ckpt_writer *w, int64_t bucket)
{
    if (w->npassed == w->cappassed) {
        size_t ncap = w->cappassed ? w->cappassed * 2 : 16;
        int64_t *np = realloc(w->passed, ncap * sizeof *np);
        if (!np)
            return false;
        w->passed = np;
        w->cappassed = ncap;
    }
    w->passed[w->npassed++] = bucket;
    return true;
}

static void *run(void *arg)
{
    timer_ckpt_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->have_state && !w->stop)
            pthread_cond_wait(&w->work, &w->mu);
        if (!w->have_state)
            break; /* stopping, nothing left to write */
        timer_ckpt_state s = w->state;
        bool sync_slots = w->sync_slots;
        uint64_t ticket = w->submitted;
        int64_t *passed = w->passed;
        size_t npassed = w->npassed;
        timer_ckpt_sync_fn sync = w->sync;
        void *sync_ud = w->sync_ud;
        w->have_state = false;
        w->sync_slots = false;
        w->passed = NULL;
        w->npassed = w->cappassed = 0;
        pthread_mutex_unlock(&w->mu);

        int rc = write_state(w, &s, sync_slots, sync, sync_ud);
        for (size_t i = 0; rc == 0 && i < npassed; i++) {
            if (passed[i] >= s.next_bucket)
                continue; /* cannot happen: the wheel passes a bucket before handing it over */
            char p[1100];
            snprintf(p, sizeof p, "%s/%" PRId64, w->dir, passed[i]);
            (void)unlink(p);
        }

        pthread_mutex_lock(&w->mu);
        if (rc != 0) {
            /* kept for the next try: the syncs still owed, the files to remove */
            w->sync_slots = w->sync_slots || sync_slots;
            for (size_t i = 0; i < npassed; i++)
                (void)push_passed(w, passed[i]);
        } else {
            /* buckets handed over while writing wait for the next checkpoint */
            for (size_t i = 0; i < npassed; i++)
                if (passed[i] >= s.next_bucket)
                    (void)push_passed(w, passed[i]);
        }
        free(passed);
        w->retry = rc != 0;
        w->last_rc = rc;
        w->tried = ticket;
        pthread_cond_broadcast(&w->done);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int timer_ckpt_writer_start(const char *path, const char *wheel_dir, int dir_fd,
                            timer_ckpt_writer **out)
{
    *out = NULL;
    if (strlen(path) >= 1090 || strlen(wheel_dir) >= 1000)
        return -EINVAL;
    timer_ckpt_writer *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    snprintf(w->path, sizeof w->path, "%s", path);
    snprintf(w->dir, sizeof w->dir, "%s", wheel_dir);
    w->dir_fd = dir_fd;
    w->sync = fsync_fd;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->done, NULL);
    int e = pthread_create(&w->thread, NULL, run, w);
    if (e != 0) {
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->work);
        pthread_cond_destroy(&w->done);
        free(w);
        return -e;
    }
    *out = w;
    return 0;
}

void timer_ckpt_writer_stop(timer_ckpt_writer *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    free(w->passed);
    free(w);
}

uint64_t timer_ckpt_writer_submit(timer_ckpt_writer *w, const timer_ckpt_state *s, bool sync_slots,
                                  int64_t passed_bucket)
{
    pthread_mutex_lock(&w->mu);
    w->state = *s;
    w->have_state = true;
    w->sync_slots = w->sync_slots || sync_slots;
    if (passed_bucket >= 0)
        (void)push_passed(w, passed_bucket);
    uint64_t ticket = ++w->submitted;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    return ticket;
}

int timer_ckpt_writer_wait(timer_ckpt_writer *w, uint64_t ticket)
{
    pthread_mutex_lock(&w->mu);
    while (w->tried < ticket)
        pthread_cond_wait(&w->done, &w->mu);
    int rc = w->last_rc;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int timer_ckpt_writer_last_error(timer_ckpt_writer *w)
{
    pthread_mutex_lock(&w->mu);
    int rc = w->last_rc;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

bool timer_ckpt_writer_needs_retry(timer_ckpt_writer *w)
{
    pthread_mutex_lock(&w->mu);
    bool r = w->retry;
    pthread_mutex_unlock(&w->mu);
    return r;
}

void timer_ckpt_writer_set_sync_hook(timer_ckpt_writer *w, timer_ckpt_sync_fn fn, void *ud)
{
    pthread_mutex_lock(&w->mu);
    w->sync = fn ? fn : fsync_fd;
    w->sync_ud = fn ? ud : NULL;
    pthread_mutex_unlock(&w->mu);
}
