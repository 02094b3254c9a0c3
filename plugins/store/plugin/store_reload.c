/* store_reload.c — hot reload of the store (`rmqhostctl reload store`): the
 * new generation's init defers opening the engine while this process's older
 * generation holds the store's lock; the old generation's export flushes and
 * closes the engine (the timer wheel checkpointed and closed first) and hands
 * over the delay levels' progress and the runtime statistics (28, 208); the
 * new one's import opens the engine (its arrival callback names the new
 * generation). */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ha.h"
#include "state_blob.h"
#include "pop_service.h"
#include "store_features.h"
#include "store_plugin.h"

static void engine_log(void *ud, int level, const char *msg)
{
    store_plugin *sp = ud;
    sp->api->log(sp->ctx, (rmq_log_level)level, "engine: %s", msg);
}

int store_engine_open(store_plugin *sp, char *err, size_t errlen)
{
    sp->set.engine.log = engine_log;
    sp->set.engine.log_ud = sp;
    sp->set.engine.on_arrival = pull_holds_on_arrival;
    sp->set.engine.arrival_ud = sp;
    store_engine *e = NULL;
    int rc = store_open(&sp->set.engine, &e, err, errlen);
    if (rc != 0)
        return rc;
    /* an engine opened again keeps the per-use updates made since the start */
    json_t *u = store_updates_read(sp);
    if (u)
        store_settings_apply_engine(sp, e, u);
    json_decref(u);
    pthread_rwlock_wrlock(&sp->engine_rw);
    sp->engine = e;
    pthread_rwlock_unlock(&sp->engine_rw);
    return 0;
}

/* The blob: "RMQSTORE", the number of delay levels and each level's offset
 * in config/delayOffset.json terms, (version 2) the length of the statistics
 * section and that section (broker_admin_export: the figures of 28 and 208),
 * then the old generation's sp and its reopen function (for a refused
 * import); every version ends with that tail. Host byte order and pointers:
 * the blob never leaves the process, and the old .so stays loaded until the
 * swap or the refusal is done. */
#define BLOB_MAGIC "RMQSTORE"

typedef struct blob_tail {
    void (*reopen)(void *old_sp);
    void *old_sp;
} blob_tail;

/* The new generation could not open the store: the old one takes it back
 * and serves on (the host revives its timers and releases the held
 * requests to it right after the refusal). */
static void reopen_after_refusal(void *ud)
{
    store_plugin *sp = ud;
    char err[512] = "";
    if (store_engine_open(sp, err, sizeof err) == 0) {
        ha_start(sp);
    } else {
        sp->api->log(sp->ctx, RMQ_LOG_ERROR,
                     "cannot reopen the store at %s after the refused reload: %s", sp->set.root_dir,
                     err);
        return;
    }
    store_features *f = features_of(sp);
    if (f && sp->handed_nlevels > 0) {
        pthread_mutex_lock(&f->delay_mu);
        f->nlevels = sp->handed_nlevels;
        pthread_mutex_unlock(&f->delay_mu);
    }
    (void)pop_service_open(sp);
    atomic_store(&sp->quiescing, false);
    sp->api->log(sp->ctx, RMQ_LOG_WARN, "store reopened by the serving generation at %s",
                 sp->set.root_dir);
}

int store_export_state(rmq_plugin_ctx *ctx, void **blob, size_t *len)
{
    store_plugin *sp = rmq_ctx_userdata(ctx);
    if (!sp)
        return RMQ_EINVAL;
    atomic_store(&sp->quiescing, true);
    /* the host drained every request (held pulls were answered by quiesce,
     * SYNC_FLUSH sends by the flusher); a pull held since is answered now */
    pull_holds_release_all(sp);
    int32_t nlevels = 0;
    int64_t offs[MAX_DELAY_LEVELS + 1] = {0};
    store_features *f = features_of(sp);
    if (f && f->nlevels > 0) {
        pthread_mutex_lock(&f->delay_mu);
        nlevels = f->nlevels;
        memcpy(offs, f->delay_offset, sizeof offs);
        /* the progress is the new generation's now: this one's fini must
         * not write delayOffset.json over it (0 levels = nothing to persist) */
        sp->handed_nlevels = f->nlevels;
        f->nlevels = 0;
        pthread_mutex_unlock(&f->delay_mu);
    }
    /* the statistics read the engine's counters: before it closes */
    blob_writer stats = {0};
    if (broker_admin_export(sp, &stats) != 0) {
        sp->api->log(ctx, RMQ_LOG_WARN,
                     "runtime statistics not handed over: they restart in the new generation");
        stats.len = 0;
    }
    blob_writer w = {0};
    blob_put(&w, BLOB_MAGIC, 8);
    blob_put(&w, &nlevels, 4);
    blob_put(&w, offs, (size_t)(nlevels + 1) * 8);
    blob_put_u64(&w, stats.len);
    blob_put(&w, stats.buf, stats.len);
    free(stats.buf);
    blob_tail tail = {reopen_after_refusal, sp};
    blob_put(&w, &tail, sizeof tail);
    if (w.failed) {
        free(w.buf);
        if (f && sp->handed_nlevels > 0) { /* this generation serves on */
            pthread_mutex_lock(&f->delay_mu);
            f->nlevels = sp->handed_nlevels;
            pthread_mutex_unlock(&f->delay_mu);
        }
        atomic_store(&sp->quiescing, false);
        return RMQ_ENOMEM;
    }
    ha_stop(sp);              /* slaves reconnect to the next generation */
    pop_service_handover(sp); /* the journal is the new generation's now */
    /* the timer wheel checkpointed and closed: the next generation reopens it */
    timer_service_handover(sp);
    pthread_rwlock_wrlock(&sp->engine_rw);
    store_engine *e = sp->engine;
    sp->engine = NULL;
    pthread_rwlock_unlock(&sp->engine_rw);
    store_close(e); /* flush, checkpoint, abort removed, lock released */
    *blob = w.buf;
    *len = w.len;
    sp->api->log(ctx, RMQ_LOG_INFO, "store closed for the reload (%d delay levels handed over)",
                 nlevels);
    return 0;
}

int store_import_state(rmq_plugin_ctx *ctx, uint32_t version, const void *blob, size_t len)
{
    store_plugin *sp = rmq_ctx_userdata(ctx);
    if (!sp)
        return RMQ_EINVAL;
    const uint8_t *b = blob;
    blob_tail tail;
    if (len < 12 + sizeof tail || memcmp(b, BLOB_MAGIC, 8) != 0)
        return RMQ_EINVAL;
    memcpy(&tail, b + len - sizeof tail, sizeof tail);
    int32_t nlevels = -1;
    memcpy(&nlevels, b + 8, 4);
    size_t levels_end =
        nlevels >= 0 && nlevels <= MAX_DELAY_LEVELS ? 12 + (size_t)(nlevels + 1) * 8 : SIZE_MAX;
    uint64_t stats_len = 0;
    bool ok = false;
    if (version == 1) {
        ok = levels_end != SIZE_MAX && len == levels_end + sizeof tail;
    } else if (version == STORE_STATE_VERSION && levels_end != SIZE_MAX &&
               len >= levels_end + 8 + sizeof tail) {
        memcpy(&stats_len, b + levels_end, 8);
        ok = stats_len == len - levels_end - 8 - sizeof tail;
    }
    if (!ok) {
        /* an unknown (newer) format: the serving generation takes the store
         * back and serves on */
        sp->api->log(ctx, RMQ_LOG_ERROR,
                     "store reload refused: state version %u (this plugin reads 1 and %u)", version,
                     STORE_STATE_VERSION);
        tail.reopen(tail.old_sp);
        return RMQ_EINVAL;
    }
    if (!sp->engine) {
        char err[512] = "";
        int rc = store_engine_open(sp, err, sizeof err);
        if (rc != 0) {
            sp->api->log(ctx, RMQ_LOG_ERROR,
                         "cannot open the store at %s after the reload: %s; the serving "
                         "generation takes it back",
                         sp->set.root_dir, err);
            tail.reopen(tail.old_sp);
            return rc < 0 ? rc : RMQ_EIO;
        }
        sp->open_deferred = false;
        ha_start(sp);
    }
    if (pop_service_open(sp) != 0) /* logged; POP answers SYSTEM_ERROR until a restart */
        sp->api->log(ctx, RMQ_LOG_ERROR, "pop state could not be opened after the reload");
    /* the old generation's progress is newer than the file this generation's
     * init read; levels both know are taken over and persisted at this
     * generation's next delayOffset.json write (10 s, or its fini) */
    store_features *f = features_of(sp);
    if (f && f->nlevels > 0) {
        int64_t offs[MAX_DELAY_LEVELS + 1];
        memcpy(offs, b + 12, (size_t)(nlevels + 1) * 8);
        pthread_mutex_lock(&f->delay_mu);
        for (int l = 1; l <= nlevels && l <= f->nlevels; l++)
            f->delay_offset[l] = offs[l];
        f->delay_dirty = true;
        pthread_mutex_unlock(&f->delay_mu);
    }
    if (stats_len) {
        blob_reader r = {b + levels_end + 8, (size_t)stats_len, true};
        if (broker_admin_import(sp, &r) != 0)
            sp->api->log(ctx, RMQ_LOG_WARN,
                         "runtime statistics of the previous generation "
                         "could not be read: they restart here");
    }
    sp->api->log(ctx, RMQ_LOG_INFO, "store reopened by the new generation at %s", sp->set.root_dir);
    return 0;
}
