/* test_selection.c — which tests of a binary run, from a ':'-separated list
 * of globs given on its command line (as ctest passes a group's names).
 * Decides selection only; running the tests stays with cmocka. */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "rmq_test_support.h"

bool rmq_test_name_selected(const char *filter, const char *name)
{
    if (filter == NULL)
        return true;
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", filter);
    for (char *save = NULL, *pat = strtok_r(buf, ":", &save); pat; pat = strtok_r(NULL, ":", &save))
        if (fnmatch(pat, name, 0) == 0)
            return true;
    return false;
}
