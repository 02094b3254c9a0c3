/* kit_fixture_plugin.h — the request codes of the kit tests' linked-in
 * plugin (kit_fixture_plugin.c). */
#ifndef KIT_FIXTURE_PLUGIN_H
#define KIT_FIXTURE_PLUGIN_H

#include <rmqhost/rmqhost.h>

#define KF_MAX_TICKS 64
#define KF_CODE_COUNT 1 /* inline: ext count = ++counter */
#define KF_CODE_EXEC                                                                               \
    2 /* executor "work" (1 thread, queue 1): creates "<gate>.running", waits for file "<gate>" */
#define KF_CODE_DEFER 3       /* deferred; the next tick answers with ext at = clock */
#define KF_CODE_REMOTE 4      /* inline: invoke_async_addr 10.0.0.1:9876 code 77; deferred answer */
#define KF_CODE_SYNC_IO 5     /* inline: invoke_sync; ext rc = what it returned */
#define KF_CODE_SYNC_EXEC 6   /* executor: invoke_sync to 10.0.0.2:9876 code 78; ext remote */
#define KF_CODE_FAIL 7        /* request_fail("fixture refuses") + RMQ_EINVAL */
#define KF_CODE_HOOKED 8      /* refused by the before hook with code 16 */
#define KF_CODE_SERVICE 9     /* ext sum = the double service's add(2, 3) */
#define KF_CODE_PUBLISH 10    /* executor: publishes "kf.event" with the body */
#define KF_CODE_IDLES 11      /* ext idles = IDLE events seen */
#define KF_CODE_TICKS 12      /* ext ticks = ticks so far, body = their times */
#define KF_CODE_EXEC_TICKS 13 /* ext ticks / at: executor timer (every 250 ms) count, last time */
#define KF_CODE_QUEUE_INFO                                                                         \
    14 /* inline: ext rc, length, capacity, wait = executor_queue_info of ext "name" */

/* The service the fixture consumes ("kf.math" version 1). */
typedef struct kf_math {
    int (*add)(void *ud, int a, int b);
} kf_math;

extern const rmq_plugin_descriptor kit_fixture_descriptor;

#endif
