/* request_catalog.h — every request code the namesrv, broker-client-mgr and
 * filter plugins register, with a well-formed request for each (ext fields
 * with plausible values, the body the processor expects). The mutators start
 * from these; names used here never collide with the test's own broker,
 * topic or KV entries, so fuzzing cannot delete what the test checks. */
#ifndef REQUEST_CATALOG_H
#define REQUEST_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "remoting_command.h"

typedef enum { FUZZ_SERVER_NAMESRV = 0, FUZZ_SERVER_BROKER = 1 } fuzz_server;

typedef enum {
    FUZZ_BODY_NONE,
    FUZZ_BODY_REGISTER_BROKER, /* RegisterBrokerBody JSON */
    FUZZ_BODY_TOPIC_ROUTE,     /* TopicRouteData with queueDatas */
    FUZZ_BODY_DATA_VERSION,
    FUZZ_BODY_PROPERTIES, /* UPDATE_NAMESRV_CONFIG */
    FUZZ_BODY_HEARTBEAT,
    FUZZ_BODY_LOCK_BATCH,
    FUZZ_BODY_CHECK_CLIENT,
    FUZZ_BODY_GROUP_CONFIG,
    FUZZ_BODY_MESSAGE,
    FUZZ_BODY_QUERY_ASSIGNMENT, /* QueryAssignmentRequestBody */
    FUZZ_BODY_REQUEST_MODE,     /* SetMessageRequestModeRequestBody */
    FUZZ_BODY_BATCH_ACK,        /* BatchAckMessageRequestBody */
} fuzz_body_kind;

typedef struct fuzz_ext_template {
    const char *key;
    const char *value;
    bool numeric; /* the processor parses it as a number */
} fuzz_ext_template;

#define FUZZ_MAX_EXT 12

typedef struct fuzz_code_entry {
    int code;
    const char *name;
    fuzz_server server;
    fuzz_body_kind body;
    fuzz_ext_template ext[FUZZ_MAX_EXT]; /* ends at key NULL */
} fuzz_code_entry;

size_t fuzz_catalog_count(void);
const fuzz_code_entry *fuzz_catalog_at(size_t i);
/* The entry for `code`, or NULL when no plugin registers it. */
const fuzz_code_entry *fuzz_catalog_find(int code);
/* The server a code is sent to (unregistered codes: broker). */
fuzz_server fuzz_catalog_server_of(int code);

/* A well-formed request for entry e (JSON, version 409, opaque 0). NULL on
 * allocation failure. */
rmq_cmd *fuzz_catalog_build(const fuzz_code_entry *e);

/* The well-formed body text for a kind (malloc'd, NUL-terminated), NULL for
 * FUZZ_BODY_NONE or on allocation failure. */
char *fuzz_catalog_body(fuzz_body_kind kind);

/* Set ext bodyCrc32 to the body's CRC when the command carries that key. */
void fuzz_catalog_refresh_crc(rmq_cmd *cmd);

#endif
