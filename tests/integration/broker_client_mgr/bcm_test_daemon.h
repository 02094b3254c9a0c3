/* bcm_test_daemon.h — what the broker-client-mgr integration, vector-replay
 * and interop tests share: a daemon running the namesrv and broker servers,
 * one-shot raw calls, polling with a deadline. Never asserts (the tests
 * decide what is a failure); keeps no state between calls. */
#ifndef BCM_TEST_DAEMON_H
#define BCM_TEST_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rmq_test_support.h"

/* Clocks, pauses and free ports come from rmq_test_support.h. */

/* Start `d` (after rmq_td_init with servers "namesrv" and "broker") with the
 * namesrv plugin listening on 127.0.0.1:ns_port and broker-client-mgr on an
 * ephemeral port with `broker_settings` (the body of settings = {...}).
 * log_level: "debug", "info"... Returns 0 or -1. */
int bcm_start_namesrv_and_broker(rmq_test_daemon *d, int ns_port, const char *log_level,
                                 const char *broker_settings);
/* The same configuration without starting, for tests that add plugins
 * (e.g. filter on the broker server) before rmq_td_start. 0 or -1. */
int bcm_configure_namesrv_and_broker(rmq_test_daemon *d, int ns_port, const char *log_level,
                                     const char *broker_settings);

/* rmq_td_init + bcm_start_namesrv_and_broker on a free port, with
 * namesrvAddr naming that NameServer followed by `settings`. The broker's
 * port, or -1. */
int bcm_start_pair(rmq_test_daemon *d, const char *log_level, const char *settings);
/* The same without starting (the test prepares the state dir first): 0 or
 * -1. */
int bcm_configure_pair(rmq_test_daemon *d, const char *log_level, const char *settings);

/* A cmocka fixture: one daemon started by bcm_start_pair and its broker's
 * port. */
typedef struct bcm_pair {
    rmq_test_daemon d;
    int port;
} bcm_pair;
/* Allocate a bcm_pair into *state and start it with `settings` (log level
 * info): 0, or -1 (bcm_pair_teardown still cleans up). */
int bcm_pair_setup(void **state, const char *settings);
/* Stop the daemon, remove its files, free the fixture. Returns 0. */
int bcm_pair_teardown(void **state);

/* One request on a fresh connection (opaque 1); body may be NULL. The
 * answer (caller frees) or NULL. */
rmq_cmd *bcm_call(int port, int code, const char *const *kv, const char *body);

bool bcm_body_contains(const rmq_cmd *c, const char *needle);

/* Read frames from fd until a oneway NOTIFY_CONSUMER_IDS_CHANGED (40) for
 * `group` arrives (true) or timeout_ms passes (false); other frames are
 * dropped. */
bool bcm_wait_notify(int fd, const char *group, int timeout_ms);

/* A consumer HEART_BEAT body: one CLUSTERING group subscribing `topic` with
 * "*" and, when with_retry, its %RETRY% topic too. Returns buf. */
const char *bcm_consumer_heartbeat(char *buf, size_t len, const char *client_id, const char *group,
                                   const char *topic, bool with_retry);

#endif
