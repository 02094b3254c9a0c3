/* namesrv_config.c — NameServer configuration keys and their properties
 * text. Owns the allow-list of keys changeable at run time (Java's block-list
 * approach led to CVE-2023-37582); must not do I/O. */
#include "namesrv_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Keys UPDATE_NAMESRV_CONFIG may change at run time. */
static const char *const ALLOWED_KEYS[] = {"orderMessageEnable", NULL};

/* Every NamesrvConfig / NettyServerConfig key Java would apply. */
static const char *const KNOWN_KEYS[] = {"rocketmqHome",
                                         "kvConfigPath",
                                         "configStorePath",
                                         "productEnvName",
                                         "clusterTest",
                                         "orderMessageEnable",
                                         "configBlackList",
                                         "scanNotActiveBrokerInterval",
                                         "returnOrderTopicConfigToBroker",
                                         "clientRequestThreadPoolNums",
                                         "defaultThreadPoolNums",
                                         "clientRequestThreadPoolQueueCapacity",
                                         "defaultThreadPoolQueueCapacity",
                                         "unRegisterBrokerQueueCapacity",
                                         "supportActingMaster",
                                         "enableAllTopicList",
                                         "enableTopicList",
                                         "notifyMinBrokerIdChanged",
                                         "enableControllerInNamesrv",
                                         "needWaitForService",
                                         "waitSecondsForService",
                                         "deleteTopicWithBrokerRegistration",
                                         "listenPort",
                                         "bindAddress",
                                         "serverWorkerThreads",
                                         "serverCallbackExecutorThreads",
                                         "serverSelectorThreads",
                                         "serverOnewaySemaphoreValue",
                                         "serverAsyncSemaphoreValue",
                                         "serverChannelMaxIdleTimeSeconds",
                                         "serverSocketSndBufSize",
                                         "serverSocketRcvBufSize",
                                         "writeBufferHighWaterMark",
                                         "writeBufferLowWaterMark",
                                         "serverSocketBacklog",
                                         "serverPooledByteBufAllocatorEnable",
                                         "useEpollNativeSelector",
                                         "serverNettyWorkerGroupEnable",
                                         "enableShutdownGracefully",
                                         "shutdownWaitTimeSeconds",
                                         NULL};

/* Always black-listed, whatever configBlackList says (Java adds these). */
static const char *const FIXED_BLACK_LIST[] = {"configBlackList", "configStorePath", "kvConfigPath",
                                               "rocketmqHome", NULL};

static bool in_list(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (strcmp(*list, key) == 0)
            return true;
    return false;
}

void namesrv_config_defaults(namesrv_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->product_env_name = strdup("center");
    cfg->config_black_list = strdup("configBlackList;configStorePath;kvConfigPath");
    cfg->return_order_topic_config_to_broker = true;
    cfg->enable_all_topic_list = true;
    cfg->enable_topic_list = true;
    cfg->scan_not_active_broker_interval_ms = 10000;
    cfg->broker_channel_expired_ms = 120000;
    cfg->listen_port = 9876;
}

void namesrv_config_free(namesrv_config *cfg)
{
    free(cfg->rocketmq_home);
    free(cfg->kv_config_path);
    free(cfg->config_store_path);
    free(cfg->product_env_name);
    free(cfg->config_black_list);
    memset(cfg, 0, sizeof(*cfg));
}

int namesrv_config_set_str(char **member, const char *value)
{
    char *c = value ? strdup(value) : NULL;
    if (value && !c)
        return -1;
    free(*member);
    *member = c;
    return 0;
}

/* Properties.store escaping of keys/values (ASCII-safe subset). */
static void put_prop_text(text_buf *o, const char *s, bool is_key)
{
    for (const char *p = s; *p; p++) {
        char c = *p;
        switch (c) {
        case '\\': tb_puts(o, "\\\\"); break;
        case '\n': tb_puts(o, "\\n"); break;
        case '\r': tb_puts(o, "\\r"); break;
        case '\t': tb_puts(o, "\\t"); break;
        case '=':
        case ':':
        case '#':
        case '!':
            tb_putc(o, '\\');
            tb_putc(o, c);
            break;
        case ' ':
            if (is_key || p == s)
                tb_putc(o, '\\');
            tb_putc(o, ' ');
            break;
        default: tb_putc(o, c);
        }
    }
}

static void prop_str(text_buf *o, const char *k, const char *v)
{
    if (!v)
        return; /* Java skips null values */
    tb_puts(o, k);
    tb_putc(o, '=');
    put_prop_text(o, v, false);
    tb_putc(o, '\n');
}

static void prop_int(text_buf *o, const char *k, int64_t v)
{
    tb_puts(o, k);
    tb_putc(o, '=');
    tb_int(o, v);
    tb_putc(o, '\n');
}

static void prop_bool(text_buf *o, const char *k, bool v)
{
    prop_str(o, k, v ? "true" : "false");
}

void namesrv_config_properties(const namesrv_config *cfg, text_buf *o)
{
    /* NamesrvConfig */
    prop_str(o, "rocketmqHome",
             cfg->rocketmq_home && *cfg->rocketmq_home ? cfg->rocketmq_home : NULL);
    prop_str(o, "kvConfigPath", cfg->kv_config_path);
    prop_str(o, "configStorePath", cfg->config_store_path);
    prop_str(o, "productEnvName", cfg->product_env_name);
    prop_bool(o, "clusterTest", cfg->cluster_test);
    prop_bool(o, "orderMessageEnable", cfg->order_message_enable);
    prop_str(o, "configBlackList", cfg->config_black_list);
    prop_int(o, "scanNotActiveBrokerInterval", cfg->scan_not_active_broker_interval_ms);
    /* NettyServerConfig: the port actually bound, Java's defaults otherwise */
    prop_int(o, "listenPort", cfg->listen_port);
    prop_int(o, "serverWorkerThreads", 8);
    prop_int(o, "serverCallbackExecutorThreads", 0);
    prop_int(o, "serverSelectorThreads", 3);
    prop_int(o, "serverOnewaySemaphoreValue", 256);
    prop_int(o, "serverAsyncSemaphoreValue", 64);
    prop_int(o, "serverChannelMaxIdleTimeSeconds", 120);
    prop_int(o, "serverSocketSndBufSize", 0);
    prop_int(o, "serverSocketRcvBufSize", 0);
    prop_int(o, "writeBufferHighWaterMark", 0);
    prop_int(o, "writeBufferLowWaterMark", 0);
    prop_int(o, "serverSocketBacklog", 1024);
    prop_bool(o, "serverPooledByteBufAllocatorEnable", true);
    prop_bool(o, "useEpollNativeSelector", false);
}

/* ---- java.util.Properties.load ------------------------------------------- */

static int hexv(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void put_utf8(text_buf *b, unsigned cp)
{
    if (cp < 0x80) {
        tb_putc(b, (char)cp);
    } else if (cp < 0x800) {
        tb_putc(b, (char)(0xC0 | (cp >> 6)));
        tb_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        tb_putc(b, (char)(0xE0 | (cp >> 12)));
        tb_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        tb_putc(b, (char)(0x80 | (cp & 0x3F)));
    }
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\f';
}

int properties_parse(const char *text, size_t len, properties_fn fn, void *ud)
{
    const char *p = text, *end = text + len;
    int rc = 0;
    while (p < end) {
        /* skip leading whitespace and blank lines */
        while (p < end && (is_ws(*p) || *p == '\n' || *p == '\r'))
            p++;
        if (p >= end)
            break;
        if (*p == '#' || *p == '!') {
            while (p < end && *p != '\n' && *p != '\r')
                p++;
            continue;
        }
        text_buf key, val;
        tb_init(&key);
        tb_init(&val);
        text_buf *cur = &key;
        bool in_value = false, sep_seen = false;
        while (p < end && *p != '\n' && *p != '\r') {
            char c = *p++;
            if (!in_value && (c == '=' || c == ':' || is_ws(c))) {
                in_value = true;
                cur = &val;
                sep_seen = c != ' ' && c != '\t' && c != '\f';
                while (p < end && is_ws(*p))
                    p++;
                if (!sep_seen && p < end && (*p == '=' || *p == ':')) {
                    p++;
                    while (p < end && is_ws(*p))
                        p++;
                }
                continue;
            }
            if (c != '\\') {
                tb_putc(cur, c);
                continue;
            }
            if (p >= end)
                break;
            char e = *p++;
            if (e == '\n' || e == '\r') {
                /* continuation: skip the line break and the next line's indent */
                if (e == '\r' && p < end && *p == '\n')
                    p++;
                while (p < end && is_ws(*p))
                    p++;
                continue;
            }
            switch (e) {
            case 't': tb_putc(cur, '\t'); break;
            case 'n': tb_putc(cur, '\n'); break;
            case 'r': tb_putc(cur, '\r'); break;
            case 'f': tb_putc(cur, '\f'); break;
            case 'u': {
                unsigned cp = 0;
                for (int i = 0; i < 4; i++) {
                    int h = p < end ? hexv(*p) : -1;
                    if (h < 0) {
                        rc = -1;
                        break;
                    }
                    cp = cp * 16 + (unsigned)h;
                    p++;
                }
                if (rc == 0)
                    put_utf8(cur, cp);
                break;
            }
            default: tb_putc(cur, e);
            }
            if (rc != 0)
                break;
        }
        if (rc == 0) {
            char *k = tb_take(&key, NULL);
            char *v = tb_take(&val, NULL);
            if (k && v)
                fn(k, v, ud);
            free(k);
            free(v);
        } else {
            tb_free(&key);
            tb_free(&val);
            return -1;
        }
    }
    return rc;
}

/* ---- UPDATE_NAMESRV_CONFIG ------------------------------------------------ */

typedef struct update_scan {
    const namesrv_config *cfg;
    char black_key[128];
    char refused_key[128];
    bool has_order;
    bool order_value;
} update_scan;

static bool black_listed(const namesrv_config *cfg, const char *key)
{
    if (in_list(FIXED_BLACK_LIST, key))
        return true;
    const char *list = cfg->config_black_list ? cfg->config_black_list : "";
    size_t kl = strlen(key);
    for (const char *p = list; *p;) {
        const char *semi = strchr(p, ';');
        size_t n = semi ? (size_t)(semi - p) : strlen(p);
        /* Java trims each name */
        const char *s = p;
        size_t m = n;
        while (m && (*s == ' ' || *s == '\t')) {
            s++;
            m--;
        }
        while (m && (s[m - 1] == ' ' || s[m - 1] == '\t'))
            m--;
        if (m == kl && memcmp(s, key, kl) == 0)
            return true;
        p += n;
        if (*p == ';')
            p++;
    }
    return false;
}

static void scan_key(const char *key, const char *value, void *ud)
{
    update_scan *s = ud;
    if (black_listed(s->cfg, key)) {
        if (!s->black_key[0])
            snprintf(s->black_key, sizeof(s->black_key), "%s", key);
        return;
    }
    if (!in_list(KNOWN_KEYS, key))
        return; /* unknown keys are ignored, as Java does */
    if (!in_list(ALLOWED_KEYS, key)) {
        if (!s->refused_key[0])
            snprintf(s->refused_key, sizeof(s->refused_key), "%s", key);
        return;
    }
    if (strcmp(key, "orderMessageEnable") == 0) {
        s->has_order = true;
        s->order_value = strcasecmp(value, "true") == 0;
    }
}

void namesrv_config_update(namesrv_config *cfg, const char *body, size_t len,
                           config_update_result *res)
{
    memset(res, 0, sizeof(*res));
    if (!body || len == 0)
        return; /* SUCCESS, nothing changes */
    update_scan s;
    memset(&s, 0, sizeof(s));
    s.cfg = cfg;
    if (properties_parse(body, len, scan_key, &s) != 0) {
        res->code = 1;
        snprintf(res->remark, sizeof(res->remark), "string2Properties error");
        return;
    }
    if (s.black_key[0]) {
        res->code = 16;
        snprintf(res->remark, sizeof(res->remark), "Can not update config in black list.");
        return;
    }
    if (s.refused_key[0]) {
        res->code = 16;
        snprintf(res->remark, sizeof(res->remark),
                 "Can not update config %s: not on the run-time allow-list.", s.refused_key);
        return;
    }
    if (s.has_order) {
        res->order_message_enable_changed = cfg->order_message_enable != s.order_value;
        cfg->order_message_enable = s.order_value;
    }
    res->applied = true;
}

static void stored_key(const char *key, const char *value, void *ud)
{
    namesrv_config *cfg = ud;
    if (strcmp(key, "orderMessageEnable") == 0)
        cfg->order_message_enable = strcasecmp(value, "true") == 0;
}

void namesrv_config_apply_stored(namesrv_config *cfg, const char *text, size_t len)
{
    properties_parse(text, len, stored_key, cfg);
}
