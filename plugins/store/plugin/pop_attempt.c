/* pop_attempt.c — the attemptId of order (FIFO) POPs, as Java 5.x's
 * ConsumerOrderInfoManager keeps it: each (group, topic, queue) remembers
 * the attemptId of the POP that took its last batch. A client whose order
 * POP got no answer (lost, timed out) repeats it with the same attemptId;
 * that POP is not blocked by the batch's invisible time and gets the
 * batch again, with the delivery counts unchanged (Java's checkBlock
 * returns false and mergeOffsetConsumedCount keeps the counts). The gRPC
 * clients send one per FIFO ReceiveMessage (attempt_id), the proxy hands
 * it to the store's POP_MESSAGE header `attemptId`. Kept in memory only:
 * after a restart a repeated attempt waits for the invisible time, as any
 * other POP would (docs/compat.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pop_service.h"

#define ATTEMPT_BUCKETS 1024

typedef struct attempt_entry {
    struct attempt_entry *next;
    int32_t queue_id;
    char *group, *topic, *attempt;
} attempt_entry;

struct pop_attempts {
    attempt_entry *buckets[ATTEMPT_BUCKETS];
};

static uint32_t bucket_of(const pop_queue *q)
{
    uint32_t h = 2166136261u; /* FNV-1a over the names and the queue id */
    for (const char *s = q->group; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    for (const char *s = q->topic; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    h = (h ^ (uint32_t)q->queue_id) * 16777619u;
    return h % ATTEMPT_BUCKETS;
}

static attempt_entry **find(struct pop_attempts *t, const pop_queue *q)
{
    attempt_entry **pp = &t->buckets[bucket_of(q)];
    while (*pp && !((*pp)->queue_id == q->queue_id && strcmp((*pp)->group, q->group) == 0 &&
                    strcmp((*pp)->topic, q->topic) == 0))
        pp = &(*pp)->next;
    return pp;
}

static void entry_free(attempt_entry *e)
{
    free(e->group);
    free(e->topic);
    free(e->attempt);
    free(e);
}

int pop_attempts_init(pop_service *ps)
{
    ps->attempts = calloc(1, sizeof *ps->attempts);
    return ps->attempts ? 0 : RMQ_ENOMEM;
}

void pop_attempts_fini(pop_service *ps)
{
    struct pop_attempts *t = ps->attempts;
    if (!t)
        return;
    for (size_t i = 0; i < ATTEMPT_BUCKETS; i++)
        while (t->buckets[i]) {
            attempt_entry *e = t->buckets[i];
            t->buckets[i] = e->next;
            entry_free(e);
        }
    free(t);
    ps->attempts = NULL;
}

bool pop_attempt_same(pop_service *ps, const pop_queue *q, const char *attempt_id)
{
    if (!ps->attempts || !attempt_id || !*attempt_id)
        return false;
    attempt_entry *e = *find(ps->attempts, q);
    return e && strcmp(e->attempt, attempt_id) == 0;
}

void pop_attempt_note(pop_service *ps, const pop_queue *q, const char *attempt_id)
{
    if (!ps->attempts)
        return;
    attempt_entry **pp = find(ps->attempts, q);
    attempt_entry *e = *pp;
    if (!attempt_id || !*attempt_id) { /* a batch without attemptId: none repeats it */
        if (e) {
            *pp = e->next;
            entry_free(e);
        }
        return;
    }
    if (e) {
        if (strcmp(e->attempt, attempt_id) == 0)
            return;
        char *a = strdup(attempt_id);
        if (!a) { /* out of memory: forget it (a repeat then waits, as without one) */
            *pp = e->next;
            entry_free(e);
            return;
        }
        free(e->attempt);
        e->attempt = a;
        return;
    }
    e = calloc(1, sizeof *e);
    if (!e)
        return;
    e->queue_id = q->queue_id;
    e->group = strdup(q->group);
    e->topic = strdup(q->topic);
    e->attempt = strdup(attempt_id);
    if (!e->group || !e->topic || !e->attempt) {
        entry_free(e);
        return;
    }
    e->next = *pp;
    *pp = e;
}
