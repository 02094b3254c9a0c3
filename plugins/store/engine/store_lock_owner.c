/* store_lock_owner.c — who holds the store's `lock` file: the engine writes
 * the owning process's identity (pid and start time) and the opener's name
 * after "lock", so a hot reload can tell "an older generation of this very
 * plugin instance holds it" (open later, once it closed) from "another store
 * runs here" (refuse). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store_internal.h"

/* pid alone is not enough: two containers sharing a volume may both run the
 * daemon as pid 1; the start time (clock ticks since boot) tells them apart. */
int store_lock_owner_tag(char *buf, size_t cap, const char *owner)
{
    unsigned long long start = 0;
    FILE *f = fopen("/proc/self/stat", "re");
    if (f) {
        char line[1024];
        size_t n = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[n] = '\0';
        /* field 22 (starttime); the command name (field 2) may hold spaces */
        char *p = strrchr(line, ')');
        int field = 2;
        while (p && *p && field < 22) {
            p = strchr(p + 1, ' ');
            if (p)
                field++;
        }
        if (p)
            sscanf(p + 1, "%llu", &start);
    }
    int n = snprintf(buf, cap, "lock\npid=%ld start=%llu owner=%.200s\n", (long)getpid(), start,
                     owner ? owner : "");
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

bool store_locked_by_this_process(const char *root_dir, const char *lock_owner)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/lock", root_dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    /* an OFD lock query: our own engine's lock conflicts with this new open
     * file description, so "held" is seen even when the holder is us */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    bool held = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    char have[384] = "", want[384];
    ssize_t n = held ? pread(fd, have, sizeof have - 1, 0) : 0;
    close(fd);
    if (!held || n <= 0)
        return false;
    have[n] = '\0';
    int wn = store_lock_owner_tag(want, sizeof want, lock_owner);
    return wn > 0 && (size_t)n == (size_t)wn && memcmp(have, want, (size_t)n) == 0;
}
