/* broker_config_processors.c — owns GET_BROKER_CONFIG (26) and
 * UPDATE_BROKER_CONFIG (25) (mqadmin getBrokerConfig, exportConfigs,
 * updateBrokerConfig) and the file those updates persist to,
 * <config dir>/broker.properties. Java's Configuration answers every field
 * of its config objects as "key=value\n" lines with a DataVersion, and an
 * update sets the named fields, bumps the version and rewrites the broker's
 * config file; a key it does not know is ignored. Here the keys are this
 * plugin's settings (Java's BrokerConfig names): those the running broker
 * reads on every use change at once (apply_now), every one persisted is applied over the
 * conf.d value at the next start (settings_load reads through
 * bcm_setting_text). The store's settings are handed to the store
 * (`store.queues` config_update), which keeps and applies them itself. */
#include "broker_context.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RC_NO_PERMISSION 16
#define OVERRIDES_FILE "broker.properties"

/* Never shown nor changed over the wire (Java has no such fields). */
static bool is_secret(const char *name)
{
    return strcmp(name, "secretKey") == 0 || strcmp(name, "accessKey") == 0;
}

static const rmq_setting_decl *decl_of(const char *name)
{
    for (const rmq_setting_decl *d = bcm_setting_decls; d->name; d++)
        if (strcmp(d->name, name) == 0 && !is_secret(name))
            return d;
    return NULL;
}

/* A value Java's setter would take: an int / boolean text of the declared
 * range, any string. Java's properties2Object ignores a value it cannot
 * parse, and so does this. */
static bool value_fits(const rmq_setting_decl *d, const char *v)
{
    char *end;
    switch (d->type) {
    case RMQ_SETTING_INT: {
        errno = 0;
        long long n = strtoll(v, &end, 10);
        if (errno || end == v || *end)
            return false;
        return d->min >= d->max || (n >= d->min && n <= d->max);
    }
    case RMQ_SETTING_BOOL:
        /* Boolean.parseBoolean: "true" (any case) or anything else = false */
        return true;
    case RMQ_SETTING_DOUBLE: strtod(v, &end); return end != v && !*end;
    default: return true;
    }
}

const char *bcm_setting_text(bcm_ctx *c, const char *name)
{
    if (!c->config_overrides)
        return NULL;
    return json_string_value(json_object_get(c->config_overrides, name));
}

/* java.util.Properties' line format, the part updateBrokerConfig bodies use:
 * "key=value" or "key:value" lines, '#'/'!' comments, blanks trimmed. */
static json_t *parse_properties(const char *text, size_t len)
{
    json_t *out = json_object();
    const char *p = text, *end = text + len;
    while (out && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        while (p < le && (*p == ' ' || *p == '\t' || *p == '\f'))
            p++;
        const char *e = le;
        while (e > p && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (p < e && *p != '#' && *p != '!') {
            const char *sep = p;
            while (sep < e && *sep != '=' && *sep != ':')
                sep++;
            const char *ke = sep;
            while (ke > p && (ke[-1] == ' ' || ke[-1] == '\t'))
                ke--;
            const char *vs = sep < e ? sep + 1 : e;
            while (vs < e && (*vs == ' ' || *vs == '\t'))
                vs++;
            char *k = strndup(p, (size_t)(ke - p));
            char *v = strndup(vs, (size_t)(e - vs));
            if (k && v)
                json_object_set_new(out, k, json_string(v));
            free(k);
            free(v);
        }
        p = nl ? nl + 1 : end;
    }
    return out;
}

/* Read the persisted updates (before the settings are read). */
int bcm_config_overrides_load(bcm_ctx *c)
{
    char path[800];
    snprintf(path, sizeof path, "%s/%s", c->config_dir, OVERRIDES_FILE);
    char *data = NULL;
    size_t len = 0;
    int rc = c->api->read_file_with_backup(c->pctx, path, NULL, NULL, &data, &len);
    c->config_overrides = json_object();
    if (!c->config_overrides) {
        free(data);
        return RMQ_ENOMEM;
    }
    if (rc != 0)
        return 0;
    json_t *props = parse_properties(data, len);
    free(data);
    const char *k;
    json_t *v;
    json_object_foreach(props, k, v)
    {
        const rmq_setting_decl *d = decl_of(k);
        if (d && value_fits(d, json_string_value(v)))
            json_object_set(c->config_overrides, k, v);
    }
    json_decref(props);
    if (json_object_size(c->config_overrides))
        c->api->log(c->pctx, RMQ_LOG_INFO, "%s: %zu setting(s) updated by UPDATE_BROKER_CONFIG",
                    path, json_object_size(c->config_overrides));
    return 0;
}

/* The text of one setting as the running broker has it. */
static void current_text(bcm_ctx *c, const rmq_setting_decl *d, char *out, size_t cap)
{
    const char *o = bcm_setting_text(c, d->name);
    if (strcmp(d->name, "brokerName") == 0) {
        snprintf(out, cap, "%s", c->s.broker_name);
    } else if (strcmp(d->name, "brokerIP1") == 0) {
        snprintf(out, cap, "%s", c->s.advertised_ip);
    } else if (strcmp(d->name, "brokerPermission") == 0) {
        snprintf(out, cap, "%d", (int)c->s.broker_permission);
    } else if (strcmp(d->name, "autoCreateTopicEnable") == 0) {
        snprintf(out, cap, "%s", c->s.auto_create_topic_enable ? "true" : "false");
    } else if (strcmp(d->name, "autoCreateSubscriptionGroup") == 0) {
        snprintf(out, cap, "%s", c->s.auto_create_subscription_group ? "true" : "false");
    } else if (strcmp(d->name, "notifyConsumerIdsChangedEnable") == 0) {
        snprintf(out, cap, "%s", c->s.notify_consumer_ids_changed_enable ? "true" : "false");
    } else if (o) {
        snprintf(out, cap, "%s",
                 d->type == RMQ_SETTING_BOOL ? (strcasecmp(o, "true") == 0 ? "true" : "false") : o);
    } else {
        const rmq_host_api *a = c->api;
        switch (d->type) {
        case RMQ_SETTING_INT:
            snprintf(out, cap, "%lld", (long long)a->setting_int(c->pctx, d->name));
            break;
        case RMQ_SETTING_BOOL:
            snprintf(out, cap, "%s", a->setting_bool(c->pctx, d->name) ? "true" : "false");
            break;
        case RMQ_SETTING_DOUBLE:
            snprintf(out, cap, "%g", a->setting_double(c->pctx, d->name));
            break;
        default: {
            const char *s = a->setting_string(c->pctx, d->name);
            snprintf(out, cap, "%s", s ? s : "");
        }
        }
    }
}

static char *properties_text(const json_t *o);

/* Configuration.getAllConfigsFormatString of a broker made of this plugin
 * and the store: this plugin's settings (BrokerConfig), the store's
 * (MessageStoreConfig, through "store.queues"), listenPort, and the fields
 * whose value the daemon's design fixes. */
static json_t *all_configs(bcm_ctx *c, const char *store_text, const bcm_java_facts *facts)
{
    json_t *all = json_object();
    if (!all)
        return NULL;
    for (const rmq_setting_decl *d = bcm_setting_decls; d->name; d++) {
        if (is_secret(d->name))
            continue;
        char v[2048];
        current_text(c, d, v, sizeof v);
        json_object_set_new(all, d->name, json_string(v));
    }
    if (store_text) { /* the store's storePathRootDir is Java's meaning */
        json_t *props = parse_properties(store_text, strlen(store_text));
        json_object_update(all, props);
        json_decref(props);
    }
    char num[32];
    snprintf(num, sizeof num, "%d", c->s.listen_port);
    json_object_set_new(all, "listenPort", json_string(num));
    bcm_java_config_keys(all, facts);
    const struct {
        const char *k, *v;
    } fixed[] = {
        /* exportConfigs reads these (when no store tells): a master here,
         * no filter servers */
        {"brokerRole", c->s.broker_id == 0 ? "ASYNC_MASTER" : "SLAVE"},
        {"filterServerNums", "0"},
        {"slaveReadEnable", "false"},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (!json_object_get(all, fixed[i].k))
            json_object_set_new(all, fixed[i].k, json_string(fixed[i].v));
    return all;
}

static int process_get_config(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    bcm_store st; /* not under the tables lock: acquiring may wait for a reload */
    bcm_store_acquire(c, &st);
    char *store_text = bcm_store_config_text(&st);
    bcm_store_release(c, &st);
    bcm_java_facts facts;
    bcm_java_facts_read(c, &facts);
    pthread_mutex_lock(&c->lock);
    json_t *all = all_configs(c, store_text, &facts);
    free(store_text);
    json_t *ver = bcm_data_version_json(&c->config_dv);
    pthread_mutex_unlock(&c->lock);
    char *body = all ? properties_text(all) : NULL;
    json_decref(all);
    char *vtext = json_dumps(ver, JSON_COMPACT);
    json_decref(ver);
    if (!body || !vtext) {
        free(body);
        free(vtext);
        return RMQ_ENOMEM;
    }
    if (bcm_is_oneway(c, cmd)) {
        free(body);
        free(vtext);
        return RMQ_OK;
    }
    rmq_cmd *resp = c->api->cmd_new_response(cmd, RMQ_RESPONSE_SUCCESS, NULL);
    if (!resp) {
        free(body);
        free(vtext);
        return RMQ_ENOMEM;
    }
    c->api->cmd_ext_set(resp, "version", vtext);
    free(vtext);
    c->api->cmd_set_body(resp, body, strlen(body), NULL, NULL);
    free(body);
    return c->api->reply(req, resp);
}

/* BrokerConfig.configBlackList plus the three Java always refuses. */
static bool black_listed(bcm_ctx *c, const json_t *props)
{
    static const char *const fixed[] = {"brokerConfigPath", "rocketmqHome", "configBlackList"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (json_object_get(props, fixed[i]))
            return true;
    const char *list = c->api->setting_string(c->pctx, "configBlackList");
    char *copy = strdup(list ? list : "");
    bool hit = false;
    char *save = NULL;
    for (char *t = copy ? strtok_r(copy, ";", &save) : NULL; t && !hit;
         t = strtok_r(NULL, ";", &save))
        hit = json_object_get(props, t) != NULL;
    free(copy);
    return hit;
}

/* Java's BrokerFastFailure reads both settings on each pass (every 10 ms):
 * the heartbeat executor's longest wait follows them at once (SDK 1.9;
 * with an older host, at the next start). Tables lock held. */
static void set_heartbeat_queue_wait(bcm_ctx *c)
{
    const rmq_host_api *a = c->api;
    if (a->abi_minor < 9 || !a->set_executor_queue_wait) {
        a->log(c->pctx, RMQ_LOG_INFO,
               "the host predates SDK 1.9: the heartbeat queue's fast failure changes at the "
               "next start");
        return;
    }
    int rc = a->set_executor_queue_wait(c->pctx, "heartbeat", bcm_heartbeat_queue_wait_ms(c));
    if (rc != 0)
        a->log(c->pctx, RMQ_LOG_WARN, "heartbeat queue wait: %s", rmq_strerror(rc));
}

/* The settings the running broker reads on every use take the new value now;
 * the others apply at the next start (as Java's fields read only there). */
static bool apply_now(bcm_ctx *c, const char *k, const char *v)
{
    bool on = strcasecmp(v, "true") == 0;
    if (strcmp(k, "brokerPermission") == 0) {
        c->s.broker_permission = (int)strtol(v, NULL, 10);
        return true;
    }
    if (strcmp(k, "compressedRegister") == 0)
        c->s.compressed_register = on; /* the next registration's body */
    else if (strcmp(k, "registerBrokerTimeoutMills") == 0)
        c->s.register_timeout_ms = strtoll(v, NULL, 10); /* the next registration's call */
    else if (strcmp(k, "brokerFastFailureEnable") == 0 ||
             strcmp(k, "waitTimeMillsInHeartbeatQueue") == 0)
        set_heartbeat_queue_wait(c);
    else if (strcmp(k, "autoCreateTopicEnable") == 0)
        c->s.auto_create_topic_enable = on;
    else if (strcmp(k, "autoCreateSubscriptionGroup") == 0)
        c->s.auto_create_subscription_group = on;
    else if (strcmp(k, "notifyConsumerIdsChangedEnable") == 0)
        c->s.notify_consumer_ids_changed_enable = on;
    return false;
}

static char *properties_text(const json_t *o)
{
    size_t cap = 256, n = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    s[0] = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        const char *t = json_string_value(v);
        size_t need = strlen(k) + strlen(t) + 3;
        if (n + need >= cap) {
            cap = (cap + need) * 2;
            char *b = realloc(s, cap);
            if (!b) {
                free(s);
                return NULL;
            }
            s = b;
        }
        n += (size_t)snprintf(s + n, cap - n, "%s=%s\n", k, t);
    }
    return s;
}

static int write_overrides(bcm_ctx *c, const char *text)
{
    if (!text)
        return RMQ_ENOMEM;
    char path[800];
    snprintf(path, sizeof path, "%s/%s", c->config_dir, OVERRIDES_FILE);
    pthread_mutex_lock(&c->persist_lock);
    int rc = c->api->write_file_atomic(c->pctx, path, text, strlen(text));
    pthread_mutex_unlock(&c->persist_lock);
    if (rc != 0)
        c->api->log(c->pctx, RMQ_LOG_ERROR, "cannot write %s: %s", path, rmq_strerror(rc));
    return rc;
}

int bcm_config_override_keep(bcm_ctx *c, const char *name, const char *value)
{
    pthread_mutex_lock(&c->lock);
    int rc = json_object_set_new(c->config_overrides, name, json_string(value)) ? RMQ_ENOMEM : 0;
    bcm_data_version_next(&c->config_dv, c->api->now_wall_ms());
    char *text = rc == 0 ? properties_text(c->config_overrides) : NULL;
    pthread_mutex_unlock(&c->lock);
    if (rc == 0)
        rc = write_overrides(c, text);
    free(text);
    return rc;
}

static int process_update_config(rmq_request *req, const rmq_cmd *cmd, void *ud)
{
    bcm_ctx *c = ud;
    size_t len = 0;
    const void *body = c->api->cmd_body(cmd, &len);
    if (!body || !len) /* Java: no body, nothing to do, SUCCESS */
        return bcm_reply(c, req, cmd, RMQ_RESPONSE_SUCCESS, NULL);
    json_t *props = parse_properties(body, len);
    if (!props)
        return RMQ_ENOMEM;
    if (black_listed(c, props)) {
        json_decref(props);
        return bcm_reply(c, req, cmd, RC_NO_PERMISSION, "Can not update config in black list.");
    }
    bool perm_changed = false;
    const char *k;
    json_t *v;
    /* the store's settings go to the store (it keeps and applies them);
     * not under the tables lock: it writes a file */
    bcm_store st;
    bcm_store_acquire(c, &st);
    json_object_foreach(props, k, v)
    {
        if (!decl_of(k) && !is_secret(k)) {
            int rc = bcm_store_config_update(&st, k, json_string_value(v));
            if (rc != 0 && rc != RMQ_ENOENT)
                c->api->log(c->pctx, RMQ_LOG_WARN, "UPDATE_BROKER_CONFIG: %s ignored (%s)", k,
                            rmq_strerror(rc));
        }
    }
    bcm_store_release(c, &st);
    pthread_mutex_lock(&c->lock);
    json_object_foreach(props, k, v)
    {
        const rmq_setting_decl *d = decl_of(k);
        const char *t = json_string_value(v);
        if (!d || !value_fits(d, t))
            continue; /* Java ignores a key no config object has */
        json_object_set(c->config_overrides, k, v);
        if (apply_now(c, k, t))
            perm_changed = true;
    }
    bcm_data_version_next(&c->config_dv, c->api->now_wall_ms());
    if (json_object_get(props, "brokerPermission"))
        bcm_data_version_next(&c->topics.dv, c->api->now_wall_ms());
    char *text = properties_text(c->config_overrides);
    pthread_mutex_unlock(&c->lock);
    c->api->log(c->pctx, RMQ_LOG_INFO, "UPDATE_BROKER_CONFIG: %zu key(s) received",
                json_object_size(props));
    json_decref(props);
    write_overrides(c, text);
    free(text);
    /* registerBrokerAll(oneway=false, forceRegister=true): the NameServers
     * learn the new permission of every topic now */
    if (perm_changed)
        bcm_registration_request_now(c);
    return bcm_reply(c, req, cmd, RMQ_RESPONSE_SUCCESS, NULL);
}

int bcm_register_config_processors(bcm_ctx *c)
{
    int rc =
        c->api->register_processor(c->pctx, BCM_GET_BROKER_CONFIG, process_get_config, c, "admin");
    if (rc == 0)
        rc = c->api->register_processor(c->pctx, BCM_UPDATE_BROKER_CONFIG, process_update_config, c,
                                        "admin");
    return rc;
}
