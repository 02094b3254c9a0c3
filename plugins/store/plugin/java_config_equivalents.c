/* java_config_equivalents.c — the MessageStoreConfig (and store-side
 * BrokerConfig) keys of Java 4.9.8's getBrokerConfig answer that the store
 * has no setting of that name for, each with the value this store behaves
 * as, so an operator's script reading them sees the truth (docs/compat.md,
 * GET_BROKER_CONFIG). Keys whose Java meaning has no counterpart here and
 * whose any value would mislead are left out (listed in compat.md). */
#include <stdio.h>

#include "store_features.h"
#include "store_plugin.h"

/* Java's Long.MAX_VALUE: a queue wait never refused (no fast failure of
 * the send, pull and transaction queues here) */
#define NEVER "9223372036854775807"

size_t store_java_config_text(store_plugin *sp, char *out, size_t cap, size_t n)
{
    char send_threads[16], send_queue[16], end_tx_queue[16];
    snprintf(send_threads, sizeof send_threads, "%d", (int)sp->set.send_threads);
    snprintf(send_queue, sizeof send_queue, "%d", (int)sp->set.send_queue);
    snprintf(end_tx_queue, sizeof end_tx_queue, "%d", END_TRANSACTION_QUEUE_CAPACITY);
    const struct {
        const char *k, *v;
    } keys[] = {
        /* a put completes, and a reply is processed, on the send path */
        {"putMessageFutureThreadPoolNums", send_threads},
        {"putThreadPoolQueueCapacity", send_queue},
        {"processReplyMessageThreadPoolNums", send_threads},
        {"replyThreadPoolQueueCapacity", send_queue},
        {"endTransactionThreadPoolNums", "2"}, /* the `transaction` executor */
        {"endTransactionPoolQueueCapacity", end_tx_queue},
        {"waitTimeMillsInSendQueue", NEVER},
        {"waitTimeMillsInPullQueue", NEVER},
        {"waitTimeMillsInTransactionQueue", NEVER},
        {"osPageCacheBusyTimeOutMills", NEVER}, /* no page-cache lock refusal */
        {"transferMsgByHeap", "true"},          /* pull bodies are copied, not sent from files */
        {"useReentrantLockWhenPutMessage", "true"}, /* appends take a mutex */
        {"flushCommitLogTimed", "true"},            /* a pass each flushIntervalCommitLog */
        {"flushCommitLogLeastPages", "0"},          /* any dirty page, each pass */
        {"flushCommitLogThoroughInterval", "1000"}, /* everything durable each second */
        {"flushIntervalConsumeQueue", "1000"},      /* queues and index: each second */
        {"flushConsumeQueueLeastPages", "0"},
        {"flushConsumeQueueThoroughInterval", "1000"},
        {"warmMapedFileEnable", "false"}, /* segments get blocks by fallocate */
        {"flushLeastPagesWhenWarmMapedFile", "4096"},
        {"transientStorePoolEnable", "false"}, /* no off-heap write buffer */
        {"transientStorePoolSize", "5"},
        {"fastFailIfNoBufferInStorePool", "false"},
        {"commitIntervalCommitLog", "200"}, /* the three: only with the pool above */
        {"commitCommitLogLeastPages", "4"},
        {"commitCommitLogThoroughInterval", "200"},
        {"enableConsumeQueueExt", "false"}, /* no consume-queue extension files */
        {"mappedFileSizeConsumeQueueExt", "50331648"},
        {"bitMapLengthConsumeQueueExt", "64"},
        {"enableDLegerCommitLog", "false"},
        {"debugLockEnable", "false"},
        {"duplicationEnable", "false"},
        {"isEnableBatchPush", "false"},
        {"enableLmq", "false"}, /* no light message queues */
        {"enableMultiDispatch", "false"},
        {"maxLmqConsumeQueueNum", "20000"},
        {"enableScheduleAsyncDeliver", "false"},
        {"scheduleAsyncDeliverMaxPendingLimit", "2000"},
        {"scheduleAsyncDeliverMaxResendNum2Blocked", "3"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        int w = snprintf(n < cap ? out + n : NULL, n < cap ? cap - n : 0, "%s=%s\n", keys[i].k,
                         keys[i].v);
        if (w > 0)
            n += (size_t)w;
    }
    return n;
}
