/* store_pop_fixture.h — what the POP integration tests (test_store_pop.c,
 * test_store_pop_ctl.c) share: an all-in-one daemon (namesrv + broker with
 * the store plugin) and one raw-frame connection to its broker, and the
 * requests both send (store_pop_fixture.c). */
#ifndef STORE_POP_FIXTURE_H
#define STORE_POP_FIXTURE_H

#include <stdbool.h>

#include "store_test_client.h"

#define WAIT_MS 20000 /* a wait's deadline */

/* The daemon, its broker's port and a connection to it (store_test_client.h). */
typedef st_fixture fixture;

/* cmocka setup: the daemon with broker topics `topics` ("T:queues;..."),
 * the store's settings mappedFileSizeCommitLog = 1 MiB plus store_extra,
 * and, with_filter, the filter plugin (enablePropertyFilter) on the
 * broker; started and connected. -1 when any of it failed. */
int pop_fixture_setup(void **state, const char *topics, const char *store_extra, bool with_filter);
/* (Re)starts the configured daemon and connects f->fd (after a kill -9). */
int pop_fixture_start(fixture *f);
/* Teardown: st_teardown (store_test_client.h). */

/* The next request opaque of this test process. */
int pop_opaque(void);

/* SEND_MESSAGE of body to queue 0 of topic, answered SUCCESS. */
void send_ok(fixture *f, const char *topic, const char *body);
/* A request of `code` with a body and no header fields; its answer. */
rmq_cmd *body_call(fixture *f, int code, const char *body);
/* Sends req (freed) and waits for its answer (5 s; asserted present). */
rmq_cmd *call(fixture *f, rmq_cmd *req);

/* POP_MESSAGE (200050) as PopMessageRequestHeader carries it. */
typedef struct pop_args {
    const char *group, *topic;
    int qid, max;
    long long invisible_ms, poll_ms;
    bool order;
    const char *exp_type, *exp; /* the subscription ("TAG", "*") */
    const char *attempt;        /* attemptId; NULL: none */
} pop_args;
rmq_cmd *pop_request_of(const pop_args *a);

/* POLLING_INFO (200055): the POPs held for (topic, group, queueId). */
long long polling_num_of(fixture *f, const char *group, const char *topic, const char *qid);

#endif
