/* language_names.c — LanguageCode byte <-> name (protocol.md §2.6).
 * Owns only the name table; unknown bytes and names map to OTHER, never fail. */
#include <string.h>

#include "cmd_internal.h"

static const char *const language_names[] = {
    "JAVA",  "CPP",  "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY",
    "OTHER", "HTTP", "GO",     "PHP",    "OMS",    "RUST",   "NODE_JS",
};

#define LANGUAGE_COUNT ((int32_t)(sizeof(language_names) / sizeof(language_names[0])))

const char *rmq_language_name(int32_t language)
{
    if (language < 0 || language >= LANGUAGE_COUNT)
        return language_names[RMQ_LANG_OTHER];
    return language_names[language];
}

int32_t rmq_language_from_name(const char *name, size_t len)
{
    for (int32_t i = 0; i < LANGUAGE_COUNT; i++) {
        const char *n = language_names[i];
        if (strlen(n) == len && memcmp(n, name, len) == 0)
            return i;
    }
    return RMQ_LANG_OTHER;
}
