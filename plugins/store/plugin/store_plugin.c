/* store_plugin.c — the store plugin's descriptor: init opens the engine
 * (recovery included; deferred to import_state when a reload's older
 * generation holds it, store_reload.c) and registers the message-path
 * processors and the "store.queues" service; quiesce answers held pulls;
 * fini closes the engine (flush, checkpoint, abort file removed). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ha.h"
#include "pop_service.h"
#include "store_features.h"
#include "store_plugin.h"

static void destroy(store_plugin *sp)
{
    ha_fini(sp);
    if (sp->worker)
        slow_worker_stop(sp);
    pull_holds_release_all(sp);
    store_features_fini(sp);
    store_close(sp->engine);
    sp->engine = NULL;
    pull_holds_destroy(sp);
    pthread_rwlock_destroy(&sp->engine_rw);
    pthread_mutex_destroy(&sp->bc_mu);
    pthread_mutex_destroy(&sp->updates_mu);
    live_text_free(&sp->set.region_id);
    free(sp);
}

/* What init made before the store opened (its failure paths). */
static void free_early(store_plugin *sp)
{
    pthread_rwlock_destroy(&sp->engine_rw);
    pthread_mutex_destroy(&sp->bc_mu);
    pthread_mutex_destroy(&sp->updates_mu);
    live_text_free(&sp->set.region_id);
    free(sp);
}

static int store_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    store_plugin *sp = calloc(1, sizeof *sp);
    if (!sp)
        return RMQ_ENOMEM;
    sp->ctx = ctx;
    sp->api = api;
    atomic_init(&sp->send_random, (uint32_t)time(NULL) ^ (uint32_t)(uintptr_t)sp);
    pthread_mutex_init(&sp->bc_mu, NULL);
    pthread_mutex_init(&sp->updates_mu, NULL);
    pthread_rwlock_init(&sp->engine_rw, NULL);
    live_text_init(&sp->set.region_id);
    int rc = store_settings_read(sp);
    if (rc != 0) {
        free_early(sp);
        return rc;
    }
    sp->put_lat.window_ms = (uint64_t)sp->set.put_stats_window_ms;
    rc = pull_holds_create(sp);
    if (rc != 0) {
        pull_holds_destroy(sp);
        free_early(sp);
        return rc;
    }
    char err[512] = "";
    /* the instance name in `lock`: a reload's new generation waits for its
     * own older generation, a second store instance on the same directory
     * is refused */
    sp->set.engine.lock_owner = api->plugin_name(ctx);
    rc = store_engine_open(sp, err, sizeof err);
    if (rc == -EBUSY && store_locked_by_this_process(sp->set.root_dir, sp->set.engine.lock_owner)) {
        /* a hot reload: the serving generation closes it in export_state
         * and import_state opens it here */
        sp->open_deferred = true;
        rc = 0;
    }
    if (rc != 0) {
        api->log(ctx, RMQ_LOG_ERROR, "cannot open the store at %s: %s", sp->set.root_dir, err);
        pull_holds_destroy(sp);
        free_early(sp);
        return rc < 0 ? rc : RMQ_EIO;
    }
    api->set_userdata(ctx, sp);
    rc = slow_worker_start(sp);
    if (rc == 0)
        rc = store_queues_service_export(sp);
    if (rc == 0)
        rc = send_processors_register(sp);
    if (rc == 0)
        rc = pull_processor_register(sp);
    if (rc == 0)
        rc = query_processors_register(sp);
    if (rc == 0)
        rc = queue_admin_processors_register(sp);
    if (rc == 0)
        rc = store_features_init(sp); /* retry/DLQ, delay, transactions, replies, 28, 222 */
    if (rc == 0)
        rc = ha_init(sp); /* HA port, slave client, ha/promote/demote */
    if (rc != 0) {
        api->log(ctx, RMQ_LOG_ERROR, "store init failed: %s", rmq_strerror(rc));
        api->set_userdata(ctx, NULL);
        destroy(sp);
        return rc;
    }
    api->log(ctx, RMQ_LOG_INFO, "store %s at %s: %s, sends %s, pulls %s",
             sp->open_deferred ? "ready (opened when the serving generation hands it over)"
                               : "ready",
             sp->set.root_dir,
             sp->set.engine.flush_type == STORE_SYNC_FLUSH ? "SYNC_FLUSH" : "ASYNC_FLUSH",
             sp->set.send_inline ? "inline" : "on the send executor",
             sp->set.pull_inline ? "inline" : "on the pull executor");
    return 0;
}

static void store_quiesce(rmq_plugin_ctx *ctx)
{
    store_plugin *sp = rmq_ctx_userdata(ctx);
    if (!sp)
        return;
    atomic_store(&sp->quiescing, true);
    pull_holds_release_all(sp);
    pop_holds_release_all(sp);
}

static void store_fini(rmq_plugin_ctx *ctx)
{
    store_plugin *sp = rmq_ctx_userdata(ctx);
    if (!sp)
        return;
    atomic_store(&sp->quiescing, true);
    sp->api->set_userdata(ctx, NULL);
    destroy(sp);
}

RMQ_PLUGIN(.name = "store", .version = "1.0.0",
           .description = "RocketMQ 4.9.8 message store: send, pull (long polling), query, offsets",
           .settings = STORE_SETTINGS, .state_version = STORE_STATE_VERSION, .init = store_init,
           .fini = store_fini, .quiesce = store_quiesce, .export_state = store_export_state,
           .import_state = store_import_state);
