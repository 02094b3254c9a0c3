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
/* V2 keys are the letters "a".."m", in F_ order */

/* One pass over the ext fields (keys are unique in a command) instead of a
 * lookup per field: 13 scans of the ext array cost more than the send's
 * other header work together. */
static void ext_values(const rmq_host_api *a, const rmq_cmd *cmd, bool v1, const char *v[F_COUNT])
{
    size_t n = a->cmd_ext_count(cmd);
    for (size_t i = 0; i < n; i++) {
        const char *key, *val;
        if (a->cmd_ext_at(cmd, i, &key, &val) != 0 || !key)
            continue;
        if (!v1) {
            if (key[0] >= 'a' && key[0] < 'a' + F_COUNT && key[1] == 0)
                v[key[0] - 'a'] = val;
            continue;
        }
        for (int f = 0; f < F_COUNT; f++)
            if (key[0] == V1_KEYS[f][0] && strcmp(key, V1_KEYS[f]) == 0) {
                v[f] = val;
                break;
            }
    }
}

/* A number of the header: absent, or unparsable in a reflection-decoded
 * header (10, 324: Java only logs the failure and leaves the field null),
 * leaves *out 0 and clears `bit` in h->present, so the first use answers the
 * NullPointerException where Java unboxes the null (send_header_need);
 * FastCodesHeader (V2) throws the NumberFormatException at decode. */
static int num_int(const char *v, int32_t *out, send_header *h, unsigned bit, bool v1, char *remark,
                   size_t cap)
{
    *out = 0;
    if (!v || (v1 && java_parse_int(v, out) != 0)) {
        *out = 0;
        return 0;
    }
    if (java_parse_int(v, out) != 0) {
        number_format_remark(v, remark, cap);
        return -1;
    }
    h->present |= bit;
    return 0;
}

static int num_long(const char *v, int64_t *out, send_header *h, unsigned bit, bool v1,
                    char *remark, size_t cap)
{
    *out = 0;
    if (!v || (v1 && java_parse_long(v, out) != 0)) {
        *out = 0;
        return 0;
    }
    if (java_parse_long(v, out) != 0) {
        number_format_remark(v, remark, cap);
        return -1;
    }
    h->present |= bit;
    return 0;
}

bool send_header_need(const send_header *h, unsigned bits, char *remark, size_t cap)
{
    if ((h->present & bits) == bits)
        return true;
    snprintf(remark, cap, "java.lang.NullPointerException");
    return false;
}

int send_header_decode(store_plugin *sp, const rmq_cmd *cmd, send_header *h, char *remark,
                       size_t cap)
{
    const rmq_host_api *a = sp->api;
    memset(h, 0, sizeof *h);
    h->code = a->cmd_code(cmd);
    h->version = a->cmd_version(cmd);
    bool v1 = h->code == 10 || h->code == 324;
    const char *v[F_COUNT] = {0};
    ext_values(a, cmd, v1, v);
    h->producer_group = v[F_GROUP];
    h->topic = v[F_TOPIC];
    h->default_topic = v[F_DEFTOPIC];
    h->properties = v[F_PROPS];
    /* Java requires none of them at decode (FastCodesHeader and the
     * reflection decode only log a missing @CFNotNull field) */
    if (num_int(v[F_DEFQ], &h->default_topic_queue_nums, h, SEND_HAS_DEFQ, v1, remark, cap) ||
        num_int(v[F_QID], &h->queue_id, h, SEND_HAS_QUEUE_ID, v1, remark, cap) ||
        num_int(v[F_SYSFLAG], &h->sys_flag, h, SEND_HAS_SYS_FLAG, v1, remark, cap) ||
        num_long(v[F_BORN], &h->born_ts, h, SEND_HAS_BORN_TS, v1, remark, cap) ||
        num_int(v[F_FLAG], &h->flag, h, SEND_HAS_FLAG, v1, remark, cap) ||
        num_int(v[F_RECON], &h->reconsume_times, h, SEND_HAS_RECONSUME, v1, remark, cap) ||
        num_int(v[F_MAXRECON], &h->max_reconsume_times, h, SEND_HAS_MAX_RECONSUME, v1, remark, cap))
        return -1;
    h->has_max_reconsume_times = (h->present & SEND_HAS_MAX_RECONSUME) != 0;
    h->unit_mode = java_parse_bool(v[F_UNIT]);
    h->batch = java_parse_bool(v[F_BATCH]);
    return 0;
}
