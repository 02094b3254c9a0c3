/* pull_hold.c — long polling (protocol-messages.md §10.8.8): held PULLs
 * keyed by topic@queueId, woken by the engine's arrival callback the moment
 * a matching message is readable, expired by a 100 ms timer at their hold
 * time (with Java's 5 s max-offset sweep), answered at once by quiesce.
 * A woken request runs again without suspension and without committing,
 * its subscription and filter taken anew (executeRequestWhenWakeup). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pop_service.h"
#include "pull_request.h"

#define HOLD_BUCKETS 1024
#define HOLD_TICK_MS 100
#define HOLD_SWEEP_TICKS 50 /* 5 s: Java's PullRequestHoldService period */

struct pull_hold_table {
    pthread_mutex_t mu;
    pull_req *bucket[HOLD_BUCKETS];
    atomic_size_t count;
    unsigned tick;
};

static size_t key_hash(const char *topic, int32_t q)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *s = (const unsigned char *)topic; *s; s++)
        h = (h ^ *s) * 16777619u;
    h = (h ^ (uint32_t)q) * 16777619u;
    return h % HOLD_BUCKETS;
}

static void reexecute_list(store_plugin *sp, pull_req *list)
{
    while (list) {
        pull_req *p = list;
        list = p->next;
        p->next = NULL;
        pull_execute(sp, p, false, true);
        pull_req_free(p);
    }
}

/* Unlink p from bucket b if it is still held there (compares the pointer
 * only: p may have been freed by another thread). */
static bool take(pull_hold_table *t, size_t b, pull_req *p)
{
    for (pull_req **pp = &t->bucket[b]; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            p->next = NULL;
            atomic_fetch_sub(&t->count, 1);
            return true;
        }
    return false;
}

void pull_holds_add(store_plugin *sp, pull_req *p)
{
    pull_hold_table *t = sp->holds;
    /* Once p is in the table, an arrival on another IO thread may take,
     * answer and free it at any moment: what is needed after the insert is
     * copied first (reading p->topic there was a use after free). */
    char topic[256];
    snprintf(topic, sizeof topic, "%s", p->topic);
    int32_t queue_id = p->queue_id;
    int64_t queue_offset = p->queue_offset;
    size_t b = key_hash(topic, queue_id);
    pthread_mutex_lock(&t->mu);
    p->next = t->bucket[b];
    t->bucket[b] = p;
    atomic_fetch_add(&t->count, 1);
    pthread_mutex_unlock(&t->mu);
    /* a message stored between the lookup and now would have found no hold */
    if (store_max_offset(sp->engine, topic, queue_id) > queue_offset ||
        atomic_load(&sp->quiescing)) {
        pthread_mutex_lock(&t->mu);
        bool mine = take(t, b, p);
        pthread_mutex_unlock(&t->mu);
        if (mine)
            reexecute_list(sp, p);
    }
}

void pull_holds_on_arrival(void *ud, const char *topic, int32_t queue_id, int64_t max_offset,
                           int64_t tags_code, const char *props, size_t props_len, int64_t store_ts)
{
    (void)store_ts;
    store_plugin *sp = ud;
    pop_holds_on_arrival(sp); /* held POPs (pop_processors.c) */
    pull_hold_table *t = sp->holds;
    /* Lost-wake-up check (with pull_holds_add's re-read of the queue end
     * after its insert): the engine stores the queue end, then releases its
     * append mutex, then calls us; that unlock is a locked instruction on
     * x86/glibc, so this load cannot pass the store. A port to a weakly
     * ordered CPU needs a seq_cst fence here and after the insert. */
    if (!t || atomic_load_explicit(&t->count, memory_order_relaxed) == 0)
        return;
    size_t b = key_hash(topic, queue_id);
    pull_req *woken = NULL;
    pthread_mutex_lock(&t->mu);
    for (pull_req **pp = &t->bucket[b]; *pp;) {
        pull_req *p = *pp;
        if (p->queue_id == queue_id && strcmp(p->topic, topic) == 0 &&
            max_offset > p->queue_offset && pull_req_matches(sp, p, tags_code, props, props_len)) {
            *pp = p->next;
            atomic_fetch_sub(&t->count, 1);
            p->next = woken;
            woken = p;
        } else {
            pp = &p->next;
        }
    }
    pthread_mutex_unlock(&t->mu);
    reexecute_list(sp, woken);
}

static void hold_tick(void *ud)
{
    store_plugin *sp = ud;
    pull_hold_table *t = sp->holds;
    if (atomic_load(&t->count) == 0)
        return;
    uint64_t now = sp->api->now_monotonic_ms();
    bool sweep = ++t->tick % HOLD_SWEEP_TICKS == 0;
    pull_req *due = NULL;
    pthread_mutex_lock(&t->mu);
    for (size_t b = 0; b < HOLD_BUCKETS; b++)
        for (pull_req **pp = &t->bucket[b]; *pp;) {
            pull_req *p = *pp;
            if (now >= p->deadline_ms ||
                (sweep && store_max_offset(sp->engine, p->topic, p->queue_id) > p->queue_offset)) {
                *pp = p->next;
                atomic_fetch_sub(&t->count, 1);
                p->next = due;
                due = p;
            } else {
                pp = &p->next;
            }
        }
    pthread_mutex_unlock(&t->mu);
    reexecute_list(sp, due);
}

void pull_holds_release_all(store_plugin *sp)
{
    pull_hold_table *t = sp->holds;
    if (!t)
        return;
    pull_req *all = NULL;
    pthread_mutex_lock(&t->mu);
    for (size_t b = 0; b < HOLD_BUCKETS; b++)
        while (t->bucket[b]) {
            pull_req *p = t->bucket[b];
            t->bucket[b] = p->next;
            p->next = all;
            all = p;
        }
    atomic_store(&t->count, 0);
    pthread_mutex_unlock(&t->mu);
    reexecute_list(sp, all);
}

int pull_holds_create(store_plugin *sp)
{
    pull_hold_table *t = calloc(1, sizeof *t);
    if (!t)
        return RMQ_ENOMEM;
    pthread_mutex_init(&t->mu, NULL);
    atomic_init(&t->count, 0);
    sp->holds = t;
    return sp->api->add_timer(sp->ctx, HOLD_TICK_MS, HOLD_TICK_MS, hold_tick, sp, NULL,
                              &sp->hold_timer);
}

void pull_holds_destroy(store_plugin *sp)
{
    pull_hold_table *t = sp->holds;
    if (!t)
        return;
    pthread_mutex_destroy(&t->mu);
    free(t);
    sp->holds = NULL;
}
