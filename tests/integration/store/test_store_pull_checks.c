/* test_store_pull_checks.c — PULL over raw frames against a real rmqhostd:
 * checks 7f/7g of protocol-messages.md §10.8.2 (without the subscription
 * bit an SQL92 pull is filtered by the ConsumerFilterData built from
 * HEART_BEAT, answers 27 when that data is missing and 28 when its client
 * version is older than the pull's subVersion) and the OFFSET_MOVED_EVENT
 * message every PULL_OFFSET_MOVED answer stores (§10.8.7). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_test_client.h"

typedef st_fixture fixture;

static void heartbeat_sql(fixture *f, const char *group, const char *topic, const char *expr,
                          long long sub_version)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"clientID\":\"127.0.0.1@fd\",\"consumerDataSet\":[{\"consumeFromWhere\":"
             "\"CONSUME_FROM_LAST_OFFSET\",\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":"
             "\"%s\",\"messageModel\":\"CLUSTERING\",\"subscriptionDataSet\":[{"
             "\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"SQL92\",\"subString\":"
             "\"%s\",\"subVersion\":%lld,\"tagsSet\":[],\"topic\":\"%s\"}],\"unitMode\":false}],"
             "\"producerDataSet\":[]}",
             group, expr, sub_version, topic);
    rmq_cmd *req = rmq_tc_request(34, 900, NULL);
    rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    rmq_cmd *r = rmq_tc_call_response(f->fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
}

/* The filter table follows heartbeats through an event: poll (with a
 * deadline) until the pull answers `code`; the last answer. */
static rmq_cmd *pull_until(fixture *f, const st_pull_args *pa, int code)
{
    rmq_cmd *r = NULL;
    for (int i = 0; i < 200; i++) {
        rmq_cmd_free(r);
        r = st_pull(f->fd, 100 + i, pa);
        assert_non_null(r);
        if (r->code == code)
            break;
        usleep(10000);
    }
    return r;
}

static void filter_data_from_heartbeats(void **state)
{
    fixture *f = *state;
    const char *props[] = {"a\0015", "a\0011", "a\0019"};
    for (int i = 0; i < 3; i++) {
        rmq_cmd *r = st_send(f->fd, i + 1, "TopicFD", 0, props[i], "m", NULL);
        assert_non_null(r);
        assert_int_equal(r->code, 0);
        rmq_cmd_free(r);
    }
    /* sysFlag 2 (suspend, hold 0): no subscription bit (0 would mean the default 4) */
    st_pull_args pa = {.group = "CGFD", .topic = "TopicFD", .sys_flag = 2, .sub_version = 5};
    /* the heartbeat's SQL92 expression filters the pull (no subscription bit) */
    heartbeat_sql(f, "CGFD", "TopicFD", "a > 3", 5);
    rmq_cmd *r = pull_until(f, &pa, 0);
    assert_int_equal(r->code, 0);
    stored_record rec[4];
    assert_int_equal(st_records(r, rec, 4), 2);
    assert_int_equal(rec[0].queue_offset, 0);
    assert_int_equal(rec[1].queue_offset, 2);
    rmq_cmd_free(r);

    /* a newer expression that does not compile drops the filter data: 27 */
    heartbeat_sql(f, "CGFD", "TopicFD", "a >", 7);
    pa.sub_version = 7;
    r = pull_until(f, &pa, 27);
    assert_int_equal(r->code, 27);
    assert_string_equal(
        r->remark, "The broker's consumer filter data is not exist!Your expression may be wrong!");
    rmq_cmd_free(r);

    /* an older heartbeat rebuilds the filter data at version 6 while the
     * consumer table keeps version 7: the pull at 7 gets 28 */
    heartbeat_sql(f, "CGFD", "TopicFD", "a < 3", 6);
    r = pull_until(f, &pa, 28);
    assert_int_equal(r->code, 28);
    assert_string_equal(r->remark, "the consumer's consumer filter data not latest");
    rmq_cmd_free(r);

    /* a pull at version 6 passes, filtered by the filter data's expression */
    pa.sub_version = 6;
    r = st_pull(f->fd, 50, &pa);
    assert_int_equal(r->code, 0);
    assert_int_equal(st_records(r, rec, 4), 1);
    assert_int_equal(rec[0].queue_offset, 1);
    rmq_cmd_free(r);

    /* the subscription check (25) still comes first */
    pa.sub_version = 8;
    r = st_pull(f->fd, 51, &pa);
    assert_int_equal(r->code, 25);
    rmq_cmd_free(r);
}

static void expect_event(const stored_record *r, int port, const char *body)
{
    char *tags = st_prop(r, "TAGS"), *keys = st_prop(r, "KEYS"), *delay = st_prop(r, "DELAY");
    assert_string_equal(tags, "CGOM");
    assert_string_equal(keys, "CGOM");
    assert_string_equal(delay, "0");
    free(tags);
    free(keys);
    free(delay);
    assert_int_equal(r->queue_id, 0);
    assert_int_equal(r->store_port, port);
    assert_int_equal(r->born_port, port);
    assert_int_equal(r->body_len, (int)strlen(body));
    assert_memory_equal(r->body, body, strlen(body));
}

static void offset_moved_pulls_store_an_event(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 2; i++) {
        rmq_cmd *r = st_send(f->fd, i + 1, "TopicOM", 0, NULL, "m", NULL);
        assert_non_null(r);
        assert_int_equal(r->code, 0);
        rmq_cmd_free(r);
    }
    /* the consume queue is dispatched behind the append: wait for it */
    for (int i = 0; i < 500 && st_max_offset(f->port, "TopicOM", 0) < 2; i++)
        usleep(10000);
    /* past the end (OFFSET_OVERFLOW_BADLY) and in an empty queue at 3 */
    st_pull_args pa = {.group = "CGOM", .topic = "TopicOM", .queue = 0, .offset = 10};
    rmq_cmd *r = st_pull(f->fd, 10, &pa);
    assert_int_equal(r->code, 21);
    assert_int_equal(st_ext_ll(r, "nextBeginOffset"), 0); /* Java: min when min is 0 */
    rmq_cmd_free(r);
    pa.queue = 1;
    pa.offset = 3;
    r = st_pull(f->fd, 11, &pa);
    assert_int_equal(r->code, 21);
    rmq_cmd_free(r);
    /* a pull that is not 21 stores nothing */
    pa.offset = 0;
    r = st_pull(f->fd, 12, &pa);
    assert_int_equal(r->code, 19);
    rmq_cmd_free(r);

    for (int i = 0; i < 500 && st_max_offset(f->port, "OFFSET_MOVED_EVENT", 0) < 2; i++)
        usleep(10000);
    st_pull_args ev = {.group = "CGOMREAD", .topic = "OFFSET_MOVED_EVENT", .queue = 0};
    r = st_pull(f->fd, 13, &ev);
    assert_int_equal(r->code, 0);
    stored_record rec[4];
    assert_int_equal(st_records(r, rec, 4), 2);
    expect_event(&rec[0], f->port,
                 "{\"consumerGroup\":\"CGOM\",\"messageQueue\":{\"brokerName\":\"broker-t\","
                 "\"queueId\":0,\"topic\":\"TopicOM\"},\"offsetNew\":0,\"offsetRequest\":10}");
    expect_event(&rec[1], f->port,
                 "{\"consumerGroup\":\"CGOM\",\"messageQueue\":{\"brokerName\":\"broker-t\","
                 "\"queueId\":1,\"topic\":\"TopicOM\"},\"offsetNew\":0,\"offsetRequest\":3}");
    rmq_cmd_free(r);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(filter_data_from_heartbeats, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(offset_moved_pulls_store_an_event, st_setup, st_teardown),
    };
    (void)argc;
    (void)argv;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
