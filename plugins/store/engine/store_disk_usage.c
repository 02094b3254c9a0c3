/* store_disk_usage.c — how full the store's file system is, by Java's
 * formula (UtilAll.getDiskPartitionSpaceUsedPercent, 4.9.8): used = total -
 * free (every free block), usable = what an unprivileged user may still
 * write (free less the blocks reserved for root), ratio = used / (used +
 * usable), rounded UP to a whole percent and given as a fraction (0.91).
 * Counting the reserved blocks as unavailable is what makes a disk with 5 %
 * kept for root read "full" when ordinary writes start failing. The ratio
 * is what GET_BROKER_RUNTIME_INFO reports, what retention compares with
 * diskMaxUsedSpaceRatio and what refuses puts above 90 %. */
#include "store_internal.h"

#include <sys/statvfs.h>

double store_disk_ratio_of(uint64_t blocks, uint64_t bfree, uint64_t bavail)
{
    if (blocks == 0 || bfree > blocks)
        return -1;
    uint64_t used = blocks - bfree;
    uint64_t entire = used + bavail;
    if (entire == 0)
        return -1;
    /* integer percent, plus one when there is a remainder (Java's rounding) */
    uint64_t pct = used * 100 / entire + (used * 100 % entire != 0);
    return (double)pct / 100.0;
}

double store_disk_used_ratio(const char *dir)
{
    struct statvfs sv;
    if (statvfs(dir, &sv) != 0)
        return -1;
    /* statvfs counts in f_frsize units for all three: the unit cancels out,
     * but products stay in 64 bits for any real disk (blocks * 100) */
    return store_disk_ratio_of(sv.f_blocks, sv.f_bfree, sv.f_bavail);
}
