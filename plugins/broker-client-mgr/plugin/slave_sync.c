/* slave_sync.c — a slave's copy of its master's configuration
 * (SlaveSynchronize, protocol-ha.md §4.3): 3 s after start and then every
 * 10 s, while this broker's id is not 0 and the last registration named a
 * master: topic configs (21, from the master's VIP port = port − 2, like
 * Java; the main port when nothing answers there), consumer offsets (43) and
 * subscription groups (201). Tables with a DataVersion are replaced only
 * when the master's version differs. Runs on the housekeeping executor
 * (blocking calls). Delay offsets (45) are the store plugin's. */
#include "broker_context.h"
#include "fastjson_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYNC_TIMEOUT_MS 3000

/* The master's answer body to `code` at addr (NUL-terminated, malloc'd) or NULL. */
static char *fetch(bcm_ctx *c, const char *addr, int32_t code, size_t *len)
{
    const rmq_host_api *a = c->api;
    rmq_cmd *req = a->cmd_new_request(code);
    rmq_cmd *resp = NULL;
    if (!req || a->invoke_sync_addr(c->pctx, addr, req, SYNC_TIMEOUT_MS, &resp) != 0 || !resp)
        return NULL;
    char *out = NULL;
    size_t n = 0;
    const char *body = a->cmd_body(resp, &n);
    if (a->cmd_code(resp) == RMQ_RESPONSE_SUCCESS && body && n) {
        out = malloc(n + 1);
        if (out) {
            memcpy(out, body, n);
            out[n] = 0;
            *len = n;
        }
    } else {
        a->log(c->pctx, RMQ_LOG_WARN, "slave sync: %s answered code %d to request %d: %s", addr,
               a->cmd_code(resp), code, a->cmd_remark(resp) ? a->cmd_remark(resp) : "");
    }
    a->cmd_free(resp);
    return out;
}

/* The body's dataVersion, or {-1,-1}. */
static bcm_data_version version_of(const char *text, size_t len)
{
    bcm_data_version dv = {-1, -1};
    char err[128];
    json_t *root = fastjson_load_object(text, len, err, sizeof err);
    if (root) {
        bcm_data_version_from_json(&dv, json_object_get(root, "dataVersion"));
        json_decref(root);
    }
    return dv;
}

/* Whether the master's table (version got) replaces ours (version have):
 * Java takes it whenever the version differs, not only when it is newer;
 * a master's answer without a version (counter -1) is not taken. */
static bool differs(bcm_data_version got, bcm_data_version have)
{
    return got.counter >= 0 && (got.counter != have.counter || got.timestamp != have.timestamp);
}

static void sync_topics(bcm_ctx *c, const char *master)
{
    char vip[128];
    snprintf(vip, sizeof vip, "%s", master);
    char *colon = strrchr(vip, ':');
    size_t len = 0;
    char *text = NULL;
    if (colon) {
        snprintf(colon + 1, sizeof vip - (size_t)(colon + 1 - vip), "%d", atoi(colon + 1) - 2);
        text = fetch(c, vip, BCM_GET_ALL_TOPIC_CONFIG, &len);
    }
    if (!text)
        text = fetch(c, master, BCM_GET_ALL_TOPIC_CONFIG, &len);
    if (!text)
        return;
    bcm_data_version dv = version_of(text, len);
    char err[256] = "";
    bool changed = false;
    pthread_mutex_lock(&c->lock);
    if (differs(dv, c->topics.dv)) {
        /* Java clears the table and inserts the master's */
        bcm_topic_table_free(&c->topics);
        bcm_topic_table_init(&c->topics, 0);
        changed = bcm_topic_table_load(&c->topics, text, len, err, sizeof err) == 0;
    }
    pthread_mutex_unlock(&c->lock);
    free(text);
    if (changed) {
        c->api->log(c->pctx, RMQ_LOG_INFO, "slave sync: topic configs of %s taken (version %lld)",
                    master, (long long)dv.counter);
        bcm_persist_topics(c);
        bcm_registration_request_now(c);
    } else if (err[0]) {
        c->api->log(c->pctx, RMQ_LOG_WARN, "slave sync: topic configs of %s: %s", master, err);
    }
}

static void sync_offsets(bcm_ctx *c, const char *master)
{
    size_t len = 0;
    char *text = fetch(c, master, BCM_GET_ALL_CONSUMER_OFFSET, &len);
    if (!text)
        return;
    char err[256] = "";
    pthread_mutex_lock(&c->lock);
    int rc = bcm_offset_table_take_keys(&c->offsets, text, len, err, sizeof err);
    if (rc == 0)
        c->offsets_changes++;
    pthread_mutex_unlock(&c->lock);
    free(text);
    if (rc == 0)
        bcm_persist_offsets(c, true);
    else
        c->api->log(c->pctx, RMQ_LOG_WARN, "slave sync: consumer offsets of %s: %s", master, err);
}

static void sync_groups(bcm_ctx *c, const char *master)
{
    size_t len = 0;
    char *text = fetch(c, master, BCM_GET_ALL_SUBSCRIPTIONGROUP_CONFIG, &len);
    if (!text)
        return;
    bcm_data_version dv = version_of(text, len);
    char err[256] = "";
    bool changed = false;
    pthread_mutex_lock(&c->lock);
    if (differs(dv, c->groups.dv)) {
        json_object_clear(c->groups.groups);
        changed = bcm_subscription_groups_load(&c->groups, text, len, err, sizeof err) == 0;
    }
    pthread_mutex_unlock(&c->lock);
    free(text);
    if (changed)
        bcm_persist_groups(c);
    else if (err[0])
        c->api->log(c->pctx, RMQ_LOG_WARN, "slave sync: subscription groups of %s: %s", master,
                    err);
}

static void slave_sync_tick(void *ud)
{
    bcm_ctx *c = ud;
    if (__atomic_load_n(&c->s.broker_id, __ATOMIC_RELAXED) == 0)
        return;
    char master[96];
    pthread_mutex_lock(&c->reg_lock);
    snprintf(master, sizeof master, "%s", c->master_addr);
    pthread_mutex_unlock(&c->reg_lock);
    if (!master[0] || strcmp(master, c->broker_addr) == 0)
        return;
    sync_topics(c, master);
    sync_offsets(c, master);
    sync_groups(c, master);
}

int bcm_slave_sync_init(bcm_ctx *c)
{
    rmq_timer_id id;
    return c->api->add_timer(c->pctx, 3000, 10000, slave_sync_tick, c, "housekeeping", &id);
}
