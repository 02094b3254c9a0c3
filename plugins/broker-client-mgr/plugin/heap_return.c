/* heap_return.c — hands the heap freed by mass topic deletion back to the
 * OS: rmqhostd raises malloc's trim threshold, so without this the memory of
 * deleted topics (their configs, journal records, decoded copies) stayed in
 * the process. After heapTrimAfterTopicDeletions deletions, one malloc_trim(0)
 * (glibc only: it also releases free pages inside the heap) runs on the
 * housekeeping executor's next check, off the request path; the RSS around
 * it is logged. bcm_heap_return_after does the same, unlogged, after one
 * large transient (a registration body, a compaction's text). */
#include "broker_context.h"

#include <stdio.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* A transient this large (a registration body or a topics.json text of a
 * big table: 15 MB at 100,000 topics, plus the copies made to build it)
 * stays in the heap below malloc's raised trim threshold; handing it back
 * costs a few ms on the executor that built it, rarely. */
#define HEAP_RETURN_AFTER_BYTES (4u << 20)

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size, resident = -1;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &resident) != 2)
            resident = -1;
        fclose(f);
    }
    long page = sysconf(_SC_PAGESIZE);
    return resident < 0 || page <= 0 ? -1 : resident * (page / 1024);
}

void bcm_heap_return_after(bcm_ctx *c, size_t bytes)
{
    if (bytes < HEAP_RETURN_AFTER_BYTES)
        return;
    (void)c;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

void bcm_heap_return_check(bcm_ctx *c)
{
    if (c->s.heap_trim_after_deletions <= 0)
        return;
    pthread_mutex_lock(&c->lock);
    bool due = c->deleted_since_trim >= (uint64_t)c->s.heap_trim_after_deletions;
    if (due)
        c->deleted_since_trim = 0;
    pthread_mutex_unlock(&c->lock);
    if (!due)
        return;
    long before = rss_kb();
    int released = 0; /* malloc_trim: 1 when it gave pages back */
#ifdef __GLIBC__
    released = malloc_trim(0);
#endif
    /* the RSS around it also moves with what other threads fault in
     * meanwhile; "released" is the trim's own answer */
    c->api->log(c->pctx, RMQ_LOG_INFO,
                "topics deleted: heap returned to the OS, RSS %ld -> %ld kB, released %d", before,
                rss_kb(), released);
}
