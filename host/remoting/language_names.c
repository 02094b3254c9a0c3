/* language_names.c — LanguageCode byte <-> name (protocol.md §2.6).
 * Owns only the name table; unknown bytes and names map to OTHER, never fail. */
#include <string.h>

#include "cmd_internal.h"

_Static_assert(RMQ_LANG_JAVA == 0 && RMQ_LANG_OTHER == 7, "table order is the wire's");

static const char *const language_names[] = {
    "JAVA",  "CPP",  "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY",
    "OTHER", "HTTP", "GO",     "PHP",    "OMS",    "RUST",   "NODE_JS",
};

/* strlen of each name above, so neither direction pays for strlen */
static const unsigned char language_name_lengths[] = {4, 3, 6, 6, 6, 6, 4, 5, 4, 2, 3, 3, 4, 7};

#define LANGUAGE_COUNT ((int32_t)(sizeof(language_names) / sizeof(language_names[0])))
_Static_assert(sizeof(language_name_lengths) == sizeof(language_names) / sizeof(language_names[0]),
               "one length per name");

const char *rmq_language_name(int32_t language)
{
    if (language < 0 || language >= LANGUAGE_COUNT)
        return language_names[RMQ_LANG_OTHER];
    return language_names[language];
}

int32_t rmq_language_from_name(const char *name, size_t len)
{
    /* names are 2..7 bytes: the length and first byte rule out nearly every
     * entry before a compare (called once per decoded JSON header) */
    if (len < 2 || len > 7)
        return RMQ_LANG_OTHER;
    for (int32_t i = 0; i < LANGUAGE_COUNT; i++) {
        const char *n = language_names[i];
        if (n[0] == name[0] && language_name_lengths[i] == len && memcmp(n, name, len) == 0)
            return i;
    }
    return RMQ_LANG_OTHER;
}

size_t rmq_language_name_len(int32_t language)
{
    if (language < 0 || language >= LANGUAGE_COUNT)
        return language_name_lengths[RMQ_LANG_OTHER];
    return language_name_lengths[language];
}
