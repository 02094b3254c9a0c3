/* topic_attributes.c — see topic_attributes.h. Messages are Java's
 * (AttributeParser / AttributeUtil / EnumAttribute) so mqadmin prints the
 * same reason. */
#include "topic_attributes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const MESSAGE_TYPES[] = {"UNSPECIFIED", "NORMAL",      "FIFO",
                                            "DELAY",       "TRANSACTION", "MIXED"};

static bool known_key(const char *k)
{
    return strcmp(k, "message.type") == 0;
}

static bool valid_value(const char *k, const char *v)
{
    (void)k; /* message.type only */
    for (size_t i = 0; i < sizeof MESSAGE_TYPES / sizeof MESSAGE_TYPES[0]; i++)
        if (strcmp(v, MESSAGE_TYPES[i]) == 0)
            return true;
    return false;
}

json_t *bcm_topic_attributes_alter(const json_t *current, const char *modification, bool create,
                                   char *err, size_t errlen, bool *failed)
{
    *failed = false;
    json_t *out = json_is_object(current) ? json_deep_copy(current) : json_object();
    if (!out)
        goto oom;
    if (!modification || !*modification)
        goto done;
    char *text = strdup(modification);
    if (!text)
        goto oom;
    json_t *seen = json_object();
    char *save = NULL;
    for (char *kv = strtok_r(text, ",", &save); kv && !*failed; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (eq) {
            *eq = '\0';
            if (kv[0] != '+') {
                snprintf(err, errlen, "add/alter attribute format is wrong: %s", kv);
                *failed = true;
                break;
            }
        } else if (kv[0] != '-') {
            snprintf(err, errlen, "delete attribute format is wrong: %s", kv);
            *failed = true;
            break;
        }
        if (json_object_get(seen, kv)) {
            snprintf(err, errlen, "key duplication: %s", kv);
            *failed = true;
            break;
        }
        json_object_set_new(seen, kv, json_true());
        const char *key = kv + 1, *val = eq ? eq + 1 : NULL;
        if (create && !val) {
            snprintf(err, errlen, "only add attribute is supported while creating topic. key: %s",
                     key);
            *failed = true;
        } else if (!known_key(key)) {
            snprintf(err, errlen, "unsupported key: %s", key);
            *failed = true;
        } else if (!val) {
            if (!json_object_get(out, key)) {
                snprintf(err, errlen, "attempt to delete a nonexistent key: %s", key);
                *failed = true;
            } else {
                json_object_del(out, key);
            }
        } else if (!valid_value(key, val)) {
            snprintf(err, errlen,
                     "value is not in set: [UNSPECIFIED, NORMAL, FIFO, DELAY, TRANSACTION, MIXED]");
            *failed = true;
        } else {
            json_object_set_new(out, key, json_string(val));
        }
    }
    json_decref(seen);
    free(text);
    if (*failed) {
        json_decref(out);
        return NULL;
    }
done:
    if (json_object_size(out) == 0 && !json_is_object(current)) {
        json_decref(out);
        return NULL;
    }
    return out;
oom:
    json_decref(out);
    snprintf(err, errlen, "out of memory");
    *failed = true;
    return NULL;
}
