/* unwritten_topics.c — owns the set of topics created but not yet on disk in
 * topics.json, each with the change number that created it, so a write
 * releases exactly the topics its encoding contained. */
#include "unwritten_topics.h"

#include <stdlib.h>

void bcm_unwritten_topics_init(bcm_unwritten_topics *u)
{
    str_map_init(&u->names);
    u->changes = 0;
}

void bcm_unwritten_topics_free(bcm_unwritten_topics *u)
{
    str_map_clear(&u->names, free);
}

int bcm_unwritten_topics_add(bcm_unwritten_topics *u, const char *name)
{
    uint64_t *change = malloc(sizeof *change);
    if (!change)
        return -1;
    *change = ++u->changes;
    void *old = NULL;
    if (str_map_put(&u->names, name, change, &old) != 0) {
        free(change);
        return -1;
    }
    free(old);
    return 0;
}

uint64_t bcm_unwritten_topics_snapshot(const bcm_unwritten_topics *u)
{
    return u->changes;
}

void bcm_unwritten_topics_written(bcm_unwritten_topics *u, uint64_t snapshot)
{
    if (u->names.count == 0)
        return;
    str_map_iter it;
    str_map_iter_init(&u->names, &it);
    for (str_map_entry *e; (e = str_map_iter_next(&u->names, &it)) != NULL;) {
        uint64_t *change = e->value;
        if (*change <= snapshot)
            free(str_map_remove(&u->names, e->key));
    }
}

bool bcm_unwritten_topics_has(const bcm_unwritten_topics *u, const char *name)
{
    return u->names.count > 0 && str_map_get(&u->names, name) != NULL;
}

json_t *bcm_unwritten_topics_names(const bcm_unwritten_topics *u)
{
    json_t *names = json_array();
    if (!names || u->names.count == 0)
        return names;
    str_map_iter it;
    str_map_iter_init(&u->names, &it);
    for (str_map_entry *e; (e = str_map_iter_next(&u->names, &it)) != NULL;) {
        if (json_array_append_new(names, json_string(e->key)) != 0) {
            json_decref(names);
            return NULL;
        }
    }
    return names;
}
