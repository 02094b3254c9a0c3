/* topic_attributes.c — see topic_attributes.h. Messages are Java's
 * (AttributeParser / AttributeUtil / EnumAttribute) so mqadmin prints the
 * same reason. */
#include "topic_attributes.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Java 5.3's TopicAttributes.ALL. `set` is the EnumAttribute's universe as
 * its HashSet prints it (that iteration order, read from Java 17); NULL
 * for reserve.time, a LongRangeAttribute [-1, Long.MAX_VALUE]. Only
 * message.type means anything here (the proxy's routes and type check);
 * the others are kept and reported as Java keeps them. */
typedef struct attr_def {
    const char *key;
    bool changeable;
    const char *const *values;
    const char *set_text;
} attr_def;

static const char *const MESSAGE_TYPES[] = {"UNSPECIFIED", "MIXED",  "TRANSACTION", "FIFO",
                                            "DELAY",       "NORMAL", NULL};
static const char *const QUEUE_TYPES[] = {"SimpleCQ", "BatchCQ", NULL};
static const char *const CLEANUP_POLICIES[] = {"DELETE", "COMPACTION", NULL};

static const attr_def ATTRS[] = {
    {"message.type", true, MESSAGE_TYPES, "[UNSPECIFIED, MIXED, TRANSACTION, FIFO, DELAY, NORMAL]"},
    {"queue.type", false, QUEUE_TYPES, "[SimpleCQ, BatchCQ]"},
    {"cleanup.policy", false, CLEANUP_POLICIES, "[DELETE, COMPACTION]"},
    {"reserve.time", true, NULL, NULL},
};

static const attr_def *find_attr(const char *k)
{
    for (size_t i = 0; i < sizeof ATTRS / sizeof ATTRS[0]; i++)
        if (strcmp(k, ATTRS[i].key) == 0)
            return &ATTRS[i];
    return NULL;
}

/* EnumAttribute / LongRangeAttribute.verify: 0, or -1 with Java's message
 * (Long.parseLong's NumberFormatException for a value that is no number). */
static int verify(const attr_def *d, const char *v, char *err, size_t errlen)
{
    if (d->values) {
        for (size_t i = 0; d->values[i]; i++)
            if (strcmp(v, d->values[i]) == 0)
                return 0;
        snprintf(err, errlen, "value is not in set: %s", d->set_text);
        return -1;
    }
    char *end = NULL;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || errno == ERANGE || isspace((unsigned char)v[0])) {
        snprintf(err, errlen, "For input string: \"%s\"", v);
        return -1;
    }
    if (n < -1) {
        snprintf(err, errlen, "value is not in range(-1, 9223372036854775807)");
        return -1;
    }
    return 0;
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
        } else if (!val && !json_object_get(out, key)) {
            snprintf(err, errlen, "attempt to delete a nonexistent key: %s", key);
            *failed = true;
        } else if (!find_attr(key)) {
            snprintf(err, errlen, "unsupported key: %s", key);
            *failed = true;
        } else if (!create && !find_attr(key)->changeable) {
            snprintf(err, errlen, "attempt to update an unchangeable attribute. key: %s", key);
            *failed = true;
        } else if (!val) {
            if (!json_object_get(out, key)) {
                snprintf(err, errlen, "attempt to delete a nonexistent key: %s", key);
                *failed = true;
            } else {
                json_object_del(out, key);
            }
        } else if (verify(find_attr(key), val, err, errlen) != 0) {
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
