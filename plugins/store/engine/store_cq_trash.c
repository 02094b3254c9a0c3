/* store_cq_trash.c — a deleted topic's consume-queue files leave the
 * request path. DELETE_TOPIC held append_mu (every send waits) and `maps`
 * exclusive while it unlinked each file and removed each directory (~2 ms
 * of syscalls a topic); now it only renames consumequeue/TOPIC to a trash
 * name under the locks and the housekeeper removes the files afterwards.
 * Trash names start with '.', which the topic listing (cq_lazy_scan) never
 * takes for a topic, so a stop (even kill -9) between the rename and the
 * removal leaves the topic deleted; the start-up sweep removes what is
 * left before the store opens. */
#include "store_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TRASH_PREFIX ".deleted-"
#define TRASH_DEPTH 3 /* trash/QID/segment: nothing deeper is ours */

bool cq_trash_name_is(const char *name)
{
    return strncmp(name, TRASH_PREFIX, sizeof TRASH_PREFIX - 1) == 0;
}

int cq_trash_topic_dir(store_engine *e, const char *topic)
{
    char from[PATH_MAX], to[PATH_MAX];
    if (snprintf(from, sizeof from, "%s/%s", e->cq_dir, topic) >= (int)sizeof from)
        return -ENAMETOOLONG;
    /* a leftover of the same name (a sweep that failed) makes rename fail
     * with ENOTEMPTY/EEXIST: the next number is tried */
    for (int tries = 0; tries < 4; tries++) {
        uint64_t n = atomic_fetch_add(&e->trash_seq, 1);
        snprintf(to, sizeof to, "%s/" TRASH_PREFIX "%lld-%llu", e->cq_dir, (long long)e->start_ms,
                 (unsigned long long)n);
        if (rename(from, to) == 0) {
            atomic_fetch_add(&e->trash_pending, 1);
            return 0;
        }
        if (errno != ENOTEMPTY && errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

static int remove_tree(const char *path, int depth)
{
    if (unlink(path) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return -errno;
    if (depth > 0) {
        DIR *d = opendir(path);
        if (d) {
            char sub[PATH_MAX];
            for (struct dirent *de; (de = readdir(d)) != NULL;)
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
                    snprintf(sub, sizeof sub, "%s/%s", path, de->d_name) < (int)sizeof sub)
                    remove_tree(sub, depth - 1);
            closedir(d);
        }
    }
    return rmdir(path) == 0 || errno == ENOENT ? 0 : -errno;
}

int cq_trash_sweep(store_engine *e)
{
    DIR *d = opendir(e->cq_dir);
    if (!d)
        return errno == ENOENT ? 0 : -errno;
    int left = 0;
    char path[PATH_MAX];
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (!cq_trash_name_is(de->d_name) ||
            snprintf(path, sizeof path, "%s/%s", e->cq_dir, de->d_name) >= (int)sizeof path)
            continue;
        int rc = remove_tree(path, TRASH_DEPTH);
        if (rc != 0) {
            store_log(e, 1, "remove deleted topic files %s: %s", path, strerror(-rc));
            left++;
        }
    }
    closedir(d);
    return left;
}

void cq_trash_collect(store_engine *e)
{
    if (atomic_load(&e->trash_hold))
        return;
    size_t n = atomic_load(&e->trash_pending);
    if (n == 0)
        return;
    /* what a deletion renames after this listing stays counted for the
     * next tick */
    cq_trash_sweep(e);
    atomic_fetch_sub(&e->trash_pending, n);
}

void store_test_hold_trash(store_engine *e, bool hold)
{
    atomic_store(&e->trash_hold, hold);
}
