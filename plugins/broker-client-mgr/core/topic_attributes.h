/* topic_attributes.h — 5.x topic attributes (TopicConfig.attributes) as
 * UPDATE_AND_CREATE_TOPIC's `attributes` header field alters them
 * ("+key=value,-key", Java's AttributeParser and
 * AttributeUtil.alterCurrentAttributes) with Java 5.3's TopicAttributes:
 * message.type (NORMAL, FIFO, DELAY, TRANSACTION, MIXED, UNSPECIFIED),
 * which the gRPC proxy reports per queue in QueryRoute and checks on
 * SendMessage; queue.type (SimpleCQ, BatchCQ) and cleanup.policy (DELETE,
 * COMPACTION), set only at creation; reserve.time (-1..Long.MAX_VALUE). */
#ifndef BCM_TOPIC_ATTRIBUTES_H
#define BCM_TOPIC_ATTRIBUTES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The attributes after applying `modification` to `current` (NULL: none)
 * for a topic that is new (`create`) or exists. A new object (NULL when the
 * result is empty and current was NULL), or NULL with err set on a bad
 * modification (*failed true). */
json_t *bcm_topic_attributes_alter(const json_t *current, const char *modification, bool create,
                                   char *err, size_t errlen, bool *failed);

#endif
