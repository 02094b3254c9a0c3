/* store_queue_cleanup.c — the two manual consume-queue clean-ups of Java's
 * DefaultMessageStore: cleanExpiredConsumerQueue (queues whose last entry
 * points behind the commit log's first byte) and cleanUnusedTopic (queues of
 * topics the broker no longer has). A destroyed queue starts again at offset
 * 0, as Java's removeQueueFromTopicQueueTable makes it. */
#include "store_internal.h"

#include <string.h>

#define SCHEDULE_TOPIC "SCHEDULE_TOPIC_XXXX"
#define OP_HALF_TOPIC "RMQ_SYS_TRANS_OP_HALF_TOPIC"
#define LMQ_PREFIX "%LMQ%"

/* Whether clean-up removes queue q (and says so in the log); cl_min is the
 * commit log's first offset, read under the locks. */
typedef bool (*doomed_fn)(store_engine *e, const store_cq *q, int64_t cl_min, void *ud);

/* The walk both clean-ups share: every queue, the ones still only on disk
 * loaded first, under the append and map locks; the count destroyed. */
static int destroy_queues(store_engine *e, doomed_fn doomed, void *ud)
{
    int n = 0;
    if (!e)
        return 0;
    char err[256];
    if (cq_load_all(e, err, sizeof err) != 0) /* queues still on disk only: now */
        store_log(e, 0, "consume-queue clean-up: %s", err);
    pthread_mutex_lock(&e->append_mu);
    pthread_rwlock_wrlock(&e->maps);
    int64_t cl_min = atomic_load(&e->cl_min_offset);
    for (size_t i = 0; i < e->cqs.nb; i++) {
        store_cq *q = e->cqs.b[i];
        while (q) {
            store_cq *nx = q->next;
            if (doomed(e, q, cl_min, ud)) {
                cq_destroy(e, q, true);
                n++;
            }
            q = nx;
        }
    }
    cq_state_after_delete(e);
    pthread_rwlock_unlock(&e->maps);
    pthread_mutex_unlock(&e->append_mu);
    return n;
}

static bool expired(store_engine *e, const store_cq *q, int64_t cl_min, void *ud)
{
    (void)ud;
    /* max_phys_end <= 0: no entry yet (Java's getLastOffset -1) */
    if (strcmp(q->topic, SCHEDULE_TOPIC) == 0 || q->max_phys_end <= 0 || q->max_phys_end >= cl_min)
        return false;
    store_log(e, 2,
              "clean expired consume queue %s-%d (last entry ends at %lld, "
              "commit log starts at %lld)",
              q->topic, q->queue_id, (long long)q->max_phys_end, (long long)cl_min);
    return true;
}

int store_clean_expired_queues(store_engine *e)
{
    return destroy_queues(e, expired, NULL);
}

typedef struct topic_keeper {
    bool (*keep)(void *ud, const char *topic);
    void *ud;
} topic_keeper;

static bool unused(store_engine *e, const store_cq *q, int64_t cl_min, void *ud)
{
    (void)cl_min;
    const topic_keeper *k = ud;
    if (strcmp(q->topic, SCHEDULE_TOPIC) == 0 || strcmp(q->topic, OP_HALF_TOPIC) == 0 ||
        strncmp(q->topic, LMQ_PREFIX, strlen(LMQ_PREFIX)) == 0 || k->keep(k->ud, q->topic))
        return false;
    store_log(e, 2, "clean unused topic %s: consume queue %d removed", q->topic, q->queue_id);
    return true;
}

int store_clean_unused_topics(store_engine *e, bool (*keep)(void *ud, const char *topic), void *ud)
{
    topic_keeper k = {keep, ud};
    return destroy_queues(e, unused, &k);
}
