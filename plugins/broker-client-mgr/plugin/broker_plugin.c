/* broker_plugin.c — owns the plugin descriptor, the instance lifecycle
 * (init wires every part, fini tears it down) and the "broker.info" service.
 * Request handling lives in the *_processors.c files, never here. */
#include "broker_context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fini/export/import receive only the ctx: the instance is its userdata. */
bcm_ctx *bcm_from_ctx(rmq_plugin_ctx *pctx)
{
    return pctx ? rmq_ctx_userdata(pctx) : NULL;
}

static int info_identity(void *ud, rmq_broker_identity *out)
{
    bcm_ctx *c = ud;
    memset(out, 0, sizeof *out);
    snprintf(out->cluster_name, sizeof out->cluster_name, "%s", c->s.cluster_name);
    snprintf(out->broker_name, sizeof out->broker_name, "%s", c->s.broker_name);
    out->broker_id = __atomic_load_n(&c->s.broker_id, __ATOMIC_RELAXED);
    snprintf(out->broker_addr, sizeof out->broker_addr, "%s", c->broker_addr);
    pthread_mutex_lock(&c->reg_lock); /* registrations refresh it */
    snprintf(out->ha_server_addr, sizeof out->ha_server_addr, "%s", c->ha_addr);
    pthread_mutex_unlock(&c->reg_lock);
    return 0;
}

static int info_master_addrs(void *ud, char *master, size_t mlen, char *ha, size_t hlen)
{
    bcm_ctx *c = ud;
    pthread_mutex_lock(&c->reg_lock);
    snprintf(master, mlen, "%s", c->master_addr);
    snprintf(ha, hlen, "%s", c->ha_master_addr);
    pthread_mutex_unlock(&c->reg_lock);
    return 0;
}

/* Promotion / demotion (the store's HA role change): the new id goes out
 * with the next registration, requested now. */
static int info_set_broker_id(void *ud, int64_t id)
{
    bcm_ctx *c = ud;
    if (id < 0)
        return RMQ_EINVAL;
    pthread_mutex_lock(&c->reg_lock);
    __atomic_store_n(&c->s.broker_id, id, __ATOMIC_RELAXED);
    c->master_addr[0] = 0;
    c->ha_master_addr[0] = 0;
    pthread_mutex_unlock(&c->reg_lock);
    /* a promotion must outlive a restart or a hot reload (the store keeps
     * its brokerRole the same way) */
    char text[24];
    snprintf(text, sizeof text, "%lld", (long long)id);
    bcm_config_override_keep(c, "brokerId", text);
    c->api->log(c->pctx, RMQ_LOG_INFO, "brokerId is now %lld: registering again", (long long)id);
    bcm_registration_request_now(c);
    return 0;
}

/* The store's HA master when a slave reports for the first time: the
 * route may have lost this master meanwhile (see broker_service.h). */
static int info_register_now(void *ud)
{
    bcm_registration_request_now(ud);
    return 0;
}

bool bcm_is_oneway(bcm_ctx *c, const rmq_cmd *cmd)
{
    return (c->api->cmd_flag(cmd) & RMQ_CMD_FLAG_ONEWAY) != 0;
}

int bcm_register_processor_table(bcm_ctx *c, const bcm_processor_entry *table, size_t n,
                                 const char *executor)
{
    for (size_t i = 0; i < n; i++) {
        int rc = c->api->register_processor(c->pctx, table[i].code, table[i].fn, c, executor);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int bcm_reply(bcm_ctx *c, rmq_request *req, const rmq_cmd *cmd, int32_t code, const char *remark)
{
    if (bcm_is_oneway(c, cmd))
        return RMQ_OK;
    rmq_cmd *resp = c->api->cmd_new_response(cmd, code, remark);
    if (!resp)
        return RMQ_ENOMEM;
    c->api->reply(req, resp);
    return RMQ_OK;
}

int bcm_reply_body(bcm_ctx *c, rmq_request *req, const rmq_cmd *cmd, char *json_owned)
{
    if (!json_owned)
        return RMQ_ENOMEM;
    if (bcm_is_oneway(c, cmd)) {
        free(json_owned);
        return RMQ_OK;
    }
    rmq_cmd *resp = c->api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (!resp) {
        free(json_owned);
        return RMQ_ENOMEM;
    }
    c->api->cmd_set_body(resp, json_owned, strlen(json_owned), NULL, NULL);
    free(json_owned);
    c->api->reply(req, resp);
    return RMQ_OK;
}

int bcm_reply_header(bcm_ctx *c, rmq_request *req, const rmq_cmd *cmd, int32_t code,
                     const char *remark, char *json_owned)
{
    if (bcm_is_oneway(c, cmd)) {
        free(json_owned);
        return RMQ_OK;
    }
    rmq_cmd *resp = c->api->cmd_new_response(cmd, code, remark);
    if (!resp) {
        free(json_owned);
        return RMQ_ENOMEM;
    }
    /* Java built this answer from a response-header class: "extFields":{}
     * is on the wire even when the header has no field. */
    if (c->api->abi_minor >= 1 && c->api->cmd_set_ext_present)
        c->api->cmd_set_ext_present(resp);
    if (json_owned) {
        c->api->cmd_set_body(resp, json_owned, strlen(json_owned), NULL, NULL);
        free(json_owned);
    }
    return c->api->reply(req, resp);
}

bool bcm_ext_long(bcm_ctx *c, const rmq_cmd *cmd, const char *key, int64_t *out)
{
    const char *v = c->api->cmd_ext_get(cmd, key);
    if (!v || !*v)
        return false;
    char *end = NULL;
    long long x = strtoll(v, &end, 10);
    if (!end || *end)
        return false;
    *out = (int64_t)x;
    return true;
}

static void free_ctx(bcm_ctx *c)
{
    bcm_pull_holds_flush(c, true);
    bcm_registration_free(c);
    bcm_topic_registration_free(c);
    bcm_producer_table_free(&c->producers);
    bcm_consumer_table_free(&c->consumers);
    bcm_subscription_groups_free(&c->groups);
    bcm_topics_journal_close(c);
    bcm_topic_table_free(&c->topics);
    bcm_unwritten_topics_free(&c->unwritten);
    bcm_offset_table_free(&c->offsets);
    bcm_lock_table_free(&c->locks);
    free(c->holds);
    json_decref(c->config_overrides);
    json_decref(c->request_modes);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->persist_lock);
    pthread_mutex_destroy(&c->reg_lock);
    pthread_mutex_destroy(&c->hold_lock);
    pthread_cond_destroy(&c->reg_idle);
    pthread_cond_destroy(&c->topics_written);
    free(c);
}

static int declare_executors(bcm_ctx *c)
{
    const rmq_host_api *a = c->api;
    int rc = a->declare_executor(c->pctx, "heartbeat",
                                 (int)a->setting_int(c->pctx, "heartbeatThreadPoolNums"),
                                 (int)a->setting_int(c->pctx, "heartbeatThreadPoolQueueCapacity"));
    /* Java's broker fast failure for the heartbeat queue (protocol.md §7.5),
     * with UPDATE_BROKER_CONFIG's values; set even when off (wait 0), so the
     * remark is there when an update turns it on (SDK 1.9) */
    if (rc == 0 && a->abi_minor >= 3 && a->set_executor_queue_timeout)
        rc = a->set_executor_queue_timeout(
            c->pctx, "heartbeat", bcm_heartbeat_queue_wait_ms(c),
            "[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while");
    if (rc == 0)
        rc = a->declare_executor(
            c->pctx, "client", (int)a->setting_int(c->pctx, "clientManageThreadPoolNums"), 1000000);
    if (rc == 0)
        rc = a->declare_executor(c->pctx, "consumer",
                                 (int)a->setting_int(c->pctx, "consumerManageThreadPoolNums"),
                                 1000000);
    if (rc == 0)
        rc = a->declare_executor(c->pctx, "admin",
                                 (int)a->setting_int(c->pctx, "adminBrokerThreadPoolNums"), 10000);
    /* file flushes and expiry scans: one thread keeps them ordered */
    if (rc == 0)
        rc = a->declare_executor(c->pctx, "housekeeping", 1, 64);
    return rc;
}

static int bcm_init(rmq_plugin_ctx *pctx, const rmq_host_api *api)
{
    bcm_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return RMQ_ENOMEM;
    c->pctx = pctx;
    c->api = api;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->persist_lock, NULL);
    pthread_mutex_init(&c->reg_lock, NULL);
    pthread_mutex_init(&c->hold_lock, NULL);
    pthread_cond_init(&c->reg_idle, NULL);
    pthread_cond_init(&c->topics_written, NULL);
    bcm_unwritten_topics_init(&c->unwritten);
    bcm_topic_registration_init(c);
    bcm_producer_table_init(&c->producers);
    bcm_consumer_table_init(&c->consumers);
    bcm_offset_table_init(&c->offsets);
    bcm_lock_table_init(&c->locks);
    int rc = RMQ_ENOMEM;
    if (bcm_subscription_groups_init(&c->groups, api->now_wall_ms()) != 0 ||
        bcm_topic_table_init(&c->topics, api->now_wall_ms()) != 0)
        goto fail;
    c->journal_fd = -1;
    if ((rc = bcm_settings_load(c)) != 0 || (rc = bcm_state_load(c)) != 0 ||
        (rc = bcm_topics_journal_open(c)) != 0 || (rc = bcm_settings_topics(c)) != 0)
        goto fail;
    if ((rc = declare_executors(c)) != 0 || (rc = bcm_register_client_processors(c)) != 0 ||
        (rc = bcm_register_consumer_processors(c)) != 0 ||
        (rc = bcm_register_assignment_processors(c)) != 0 ||
        (rc = bcm_register_admin_processors(c)) != 0 ||
        (rc = bcm_register_relay_processors(c)) != 0 ||
        (rc = bcm_register_consume_stats_processor(c)) != 0 ||
        (rc = bcm_register_config_processors(c)) != 0 ||
        (rc = bcm_register_inventory_processors(c)) != 0 ||
        (rc = bcm_register_storage_stub_processors(c)) != 0 ||
        (rc = bcm_register_housekeeping(c)) != 0 || (rc = bcm_topics_journal_start(c)) != 0 ||
        (rc = bcm_slave_sync_init(c)) != 0 ||
        (rc = bcm_registration_init(c, api->setting_string(pctx, "namesrvAddr"))) != 0)
        goto fail;
    c->info_table.size = sizeof c->info_table;
    c->info_table.identity = info_identity;
    c->info_table.master_addrs = info_master_addrs;
    c->info_table.set_broker_id = info_set_broker_id;
    c->info_table.register_now = info_register_now;
    if ((rc = api->export_service(pctx, RMQ_BROKER_INFO_SERVICE, RMQ_BROKER_INFO_VERSION,
                                  &c->info_table, c)) != 0 ||
        (rc = bcm_export_broker_meta(c)) != 0)
        goto fail;
    api->set_userdata(pctx, c);
    api->log(pctx, RMQ_LOG_INFO, "broker %s (cluster %s, id %lld) at %s, files in %s",
             c->s.broker_name, c->s.cluster_name, (long long)c->s.broker_id, c->broker_addr,
             c->config_dir);
    return 0;
fail:
    api->log(pctx, RMQ_LOG_ERROR, "broker-client-mgr init failed: %s", rmq_strerror(rc));
    free_ctx(c);
    return rc;
}

/* The host has stopped this generation's processors, timers and listeners
 * before fini: nothing of ours runs concurrently. A fini after export_state
 * is a hot reload: the broker stays registered and the files stay as the new
 * generation will write them. */
static void bcm_fini(rmq_plugin_ctx *pctx)
{
    bcm_ctx *c = bcm_from_ctx(pctx);
    if (!c)
        return;
    if (!c->exported) {
        bcm_persist_offsets(c, true);
        /* a clean stop leaves a complete topics.json (what Java reads) and
         * an empty journal */
        bcm_persist_topics(c);
        bcm_registration_shutdown(c);
    }
    c->api->set_userdata(pctx, NULL);
    free_ctx(c);
}

/* Held PULLs are answered PULL_NOT_FOUND at once when the host stops or
 * reloads this generation: clients pull again (from the next generation). */
static void bcm_quiesce(rmq_plugin_ctx *pctx)
{
    bcm_ctx *c = rmq_ctx_userdata(pctx);
    if (c)
        bcm_pull_holds_close(c);
}

RMQ_PLUGIN(.state_version = BCM_STATE_VERSION, .name = "broker-client-mgr", .version = "1.0.0",
           .description = "RocketMQ broker client management and NameServer registration",
           .settings = bcm_setting_decls, .init = bcm_init, .fini = bcm_fini,
           .export_state = bcm_export_state, .import_state = bcm_import_state,
           .quiesce = bcm_quiesce);
