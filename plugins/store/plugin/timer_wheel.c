/* timer_wheel.c — slot files and checkpoint of the timer messages' wheel
 * (see timer_wheel.h). A slot file is named by its bucket number
 * (deliver_ms / precision) and only ever appended to; the checkpoint is
 * written to a temporary file, synced and renamed, so a crash leaves the old
 * or the new one — by the writer thread of timer_checkpoint_writer.c, never
 * the delivery thread. Ordering that keeps kill -9 and power loss from
 * losing a timer: slot files are synced before a checkpoint that counts
 * their entries as added, and a delivered bucket's file is removed only
 * after the checkpoint that passes it. A crash can at most repeat work
 * (duplicates: what was delivered after the last checkpoint written). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "timer_checkpoint_writer.h"
#include "timer_wheel.h"

#define ENTRY_MAGIC 0x544D5231u  /* "TMR1" */
#define DELETE_MAGIC 0x544D5244u /* "TMRD": a recall marker */
#define READ_CHUNK 256           /* entries read per pread */

struct timer_wheel {
    char dir[1024];
    char ckpt[1100];
    int64_t precision_ms;
    int64_t next_bucket; /* buckets before it are delivered */
    int64_t pos;         /* entries of next_bucket already delivered */
    int64_t enqueue_off;
    bool dirty;    /* cursor moved since the last hand-over to the writer */
    bool unsynced; /* slot files written since the last hand-over */
    timer_ckpt_writer *writer;
    uint64_t last_ticket; /* of the last hand-over */
    int dir_fd;
    int add_fd; /* the slot file last appended to (most timers share a few) */
    int64_t add_bucket;
};

static void be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static void be32(uint8_t *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint32_t rd32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

int64_t timer_wheel_bucket_of(const timer_wheel *w, int64_t deliver_ms)
{
    if (deliver_ms < 0)
        return -1;
    return deliver_ms / w->precision_ms;
}

int64_t timer_wheel_next_bucket(const timer_wheel *w)
{
    return w->next_bucket;
}

int64_t timer_wheel_enqueue_offset(const timer_wheel *w)
{
    return w->enqueue_off;
}

void timer_wheel_set_enqueue_offset(timer_wheel *w, int64_t off)
{
    if (off != w->enqueue_off) {
        w->enqueue_off = off;
        w->dirty = true;
    }
}

static void slot_path(const timer_wheel *w, int64_t bucket, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%" PRId64, w->dir, bucket);
}

/* "key=value" lines; unknown keys are ignored. */
static bool load_checkpoint(timer_wheel *w)
{
    FILE *f = fopen(w->ckpt, "r");
    if (!f)
        return false;
    char line[128];
    bool have_next = false;
    while (fgets(line, sizeof line, f)) {
        long long v = 0;
        if (sscanf(line, "nextBucket=%lld", &v) == 1) {
            w->next_bucket = v;
            have_next = true;
        } else if (sscanf(line, "bucketPos=%lld", &v) == 1) {
            w->pos = v >= 0 ? v : 0;
        } else if (sscanf(line, "enqueueOffset=%lld", &v) == 1) {
            w->enqueue_off = v >= 0 ? v : 0;
        } else if (sscanf(line, "precisionMs=%lld", &v) == 1 && v > 0) {
            /* slot numbers are in the precision they were written with */
            w->precision_ms = v;
        }
    }
    fclose(f);
    return have_next;
}

/* Hands the progress to the checkpoint writer (no I/O here: the delivery
 * thread never waits for an fsync). passed_bucket: a delivered bucket whose
 * file the writer removes once its checkpoint is on disk, or -1. */
static uint64_t hand_over(timer_wheel *w, int64_t passed_bucket)
{
    timer_ckpt_state s = {w->next_bucket, w->pos, w->enqueue_off, w->precision_ms};
    w->last_ticket = timer_ckpt_writer_submit(w->writer, &s, w->unsynced, passed_bucket);
    w->dirty = false;
    w->unsynced = false;
    return w->last_ticket;
}

static bool has_news(timer_wheel *w)
{
    return w->dirty || w->unsynced || timer_ckpt_writer_needs_retry(w->writer);
}

int timer_wheel_checkpoint_async(timer_wheel *w)
{
    int rc = timer_ckpt_writer_last_error(w->writer);
    if (has_news(w))
        (void)hand_over(w, -1);
    return rc;
}

int timer_wheel_checkpoint(timer_wheel *w)
{
    if (has_news(w))
        (void)hand_over(w, -1);
    return w->last_ticket ? timer_ckpt_writer_wait(w->writer, w->last_ticket) : 0;
}

void timer_wheel_set_checkpoint_sync_hook(timer_wheel *w, timer_ckpt_sync_fn fn, void *ud)
{
    timer_ckpt_writer_set_sync_hook(w->writer, fn, ud);
}

/* Slot files of delivered buckets left by a crash between checkpoint and
 * unlink. */
static void remove_stale_slots(timer_wheel *w)
{
    DIR *d = opendir(w->dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end = NULL;
        errno = 0;
        long long b = strtoll(de->d_name, &end, 10);
        if (end == de->d_name || *end || errno || b >= w->next_bucket)
            continue;
        char p[1400];
        snprintf(p, sizeof p, "%s/%s", w->dir, de->d_name);
        (void)unlink(p);
    }
    closedir(d);
}

int timer_wheel_open(const char *dir, const char *checkpoint, int64_t precision_ms, int64_t now_ms,
                     timer_wheel **out)
{
    *out = NULL;
    if (precision_ms <= 0 || strlen(dir) >= 1000 || strlen(checkpoint) >= 1090)
        return -EINVAL;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return -errno;
    timer_wheel *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    snprintf(w->dir, sizeof w->dir, "%s", dir);
    snprintf(w->ckpt, sizeof w->ckpt, "%s", checkpoint);
    w->precision_ms = precision_ms;
    w->add_fd = -1;
    w->add_bucket = -1;
    w->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (w->dir_fd < 0) {
        int e = -errno;
        free(w);
        return e;
    }
    if (!load_checkpoint(w)) {
        w->next_bucket = now_ms / w->precision_ms;
        w->pos = 0;
        w->dirty = true;
    }
    remove_stale_slots(w);
    int rc = timer_ckpt_writer_start(w->ckpt, w->dir, w->dir_fd, &w->writer);
    if (rc != 0) {
        close(w->dir_fd);
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void timer_wheel_close(timer_wheel *w)
{
    if (!w)
        return;
    (void)timer_wheel_checkpoint(w);
    timer_ckpt_writer_stop(w->writer);
    if (w->add_fd >= 0)
        close(w->add_fd);
    close(w->dir_fd);
    free(w);
}

static int open_for_add(timer_wheel *w, int64_t bucket)
{
    if (w->add_fd >= 0 && w->add_bucket == bucket)
        return 0;
    if (w->add_fd >= 0) {
        close(w->add_fd);
        w->add_fd = -1;
    }
    char p[1100];
    slot_path(w, bucket, p, sizeof p);
    int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    /* a torn entry at the end (crash mid-write) would shift every later one */
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size % TIMER_ENTRY_BYTES != 0 &&
        ftruncate(fd, st.st_size - st.st_size % TIMER_ENTRY_BYTES) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    w->add_fd = fd;
    w->add_bucket = bucket;
    return 0;
}

int timer_wheel_add(timer_wheel *w, const timer_entry *e)
{
    int64_t b = timer_wheel_bucket_of(w, e->deliver_ms);
    if (b < w->next_bucket)
        return 1;
    int rc = open_for_add(w, b);
    if (rc != 0)
        return rc;
    uint8_t rec[TIMER_ENTRY_BYTES];
    be64(rec, (uint64_t)e->phys_offset);
    be64(rec + 8, (uint64_t)e->deliver_ms);
    be32(rec + 16, (uint32_t)e->size);
    be32(rec + 20, e->deleting ? DELETE_MAGIC : ENTRY_MAGIC);
    ssize_t n = write(w->add_fd, rec, sizeof rec);
    if (n != (ssize_t)sizeof rec) {
        int err = n < 0 ? -errno : -EIO;
        close(w->add_fd);
        w->add_fd = -1; /* the next open trims a torn entry */
        return err;
    }
    w->unsynced = true;
    return 0;
}

/* The current bucket is done: past it, and its file goes once the
 * checkpoint saying so is on disk (the writer's job). */
static void finish_bucket(timer_wheel *w)
{
    int64_t b = w->next_bucket;
    if (w->add_fd >= 0 && w->add_bucket == b) {
        close(w->add_fd);
        w->add_fd = -1;
    }
    w->next_bucket = b + 1;
    w->pos = 0;
    w->dirty = true;
    (void)hand_over(w, b);
}

/* The recall markers of the open slot, to deliver before its messages.
 * 0, or -1 with errno. */
static int pass_deletes(int fd, uint8_t *buf, int64_t now_ms, timer_deliver_fn deliver, void *ud)
{
    for (off_t at = 0;;) {
        ssize_t n = pread(fd, buf, (size_t)READ_CHUNK * TIMER_ENTRY_BYTES, at);
        if (n < 0)
            return -1;
        size_t cnt = (size_t)n / TIMER_ENTRY_BYTES;
        if (cnt == 0)
            return 0;
        for (size_t i = 0; i < cnt; i++) {
            const uint8_t *r = buf + i * TIMER_ENTRY_BYTES;
            timer_entry e = {(int64_t)rd64(r), (int64_t)rd64(r + 8), (int32_t)rd32(r + 16), true};
            if (rd32(r + 20) == DELETE_MAGIC && e.deliver_ms <= now_ms)
                (void)deliver(ud, &e);
        }
        at += (off_t)(cnt * TIMER_ENTRY_BYTES);
    }
}

long timer_wheel_deliver_due(timer_wheel *w, int64_t now_ms, size_t max_entries,
                             timer_deliver_fn deliver, void *ud)
{
    long done = 0;
    int64_t now_bucket = now_ms / w->precision_ms;
    uint8_t *buf = malloc((size_t)READ_CHUNK * TIMER_ENTRY_BYTES);
    if (!buf)
        return -ENOMEM;
    while (w->next_bucket <= now_bucket && (size_t)done < max_entries) {
        char p[1100];
        slot_path(w, w->next_bucket, p, sizeof p);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            if (errno != ENOENT) {
                done = -errno;
                break;
            }
            /* nothing in this bucket: no checkpoint needed to pass it */
            w->next_bucket++;
            w->pos = 0;
            w->dirty = true;
            continue;
        }
        if (pass_deletes(fd, buf, now_ms, deliver, ud) != 0) {
            done = -errno;
            close(fd);
            break;
        }
        bool stop = false;
        for (;;) {
            ssize_t n = pread(fd, buf, (size_t)READ_CHUNK * TIMER_ENTRY_BYTES,
                              (off_t)(w->pos * TIMER_ENTRY_BYTES));
            if (n < 0) {
                done = -errno;
                stop = true;
                break;
            }
            size_t cnt = (size_t)n / TIMER_ENTRY_BYTES;
            if (cnt == 0)
                break; /* end of the slot (a torn tail is ignored) */
            for (size_t i = 0; i < cnt; i++) {
                const uint8_t *r = buf + i * TIMER_ENTRY_BYTES;
                timer_entry e = {(int64_t)rd64(r), (int64_t)rd64(r + 8), (int32_t)rd32(r + 16),
                                 false};
                /* an entry due later than now (a wheel kept from a coarser
                 * precision) waits; recall markers went by in pass_deletes */
                if (rd32(r + 20) == ENTRY_MAGIC && (e.deliver_ms > now_ms || !deliver(ud, &e))) {
                    stop = true;
                    break;
                }
                w->pos++;
                w->dirty = true;
                done++;
                if ((size_t)done >= max_entries) {
                    stop = true;
                    break;
                }
            }
            if (stop)
                break;
        }
        close(fd);
        if (stop)
            break;
        finish_bucket(w);
    }
    free(buf);
    return done;
}
