/* pop_state.c — the POP state table and its journal (pop_state.h). The
 * journal is text, one change a line, so a torn last line after a crash is
 * recognisable (no newline) and dropped:
 *   N <group> <topic> <queueId> <nextOffset> [<attemptId>]
 *   I <group> <topic> <queueId> <offset> <popTime> <invisibleMs> <deliveries> [<flags>]
 *   A <group> <topic> <queueId> <offset>
 * Replay applies them in order; the checkpoint written at open (and when
 * the journal passes POP_JOURNAL_COMPACT_BYTES) holds N and I lines only.
 * The optional fields came later: older versions read such lines and
 * ignore them, and a line without one means none (an N line always
 * carries the queue's current attemptId). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ctype.h>
#include <unistd.h>

#include <rmqhost/rmqhost.h>

#include "pop_state.h"

#define POP_JOURNAL_COMPACT_BYTES (64u << 20)

bool pop_name_ok(const char *name)
{
    if (!name || !*name || strlen(name) >= 256)
        return false;
    /* any byte sscanf's %s stops at (\v and \f too) would split the
     * journal line on replay */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (isspace(*p))
            return false;
    return true;
}

static uint64_t key_hash(const char *group, const char *topic, int32_t qid)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *p = group; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (const char *p = topic; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    return (h ^ (uint32_t)qid) * 1099511628211ull;
}

static pop_queue *find_queue(pop_state *s, const char *group, const char *topic, int32_t qid)
{
    if (!s->nslots)
        return NULL;
    size_t mask = s->nslots - 1;
    for (size_t i = key_hash(group, topic, qid) & mask;; i = (i + 1) & mask) {
        uint32_t v = s->slots[i];
        if (!v)
            return NULL;
        pop_queue *q = s->q[v - 1];
        if (q->queue_id == qid && strcmp(q->topic, topic) == 0 && strcmp(q->group, group) == 0)
            return q;
    }
}

static void slot_put(uint32_t *slots, size_t nslots, const pop_queue *q, uint32_t v)
{
    size_t mask = nslots - 1;
    size_t i = key_hash(q->group, q->topic, q->queue_id) & mask;
    while (slots[i])
        i = (i + 1) & mask;
    slots[i] = v;
}

/* Room for one more queue in q and in the index (kept at most half full). */
static int grow(pop_state *s)
{
    if (s->nq == s->capq) {
        size_t cap = s->capq ? s->capq * 2 : 16;
        pop_queue **n = realloc(s->q, cap * sizeof *n);
        if (!n)
            return -1;
        s->q = n;
        s->capq = cap;
    }
    if ((s->nq + 1) * 2 > s->nslots) {
        size_t ns = s->nslots ? s->nslots * 2 : 32;
        uint32_t *slots = calloc(ns, sizeof *slots);
        if (!slots)
            return -1;
        for (size_t i = 0; i < s->nq; i++)
            slot_put(slots, ns, s->q[i], (uint32_t)(i + 1));
        free(s->slots);
        s->slots = slots;
        s->nslots = ns;
    }
    return 0;
}

pop_queue *pop_queue_find(pop_state *s, const char *group, const char *topic, int32_t queue_id)
{
    return s->closed ? NULL : find_queue(s, group, topic, queue_id);
}

pop_queue *pop_queue_get(pop_state *s, const char *group, const char *topic, int32_t queue_id)
{
    pop_queue *q = find_queue(s, group, topic, queue_id);
    if (q)
        return q;
    if (grow(s) != 0)
        return NULL;
    q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->group = strdup(group);
    q->topic = strdup(topic);
    if (!q->group || !q->topic) {
        free(q->group);
        free(q->topic);
        free(q);
        return NULL;
    }
    q->queue_id = queue_id;
    q->next_offset = -1;
    q->next_visible = INT64_MAX;
    q->revive_at = INT64_MAX;
    s->q[s->nq] = q;
    s->nq++;
    slot_put(s->slots, s->nslots, q, (uint32_t)s->nq);
    return q;
}

static size_t lower_bound(const pop_queue *q, int64_t offset)
{
    size_t lo = 0, hi = q->len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (q->inflight[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

pop_inflight *pop_inflight_find(pop_queue *q, int64_t offset)
{
    size_t i = lower_bound(q, offset);
    return i < q->len && q->inflight[i].offset == offset ? pop_inflight_at(q, i) : NULL;
}

int pop_inflight_put(pop_queue *q, const pop_inflight *e)
{
    pop_inflight v = *e;
    if (v.deliveries < 1)
        v.deliveries = 1;
    size_t i = lower_bound(q, v.offset);
    if (i < q->len && q->inflight[i].offset == v.offset) {
        if (q->inflight[i].deliveries == 0)
            q->n++;
        q->inflight[i] = v;
    } else {
        if (q->len == q->cap) {
            size_t cap = q->cap ? q->cap * 2 : 8;
            pop_inflight *n = realloc(q->inflight, cap * sizeof *n);
            if (!n)
                return RMQ_ENOMEM;
            q->inflight = n;
            q->cap = cap;
        }
        /* offsets are handed out ascending: almost always an append */
        memmove(&q->inflight[i + 1], &q->inflight[i], (q->len - i) * sizeof *q->inflight);
        q->inflight[i] = v;
        q->len++;
        q->n++;
    }
    if (q->n == 1 || i < q->head)
        q->head = i;
    pop_queue_note_visible(q, v.pop_time + v.invisible);
    return 0;
}

void pop_inflight_remove(pop_queue *q, int64_t offset)
{
    size_t i = lower_bound(q, offset);
    if (i >= q->len || q->inflight[i].offset != offset || q->inflight[i].deliveries == 0)
        return;
    q->inflight[i].deliveries = 0;
    q->n--;
    if (q->n == 0) {
        q->head = 0;
        q->next_visible = INT64_MAX;
        q->revive_at = INT64_MAX;
    } else if (i == q->head) {
        while (q->inflight[q->head].deliveries == 0)
            q->head++;
    }
}

void pop_queue_tidy(pop_queue *q)
{
    size_t dead = q->len - q->n;
    if (dead <= 64 || dead <= q->n)
        return;
    size_t w = 0;
    for (size_t r = q->head; r < q->len; r++)
        if (q->inflight[r].deliveries > 0)
            q->inflight[w++] = q->inflight[r];
    q->len = w;
    q->head = 0;
}

int64_t pop_queue_commit_offset(const pop_queue *q)
{
    return q->n ? q->inflight[q->head].offset : q->next_offset;
}

/* ---- journal lines ---- */

/* The lines are written by hand, not with vsnprintf: an ack and a POP
 * write one each per message, and vsnprintf was ~7 k instructions of the
 * ~165 k a 5.x message received and acknowledged costs the daemon. The
 * bytes are printf's ("%s", "%" PRId32/PRId64, "%u"), which
 * store.test_pop_state checks on random values. */

/* Room for need more bytes and the terminating NUL, or b->failed. */
static bool jb_reserve(pop_journal_buf *b, size_t need)
{
    if (b->failed)
        return false;
    if (b->cap - b->len > need)
        return true;
    size_t cap = (b->cap + need + 1) * 2;
    char *nb = realloc(b->buf, cap);
    if (!nb) {
        b->failed = true;
        return false;
    }
    b->buf = nb;
    b->cap = cap;
    return true;
}

static char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* " <v>": a space, then v as "%" PRId64 writes it */
static char *put_i64(char *p, int64_t v)
{
    *p++ = ' ';
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, 0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

/* "<tag> <group> <topic> <queue_id>" written into room reserved for it and
 * extra bytes more; the end of what it wrote, or NULL when b->failed */
static char *jb_start(pop_journal_buf *b, char tag, const pop_queue *q, size_t extra)
{
    size_t glen = strlen(q->group), tlen = strlen(q->topic);
    /* tag, two spaces, the names, " " and an int32 (12), the extra */
    if (!jb_reserve(b, 3 + glen + tlen + 12 + extra))
        return NULL;
    char *p = b->buf + b->len;
    *p++ = tag;
    *p++ = ' ';
    memcpy(p, q->group, glen);
    p += glen;
    *p++ = ' ';
    memcpy(p, q->topic, tlen);
    p += tlen;
    return put_i64(p, q->queue_id); /* " <queue_id>" */
}

static void jb_end(pop_journal_buf *b, char *p)
{
    *p++ = '\n';
    *p = '\0';
    b->len = (size_t)(p - b->buf);
}

#define JB_NUM 21 /* " " and an int64's 20 characters at most */

void pop_journal_next(pop_journal_buf *b, const pop_queue *q)
{
    /* an attemptId the line cannot hold (blank, whitespace, 256 bytes or
     * more) stays in memory only: after a restart its repeat waits */
    bool attempt = pop_name_ok(q->attempt_id);
    size_t alen = attempt ? strlen(q->attempt_id) : 0;
    char *p = jb_start(b, 'N', q, JB_NUM + 1 + alen + 2);
    if (!p)
        return;
    p = put_i64(p, q->next_offset);
    if (attempt) {
        *p++ = ' ';
        memcpy(p, q->attempt_id, alen);
        p += alen;
    }
    jb_end(b, p);
}

void pop_journal_inflight(pop_journal_buf *b, const pop_queue *q, const pop_inflight *e)
{
    char *p = jb_start(b, 'I', q, 5 * JB_NUM + 2);
    if (!p)
        return;
    p = put_i64(p, e->offset);
    p = put_i64(p, e->pop_time);
    p = put_i64(p, e->invisible);
    p = put_i64(p, e->deliveries);
    /* flags only when set: older versions read the same line (and ignore them) */
    if (e->flags)
        p = put_i64(p, (int64_t)e->flags);
    jb_end(b, p);
}

void pop_journal_ack(pop_journal_buf *b, const pop_queue *q, int64_t offset)
{
    char *p = jb_start(b, 'A', q, JB_NUM + 2);
    if (!p)
        return;
    jb_end(b, put_i64(p, offset));
}

static int write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Rewrite the journal as a checkpoint of the live state (tmp, fsync, rename). */
static int compact(pop_state *s)
{
    pop_journal_buf b = {0};
    for (size_t i = 0; i < s->nq; i++) {
        const pop_queue *q = s->q[i];
        if (q->next_offset >= 0)
            pop_journal_next(&b, q);
        for (size_t k = q->head; k < q->len; k++)
            if (q->inflight[k].deliveries > 0)
                pop_journal_inflight(&b, q, &q->inflight[k]);
    }
    if (b.failed) {
        free(b.buf);
        return -ENOMEM;
    }
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        free(b.buf);
        return -errno;
    }
    int rc = write_all(fd, b.buf ? b.buf : "", b.len);
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    close(fd);
    if (rc == 0 && rename(tmp, s->path) != 0)
        rc = -errno;
    if (rc == 0) {
        int nfd = open(s->path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (nfd < 0) {
            rc = -errno;
        } else {
            if (s->fd >= 0)
                close(s->fd);
            s->fd = nfd;
            s->journal_bytes = b.len;
        }
    }
    free(b.buf);
    return rc;
}

int pop_journal_flush(pop_state *s, pop_journal_buf *b)
{
    int rc = 0;
    if (b->failed)
        rc = -ENOMEM;
    else if (b->len && s->fd >= 0) {
        rc = write_all(s->fd, b->buf, b->len);
        s->journal_bytes += b->len;
    } else if (b->len)
        rc = -EBADF;
    free(b->buf);
    memset(b, 0, sizeof *b);
    if (rc == 0 && s->journal_bytes > POP_JOURNAL_COMPACT_BYTES)
        rc = compact(s);
    return rc;
}

bool pop_journal_near_compaction(const pop_state *s)
{
    return s->journal_bytes + (16u << 10) > POP_JOURNAL_COMPACT_BYTES;
}

/* ---- replay ---- */

static void replay_line(pop_state *s, char *line)
{
    char kind = line[0];
    char group[256], topic[256], attempt[256];
    int32_t qid;
    int64_t a = 0, b = 0, c = 0;
    int32_t d = 0;
    unsigned flags = 0;
    int nf = 0;
    if (kind == 'N' && (nf = sscanf(line, "N %255s %255s %" SCNd32 " %" SCNd64 " %255s", group,
                                    topic, &qid, &a, attempt)) >= 4) {
        pop_queue *q = pop_queue_get(s, group, topic, qid);
        if (q) {
            q->next_offset = a;
            free(q->attempt_id);
            q->attempt_id = nf == 5 ? strdup(attempt) : NULL;
        }
    } else if (kind == 'I' && sscanf(line,
                                     "I %255s %255s %" SCNd32 " %" SCNd64 " %" SCNd64 " %" SCNd64
                                     " %" SCNd32 " %u",
                                     group, topic, &qid, &a, &b, &c, &d, &flags) >= 7) {
        pop_queue *q = pop_queue_get(s, group, topic, qid);
        pop_inflight e = {
            .offset = a, .pop_time = b, .invisible = c, .deliveries = d, .flags = flags};
        if (q && pop_inflight_put(q, &e) == 0 && POP_INFLIGHT_LEGACY(&e))
            q->has_legacy = true;
    } else if (kind == 'A' &&
               sscanf(line, "A %255s %255s %" SCNd32 " %" SCNd64, group, topic, &qid, &a) == 4) {
        pop_queue *q = find_queue(s, group, topic, qid);
        if (q) {
            pop_inflight_remove(q, a);
            pop_queue_tidy(q);
        }
    }
}

int pop_state_open(pop_state *s, const char *root_dir, char *err, size_t errlen)
{
    /* s->mu is the owner's (initialised once): a reopen after a hot
     * reload's refusal keeps it */
    s->fd = -1;
    s->closed = false;
    s->q = NULL;
    s->nq = s->capq = 0;
    s->slots = NULL;
    s->nslots = 0;
    s->journal_bytes = 0;
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/pop", root_dir);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -errno;
    }
    snprintf(s->path, sizeof s->path, "%s/pop.journal", dir);
    FILE *f = fopen(s->path, "re");
    if (f) {
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while ((n = getline(&line, &cap, f)) > 0)
            if (line[n - 1] == '\n') /* a torn last line has none */
                replay_line(s, line);
        free(line);
        fclose(f);
    }
    int rc = compact(s);
    if (rc != 0) {
        snprintf(err, errlen, "cannot write %s: %s", s->path, strerror(-rc));
        pop_state_close(s);
        return rc;
    }
    return 0;
}

void pop_state_close(pop_state *s)
{
    pthread_mutex_lock(&s->mu);
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    s->closed = true;
    for (size_t i = 0; i < s->nq; i++) {
        free(s->q[i]->group);
        free(s->q[i]->topic);
        free(s->q[i]->inflight);
        free(s->q[i]->attempt_id);
        free(s->q[i]);
    }
    free(s->q);
    free(s->slots);
    s->q = NULL;
    s->slots = NULL;
    s->nq = s->capq = s->nslots = 0;
    pthread_mutex_unlock(&s->mu);
}
