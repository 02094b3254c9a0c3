/* pop_retry.c — the POP retry topics of RocketMQ 5.x (pop_service.h). A
 * message popped without order whose invisible time passed unacknowledged
 * is written by the revive (pop_revive.c) into the group's POP retry topic,
 * `%RETRY%<group>_<topic>` (KeyBuilder.buildPopRetryTopicV1) or, with
 * enableRetryTopicV2, `%RETRY%<group>+<topic>`, as Java's
 * PopReviveService.reviveRetry in 5.3.3: queue 0, reconsume times + 1, the
 * stored properties plus 1ST_POP_TIME (the first delivery; later Java
 * versions also add RETRY_TOPIC and ORIGIN_GROUP, 5.3.3 does not); born
 * and store host the broker's. The retry topic is created as Java's addRetryTopicIfNotExist
 * (one queue, perm 6, the group's offset at 0) and POP reads it like any
 * queue, so the copy has an offset of its own and its own in-flight state;
 * the original is then acknowledged in the journal. Past the group's
 * retryMaxTimes the message goes to %DLQ%<group> instead (docs/compat.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message_id.h"
#include "pop_service.h"
#include "send_put.h"
#include "store_features.h"

#define RETRY_PREFIX "%RETRY%"
#define RETRY_PREFIX_LEN 7

bool pop_is_retry_topic(const char *topic)
{
    return strncmp(topic, RETRY_PREFIX, RETRY_PREFIX_LEN) == 0;
}

/* ExtraInfoUtil.getRetry: "2" for a V2 retry topic (KeyBuilder: a '+'
 * after the prefix), "1" for another %RETRY% topic, else "0". */
const char *pop_retry_flag(const char *topic)
{
    if (!pop_is_retry_topic(topic))
        return "0";
    return strchr(topic + RETRY_PREFIX_LEN, '+') ? "2" : "1";
}

int pop_retry_topic_name(char *out, size_t cap, const char *group, const char *topic, bool v2)
{
    int n = snprintf(out, cap, "%%RETRY%%%s%c%s", group, v2 ? '+' : '_', topic);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* BatchAck's / a receipt's retry flag back to the topic the message is in
 * (ExtraInfoUtil.getRealTopic). */
int pop_retry_real_topic(char *out, size_t cap, const char *topic, const char *group,
                         const char *flag)
{
    if (flag && strcmp(flag, "1") == 0)
        return pop_retry_topic_name(out, cap, group, topic, false);
    if (flag && strcmp(flag, "2") == 0)
        return pop_retry_topic_name(out, cap, group, topic, true);
    int n = snprintf(out, cap, "%s", topic);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

const char *pop_retry_normal_topic(const char *topic, const char *group)
{
    size_t gl = strlen(group);
    if (!pop_is_retry_topic(topic) || strncmp(topic + RETRY_PREFIX_LEN, group, gl) != 0)
        return topic;
    char sep = topic[RETRY_PREFIX_LEN + gl];
    return sep == '_' || sep == '+' ? topic + RETRY_PREFIX_LEN + gl + 1 : topic;
}

int pop_retry_ensure_topic(store_plugin *sp, const char *retry_topic, const char *group)
{
    rmq_topic_config tc;
    if (meta_topic_get(sp, retry_topic, &tc) == 0)
        return 0;
    if (meta_topic_create_in_send_back(sp, retry_topic, 1, RMQ_PERM_READ | RMQ_PERM_WRITE, 0,
                                       &tc) != 0)
        return -1;
    /* initPopRetryOffset: the group starts the new topic at 0 */
    int64_t committed = -1;
    if (meta_offset_query(sp, group, retry_topic, 0, &committed) != 0 || committed < 0)
        (void)meta_offset_commit(sp, group, retry_topic, 0, 0);
    return 0;
}

/* The retry copy of one stored record into retry_topic queue 0. */
static int write_copy(store_plugin *sp, const pop_inflight *slot, const stored_record *r,
                      const char *retry_topic, int32_t reconsume, store_put_result *pr)
{
    props_view *v = malloc(sizeof *v);
    if (!v)
        return RMQ_ENOMEM;
    props_parse(r->props, r->props_len, v);
    char first_pop[32];
    snprintf(first_pop, sizeof first_pop, "%" PRId64, slot->pop_time);
    const char *kv[4] = {NULL};
    if (r->reconsume_times == 0 || !props_get(v, "1ST_POP_TIME", NULL)) {
        kv[0] = "1ST_POP_TIME";
        kv[1] = first_pop;
    }
    rmq_broker_config bc;
    bool has_bc = meta_broker_config_cached(sp, &bc, NULL) == 0;
    char *props = NULL;
    size_t plen = 0;
    int rc = props_rewrite(v, kv, NULL, has_bc && bc.cluster_name[0] ? bc.cluster_name : NULL,
                           &props, &plen);
    free(v);
    if (rc != 0)
        return rc;
    store_msg sm;
    store_msg_from_record(r, &sm);
    sm.topic = retry_topic;
    sm.queue_id = 0;
    sm.reconsume_times = reconsume;
    sm.props = props;
    sm.props_len = plen;
    sm.tags_code = props_tags_code(props, plen);
    /* Java: born and store host are the broker's store host */
    send_store_host(sp, has_bc ? &bc : NULL, &sm.store_host);
    sm.born_host = sm.store_host;
    rc = store_send_put(sp, &sm, pr);
    free(props);
    return rc;
}

int pop_retry_revive(store_plugin *sp, pop_queue *q, const pop_inflight *slot, int32_t max, bool v2,
                     pop_journal_buf *jb)
{
    int64_t offset = slot->offset;
    store_get_result res;
    if (pop_read_at(sp, q->topic, q->queue_id, offset, &res) != 0) {
        /* the message is gone (files deleted): nothing left to revive */
        pop_journal_ack(jb, q, offset);
        pop_inflight_remove(q, offset);
        return 0;
    }
    stored_record r;
    if (stored_record_decode(res.data, res.len, false, &r) != STORED_RECORD_OK) {
        free(res.data);
        pop_journal_ack(jb, q, offset);
        pop_inflight_remove(q, offset);
        return 0;
    }
    /* an entry journalled by the in-place redelivery of older versions
     * counts its own deliveries; a retry copy counts in its record */
    int32_t reconsume = r.reconsume_times + slot->deliveries - 1;
    bool dlq = reconsume >= max;
    if (!dlq) {
        char retry[300];
        if (pop_is_retry_topic(q->topic))
            snprintf(retry, sizeof retry, "%s", q->topic);
        else if (pop_retry_topic_name(retry, sizeof retry, q->group, q->topic, v2) != 0 ||
                 !pop_name_ok(retry))
            dlq = true; /* a name the POP state cannot hold: no retry topic */
        store_put_result pr = {0};
        int rc = 0;
        if (!dlq)
            rc = pop_retry_ensure_topic(sp, retry, q->group) == 0
                     ? write_copy(sp, slot, &r, retry, reconsume + 1, &pr)
                     : -1;
        if (!dlq && (rc != 0 || pr.status != STORE_PUT_OK)) {
            if (rc == 0 && (pr.status == STORE_PUT_MESSAGE_ILLEGAL ||
                            pr.status == STORE_PUT_PROPERTIES_SIZE_EXCEEDED)) {
                /* never storable there (name too long, properties past the
                 * limit once 1ST_POP_TIME is added...): the DLQ, not a retry
                 * every pass that keeps the queue's offset from moving */
                dlq = true;
            } else {
                free(res.data);
                sp->api->log(sp->ctx, RMQ_LOG_WARN, "pop revive: copy to %s failed, retried",
                             retry);
                return -1;
            }
        }
    }
    if (dlq)
        pop_to_dlq(sp, q, res.data, res.len, reconsume);
    free(res.data);
    pop_journal_ack(jb, q, offset);
    pop_inflight_remove(q, offset);
    return 0;
}

size_t pop_retry_recode(store_plugin *sp, const uint8_t *rec, size_t len, const char *topic,
                        const char *ck_head, uint8_t **out)
{
    *out = NULL;
    stored_record r;
    size_t tl = strlen(topic);
    if (tl > STORED_RECORD_MAX_TOPIC ||
        stored_record_decode(rec, len, false, &r) != STORED_RECORD_OK)
        return 0;
    props_view *v = malloc(sizeof *v);
    if (!v)
        return 0;
    props_parse(r.props, r.props_len, v);
    char ck[600];
    /* ExtraInfoUtil.buildExtraInfo: the head (startOffset popTime
     * invisibleTime reviveQid retry brokerName) then queueId and offset */
    snprintf(ck, sizeof ck, "%s %" PRId32 " %" PRId64, ck_head, r.queue_id, r.queue_offset);
    const char *kv[] = {"POP_CK", ck, NULL};
    char *props = NULL;
    size_t plen = 0;
    /* putIfAbsent, as Java */
    int rc =
        props_get(v, "POP_CK", NULL) ? RMQ_EINVAL : props_rewrite(v, kv, NULL, NULL, &props, &plen);
    free(v);
    if (rc != 0 || plen > UINT16_MAX) {
        free(props);
        return 0;
    }
    r.topic = topic;
    r.topic_len = (uint8_t)tl;
    r.props = props;
    r.props_len = (uint16_t)plen;
    size_t cap = stored_record_size(r.sys_flag, (size_t)r.body_len, r.topic_len, r.props_len);
    uint8_t *buf = malloc(cap);
    size_t n = buf ? stored_record_encode(&r, false, buf, cap) : 0;
    free(props);
    if (!n) {
        free(buf);
        return 0;
    }
    (void)sp;
    *out = buf;
    return n;
}
