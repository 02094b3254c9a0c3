/* pop_state.h — the POP consumption state of one store (RocketMQ 5.x POP on
 * the remoting protocol, pop_processors.c): per (group, topic, queue) the
 * next queue offset to hand out and the messages handed out and not yet
 * acknowledged (in flight), with when each becomes visible again and how
 * often it was delivered. Kept in memory and in an append-only journal
 * (<storePathRootDir>/pop/pop.journal) that is replayed at open and
 * compacted into a checkpoint of the live state at open and when it grows,
 * so acknowledged state survives kill -9 and hot reload. Java writes
 * checkpoints into rmq_sys_REVIVE_LOG_<cluster> instead (docs/compat.md).
 * Thread-safe: one mutex per state. */
#ifndef POP_STATE_H
#define POP_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pop_inflight {
    int64_t offset;     /* queue offset of the message */
    int64_t pop_time;   /* ms, of the last delivery (or invisible-time change) */
    int64_t invisible;  /* ms */
    int32_t deliveries; /* times delivered so far (reconsume times = deliveries - 1);
                           0 marks an acknowledged slot not yet compacted away */
    uint32_t flags;     /* POP_INFLIGHT_ORDER or _PLAIN; neither: a legacy entry */
} pop_inflight;

/* Popped by an order POP: redelivered in its queue, never moved to the
 * POP retry topic (Java's order POP has no retry topic either). */
#define POP_INFLIGHT_ORDER 1u
/* Popped by a non-order POP: the revive moves it to the POP retry topic.
 * An entry with neither flag was journalled by a version without POP retry
 * topics (its I line has no flags field), which cannot tell which kind of
 * POP took it: it keeps that version's model (redelivered in its queue by
 * the group's next POP of either kind, %DLQ% past the maximum), so an
 * in-flight FIFO message never lands in a retry topic its order POPs do not
 * read. */
#define POP_INFLIGHT_PLAIN 2u
#define POP_INFLIGHT_LEGACY(e) (((e)->flags & (POP_INFLIGHT_ORDER | POP_INFLIGHT_PLAIN)) == 0)

typedef struct pop_queue {
    char *group;
    char *topic;
    int32_t queue_id;
    int64_t next_offset;    /* -1: not yet started */
    pop_inflight *inflight; /* ascending offsets, acknowledged ones marked (deliveries 0) */
    size_t len, cap;        /* slots used / allocated in inflight */
    size_t n;               /* messages in flight (slots not marked acknowledged) */
    size_t head;            /* first slot in flight when n > 0 */
    /* No message in flight becomes visible before this (ms; INT64_MAX when
     * none): a POP skips the queue's in-flight slots until then, so a
     * million invisible messages cost nothing per POP and no timer each. */
    int64_t next_visible;
    /* The background revive (pop_revive.c) need not look at this queue
     * before this (ms; INT64_MAX when nothing is in flight): the earliest
     * end of an invisible time it has not yet seen pass. Lowered by every
     * change of an in-flight message (pop_queue_note_visible), raised only
     * by the revive's walk, so a queue whose expired messages wait for the
     * group's next POP costs the revive nothing until another one expires. */
    int64_t revive_at;
    /* The attemptId of the order POP that took the queue's last batch
     * (pop_attempt.c; NULL: none). Journalled on the N line so that a
     * repeat finds it after kill -9 and hot reload, as Java keeps it in
     * consumerOrderInfo.json. */
    char *attempt_id;
    /* Replay met a legacy in-flight entry here (POP_INFLIGHT_PLAIN): a
     * non-order POP walks the in-flight list for those too. Until restart. */
    bool has_legacy;
} pop_queue;

typedef struct pop_state {
    pthread_mutex_t mu;
    char path[1100];
    int fd;        /* journal, O_APPEND; -1 when closed */
    bool closed;   /* handed to a newer generation (hot reload) or shut down */
    pop_queue **q; /* stable pointers: a queue's state never moves */
    size_t nq, capq;
    uint32_t *slots; /* open-addressing index over q: index + 1, 0 = empty */
    size_t nslots;   /* power of two, at least twice nq */
    uint64_t journal_bytes;
} pop_state;

/* Open (create) the journal under root_dir/pop, replay it and compact it.
 * s->mu must be initialised by the caller (it outlives close/open pairs).
 * 0 or a negative errno; err gets a message. */
int pop_state_open(pop_state *s, const char *root_dir, char *err, size_t errlen);
void pop_state_close(pop_state *s);

/* Callers hold s->mu for the functions below. */
/* The queue's state, created when absent (NULL: out of memory). */
pop_queue *pop_queue_get(pop_state *s, const char *group, const char *topic, int32_t queue_id);
/* The queue's state, NULL when absent (creates nothing). */
pop_queue *pop_queue_find(pop_state *s, const char *group, const char *topic, int32_t queue_id);
pop_inflight *pop_inflight_find(pop_queue *q, int64_t offset);
/* Insert or update one in-flight message; 0 or RMQ_ENOMEM. */
int pop_inflight_put(pop_queue *q, const pop_inflight *e);
/* Acknowledge: marks the slot (O(log n), no move) so that acknowledging
 * in order under a million in flight stays cheap; pop_queue_tidy drops the
 * marked slots once they outnumber the live ones. Slot indices stay valid
 * until pop_queue_tidy. */
void pop_inflight_remove(pop_queue *q, int64_t offset);
void pop_queue_tidy(pop_queue *q);
/* The slot at index i when it is in flight, else NULL (i < q->len). */
static inline pop_inflight *pop_inflight_at(pop_queue *q, size_t i)
{
    return q->inflight[i].deliveries > 0 ? &q->inflight[i] : NULL;
}
/* An in-flight message of q becomes visible at t: lowers next_visible and
 * revive_at (callers that change a slot in place). */
static inline void pop_queue_note_visible(pop_queue *q, int64_t t)
{
    if (t < q->next_visible)
        q->next_visible = t;
    if (t < q->revive_at)
        q->revive_at = t;
}
/* The offset up to which everything is acknowledged (first in flight, or
 * next_offset). */
int64_t pop_queue_commit_offset(const pop_queue *q);

/* Journal lines for the changes made under the lock; pop_journal_flush
 * writes them with one write(2). */
typedef struct pop_journal_buf {
    char *buf;
    size_t len, cap;
    bool failed;
} pop_journal_buf;
void pop_journal_next(pop_journal_buf *b, const pop_queue *q);
void pop_journal_inflight(pop_journal_buf *b, const pop_queue *q, const pop_inflight *e);
void pop_journal_ack(pop_journal_buf *b, const pop_queue *q, int64_t offset);
/* 0 or a negative errno; compacts when the journal grew past its limit. */
int pop_journal_flush(pop_state *s, pop_journal_buf *b);
/* Whether a flush of a few KiB could start that compaction (caller holds
 * mu): the IO thread leaves such a write to a thread that may block. */
bool pop_journal_near_compaction(const pop_state *s);

/* Names the journal can hold (no whitespace, not empty, < 256 bytes). */
bool pop_name_ok(const char *name);

#endif
