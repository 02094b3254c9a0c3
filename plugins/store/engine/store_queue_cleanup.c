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

int store_clean_expired_queues(store_engine *e)
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
            /* max_phys_end <= 0: no entry yet (Java's getLastOffset -1) */
            if (strcmp(q->topic, SCHEDULE_TOPIC) != 0 && q->max_phys_end > 0 &&
                q->max_phys_end < cl_min) {
                store_log(e, 2,
                          "clean expired consume queue %s-%d (last entry ends at %lld, "
                          "commit log starts at %lld)",
                          q->topic, q->queue_id, (long long)q->max_phys_end, (long long)cl_min);
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

int store_clean_unused_topics(store_engine *e, bool (*keep)(void *ud, const char *topic), void *ud)
{
    int n = 0;
    if (!e)
        return 0;
    char err[256];
    if (cq_load_all(e, err, sizeof err) != 0) /* queues still on disk only: now */
        store_log(e, 0, "consume-queue clean-up: %s", err);
    pthread_mutex_lock(&e->append_mu);
    pthread_rwlock_wrlock(&e->maps);
    for (size_t i = 0; i < e->cqs.nb; i++) {
        store_cq *q = e->cqs.b[i];
        while (q) {
            store_cq *nx = q->next;
            if (strcmp(q->topic, SCHEDULE_TOPIC) != 0 && strcmp(q->topic, OP_HALF_TOPIC) != 0 &&
                strncmp(q->topic, LMQ_PREFIX, strlen(LMQ_PREFIX)) != 0 && !keep(ud, q->topic)) {
                store_log(e, 2, "clean unused topic %s: consume queue %d removed", q->topic,
                          q->queue_id);
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
