/* live_text.h — a text setting read on every request without a lock while
 * UPDATE_BROKER_CONFIG may replace it (regionId, in each send answer).
 * Readers load one pointer; every value ever set is kept until the plugin
 * ends, so a reader's pointer stays valid whatever updates follow (updates
 * are rare admin calls: a value set again reuses its copy). */
#ifndef STORE_LIVE_TEXT_H
#define STORE_LIVE_TEXT_H

#include <pthread.h>
#include <stdatomic.h>

typedef struct live_text_value live_text_value;

typedef struct live_text {
    _Atomic(const char *) cur;
    pthread_mutex_t mu; /* writers only */
    live_text_value *kept;
} live_text;

void live_text_init(live_text *t);
/* 0, or RMQ_ENOMEM (the old value stays). */
int live_text_set(live_text *t, const char *value);
/* The current value ("" before the first set); valid until live_text_free. */
const char *live_text_get(live_text *t);
void live_text_free(live_text *t);

#endif
