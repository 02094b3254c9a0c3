/* pop_revive.c — the background revive of POP consumption (pop_service.h),
 * Java's PopReviveService without its REVIVE_LOG topic. Every
 * POP_REVIVE_INTERVAL_MS the POP timer (no thread, no timer per message)
 * looks at each queue's revive_at and walks only the queues where an
 * invisible time ended since the last look. An expired message of a
 * non-order POP is written into the group's POP retry topic (pop_retry.c:
 * reconsume times + 1), or past the group's retryMaxTimes into
 * %DLQ%<group>, and acknowledged in the journal, so the move survives
 * kill -9 as an ACK does; the group's next POP reads the retry topic. An
 * order POP's message stays in its queue for the next order POP (Java's
 * order POP has no retry topic) and goes to the DLQ past retryMaxTimes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha.h"
#include "pop_service.h"
#include "store_features.h"

/* Enough DLQ moves per pass to keep the state lock short; the rest waits
 * for the next pass (the queue keeps revive_at <= now). */
#define POP_REVIVE_BATCH 1024
#define POP_DEFAULT_RETRY_MAX 16 /* SubscriptionGroupConfig.retryMaxTimes */

/* A queue whose committed offset moved: told to the offset table after
 * the state lock is released (as ack_apply does). */
typedef struct revive_commit {
    char *group, *topic;
    int32_t queue_id;
    int64_t offset;
} revive_commit;

/* The group's retryMaxTimes; the last answer is kept for the next queue
 * (queues of a group tend to follow one another in the table). */
typedef struct max_cache {
    char group[256];
    int32_t max;
} max_cache;

static int32_t group_max(store_plugin *sp, max_cache *c, const char *group)
{
    if (c->group[0] && strcmp(c->group, group) == 0)
        return c->max;
    rmq_subscription_group_config g;
    /* a group deleted since its POP: Java's default */
    c->max = meta_group_get(sp, group, false, &g) == 0 ? g.retry_max_times : POP_DEFAULT_RETRY_MAX;
    snprintf(c->group, sizeof c->group, "%s", group);
    return c->max;
}

/* Walk q (st->mu held): expired messages of non-order POPs go to the
 * retry topic (or the DLQ), those of order POPs past max to the DLQ.
 * revive_at becomes the earliest invisible time still running (or stays
 * <= now when the budget ran out or a copy failed). Moves made. */
static size_t revive_queue(store_plugin *sp, pop_queue *q, int32_t max, bool v2, int64_t now,
                           size_t budget, pop_journal_buf *jb)
{
    int64_t at = INT64_MAX;
    size_t moved = 0;
    for (size_t i = q->head; i < q->len; i++) {
        pop_inflight *slot = pop_inflight_at(q, i);
        if (!slot)
            continue;
        int64_t visible = slot->pop_time + slot->invisible;
        if (visible > now) {
            if (visible < at)
                at = visible;
            continue;
        }
        /* a legacy entry (POP_INFLIGHT_PLAIN) is redelivered in its queue as an
         * order POP's is; past the maximum both go to %DLQ% from here */
        bool order = (slot->flags & POP_INFLIGHT_ORDER) || POP_INFLIGHT_LEGACY(slot);
        if (order && slot->deliveries <= max)
            continue; /* visible again: the group's next POP hands it out */
        if (moved == budget) {
            at = now; /* look again at the next pass */
            break;
        }
        if (!order) {
            if (pop_retry_revive(sp, q, slot, max, v2, jb) == 0) {
                moved++;
                continue;
            }
            /* the store refused the copy (a full disk...): the next pass
             * tries again; one failed write per queue and pass, not one per
             * expired message under the state's lock */
            at = now;
            break;
        }
        int64_t offset = slot->offset;
        store_get_result res;
        if (pop_read_at(sp, q->topic, q->queue_id, offset, &res) == 0) {
            pop_to_dlq(sp, q, res.data, res.len, slot->deliveries - 1);
            free(res.data);
        } /* else the message is gone (files deleted): nothing left to move */
        pop_journal_ack(jb, q, offset);
        pop_inflight_remove(q, offset);
        moved++;
    }
    q->revive_at = q->n ? at : INT64_MAX;
    pop_queue_tidy(q);
    return moved;
}

size_t pop_revive_run(store_plugin *sp, int64_t now)
{
    pop_service *ps = pop_service_of(sp);
    if (!ps || !ps->opened || ha_current_role(sp) == HA_SLAVE)
        return 0; /* a slave's copy of the commit log is the master's to write */
    pop_state *st = &ps->st;
    max_cache mc = {{0}, 0};
    pop_journal_buf jb = {0};
    revive_commit *commits = NULL;
    size_t ncommits = 0, moved = 0;
    pthread_mutex_lock(&st->mu);
    if (st->closed) {
        pthread_mutex_unlock(&st->mu);
        return 0;
    }
    for (size_t k = 0; k < st->nq && moved < POP_REVIVE_BATCH; k++) {
        pop_queue *q = st->q[k];
        if (q->n == 0 || q->revive_at > now)
            continue; /* the common case: one comparison per queue */
        size_t m = revive_queue(sp, q, group_max(sp, &mc, q->group), ps->retry_v2, now,
                                POP_REVIVE_BATCH - moved, &jb);
        moved += m;
        if (m == 0)
            continue;
        revive_commit *nc = realloc(commits, (ncommits + 1) * sizeof *nc);
        if (!nc)
            continue; /* the offset table catches up at the group's next ACK */
        commits = nc;
        commits[ncommits] = (revive_commit){strdup(q->group), strdup(q->topic), q->queue_id,
                                            pop_queue_commit_offset(q)};
        ncommits++;
    }
    int rc = pop_journal_flush(st, &jb);
    pthread_mutex_unlock(&st->mu);
    if (rc != 0)
        sp->api->log(sp->ctx, RMQ_LOG_ERROR, "pop journal %s: %s", st->path, strerror(-rc));
    for (size_t i = 0; i < ncommits; i++) {
        /* what consumerProgress shows: past the messages moved to the DLQ */
        if (commits[i].group && commits[i].topic)
            meta_offset_commit(sp, commits[i].group, commits[i].topic, commits[i].queue_id,
                               commits[i].offset);
        free(commits[i].group);
        free(commits[i].topic);
    }
    free(commits);
    if (moved)
        sp->api->log(sp->ctx, RMQ_LOG_INFO,
                     "pop revive: %zu expired message(s) moved to a retry topic or DLQ", moved);
    return moved;
}

void pop_revive_tick(store_plugin *sp)
{
    pop_service *ps = pop_service_of(sp);
    if (!ps)
        return;
    int64_t now = (int64_t)sp->api->now_wall_ms();
    if (now < atomic_load(&ps->revive_due) || atomic_exchange(&ps->revive_running, true))
        return;
    atomic_store(&ps->revive_due, now + POP_REVIVE_INTERVAL_MS);
    (void)pop_revive_run(sp, now);
    atomic_store(&ps->revive_running, false);
}
