/* fastjson_text.h — bridging fastjson's non-standard JSON (bare numeric
 * object keys, protocol.md §2.10) and standard JSON parsers. */
#ifndef BCM_FASTJSON_TEXT_H
#define BCM_FASTJSON_TEXT_H

#include <stddef.h>

/* Copy `text` with every bare integer object key quoted ({0:1} → {"0":1}),
 * leaving strings untouched. malloc'd, NUL-terminated; NULL on OOM. */
char *fastjson_quote_bare_keys(const char *text, size_t len);

#endif
