/* store_plugin.c — the store plugin's descriptor: init opens the engine
 * (recovery included) and registers the message-path processors and the
 * "store.queues" service; quiesce answers held pulls; fini closes the
 * engine (flush, checkpoint, abort file removed). */
#include <stdlib.h>
#include <string.h>

#include "store_features.h"
#include "store_plugin.h"

static void engine_log(void *ud, int level, const char *msg)
{
    store_plugin *sp = ud;
    sp->api->log(sp->ctx, (rmq_log_level)level, "engine: %s", msg);
}

static void destroy(store_plugin *sp)
{
    if (sp->worker)
        slow_worker_stop(sp);
    pull_holds_release_all(sp);
    store_features_fini(sp);
    store_close(sp->engine);
    sp->engine = NULL;
    pull_holds_destroy(sp);
    pthread_mutex_destroy(&sp->bc_mu);
    free(sp);
}

static int store_init(rmq_plugin_ctx *ctx, const rmq_host_api *api)
{
    store_plugin *sp = calloc(1, sizeof *sp);
    if (!sp)
        return RMQ_ENOMEM;
    sp->ctx = ctx;
    sp->api = api;
    pthread_mutex_init(&sp->bc_mu, NULL);
    int rc = store_settings_read(sp);
    if (rc != 0) {
        pthread_mutex_destroy(&sp->bc_mu);
        free(sp);
        return rc;
    }
    rc = pull_holds_create(sp);
    if (rc != 0) {
        pull_holds_destroy(sp);
        pthread_mutex_destroy(&sp->bc_mu);
        free(sp);
        return rc;
    }
    sp->set.engine.log = engine_log;
    sp->set.engine.log_ud = sp;
    sp->set.engine.on_arrival = pull_holds_on_arrival;
    sp->set.engine.arrival_ud = sp;
    char err[512] = "";
    rc = store_open(&sp->set.engine, &sp->engine, err, sizeof err);
    if (rc != 0) {
        api->log(ctx, RMQ_LOG_ERROR, "cannot open the store at %s: %s", sp->set.root_dir, err);
        pull_holds_destroy(sp);
        pthread_mutex_destroy(&sp->bc_mu);
        free(sp);
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
    if (rc != 0) {
        api->log(ctx, RMQ_LOG_ERROR, "store init failed: %s", rmq_strerror(rc));
        api->set_userdata(ctx, NULL);
        destroy(sp);
        return rc;
    }
    api->log(ctx, RMQ_LOG_INFO, "store ready at %s: %s, sends %s, pulls %s", sp->set.root_dir,
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
           .settings = STORE_SETTINGS, .init = store_init, .fini = store_fini,
           .quiesce = store_quiesce);
