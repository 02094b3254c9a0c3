/* heap_return.h — gives the heap that a mass removal of brokers freed back to
 * the OS. malloc keeps freed chunks for reuse (rmqhostd also raises its trim
 * threshold), so after 100 brokers of 10,000 topics expire the RSS would stay
 * at its peak. Slow (waits for RCU reclamation, walks the heap): call it off
 * the request path and without the writer lock. */
#ifndef NAMESRV_HEAP_RETURN_H
#define NAMESRV_HEAP_RETURN_H

#include <stdbool.h>

/* Waits for the route cache's deferred frees, then returns free heap pages
 * to the OS (glibc's malloc_trim). The caller must be a registered RCU
 * thread outside any read-side section. false where the C library has no
 * such call. RSS before and after in kB (-1 when unknown). */
bool heap_return_to_os(long *rss_before_kb, long *rss_after_kb);

#endif
