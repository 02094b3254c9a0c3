/* send_header.c — decode of the send request headers: SendMessageRequestHeader
 * by field name (10, 324) and the single-letter SendMessageRequestHeaderV2
 * (310, 320, 325), with FastCodesHeader's number rules (§10.2.1–§10.2.2). */
#include <stdio.h>
#include <string.h>

#include "header_numbers.h"
#include "send_put.h"

enum {
    F_GROUP,
    F_TOPIC,
    F_DEFTOPIC,
    F_DEFQ,
    F_QID,
    F_SYSFLAG,
    F_BORN,
    F_FLAG,
    F_PROPS,
    F_RECON,
    F_UNIT,
    F_MAXRECON,
    F_BATCH,
    F_COUNT
};

static const char *const V1_KEYS[F_COUNT] = {
    "producerGroup", "topic",          "defaultTopic",  "defaultTopicQueueNums",
    "queueId",       "sysFlag",        "bornTimestamp", "flag",
    "properties",    "reconsumeTimes", "unitMode",      "maxReconsumeTimes",
    "batch"};
static const char *const V2_KEYS[F_COUNT] = {"a", "b", "c", "d", "e", "f", "g",
                                             "h", "i", "j", "k", "l", "m"};

/* Reflection-decoded headers (10, 324) leave an unparsable number null (only
 * logged), so a required one ends in a NullPointerException and an optional
 * one is ignored; FastCodesHeader (V2) throws the NumberFormatException. */
static int need_int(const char *v, int32_t *out, bool v1, char *remark, size_t cap)
{
    if (!v || (v1 && java_parse_int(v, out) != 0)) {
        /* FastCodesHeader only logs a missing field; unboxing the null throws later */
        snprintf(remark, cap, "java.lang.NullPointerException");
        return -1;
    }
    if (java_parse_int(v, out) != 0) {
        number_format_remark(v, remark, cap);
        return -1;
    }
    return 0;
}

static int opt_int(const char *v, int32_t *out, bool *has, bool v1, char *remark, size_t cap)
{
    if (!v || (v1 && java_parse_int(v, out) != 0))
        return 0;
    if (java_parse_int(v, out) != 0) {
        number_format_remark(v, remark, cap);
        return -1;
    }
    if (has)
        *has = true;
    return 0;
}

int send_header_decode(store_plugin *sp, const rmq_cmd *cmd, send_header *h, char *remark,
                       size_t cap)
{
    const rmq_host_api *a = sp->api;
    memset(h, 0, sizeof *h);
    h->code = a->cmd_code(cmd);
    h->version = a->cmd_version(cmd);
    bool v1 = h->code == 10 || h->code == 324;
    const char *const *k = v1 ? V1_KEYS : V2_KEYS;
    const char *v[F_COUNT];
    for (int i = 0; i < F_COUNT; i++)
        v[i] = a->cmd_ext_get(cmd, k[i]);
    h->producer_group = v[F_GROUP];
    h->topic = v[F_TOPIC];
    h->default_topic = v[F_DEFTOPIC];
    h->properties = v[F_PROPS];
    if (need_int(v[F_DEFQ], &h->default_topic_queue_nums, v1, remark, cap) ||
        need_int(v[F_QID], &h->queue_id, v1, remark, cap) ||
        need_int(v[F_SYSFLAG], &h->sys_flag, v1, remark, cap))
        return -1;
    if (!v[F_BORN] || (v1 && java_parse_long(v[F_BORN], &h->born_ts) != 0)) {
        snprintf(remark, cap, "java.lang.NullPointerException");
        return -1;
    }
    if (java_parse_long(v[F_BORN], &h->born_ts) != 0) {
        number_format_remark(v[F_BORN], remark, cap);
        return -1;
    }
    if (need_int(v[F_FLAG], &h->flag, v1, remark, cap) ||
        opt_int(v[F_RECON], &h->reconsume_times, NULL, v1, remark, cap) ||
        opt_int(v[F_MAXRECON], &h->max_reconsume_times, &h->has_max_reconsume_times, v1, remark,
                cap))
        return -1;
    h->unit_mode = java_parse_bool(v[F_UNIT]);
    h->batch = java_parse_bool(v[F_BATCH]);
    return 0;
}
