/* register_body.h — the REGISTER_BROKER request body a broker sends
 * (RegisterBrokerBody, protocol.md §4.2, §4.6, §5.16.2). */
#ifndef BCM_REGISTER_BODY_H
#define BCM_REGISTER_BODY_H

#include "data_version.h"
#include "topic_table.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct bcm_body {
    unsigned char *data;
    size_t len;
    bool compressed; /* the zlib form: the request's `compressed` header */
} bcm_body;

/* Encode the snapshot's topics (sorted first) with its DataVersion and
 * `filter_servers` (JSON array of strings, NULL = []), streamed from the
 * structs into the body: no jansson object per topic. broker_perm < 6
 * replaces every perm (4.9.8). compressed: the zlib form of §4.6. The table
 * is cut into bodies of at most chunk_topics topics (Java 5.x
 * enableSplitRegistration), each a full body with the same DataVersion;
 * chunk_topics 0 = one body. Returns the number of bodies (malloc'd array
 * in *out, at least one) or -1. */
int bcm_register_bodies(bcm_topic_snapshot *s, const json_t *filter_servers, int broker_perm,
                        bool compressed, size_t chunk_topics, bcm_body **out);
void bcm_bodies_free(bcm_body *bodies, int n);
/* CRC32 of the bytes masked with 0x7FFFFFFF (bodyCrc32 header). */
uint32_t bcm_body_crc32(const void *data, size_t len);

#endif
