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

static void trash_path(const store_engine *e, uint64_t n, char *out, size_t cap)
{
    snprintf(out, cap, "%s/" TRASH_PREFIX "%lld-%llu", e->cq_dir, (long long)e->start_ms,
             (unsigned long long)n);
}

int cq_trash_topic_dir(store_engine *e, const char *topic)
{
    char from[PATH_MAX], to[PATH_MAX];
    if (snprintf(from, sizeof from, "%s/%s", e->cq_dir, topic) >= (int)sizeof from)
        return -ENAMETOOLONG;
    /* a leftover of the same name (a sweep that failed) makes rename fail
     * with ENOTEMPTY/EEXIST: the next number is tried */
    int rc = -EEXIST;
    for (int tries = 0; tries < 4 && rc == -EEXIST; tries++) {
        trash_path(e, e->trash_seq++, to, sizeof to);
        if (rename(from, to) == 0)
            rc = 0;
        else if (errno != ENOTEMPTY && errno != EEXIST)
            rc = -errno;
    }
    /* the housekeeper removes up to here: numbers whose rename failed
     * are simply not found */
    atomic_store(&e->trash_renamed, e->trash_seq);
    return rc;
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
    /* by number, not by listing consumequeue/ (100,000 topics) */
    uint64_t upto = atomic_load(&e->trash_renamed);
    char path[PATH_MAX];
    for (; e->trash_removed < upto; e->trash_removed++) {
        trash_path(e, e->trash_removed, path, sizeof path);
        int rc = remove_tree(path, TRASH_DEPTH);
        if (rc != 0) /* removed at the next start */
            store_log(e, 1, "remove deleted topic files %s: %s", path, strerror(-rc));
    }
}

void store_test_hold_trash(store_engine *e, bool hold)
{
    atomic_store(&e->trash_hold, hold);
}
