/* live_text.c — see live_text.h. */
#include "live_text.h"

#include <rmqhost/rmqhost.h>
#include <stdlib.h>
#include <string.h>

struct live_text_value {
    live_text_value *next;
    char text[];
};

void live_text_init(live_text *t)
{
    atomic_init(&t->cur, "");
    pthread_mutex_init(&t->mu, NULL);
    t->kept = NULL;
}

int live_text_set(live_text *t, const char *value)
{
    pthread_mutex_lock(&t->mu);
    live_text_value *v = t->kept;
    while (v && strcmp(v->text, value) != 0)
        v = v->next;
    if (!v) {
        size_t n = strlen(value);
        v = malloc(sizeof *v + n + 1);
        if (!v) {
            pthread_mutex_unlock(&t->mu);
            return RMQ_ENOMEM;
        }
        memcpy(v->text, value, n + 1);
        v->next = t->kept;
        t->kept = v;
    }
    /* release: a reader that sees the pointer sees the text */
    atomic_store_explicit(&t->cur, v->text, memory_order_release);
    pthread_mutex_unlock(&t->mu);
    return 0;
}

const char *live_text_get(live_text *t)
{
    return atomic_load_explicit(&t->cur, memory_order_acquire);
}

void live_text_free(live_text *t)
{
    for (live_text_value *v = t->kept, *next; v; v = next) {
        next = v->next;
        free(v);
    }
    t->kept = NULL;
    atomic_store(&t->cur, "");
    pthread_mutex_destroy(&t->mu);
}
