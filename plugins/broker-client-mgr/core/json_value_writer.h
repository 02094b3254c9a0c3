/* json_value_writer.h — a jansson value written into a bcm_buf as
 * json_dumps(JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) writes it,
 * walking the tree instead of dumping it (json_dumps allocates and sorts a
 * key array per object and copies the text out once more). Used for the
 * 5.x TopicConfig.attributes a topic keeps as a jansson object. */
#ifndef BCM_JSON_VALUE_WRITER_H
#define BCM_JSON_VALUE_WRITER_H

#include "json_writer.h"

#include <jansson.h>

/* Appends v's text; on a failure (out of memory, nesting deeper than
 * jansson dumps) b->oom is set, as with every bcm_buf append. */
void bcm_json_value_write(bcm_buf *b, const json_t *v);

#endif
