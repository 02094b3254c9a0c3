/* pop_attempt.c — the attemptId of order (FIFO) POPs, as Java 5.x's
 * ConsumerOrderInfoManager keeps it: each (group, topic, queue) remembers
 * the attemptId of the POP that took its last batch. A client whose order
 * POP got no answer (lost, timed out) repeats it with the same attemptId;
 * that POP is not blocked by the batch's invisible time and gets the
 * batch again, with the delivery counts unchanged (Java's checkBlock
 * returns false and mergeOffsetConsumedCount keeps the counts). The gRPC
 * clients send one per FIFO ReceiveMessage (attempt_id), the proxy hands
 * it to the store's POP_MESSAGE header `attemptId`. It lives in the queue's
 * POP state (pop_queue.attempt_id) and its journal's N line (pop_state.c),
 * so it survives kill -9 and a hot reload (the new generation replays the
 * journal), as Java persists it in consumerOrderInfo.json. */
#include <stdlib.h>
#include <string.h>

#include "pop_service.h"

bool pop_attempt_same(const pop_queue *q, const char *attempt_id)
{
    return attempt_id && *attempt_id && q->attempt_id && strcmp(q->attempt_id, attempt_id) == 0;
}

bool pop_attempt_note(pop_queue *q, const char *attempt_id)
{
    if (!attempt_id || !*attempt_id) { /* a batch without attemptId: none repeats it */
        if (!q->attempt_id)
            return false;
        free(q->attempt_id);
        q->attempt_id = NULL;
        return true;
    }
    if (q->attempt_id && strcmp(q->attempt_id, attempt_id) == 0)
        return false;
    free(q->attempt_id);
    /* out of memory: forgotten (a repeat then waits, as without one) */
    q->attempt_id = strdup(attempt_id);
    return true;
}
