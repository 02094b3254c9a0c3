/* namesrv_config.h — NameServer settings with Java's key names, the
 * properties text of GET_NAMESRV_CONFIG and the allow-listed run-time
 * updates of UPDATE_NAMESRV_CONFIG (protocol.md §4.4.16, §4.4.17, §4.12). */
#ifndef NAMESRV_NAMESRV_CONFIG_H
#define NAMESRV_NAMESRV_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_emit.h"

typedef struct namesrv_config {
    char *rocketmq_home;
    char *kv_config_path;
    char *config_store_path;
    char *product_env_name;
    char *config_black_list;
    bool cluster_test;
    bool order_message_enable;
    bool return_order_topic_config_to_broker;
    bool enable_all_topic_list;
    bool enable_topic_list;
    int64_t scan_not_active_broker_interval_ms;
    int64_t broker_channel_expired_ms;
    int listen_port;
} namesrv_config;

void namesrv_config_defaults(namesrv_config *cfg);
void namesrv_config_free(namesrv_config *cfg);
/* Replaces a string member with a copy. 0 or -1. */
int namesrv_config_set_str(char **member, const char *value);

/* Java Properties text of every key (GET_NAMESRV_CONFIG and the persisted
 * configStorePath file). */
void namesrv_config_properties(const namesrv_config *cfg, text_buf *out);

/* One parsed properties entry. */
typedef void (*properties_fn)(const char *key, const char *value, void *ud);
/* java.util.Properties.load syntax. 0 or -1 (malformed \u escape). */
int properties_parse(const char *text, size_t len, properties_fn fn, void *ud);

typedef struct config_update_result {
    int code;         /* 0 SUCCESS, 1 SYSTEM_ERROR, 16 NO_PERMISSION */
    char remark[256]; /* empty = none */
    bool applied;     /* something was applied: persist */
    bool order_message_enable_changed;
} config_update_result;

/* UPDATE_NAMESRV_CONFIG: black-listed keys -> 16 with Java's remark; other
 * known keys that are not on the allow-list -> 16 naming the key; unknown
 * keys ignored; allow-listed keys applied. */
void namesrv_config_update(namesrv_config *cfg, const char *body, size_t len,
                           config_update_result *res);

/* At start: re-apply allow-listed keys from the persisted configStorePath text. */
void namesrv_config_apply_stored(namesrv_config *cfg, const char *text, size_t len);

#endif
