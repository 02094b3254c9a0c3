/* store_engine.c — the engine object: configuration defaults, open (lock,
 * load, recover, abort marker, background threads) and close, and the
 * append path (put, put_batch): records encoded straight into the mapped
 * commit-log segment, consume-queue entries and index keys written in the
 * same critical section, then published to readers. */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void store_config_defaults(store_config *c)
{
    memset(c, 0, sizeof *c);
    c->root_dir = "store";
    c->commitlog_file_size = 1073741824;
    c->cq_file_size = 300000 * STORE_CQ_UNIT;
    c->flush_type = STORE_ASYNC_FLUSH;
    c->flush_interval_ms = 500;
    c->sync_flush_timeout_ms = 5000;
    c->file_reserved_hours = 72;
    c->delete_when = "04";
    c->disk_max_used_ratio = 75;
    c->message_index_enable = true;
    c->max_hash_slot_num = 5000000;
    c->max_index_num = 20000000;
    c->max_message_size = 4194304;
    c->check_crc_on_recover = true;
    c->access_message_in_memory_max_ratio = 40;
    c->max_transfer_bytes_in_memory = 262144;
    c->max_transfer_count_in_memory = 32;
    c->max_transfer_bytes_in_disk = 65536;
    c->max_transfer_count_in_disk = 8;
    c->max_msgs_num_batch = 64;
    c->disk_warning_ratio = 90;
    c->disk_check_interval_ms = 10000;
    c->clean_interval_ms = 10000;
    c->clean_file_forcibly = true;
    c->page_cache_keep_bytes = 512LL * 1048576;
    c->mapped_keep_bytes = 4LL * 1048576;
    c->max_mapped_cq_files = 8192;
}

int64_t store_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void store_log(store_engine *e, int level, const char *fmt, ...)
{
    if (!e->cfg.log)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    e->cfg.log(e->cfg.log_ud, level, buf);
}

void set_not_writeable(store_engine *e, const char *why, int err)
{
    if (atomic_exchange(&e->writeable, false))
        store_log(e, 0, "store not writeable: %s%s%s", why, err ? ": " : "",
                  err ? strerror(err < 0 ? -err : err) : "");
}

static int take_lock(store_engine *e, char *err, size_t errlen)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/lock", e->root);
    e->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (e->lock_fd < 0) {
        int rc = -errno;
        snprintf(err, errlen, "open %s: %s", path, strerror(errno));
        return rc;
    }
    /* an open-file-description lock: conflicts with Java's FileChannel.tryLock
     * (a POSIX record lock) and with a second engine in this process */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (fcntl(e->lock_fd, F_OFD_SETLK, &fl) != 0) {
        int rc = errno == EACCES || errno == EAGAIN ? -EBUSY : -errno;
        snprintf(err, errlen, "%s is locked: another store runs on %s", path, e->root);
        close(e->lock_fd);
        e->lock_fd = -1;
        return rc;
    }
    /* "lock" as Java writes it, then who holds it (store_lock_owner.c) */
    char tag[384];
    int tn = store_lock_owner_tag(tag, sizeof tag, e->cfg.lock_owner);
    if (tn <= 0 || pwrite(e->lock_fd, tag, (size_t)tn, 0) != tn || ftruncate(e->lock_fd, tn) != 0) {
        /* only a marker; the lock itself is what matters */
    }
    return 0;
}

/* Page-cache contents survive a killed process but not a reboot: the state
 * file's "written offset" is trusted only within the same boot. */
static void read_boot_id(store_engine *e)
{
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, e->boot_id, sizeof e->boot_id - 1);
    close(fd);
    if (n <= 0)
        memset(e->boot_id, 0, sizeof e->boot_id);
}

static int touch_abort(store_engine *e)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/abort", e->root);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

static void free_engine(store_engine *e)
{
    pthread_mutex_lock(&e->spare_mu);
    if (e->spare)
        mfile_close(e->spare, true); /* a pre-created, never used segment */
    e->spare = NULL;
    pthread_mutex_unlock(&e->spare_mu);
    mfile_list_free(&e->cl, false);
    cq_lazy_stop(e);
    cq_table_free(e);
    cq_lazy_free(e);
    index_free(e);
    mfile_close(e->checkpoint, false);
    if (e->state_fd >= 0)
        close(e->state_fd);
    if (e->root_fd >= 0)
        close(e->root_fd);
    if (e->lock_fd >= 0) {
        /* back to Java's "lock" alone: the holder's name matters while held */
        if (ftruncate(e->lock_fd, 4) != 0) {
            /* only a marker */
        }
        close(e->lock_fd); /* releases the lock */
    }
    pthread_mutex_destroy(&e->append_mu);
    pthread_mutex_destroy(&e->retention_mu);
    pthread_rwlock_destroy(&e->maps);
    pthread_mutex_destroy(&e->spare_mu);
    pthread_mutex_destroy(&e->stage_mu);
    pthread_mutex_destroy(&e->cq_hot_mu);
    pthread_mutex_destroy(&e->cq_map_mu);
    pthread_mutex_destroy(&e->lazy_mu);
    pthread_mutex_destroy(&e->flush_mu);
    pthread_cond_destroy(&e->flush_cv);
    pthread_mutex_destroy(&e->done_mu);
    pthread_cond_destroy(&e->done_cv);
    pthread_mutex_destroy(&e->hk_mu);
    pthread_mutex_destroy(&e->state_mu);
    pthread_cond_destroy(&e->hk_cv);
    free(e->stage);
    free(e);
}

int store_open(const store_config *cfg, store_engine **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!cfg || !cfg->root_dir || cfg->commitlog_file_size < 4096 || cfg->cq_file_size < 20 ||
        cfg->max_hash_slot_num <= 0 || cfg->max_index_num <= 0) {
        snprintf(err, errlen, "bad store configuration");
        return -EINVAL;
    }
    if (cfg->commitlog_dir && strchr(cfg->commitlog_dir, ';')) {
        snprintf(err, errlen,
                 "several commit-log directories (';' in storePathCommitLog) are not "
                 "supported");
        return -EINVAL;
    }
    store_engine *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    e->cfg = *cfg;
    e->cfg.cq_file_size = (cfg->cq_file_size + STORE_CQ_UNIT - 1) / STORE_CQ_UNIT * STORE_CQ_UNIT;
    snprintf(e->delete_when, sizeof e->delete_when, "%s", cfg->delete_when ? cfg->delete_when : "");
    e->cfg.delete_when = e->delete_when;
    snprintf(e->root, sizeof e->root, "%s", cfg->root_dir);
    e->cfg.root_dir = e->root;
    if (cfg->commitlog_dir && *cfg->commitlog_dir)
        snprintf(e->cl_dir, sizeof e->cl_dir, "%s", cfg->commitlog_dir);
    else
        snprintf(e->cl_dir, sizeof e->cl_dir, "%s/commitlog", e->root);
    e->cfg.commitlog_dir = e->cl_dir;
    e->write_through =
        cfg->commitlog_write == STORE_CL_WRITE_PWRITE ||
        (cfg->commitlog_write == STORE_CL_WRITE_AUTO && cfg->flush_type == STORE_SYNC_FLUSH);
    snprintf(e->cq_dir, sizeof e->cq_dir, "%s/consumequeue", e->root);
    snprintf(e->index_dir, sizeof e->index_dir, "%s/index", e->root);
    e->lock_fd = -1;
    e->state_fd = -1;
    e->root_fd = -1;
    e->cl.file_size = e->cfg.commitlog_file_size;
    pthread_mutex_init(&e->append_mu, NULL);
    pthread_mutex_init(&e->retention_mu, NULL);
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&e->maps, &ra);
    pthread_rwlockattr_destroy(&ra);
    pthread_mutex_init(&e->spare_mu, NULL);
    pthread_mutex_init(&e->stage_mu, NULL);
    pthread_mutex_init(&e->cq_hot_mu, NULL);
    pthread_mutex_init(&e->cq_map_mu, NULL);
    pthread_mutex_init(&e->lazy_mu, NULL);
    atomic_store(&e->cov_off, -1);
    atomic_store(&e->state_cov_off, -1);
    /* queues loaded before recovery ends (all of them with
     * STORE_CQ_LOAD_AT_START) are cut and corrected by store_recover */
    e->lazy_recovering = true;
    atomic_store(&e->lazy_cut_end, INT64_MAX);
    pthread_mutex_init(&e->flush_mu, NULL);
    pthread_cond_init(&e->flush_cv, NULL);
    pthread_mutex_init(&e->done_mu, NULL);
    pthread_cond_init(&e->done_cv, NULL);
    pthread_mutex_init(&e->hk_mu, NULL);
    pthread_mutex_init(&e->state_mu, NULL);
    pthread_cond_init(&e->hk_cv, NULL);
    atomic_store(&e->writeable, true);
    store_set_live_limits(e, cfg); /* also the "in disk" threshold */

    int rc;
    const char *dirs[] = {e->root, e->cl_dir, e->cq_dir, e->index_dir};
    for (size_t i = 0; i < 4; i++) {
        if ((rc = store_mkdirs(dirs[i])) != 0) {
            snprintf(err, errlen, "mkdir %s: %s", dirs[i], strerror(-rc));
            free_engine(e);
            return rc;
        }
    }
    if ((rc = take_lock(e, err, errlen)) != 0) {
        free_engine(e);
        return rc;
    }
    e->root_fd = open(e->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (e->root_fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "open %s: %s", e->root, strerror(errno));
        free_engine(e);
        return rc;
    }
    read_boot_id(e);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/abort", e->root);
    bool clean = access(path, F_OK) != 0;
    snprintf(path, sizeof path, "%s/checkpoint", e->root);
    if ((rc = mfile_open(path, 0, STORE_CHECKPOINT_SIZE, true, true, &e->checkpoint, err,
                         errlen)) != 0) {
        free_engine(e);
        return rc;
    }
    snprintf(path, sizeof path, "%s/%s", e->root, STORE_STATE_FILE);
    e->state_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (e->state_fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "open %s: %s", path, strerror(errno));
        free_engine(e);
        return rc;
    }
    /* consume queues: only the topics' names now (store_cq_lazy.c) */
    /* a deleted topic's files a stop left in the trash (store_cq_trash.c) */
    if (cq_trash_sweep(e) > 0)
        store_log(e, 1, "some deleted topics' files could not be removed");
    if ((rc = mfile_list_load(&e->cl, e->cl_dir, err, errlen)) != 0 ||
        (rc = cq_lazy_scan(e, err, errlen)) != 0 ||
        (cfg->cq_load == STORE_CQ_LOAD_AT_START && (rc = cq_load_all(e, err, errlen)) != 0) ||
        (rc = index_load(e, err, errlen)) != 0 ||
        (rc = store_recover(e, clean, err, errlen)) != 0) {
        free_engine(e);
        return rc;
    }
    if ((rc = touch_abort(e)) != 0) {
        snprintf(err, errlen, "create abort file: %s", strerror(-rc));
        free_engine(e);
        return rc;
    }
    e->start_ms = store_now_ms();
    atomic_store(&e->flushed, e->write_pos);
    atomic_store(&e->file_written, e->write_pos);
    e->drop_pos = e->write_pos; /* what recovery read stays cached */
    e->unmap_pos = e->write_pos;
    /* a slave resumes dispatching after the last whole record (a frame may
     * have ended inside one) */
    e->ha_dispatch_pos = e->last_rec_offset + e->last_rec_size;
    if (e->recovery_wrote)
        flush_all_now(e); /* what recovery rebuilt is durable before we say so */
    else
        state_write(e, false); /* no longer a clean stop */
    if ((rc = flusher_start(e)) != 0 || (rc = housekeeper_start(e)) != 0 ||
        (rc = cq_lazy_start(e)) != 0) {
        atomic_store(&e->closing, true);
        housekeeper_stop(e);
        flusher_stop(e);
        snprintf(err, errlen, "start store threads: %s", strerror(-rc));
        free_engine(e);
        return rc;
    }
    *out = e;
    return 0;
}

void store_close(store_engine *e)
{
    if (!e)
        return;
    atomic_store(&e->closing, true);
    cq_lazy_stop(e); /* stops after the topic it is loading */
    housekeeper_stop(e);
    flusher_stop(e); /* flushes and completes every waiter */
    pthread_mutex_lock(&e->append_mu);
    flush_all_now(e);
    state_write(e, true);
    fdatasync(e->state_fd);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/abort", e->root);
    unlink(path);
    pthread_mutex_unlock(&e->append_mu);
    free_engine(e);
}

/* ---- append -------------------------------------------------------------- */

static int count_keys(const store_msg *m)
{
    const char *v;
    size_t vl;
    int n = 0;
    if (stored_props_get(m->props, m->props_len, "UNIQ_KEY", &v, &vl))
        n++;
    if (stored_props_get(m->props, m->props_len, "KEYS", &v, &vl)) {
        n++;
        for (size_t i = 0; i < vl; i++)
            n += v[i] == ' ';
    }
    return n;
}

static store_put_status check_msg(store_engine *e, const store_msg *m, size_t *size)
{
    size_t tl = m->topic ? strlen(m->topic) : 0;
    if (tl == 0 || tl > STORED_RECORD_MAX_TOPIC || m->body_len > (size_t)e->cfg.max_message_size)
        return STORE_PUT_MESSAGE_ILLEGAL;
    /* the topic and queue id name directories (consumequeue/TOPIC/QID) */
    if (m->queue_id < 0 || strchr(m->topic, '/') || strcmp(m->topic, ".") == 0 ||
        strcmp(m->topic, "..") == 0)
        return STORE_PUT_MESSAGE_ILLEGAL;
    if (m->props_len > STORED_RECORD_MAX_PROPS)
        return STORE_PUT_PROPERTIES_SIZE_EXCEEDED;
    if ((m->born_host.ip_len != 4 && m->born_host.ip_len != 16) ||
        (m->store_host.ip_len != 4 && m->store_host.ip_len != 16))
        return STORE_PUT_MESSAGE_ILLEGAL;
    int32_t sf = m->sys_flag;
    if (m->born_host.ip_len == 16)
        sf |= STORED_SYSFLAG_BORNHOST_V6;
    if (m->store_host.ip_len == 16)
        sf |= STORED_SYSFLAG_STOREHOST_V6;
    *size = stored_record_size(sf, m->body_len, tl, m->props_len);
    return STORE_PUT_OK;
}

static bool no_cq_entry(int32_t sys_flag)
{
    int tx = sys_flag & STORED_SYSFLAG_TX_MASK;
    return tx == STORED_SYSFLAG_TX_PREPARED || tx == STORED_SYSFLAG_TX_ROLLBACK;
}

/* Blocks for everything the put will write through a mapping (store_backing.c):
 * the segment's rest, the queue entries, the index entries. Called with
 * append_mu and `maps` (shared) held, before any byte is written. */
static int back_for_put(store_engine *e, mfile *seg, store_cq *q, int64_t qmax, size_t n, int keys,
                        const char **what)
{
    int rc = 0;
    *what = "commit-log segment";
    if (atomic_load_explicit(&seg->backed, memory_order_acquire) < seg->size)
        rc = mfile_back(e, seg, seg->size);
    *what = "consume-queue file";
    for (size_t i = 0; rc == 0 && q && i < n; i++)
        rc = cq_back_entry(e, q, qmax + (int64_t)i);
    *what = "index file";
    if (rc == 0 && keys > 0)
        rc = index_back_keys(e, keys);
    return rc;
}

/* Everything that needs `maps` exclusively, done before the records are
 * written: the queue, its files, room in the commit log, index room. Called
 * and returns with append_mu and `maps` (shared) held; re-checks after each
 * exclusive section since another writer (retention, topic deletion) may
 * have run between dropping and re-taking the lock. */
static store_put_status prepare_locked(store_engine *e, const store_msg *m0, size_t n,
                                       int64_t total, int keys, store_cq **qp)
{
    char err[256];
    bool need_cq = !no_cq_entry(m0->sys_flag);
    for (int round = 0;; round++) {
        store_cq *q = need_cq ? cq_find(e, m0->topic, m0->queue_id) : NULL;
        mfile *seg = mfile_list_find(&e->cl, e->write_pos);
        bool roll = !seg || e->write_pos + total + 8 > seg->start + seg->size;
        int64_t qmax = q ? atomic_load(&q->max_offset) : 0;
        bool cq_files = need_cq && (!q || !cq_has_file_for(q, qmax) ||
                                    !cq_has_file_for(q, qmax + (int64_t)n - 1));
        bool idx = keys > 0 && index_needs_file(e, keys);
        if (!roll && !cq_files && !idx) {
            /* mapped now (a cold file was unmapped), so the entry write
             * after the record cannot fail */
            if (q && (cq_map_for(e, q, qmax) != 0 ||
                      (n > 1 && cq_map_for(e, q, qmax + (int64_t)n - 1) != 0)))
                return STORE_PUT_CREATE_MAPPED_FILE_FAILED;
            const char *what;
            int brc = back_for_put(e, seg, q, qmax, n, keys, &what);
            if (brc != 0) {
                char why[128];
                snprintf(why, sizeof why, "no blocks for the %s", what);
                set_not_writeable(e, why, brc);
                return STORE_PUT_SERVICE_NOT_AVAILABLE;
            }
            *qp = q;
            return STORE_PUT_OK;
        }
        if (round > 3)
            return STORE_PUT_UNKNOWN_ERROR;
        pthread_rwlock_unlock(&e->maps);
        pthread_rwlock_wrlock(&e->maps);
        store_put_status st = STORE_PUT_OK;
        seg = mfile_list_find(&e->cl, e->write_pos);
        if (!seg || e->write_pos + total + 8 > seg->start + seg->size) {
            if (seg) { /* blank record over the rest of this segment */
                int64_t left = seg->start + seg->size - e->write_pos;
                uint8_t blank[8];
                stored_put_be32(blank, (uint32_t)left);
                stored_put_be32(blank + 4, STORED_RECORD_BLANK_MAGIC);
                int wrc = 0;
                if (!e->write_through) {
                    wrc = mfile_back(e, seg, seg->size);
                    if (wrc != 0)
                        set_not_writeable(e, "no blocks for the commit-log segment", wrc);
                    else
                        memcpy(seg->map + (e->write_pos - seg->start), blank, sizeof blank);
                } else {
                    uint8_t *b = cl_stage_begin(e, seg, e->write_pos, sizeof blank, &wrc);
                    if (b) {
                        memcpy(b, blank, sizeof blank);
                        wrc = cl_stage_end(e, sizeof blank, true);
                    }
                }
                if (wrc != 0) {
                    st = wrc == -ENOMEM ? STORE_PUT_UNKNOWN_ERROR : STORE_PUT_SERVICE_NOT_AVAILABLE;
                } else {
                    e->write_pos = seg->start + seg->size;
                    atomic_store_explicit(&e->committed, e->write_pos, memory_order_release);
                }
            } else if (e->cl.n > 0) {
                mfile *last = e->cl.v[e->cl.n - 1];
                if (e->write_pos < last->start + last->size)
                    e->write_pos = last->start + last->size;
            }
            if (st == STORE_PUT_OK && !mfile_list_find(&e->cl, e->write_pos)) {
                int rc = cl_roll(e, err, sizeof err);
                if (rc != 0) {
                    store_log(e, 0, "%s", err);
                    set_not_writeable(e, "cannot create a commit-log segment", rc);
                    st = STORE_PUT_CREATE_MAPPED_FILE_FAILED;
                }
            }
        }
        q = need_cq ? cq_find(e, m0->topic, m0->queue_id) : NULL;
        if (st == STORE_PUT_OK && need_cq && !q &&
            !(q = cq_create(e, m0->topic, m0->queue_id, err, sizeof err)))
            st = STORE_PUT_UNKNOWN_ERROR;
        for (int64_t i = 0; st == STORE_PUT_OK && q && i < (int64_t)n; i++) {
            int64_t ix = atomic_load(&q->max_offset) + i;
            if (!cq_has_file_for(q, ix)) {
                int rc = cq_add_file_for(e, q, ix, err, sizeof err);
                if (rc != 0) {
                    store_log(e, 0, "%s", err);
                    set_not_writeable(e, "cannot create a consume-queue file", rc);
                    st = STORE_PUT_CREATE_MAPPED_FILE_FAILED;
                }
            }
        }
        if (st == STORE_PUT_OK && keys > 0 && index_needs_file(e, keys) &&
            index_add_file(e, err, sizeof err) != 0) {
            store_log(e, 0, "%s", err);
            set_not_writeable(e, "cannot create an index file", EIO);
            st = STORE_PUT_CREATE_MAPPED_FILE_FAILED;
        }
        pthread_rwlock_unlock(&e->maps);
        pthread_rwlock_rdlock(&e->maps);
        if (st != STORE_PUT_OK)
            return st;
    }
}

static int append(store_engine *e, const store_msg *msgs, size_t n, int64_t *phys_out,
                  store_put_result *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0) {
        out->status = STORE_PUT_MESSAGE_ILLEGAL;
        return 0;
    }
    size_t sizes_small[64];
    size_t *sizes = n <= 64 ? sizes_small : malloc(n * sizeof *sizes);
    if (!sizes)
        return -ENOMEM;
    int64_t total = 0;
    /* keys counts the index entries to make room for: none while
     * messageIndexEnable is off (read once per put, as Java's dispatcher
     * reads it per record; UPDATE_BROKER_CONFIG flips it at run time) */
    int keys = 0;
    bool index_on = atomic_load_explicit(&e->live.message_index_enable, memory_order_relaxed);
    for (size_t i = 0; i < n; i++) {
        store_put_status st = check_msg(e, &msgs[i], &sizes[i]);
        if (st == STORE_PUT_OK && i > 0 &&
            (strcmp(msgs[i].topic, msgs[0].topic) != 0 || msgs[i].queue_id != msgs[0].queue_id))
            st = STORE_PUT_MESSAGE_ILLEGAL;
        if (st != STORE_PUT_OK) {
            out->status = st;
            goto done;
        }
        total += (int64_t)sizes[i];
        if (index_on && (msgs[i].sys_flag & STORED_SYSFLAG_TX_MASK) != STORED_SYSFLAG_TX_ROLLBACK)
            keys += count_keys(&msgs[i]);
    }
    if (total + 8 > e->cfg.commitlog_file_size) {
        out->status = STORE_PUT_MESSAGE_ILLEGAL;
        goto done;
    }
    if (atomic_load(&e->closing) || !atomic_load(&e->writeable) || atomic_load(&e->slave)) {
        out->status = STORE_PUT_SERVICE_NOT_AVAILABLE;
        goto done;
    }
    /* a queue still on disk only is read before its next entry is written */
    if (!no_cq_entry(msgs[0].sys_flag) && !cq_ready(e, msgs[0].topic)) {
        out->status = STORE_PUT_CREATE_MAPPED_FILE_FAILED;
        goto done;
    }
    pthread_mutex_lock(&e->append_mu);
    pthread_rwlock_rdlock(&e->maps);
    store_cq *q = NULL;
    store_put_status st = atomic_load(&e->writeable)
                              ? prepare_locked(e, &msgs[0], n, total, keys, &q)
                              : STORE_PUT_SERVICE_NOT_AVAILABLE;
    if (st != STORE_PUT_OK) {
        pthread_rwlock_unlock(&e->maps);
        pthread_mutex_unlock(&e->append_mu);
        out->status = st;
        goto done;
    }
    int64_t now = store_now_ms();
    mfile *seg = mfile_list_find(&e->cl, e->write_pos);
    int64_t pos = e->write_pos, out_start = pos;
    uint8_t *dst = seg->map + (pos - seg->start);
    int wrc = 0;
    if (e->write_through && !(dst = cl_stage_begin(e, seg, pos, (size_t)total, &wrc))) {
        pthread_rwlock_unlock(&e->maps);
        pthread_mutex_unlock(&e->append_mu);
        out->status = wrc == -ENOMEM ? STORE_PUT_UNKNOWN_ERROR : STORE_PUT_SERVICE_NOT_AVAILABLE;
        goto done;
    }
    int64_t qbase = q ? atomic_load_explicit(&q->max_offset, memory_order_relaxed) : 0;
    for (size_t i = 0; i < n; i++) {
        const store_msg *m = &msgs[i];
        stored_record r = {
            .queue_id = m->queue_id,
            .flag = m->flag,
            .queue_offset = q ? qbase + (int64_t)i : 0,
            .phys_offset = pos,
            .sys_flag = m->sys_flag,
            .born_ts = m->born_ts,
            .born_ip = m->born_host.ip,
            .born_ip_len = m->born_host.ip_len,
            .born_port = m->born_host.port,
            .store_ts = now,
            .store_ip = m->store_host.ip,
            .store_ip_len = m->store_host.ip_len,
            .store_port = m->store_host.port,
            .reconsume_times = m->reconsume_times,
            .prepared_tx_offset = m->prepared_tx_offset,
            .body = m->body,
            .body_len = (int32_t)m->body_len,
            .topic = m->topic,
            .topic_len = (uint8_t)strlen(m->topic),
            .props = m->props,
            .props_len = (uint16_t)m->props_len,
        };
        stored_record_encode(&r, true, dst, sizes[i]);
        dst += sizes[i];
        pos += (int64_t)sizes[i];
    }
    /* before any queue entry or index key names these records; a put whose
     * answer waits for the flush leaves them for the flusher's one write */
    if (e->write_through &&
        cl_stage_end(e, (size_t)total,
                     !(msgs[0].defer_write && e->cfg.flush_type == STORE_SYNC_FLUSH)) != 0) {
        pthread_rwlock_unlock(&e->maps);
        pthread_mutex_unlock(&e->append_mu);
        out->status = STORE_PUT_SERVICE_NOT_AVAILABLE;
        goto done;
    }
    pos = out_start;
    for (size_t i = 0; i < n; i++) {
        const store_msg *m = &msgs[i];
        if (q) /* mapped and backed by prepare_locked */
            cq_write_entry(e, q, qbase + (int64_t)i, pos, (int32_t)sizes[i], m->tags_code);
        if (index_on && (m->sys_flag & STORED_SYSFLAG_TX_MASK) != STORED_SYSFLAG_TX_ROLLBACK)
            index_put_record(e, (const uint8_t *)m->topic, (uint8_t)strlen(m->topic), m->props,
                             m->props_len, m->sys_flag, pos, now);
        if (phys_out)
            phys_out[i] = pos;
        pos += (int64_t)sizes[i];
    }
    atomic_store_explicit(&e->last_rec_offset, pos - (int64_t)sizes[n - 1], memory_order_relaxed);
    atomic_store_explicit(&e->last_rec_size, (int64_t)sizes[n - 1], memory_order_relaxed);
    /* the log end first: a reader that sees the new queue end (acquire)
     * then reads `committed` finds the records below it */
    e->write_pos = pos;
    atomic_store_explicit(&e->committed_ts, now, memory_order_relaxed);
    atomic_store_explicit(&e->committed, pos, memory_order_release);
    if (q) {
        atomic_store_explicit(&q->max_offset, qbase + (int64_t)n, memory_order_release);
        cq_want_prefault(e, q);
    }
    pthread_rwlock_unlock(&e->maps);
    pthread_mutex_unlock(&e->append_mu);

    out->status = STORE_PUT_OK;
    out->phys_offset = pos - total;
    out->queue_offset = q ? qbase : 0;
    out->store_ts = now;
    out->total_size = (int32_t)total;
    out->end_offset = pos;
    atomic_fetch_add_explicit(&e->put_times, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&e->put_bytes, (uint64_t)total, memory_order_relaxed);
    if (e->cfg.on_arrival && q)
        for (size_t i = 0; i < n; i++)
            e->cfg.on_arrival(e->cfg.arrival_ud, msgs[i].topic, msgs[i].queue_id,
                              qbase + (int64_t)i + 1, msgs[i].tags_code, msgs[i].props,
                              msgs[i].props_len, now);
done:
    if (sizes != sizes_small)
        free(sizes);
    return 0;
}

int store_put(store_engine *e, const store_msg *m, store_put_result *out)
{
    return append(e, m, 1, NULL, out);
}

int store_put_batch(store_engine *e, const store_msg *msgs, size_t n, int64_t *phys_offsets,
                    store_put_result *out)
{
    return append(e, msgs, n, phys_offsets, out);
}
