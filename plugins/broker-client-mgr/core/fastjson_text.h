/* fastjson_text.h — bridging fastjson's non-standard JSON (bare numeric
 * object keys, protocol.md §2.10) and standard JSON parsers. */
#ifndef BCM_FASTJSON_TEXT_H
#define BCM_FASTJSON_TEXT_H

#include <jansson.h>
#include <stddef.h>

/* Copy `text` with every bare integer object key quoted ({0:1} → {"0":1}),
 * leaving strings untouched. malloc'd, NUL-terminated; NULL on OOM. */
char *fastjson_quote_bare_keys(const char *text, size_t len);

/* A whole fastjson document (a state file or an exported table) whose top
 * level must be an object: the object (caller decrefs), or NULL with
 * "out of memory" or "line N: why" in err. */
json_t *fastjson_load_object(const char *text, size_t len, char *err, size_t errlen);

#endif
