/* namesrv_test_util.h — helpers shared by the NameServer unit tests: build
 * registration bodies from JSON text, register brokers in one call, a
 * route-table fixture and the reference route body. */
#ifndef NAMESRV_TEST_UTIL_H
#define NAMESRV_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "register_body.h"
#include "rmq_test_bodies.h"
#include "route_encoder.h"
#include "route_table.h"

/* A RegisterBrokerBody with `topics` = "name:perm:read:write:sysflag,..." */
static inline char *make_body_json(long long counter, long long ts, const char *topics)
{
    char *json = rmq_tb_register_body_json(counter, ts, topics);
    assert_non_null(json);
    return json;
}

static inline void parse_body(register_body *rb, const char *json)
{
    char err[128];
    register_body_init(rb);
    int rc = register_body_parse_json(json, strlen(json), false, rb, err, sizeof(err));
    if (rc != 0)
        fail_msg("parse failed: %s", err);
}

/* cmocka fixture: *state is an empty route table (120 s broker expiry). */
static inline int rt_setup(void **state)
{
    route_table *rt = malloc(sizeof(*rt));
    route_table_init(rt, 120000);
    *state = rt;
    return 0;
}

static inline int rt_teardown(void **state)
{
    route_table_destroy(*state);
    free(*state);
    return 0;
}

/* encode_topic_route's body for `topic` as a C string, NULL when the table
 * has no route (caller frees). */
static inline char *route_text(const route_table *rt, const char *topic, const char *oc, bool std)
{
    text_buf b;
    tb_init(&b);
    if (!encode_topic_route(rt, topic, oc, std, &b)) {
        tb_free(&b);
        return NULL;
    }
    return tb_take(&b, NULL);
}

/* Registers a broker with a JSON body built from `topics`. */
static inline void reg(route_table *rt, const char *cluster, const char *name, const char *addr,
                       long long id, unsigned long long channel, long long counter,
                       const char *topics, unsigned long long now, register_result *res_out)
{
    char *json = make_body_json(counter, 1000, topics);
    register_body rb;
    parse_body(&rb, json);
    register_request rr = {.cluster = cluster,
                           .broker_name = name,
                           .broker_addr = addr,
                           .ha_addr = "127.0.0.1:10912",
                           .broker_id = id,
                           .channel = channel,
                           .body = &rb};
    register_result res;
    assert_int_equal(route_table_register(rt, &rr, now, &res), 0);
    if (res_out)
        *res_out = res;
    else
        register_result_free(&res);
    register_body_free(&rb);
    free(json);
}

static inline const queue_data *find_qd(const route_table *rt, const char *topic,
                                        const char *broker)
{
    const topic_entry *te = route_table_topic(rt, topic);
    for (size_t i = 0; te && i < te->nqd; i++)
        if (strcmp(te->qds[i].broker_name, broker) == 0)
            return &te->qds[i];
    return NULL;
}

static inline bool cluster_has(const route_table *rt, const char *cluster, const char *broker)
{
    const cluster_entry *ce = route_table_cluster(rt, cluster);
    for (size_t i = 0; ce && i < ce->n; i++)
        if (strcmp(ce->brokers[i], broker) == 0)
            return true;
    return false;
}

#endif
