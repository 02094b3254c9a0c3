/* secret_settings.c — owns the naming rule that marks a plugin setting as a
 * secret. A rule on the name rather than a flag in rmq_setting_decl keeps the
 * descriptor's layout (ABI) unchanged: plugins opt in by naming. */
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include "secret_settings.h"

static bool contains_nocase(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == needle[i])
            i++;
        if (i == n)
            return true;
    }
    return false;
}

bool setting_name_is_secret(const char *name)
{
    if (!name)
        return false;
    return contains_nocase(name, "secret") || contains_nocase(name, "password") ||
           contains_nocase(name, "passwd");
}
