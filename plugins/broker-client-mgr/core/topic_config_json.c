/* topic_config_json.c — owns the streamed TopicConfig JSON and the
 * topics.json text (TopicConfigSerializeWrapper) made from a snapshot. The
 * table keeps structs; before this, every encoding built one jansson object
 * per topic (~1.2 KB each: 120 MB for 100,000 topics, for a text of 15 MB). */
#include "topic_config_json.h"

#include "json_value_writer.h"

#include <stdlib.h>
#include <string.h>

void bcm_data_version_write(bcm_buf *b, const bcm_data_version *dv)
{
    bcm_buf_str(b, "{\"counter\":");
    bcm_buf_i64(b, dv->counter);
    bcm_buf_str(b, ",\"timestamp\":");
    bcm_buf_i64(b, dv->timestamp);
    bcm_buf_char(b, '}');
}

void bcm_topic_config_object_write(bcm_buf *b, const char *name, size_t len, const bcm_topic_cfg *c,
                                   int perm)
{
    /* keys in strcmp order, as JSON_SORT_KEYS wrote them */
    bcm_buf_char(b, '{');
    if (c->attributes) { /* 5.x topics only: small */
        bcm_buf_str(b, "\"attributes\":");
        bcm_json_value_write(b, c->attributes);
        bcm_buf_char(b, ',');
    }
    bcm_buf_str(b, c->order ? "\"order\":true,\"perm\":" : "\"order\":false,\"perm\":");
    bcm_buf_i64(b, perm >= 0 ? perm : c->perm);
    bcm_buf_str(b, ",\"readQueueNums\":");
    bcm_buf_i64(b, c->read_queue_nums);
    bcm_buf_str(b, c->topic_filter_type == 1
                       ? ",\"topicFilterType\":\"MULTI_TAG\",\"topicName\":"
                       : ",\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":");
    bcm_json_string(b, name, len);
    bcm_buf_str(b, ",\"topicSysFlag\":");
    bcm_buf_i64(b, c->topic_sys_flag);
    bcm_buf_str(b, ",\"writeQueueNums\":");
    bcm_buf_i64(b, c->write_queue_nums);
    bcm_buf_char(b, '}');
}

void bcm_topic_config_write(bcm_buf *b, const char *name, const bcm_topic_cfg *c, int perm)
{
    size_t len = strlen(name);
    bcm_json_string(b, name, len);
    bcm_buf_char(b, ':');
    bcm_topic_config_object_write(b, name, len, c, perm);
}

size_t bcm_topic_configs_size_hint(const bcm_topic_snap_entry *v, size_t n)
{
    /* the fixed keys and values take 140 bytes (-1 and 1024 queues) */
    size_t bytes = 256;
    for (size_t i = 0; i < n; i++)
        bytes += 2 * strlen(v[i].name) + 150 + (v[i].cfg.attributes ? 256 : 0);
    return bytes;
}

char *bcm_topic_snapshot_encode(bcm_topic_snapshot *s)
{
    bcm_topic_snapshot_sort(s);
    bcm_buf b = {0};
    bcm_buf_reserve(&b, bcm_topic_configs_size_hint(s->v, s->n));
    bcm_buf_str(&b, "{\"dataVersion\":");
    bcm_data_version_write(&b, &s->dv);
    bcm_buf_str(&b, ",\"topicConfigTable\":{");
    for (size_t i = 0; i < s->n; i++) {
        if (i)
            bcm_buf_char(&b, ',');
        bcm_topic_config_write(&b, s->v[i].name, &s->v[i].cfg, -1);
    }
    bcm_buf_str(&b, "}}");
    return bcm_buf_take_string(&b, NULL);
}
