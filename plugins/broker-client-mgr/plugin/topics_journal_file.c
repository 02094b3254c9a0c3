/* topics_journal_file.c — owns topics.journal and the durability of topic
 * changes: every change is noted as a record in memory (tables lock held),
 * and whoever must see it durable commits: the first waiter writes every
 * record noted so far with one write and one fdatasync while later changes
 * gather for the next group, so a creation costs an append whatever the
 * table's size. topics.json (Java's file) is rewritten from the table — a
 * compaction, after which the journal is emptied — when the journal grows
 * past max(topicsJournalCompactBytes, the last topics.json's size) (on the
 * housekeeping executor, not a sender's thread), when a change could not be
 * journalled, and at a clean stop. */
#include "broker_context.h"

#include "topic_journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JOURNAL_NAME "topics.journal"
#define COMPACT_CHECK_MS 200

static void path_of(const bcm_ctx *c, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", c->config_dir, name);
}

int bcm_topics_journal_open(bcm_ctx *c)
{
    char path[800];
    path_of(c, JOURNAL_NAME, path, sizeof path);
    c->journal_fd = -1;
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        /* still correct, only slower: every change rewrites topics.json */
        c->api->log(c->pctx, RMQ_LOG_ERROR, "%s: %s; every topic change rewrites topics.json", path,
                    strerror(errno));
        c->journal_compact_at = c->s.journal_compact_bytes;
        return 0;
    }
    struct stat st;
    char *text = NULL;
    size_t len = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        len = (size_t)st.st_size;
        text = malloc(len);
        if (!text || pread(fd, text, len, 0) != (ssize_t)len) {
            c->api->log(c->pctx, RMQ_LOG_ERROR, "%s: cannot read", path);
            free(text);
            close(fd);
            return RMQ_EIO;
        }
    }
    bcm_journal_replay r = {0};
    if (text)
        bcm_topic_journal_replay(&c->topics, text, len, &r);
    free(text);
    bcm_heap_return_after(c, len);
    if (r.torn) {
        /* a record cut by a crash was never acknowledged: drop it, so the
         * next records follow the last intact one */
        c->api->log(c->pctx, RMQ_LOG_WARN, "%s: torn tail of %zu bytes after %zu records dropped",
                    path, len - r.valid_len, r.records);
        if (ftruncate(fd, (off_t)r.valid_len) != 0 || fdatasync(fd) != 0) {
            c->api->log(c->pctx, RMQ_LOG_ERROR, "%s: cannot cut: %s", path, strerror(errno));
            close(fd);
            return RMQ_EIO;
        }
    }
    if (r.records)
        c->api->log(c->pctx, RMQ_LOG_INFO, "%s: %zu records, %zu newer than topics.json applied",
                    path, r.records, r.applied);
    c->journal_fd = fd;
    c->journal_bytes = (int64_t)r.valid_len;
    char json_path[800];
    path_of(c, "topics.json", json_path, sizeof json_path);
    int64_t json_size = stat(json_path, &st) == 0 ? (int64_t)st.st_size : 0;
    c->journal_compact_at =
        json_size > c->s.journal_compact_bytes ? json_size : c->s.journal_compact_bytes;
    return 0;
}

void bcm_topics_journal_close(bcm_ctx *c)
{
    if (c->journal_fd >= 0)
        close(c->journal_fd);
    c->journal_fd = -1;
    free(c->jbuf);
    c->jbuf = NULL;
    c->jlen = c->jcap = 0;
}

void bcm_topics_note_locked(bcm_ctx *c, const char *name)
{
    if (bcm_topic_journal_note(&c->topics, name, &c->jbuf, &c->jlen, &c->jcap) != 0)
        c->journal_broken = true; /* the next commit rewrites topics.json instead */
    c->jseq++;
    bcm_topic_registration_note_locked(c, name);
}

static bool write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Outside the lock: topics.json from a copy of the table, then an empty
 * journal (a crash between the two replays records the file already holds:
 * replay skips them by their DataVersion). */
static bool compact_write(bcm_ctx *c, bcm_topic_snapshot *copy, bool copied, int64_t *size)
{
    char *text = copied ? bcm_topic_snapshot_encode(copy) : NULL;
    bcm_topic_snapshot_free(copy);
    if (!text) {
        c->api->log(c->pctx, RMQ_LOG_ERROR, "topics.json: out of memory while encoding");
        return false;
    }
    char path[800];
    path_of(c, "topics.json", path, sizeof path);
    size_t len = strlen(text);
    int rc = c->api->write_file_atomic(c->pctx, path, text, len);
    free(text);
    bcm_heap_return_after(c, len);
    if (rc != 0) {
        c->api->log(c->pctx, RMQ_LOG_ERROR, "writing %s: %s", path, rmq_strerror(rc));
        return false;
    }
    *size = (int64_t)len;
    if (c->journal_fd >= 0 && (ftruncate(c->journal_fd, 0) != 0 || fdatasync(c->journal_fd) != 0))
        c->api->log(c->pctx, RMQ_LOG_ERROR, "emptying %s: %s", JOURNAL_NAME, strerror(errno));
    return true;
}

/* Tables lock held, no commit in flight: write what is noted (or the whole
 * table when `compact`), releasing the lock meanwhile. Waiters of the
 * records written are released even when the write failed (logged): waiting
 * cannot fix a disk, and Java answers the send when its persist fails. */
static void lead_locked(bcm_ctx *c, bool compact)
{
    c->topics_committing = true;
    uint64_t names_upto = bcm_unwritten_topics_snapshot(&c->unwritten);
    uint64_t seq_upto = c->jseq;
    char *buf = c->jbuf;
    size_t len = c->jlen;
    c->jbuf = NULL;
    c->jlen = c->jcap = 0;
    compact = compact || c->journal_broken || c->journal_fd < 0;
    bcm_topic_snapshot copy = {0};
    bool copied = false;
    if (compact) {
        /* copied: the encoding runs unlocked */
        copied = bcm_topic_table_snapshot(&c->topics, &copy) == 0;
        c->journal_broken = false;
    }
    pthread_mutex_unlock(&c->lock);
    int64_t json_size = -1;
    bool journalled = false;
    if (!compact) {
        off_t journal_end = lseek(c->journal_fd, 0, SEEK_END);
        journalled = write_all(c->journal_fd, buf, len) && fdatasync(c->journal_fd) == 0;
        if (!journalled) {
            c->api->log(c->pctx, RMQ_LOG_ERROR, "appending to %s: %s; rewriting topics.json",
                        JOURNAL_NAME, strerror(errno));
            /* a partial record must not stay in front of the next ones (the
             * replay stops at it), even if the rewrite below fails too */
            if (journal_end >= 0 && ftruncate(c->journal_fd, journal_end) != 0)
                c->api->log(c->pctx, RMQ_LOG_ERROR, "cutting %s: %s", JOURNAL_NAME,
                            strerror(errno));
            pthread_mutex_lock(&c->lock);
            copied = bcm_topic_table_snapshot(&c->topics, &copy) == 0;
            names_upto = bcm_unwritten_topics_snapshot(&c->unwritten);
            seq_upto = c->jseq;
            free(c->jbuf); /* the copy holds their changes */
            c->jbuf = NULL;
            c->jlen = c->jcap = 0;
            pthread_mutex_unlock(&c->lock);
            compact = true;
        }
    }
    free(buf);
    if (compact)
        compact_write(c, &copy, copied, &json_size);
    pthread_mutex_lock(&c->lock);
    if (journalled)
        c->journal_bytes += (int64_t)len;
    if (json_size >= 0) {
        c->journal_bytes = 0;
        c->journal_compact_at =
            json_size > c->s.journal_compact_bytes ? json_size : c->s.journal_compact_bytes;
    }
    c->journal_durable = seq_upto;
    bcm_unwritten_topics_written(&c->unwritten, names_upto);
    c->topics_committing = false;
    pthread_cond_broadcast(&c->topics_written);
}

void bcm_topics_commit(bcm_ctx *c)
{
    pthread_mutex_lock(&c->lock);
    uint64_t mine = c->jseq;
    while (c->journal_durable < mine) {
        if (c->topics_committing)
            pthread_cond_wait(&c->topics_written, &c->lock);
        else
            lead_locked(c, false);
    }
    pthread_mutex_unlock(&c->lock);
}

/* topics.json rewritten from the table, the journal emptied. */
void bcm_persist_topics(bcm_ctx *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->topics_committing)
        pthread_cond_wait(&c->topics_written, &c->lock);
    lead_locked(c, true);
    pthread_mutex_unlock(&c->lock);
}

static void compact_check(void *ud)
{
    bcm_ctx *c = ud;
    pthread_mutex_lock(&c->lock);
    bool due = c->journal_bytes > c->journal_compact_at;
    pthread_mutex_unlock(&c->lock);
    if (due)
        bcm_persist_topics(c);
    bcm_heap_return_check(c);
}

int bcm_topics_journal_start(bcm_ctx *c)
{
    rmq_timer_id id;
    return c->api->add_timer(c->pctx, COMPACT_CHECK_MS, COMPACT_CHECK_MS, compact_check, c,
                             "housekeeping", &id);
}
