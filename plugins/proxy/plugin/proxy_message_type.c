/* proxy_message_type.c — owns SendMessage's server-side type check, as Java
 * 5's ProducerProcessor does it before choosing a queue when
 * enableTopicMessageTypeCheck is on: the message's type, read from the
 * properties the proxy gives it (TopicMessageType.parseFromMessageProperty:
 * a transaction half message, else a timer, else a message group, else
 * NORMAL), must be the topic's message.type unless that is MIXED. Retry and
 * DLQ topics are not checked. A topic the broker role lacks is UNSPECIFIED
 * and so refuses every type, as in Java. */
#include <stdio.h>
#include <string.h>

#include "proxy_internal.h"

static const char *type_of(const Apache__Rocketmq__V2__Message *m)
{
    const Apache__Rocketmq__V2__SystemProperties *sp = m->system_properties;
    if (!sp)
        return "NORMAL";
    if (sp->message_type == APACHE__ROCKETMQ__V2__MESSAGE_TYPE__TRANSACTION)
        return "TRANSACTION";
    if (sp->delivery_timestamp)
        return "DELAY";
    if (sp->message_group && sp->message_group[0])
        return "FIFO";
    return "NORMAL";
}

bool proxy_message_type_ok(const char *expected, const Apache__Rocketmq__V2__Message *m,
                           const char *topic, char *why, size_t cap)
{
    if (strncmp(topic, "%RETRY%", 7) == 0 || strncmp(topic, "%DLQ%", 5) == 0)
        return true;
    const char *actual = type_of(m);
    if (strcmp(actual, expected) == 0 || strcmp(expected, "MIXED") == 0)
        return true;
    snprintf(why, cap,
             "TopicMessageType validate failed, the expected type is %s, but actual type is %s",
             expected, actual);
    return false;
}
