/* kv_store.h — the NameServer's KV configuration: namespace -> key -> value
 * (protocol.md §4.8), its kvConfig.json text form and KVTable bodies.
 * Not thread-safe: callers hold the writer mutex. No file I/O here. */
#ifndef NAMESRV_KV_STORE_H
#define NAMESRV_KV_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "json_emit.h"
#include <rmqhost/helpers.h>

#define KV_NAMESPACE_ORDER_TOPIC_CONFIG "ORDER_TOPIC_CONFIG"

typedef struct kv_store {
    rmq_str_map namespaces; /* name -> kv_namespace */
} kv_store;

void kv_store_init(kv_store *kv);
void kv_store_destroy(kv_store *kv);

/* value NULL: Java stores null, which reads back as absent; the namespace is
 * still created. 0 or -1 (OOM). */
int kv_store_put(kv_store *kv, const char *ns, const char *key, const char *value);
const char *kv_store_get(const kv_store *kv, const char *ns, const char *key);
/* Removes the key; an emptied namespace stays. true if something was removed. */
bool kv_store_delete(kv_store *kv, const char *ns, const char *key);
bool kv_store_has_namespace(const kv_store *kv, const char *ns);

/* {"table":{...}} of one namespace; false when the namespace is absent. */
bool kv_store_encode_table(const kv_store *kv, const char *ns, text_buf *out);
/* {"configTable":{ns:{k:v}}} — kvConfig.json */
void kv_store_encode_file(const kv_store *kv, text_buf *out);
/* Parses kvConfig.json text into an empty store. 0 or -1 (err filled). */
int kv_store_load(kv_store *kv, const char *text, size_t len, char *err, size_t errlen);

#endif
