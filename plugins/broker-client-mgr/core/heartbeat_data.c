/* heartbeat_data.c — owns decoding HEART_BEAT bodies and normalising
 * SubscriptionData. Never touches the tables; the processor decides what a
 * heartbeat changes. */
#include "heartbeat_data.h"

#include "fastjson_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const consume_types[] = {"CONSUME_ACTIVELY", "CONSUME_PASSIVELY", "CONSUME_POP"};
static const char *const message_models[] = {"BROADCASTING", "CLUSTERING"};
static const char *const from_wheres[] = {
    "CONSUME_FROM_LAST_OFFSET",  "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST",
    "CONSUME_FROM_MIN_OFFSET",   "CONSUME_FROM_MAX_OFFSET",
    "CONSUME_FROM_FIRST_OFFSET", "CONSUME_FROM_TIMESTAMP"};

static const char *enum_name(const json_t *v, const char *const *names, size_t n)
{
    if (json_is_string(v)) {
        for (size_t i = 0; i < n; i++)
            if (strcmp(json_string_value(v), names[i]) == 0)
                return names[i];
        return NULL;
    }
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i >= 0 && (size_t)i < n)
            return names[i];
    }
    return NULL;
}

const char *bcm_consume_type_name(const json_t *v)
{
    return enum_name(v, consume_types, 3);
}
const char *bcm_message_model_name(const json_t *v)
{
    return enum_name(v, message_models, 2);
}
const char *bcm_consume_from_where_name(const json_t *v)
{
    return enum_name(v, from_wheres, 6);
}

static int64_t json_long(const json_t *v, int64_t dflt)
{
    if (json_is_integer(v))
        return (int64_t)json_integer_value(v);
    if (json_is_real(v))
        return (int64_t)json_real_value(v);
    if (json_is_string(v)) {
        char *end = NULL;
        long long x = strtoll(json_string_value(v), &end, 10);
        if (end && end != json_string_value(v))
            return (int64_t)x;
    }
    return dflt;
}

static json_t *string_array(json_t *in)
{
    json_t *out = json_array();
    size_t i;
    json_t *v;
    if (json_is_array(in))
        json_array_foreach(in, i, v)
        {
            if (json_is_string(v))
                json_array_append(out, v);
        }
    return out;
}

static json_t *int_array(json_t *in)
{
    json_t *out = json_array();
    size_t i;
    json_t *v;
    if (json_is_array(in))
        json_array_foreach(in, i, v) json_array_append_new(out, json_integer(json_long(v, 0)));
    return out;
}

json_t *bcm_subscription_normalise(json_t *in)
{
    json_t *o = json_object();
    json_t *cfm = json_object_get(in, "classFilterMode");
    json_object_set_new(o, "classFilterMode", json_boolean(json_is_true(cfm)));
    json_object_set_new(o, "codeSet", int_array(json_object_get(in, "codeSet")));
    json_t *et = json_object_get(in, "expressionType");
    json_object_set_new(o, "expressionType",
                        json_string(json_is_string(et) && json_string_length(et) > 0
                                        ? json_string_value(et)
                                        : "TAG"));
    json_t *ss = json_object_get(in, "subString");
    if (json_is_string(ss))
        json_object_set(o, "subString", ss);
    json_object_set_new(o, "subVersion",
                        json_integer(json_long(json_object_get(in, "subVersion"), 0)));
    json_object_set_new(o, "tagsSet", string_array(json_object_get(in, "tagsSet")));
    json_t *t = json_object_get(in, "topic");
    if (json_is_string(t))
        json_object_set(o, "topic", t);
    return o;
}

void bcm_subscription_from_json(bcm_subscription *s, json_t *json)
{
    s->json = json;
    s->topic = json_string_value(json_object_get(json, "topic"));
    s->sub_string = json_string_value(json_object_get(json, "subString"));
    s->expression_type = json_string_value(json_object_get(json, "expressionType"));
    s->sub_version = (int64_t)json_integer_value(json_object_get(json, "subVersion"));
}

int bcm_subscription_copy(bcm_subscription *dst, const bcm_subscription *src)
{
    json_t *j = json_deep_copy(src->json);
    if (!j)
        return -1;
    bcm_subscription_from_json(dst, j);
    return 0;
}

void bcm_subscription_release(bcm_subscription *s)
{
    json_decref(s->json);
    memset(s, 0, sizeof *s);
}

static int parse_consumer(json_t *cd, bcm_consumer_data *out)
{
    memset(out, 0, sizeof *out);
    out->group = json_string_value(json_object_get(cd, "groupName"));
    if (!out->group)
        return -1;
    out->consume_type = bcm_consume_type_name(json_object_get(cd, "consumeType"));
    out->message_model = bcm_message_model_name(json_object_get(cd, "messageModel"));
    out->consume_from_where = bcm_consume_from_where_name(json_object_get(cd, "consumeFromWhere"));
    out->unit_mode = json_is_true(json_object_get(cd, "unitMode"));
    json_t *subs = json_object_get(cd, "subscriptionDataSet");
    size_t n = json_is_array(subs) ? json_array_size(subs) : 0;
    out->subs = calloc(n ? n : 1, sizeof *out->subs);
    if (!out->subs)
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(subs, i);
        if (!json_is_object(s) || !json_is_string(json_object_get(s, "topic")))
            continue;
        bcm_subscription_from_json(&out->subs[out->nsubs++], bcm_subscription_normalise(s));
    }
    return 0;
}

int bcm_heartbeat_parse(const char *body, size_t len, bcm_heartbeat *hb, char *err, size_t errlen)
{
    memset(hb, 0, sizeof *hb);
    if (!body || len == 0) {
        snprintf(err, errlen, "heartbeat body is empty");
        return -1;
    }
    char *text = fastjson_quote_bare_keys(body, len);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    json_error_t je;
    hb->root = json_loads(text, JSON_DISABLE_EOF_CHECK, &je);
    free(text);
    if (!json_is_object(hb->root)) {
        snprintf(err, errlen, "heartbeat body is not JSON: %s", je.text);
        bcm_heartbeat_free(hb);
        return -1;
    }
    hb->client_id = json_string_value(json_object_get(hb->root, "clientID"));
    json_t *prods = json_object_get(hb->root, "producerDataSet");
    size_t np = json_is_array(prods) ? json_array_size(prods) : 0;
    hb->producer_groups = calloc(np ? np : 1, sizeof *hb->producer_groups);
    json_t *cons = json_object_get(hb->root, "consumerDataSet");
    size_t nc = json_is_array(cons) ? json_array_size(cons) : 0;
    hb->consumers = calloc(nc ? nc : 1, sizeof *hb->consumers);
    if (!hb->producer_groups || !hb->consumers) {
        snprintf(err, errlen, "out of memory");
        bcm_heartbeat_free(hb);
        return -1;
    }
    for (size_t i = 0; i < np; i++) {
        const char *g = json_string_value(json_object_get(json_array_get(prods, i), "groupName"));
        if (g)
            hb->producer_groups[hb->nproducers++] = g;
    }
    for (size_t i = 0; i < nc; i++) {
        if (parse_consumer(json_array_get(cons, i), &hb->consumers[hb->nconsumers]) == 0)
            hb->nconsumers++;
        else
            free(hb->consumers[hb->nconsumers].subs);
    }
    return 0;
}

void bcm_heartbeat_free(bcm_heartbeat *hb)
{
    for (size_t i = 0; i < hb->nconsumers; i++) {
        for (size_t j = 0; j < hb->consumers[i].nsubs; j++)
            bcm_subscription_release(&hb->consumers[i].subs[j]);
        free(hb->consumers[i].subs);
    }
    free(hb->consumers);
    free(hb->producer_groups);
    json_decref(hb->root);
    memset(hb, 0, sizeof *hb);
}
