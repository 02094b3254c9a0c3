/* store_retention.c — file deletion (§10.15.7): commit-log segments (never
 * the last) whose modification time + fileReservedTime has passed, when it
 * is a deleteWhen hour, the disk is fuller than diskMaxUsedSpaceRatio, or a
 * caller forces it; above 85 % usage regardless of age (cleanFileForciblyEnable). Consume-queue
 * files and index files behind the new commit-log minimum follow, and every queue's min offset is
 * corrected (correctMinOffset). */
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

double store_disk_ratio(const char *dir);

#define DELETE_FILES_PER_RUN 10
#define CLEAN_FORCIBLY_RATIO 0.85

static bool is_delete_hour(const char *when)
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    const char *p = when;
    while (p && *p) {
        char *end;
        long h = strtol(p, &end, 10);
        if (end != p && h == tm.tm_hour)
            return true;
        p = strchr(p, ';');
        if (p)
            p++;
    }
    return false;
}

void store_set_retention(store_engine *e, int64_t reserved_hours, const char *delete_when,
                         int32_t max_used_ratio)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->retention_mu);
    e->cfg.file_reserved_hours = reserved_hours;
    snprintf(e->delete_when, sizeof e->delete_when, "%s", delete_when ? delete_when : "");
    e->cfg.disk_max_used_ratio = max_used_ratio;
    pthread_mutex_unlock(&e->retention_mu);
}

void store_clean_expired(store_engine *e, bool force)
{
    if (!e)
        return;
    double ratio = store_disk_ratio(e->cl_dir);
    double rq = store_disk_ratio(e->cq_dir);
    if (rq > ratio)
        ratio = rq;
    pthread_mutex_lock(&e->retention_mu);
    int32_t max_ratio = e->cfg.disk_max_used_ratio;
    int64_t reserved_hours = e->cfg.file_reserved_hours;
    bool delete_hour = is_delete_hour(e->delete_when);
    pthread_mutex_unlock(&e->retention_mu);
    if (max_ratio < 10)
        max_ratio = 10;
    if (max_ratio > 95)
        max_ratio = 95;
    bool space = ratio > max_ratio / 100.0;
    bool immediately = atomic_load_explicit(&e->live.clean_file_forcibly, memory_order_relaxed) &&
                       ratio > CLEAN_FORCIBLY_RATIO;
    if (!force && !space && !delete_hour)
        return;
    int64_t reserved_ms = reserved_hours * 3600 * 1000;
    int64_t now = store_now_ms();

    pthread_mutex_lock(&e->append_mu);
    pthread_rwlock_wrlock(&e->maps);
    int deleted = 0;
    while (e->cl.n > 1 && deleted < DELETE_FILES_PER_RUN) {
        struct stat st;
        mfile *f = e->cl.v[0];
        if (stat(f->path, &st) != 0)
            break;
        int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
        if (!immediately && mtime + reserved_ms > now)
            break;
        store_log(e, 2, "retention: delete commit-log segment %s", f->path);
        mfile_list_drop_first(&e->cl, true);
        deleted++;
    }
    int64_t cl_min = e->cl.n ? e->cl.v[0]->start : atomic_load(&e->cl_min_offset);
    if (deleted) {
        atomic_store(&e->cl_min_offset, cl_min);
        for (size_t i = 0; i < e->cqs.nb; i++)
            for (store_cq *q = e->cqs.b[i]; q; q = q->next) {
                /* queues still pending get the same when they are loaded */
                cq_drop_expired_files(e, q, cl_min);
                cq_correct_min(e, q, cl_min);
            }
        index_delete_before(e, cl_min);
    }
    pthread_rwlock_unlock(&e->maps);
    pthread_mutex_unlock(&e->append_mu);
}
