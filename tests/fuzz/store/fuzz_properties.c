/* fuzz_properties.c — libFuzzer harness of the message-properties codec
 * (store plugin, §10.3.3): any bytes parse in bounds; the stored form
 * (WAIT dropped, CLUSTER added) parses back to the same entries; the tag
 * hash of any bytes is defined. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "message_properties.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    props_view *v = malloc(sizeof *v), *w = malloc(sizeof *w);
    if (!v || !w)
        abort();
    props_parse(s, size, v);
    for (size_t k = 0; k < v->n; k++) {
        const prop_span *e = &v->e[k];
        if (e->name < s || e->value + e->value_len > s + size || e->name_len == 0 ||
            e->value_len == 0 || memchr(e->name, PROP_NAME_VALUE_SEP, e->name_len) ||
            memchr(e->value, PROP_SEP, e->value_len))
            abort();
    }
    static const char *const drop[] = {"WAIT", NULL};
    size_t need = props_encode_stored(v, drop, "C", NULL, 0);
    char *buf = malloc(need + 1);
    if (!buf)
        abort();
    if (props_encode_stored(v, drop, "C", buf, need) != need)
        abort();
    if (!v->overflow) {
        props_parse(buf, need, w);
        /* every kept entry but WAIT and CLUSTER survives with its value */
        for (size_t k = 0; k < v->n; k++) {
            const prop_span *e = &v->e[k];
            if ((e->name_len == 4 && memcmp(e->name, "WAIT", 4) == 0) ||
                (e->name_len == 7 && memcmp(e->name, "CLUSTER", 7) == 0))
                continue;
            char name[64];
            if (e->name_len >= sizeof name)
                continue;
            memcpy(name, e->name, e->name_len);
            name[e->name_len] = 0;
            if (memchr(name, 0, e->name_len))
                continue;
            size_t l;
            const char *val = props_get(w, name, &l);
            if (!val || l != e->value_len || memcmp(val, e->value, l) != 0)
                abort();
        }
        if (!props_value_is(w, "CLUSTER", "C"))
            abort();
    }
    (void)java_string_hash(s, size);
    free(buf);
    free(v);
    free(w);
    return 0;
}
