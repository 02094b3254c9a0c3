/* pop_service.h — the store's POP consumption (pop_processors.c) and its
 * state (pop_state.c), hung off store_features.pop. */
#ifndef POP_SERVICE_H
#define POP_SERVICE_H

#include <stdatomic.h>

#include "pop_state.h"
#include "store_plugin.h"

struct pop_held;
struct store_features;

typedef struct pop_service {
    pop_state st;
    bool opened;
    atomic_uint turn; /* the first queue of a POP over all queues */
    pthread_mutex_t hold_mu;
    struct pop_held *held;   /* POPs waiting for messages (pollTime) */
    atomic_size_t nheld;     /* how many: an arrival looks at it without the lock */
    atomic_bool wake_posted; /* a retry of the held POPs is queued on the slow worker */
    rmq_timer_id hold_timer;
} pop_service;

pop_service *pop_service_of(store_plugin *sp);

/* store_features_init / _fini. */
int pop_service_init(store_plugin *sp, struct store_features *f);
void pop_service_fini(store_plugin *sp, struct store_features *f);
/* Open the state (init, or a reload's import / refused reload). 0 or RMQ_EIO. */
int pop_service_open(store_plugin *sp);
/* A hot reload's export: answer held POPs and close the journal so the new
 * generation replays everything this one wrote. */
void pop_service_handover(store_plugin *sp);
void pop_holds_release_all(store_plugin *sp);
/* A message arrived (engine on_arrival, any appending thread): retry the
 * held POPs soon on the slow worker instead of at the next 100 ms tick. */
void pop_holds_on_arrival(store_plugin *sp);

#endif
