/* heap_return.c — returns freed heap to the OS after mass removals:
 * rcu_barrier (removed routes are freed by RCU callbacks) then glibc's
 * malloc_trim(0), which also releases free pages inside the heap, not only
 * at its top. Reads the RSS around it for the log. */
#include "heap_return.h"

#include <stdio.h>
#include <unistd.h>
#include <urcu.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

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

bool heap_return_to_os(long *rss_before_kb, long *rss_after_kb)
{
    *rss_before_kb = rss_kb();
    rcu_barrier();
#ifdef __GLIBC__
    malloc_trim(0);
    bool done = true;
#else
    bool done = false;
#endif
    *rss_after_kb = rss_kb();
    return done;
}
