/* store_test_client.h — what the store integration tests share: a daemon
 * running namesrv, broker-client-mgr, filter and store; raw SEND / PULL
 * requests; the stored records of an answer. Never asserts. */
#ifndef STORE_TEST_CLIENT_H
#define STORE_TEST_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bcm_test_daemon.h"
#include "stored_record.h"

/* rmq_td_init + namesrv + broker-client-mgr + filter + store (settings body
 * `store_settings`, may be NULL) configured, not started. 0 or -1. */
int st_configure(rmq_test_daemon *d, const char *store_settings);
/* st_configure with extra_host_conf appended to host.conf (may be NULL). */
int st_configure_host(rmq_test_daemon *d, const char *store_settings, const char *extra_host_conf);
/* st_configure + rmq_td_start; the broker port or -1. */
int st_start(rmq_test_daemon *d, const char *store_settings);

/* The cmocka fixture of tests that need one default daemon and one raw
 * connection to its broker: st_setup starts both (state = st_fixture *),
 * st_teardown closes the connection and fails if the daemon did not stop
 * cleanly. */
typedef struct st_fixture {
    rmq_test_daemon d;
    int port;
    int fd;
} st_fixture;
int st_setup(void **state);
int st_teardown(void **state);

/* SEND_MESSAGE_V2 (310) of `body` to topic/queue with properties `props`
 * (U+0001/U+0002 text, may be NULL); extra ext pairs (NULL-terminated, may
 * be NULL) override the defaults. The answer or NULL. */
rmq_cmd *st_send(int fd, int opaque, const char *topic, int queue, const char *props,
                 const char *body, const char *const *extra);
/* The request of st_send, to send without waiting (pipelining). Caller frees. */
rmq_cmd *st_send_request(int opaque, const char *topic, int queue, const char *props,
                         const char *body, const char *const *extra);

typedef struct st_pull_args {
    const char *group;
    const char *topic;
    int queue;
    long long offset;
    int max;
    int sys_flag;          /* default 4 (inline subscription) when 0 */
    const char *sub;       /* inline subscription, default "*" */
    const char *expr_type; /* default "TAG" */
    long long suspend_ms;
    long long commit_offset;
    long long sub_version; /* header subVersion, default 0 */
} st_pull_args;
/* PULL_MESSAGE (11) request. Caller frees. */
rmq_cmd *st_pull_request(int opaque, const st_pull_args *a);
rmq_cmd *st_pull(int fd, int opaque, const st_pull_args *a);

/* Decode the records of a PULL/QUERY/VIEW body into out[0..max); count. */
size_t st_records(const rmq_cmd *c, stored_record *out, size_t max);
/* Value of property `name` of a record as a malloc'd string or NULL. */
char *st_prop(const stored_record *r, const char *name);

/* One ext field of c as long long (or LLONG_MIN when absent). */
long long st_ext_ll(const rmq_cmd *c, const char *key);

/* GET_MAX_OFFSET (30) of topic/queue on a fresh connection; -1 on failure. */
long long st_max_offset(int port, const char *topic, int queue);

/* Whether files a and b both open and hold the same bytes (replicated
 * commit-log segments compared byte for byte). */
bool st_same_file(const char *a, const char *b);

#endif
