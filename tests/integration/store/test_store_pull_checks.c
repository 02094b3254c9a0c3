/* test_store_pull_checks.c — PULL over raw frames against a real rmqhostd:
 * checks 7f/7g of protocol-messages.md §10.8.2 (without the subscription
 * bit an SQL92 pull is filtered by the ConsumerFilterData built from
 * HEART_BEAT, answers 27 when that data is missing and 28 when its client
 * version is older than the pull's subVersion), the OFFSET_MOVED_EVENT
 * message every PULL_OFFSET_MOVED answer stores (§10.8.7), and a woken held
 * pull filtered by the subscription of its wake-up (§10.8.8). */
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

/* HEART_BEAT (34, opaque 900) of a consumer of `group` subscribing `topic`
 * with `type` ("SQL92" or "TAG"; a TAG expression is one tag whose Java
 * hash is `tag_code`). */
static rmq_cmd *heartbeat_request(const char *group, const char *topic, const char *type,
                                  const char *expr, long long tag_code, long long sub_version)
{
    char body[1024], codes[32] = "", tags[160] = "";
    if (strcmp(type, "TAG") == 0) {
        snprintf(codes, sizeof codes, "%lld", tag_code);
        snprintf(tags, sizeof tags, "\"%s\"", expr);
    }
    snprintf(body, sizeof body,
             "{\"clientID\":\"127.0.0.1@fd\",\"consumerDataSet\":[{\"consumeFromWhere\":"
             "\"CONSUME_FROM_LAST_OFFSET\",\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":"
             "\"%s\",\"messageModel\":\"CLUSTERING\",\"subscriptionDataSet\":[{"
             "\"classFilterMode\":false,\"codeSet\":[%s],\"expressionType\":\"%s\",\"subString\":"
             "\"%s\",\"subVersion\":%lld,\"tagsSet\":[%s],\"topic\":\"%s\"}],\"unitMode\":false}],"
             "\"producerDataSet\":[]}",
             group, codes, type, expr, sub_version, tags, topic);
    rmq_cmd *req = rmq_tc_request(34, 900, NULL);
    rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    return req;
}

static void heartbeat_sql(fixture *f, const char *group, const char *topic, const char *expr,
                          long long sub_version)
{
    rmq_cmd *req = heartbeat_request(group, topic, "SQL92", expr, 0, sub_version);
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
    assert_int_equal(st_ext_ll(r, "nextBeginOffset"), 2); /* the max (4.9.8), though min is 0 */
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
                 "\"queueId\":0,\"topic\":\"TopicOM\"},\"offsetNew\":2,\"offsetRequest\":10}");
    expect_event(&rec[1], f->port,
                 "{\"consumerGroup\":\"CGOM\",\"messageQueue\":{\"brokerName\":\"broker-t\","
                 "\"queueId\":1,\"topic\":\"TopicOM\"},\"offsetNew\":0,\"offsetRequest\":3}");
    rmq_cmd_free(r);
}

/* Java hash codes of the tags */
#define TAG_A_CODE 2598919LL
#define TAG_B_CODE 2598920LL

/* A held PULL that wakes re-runs checks 7-8 (executeRequestWhenWakeup
 * processes the request again): the subscription of that moment filters.
 * The message matching only the new expression does not wake it (the hold
 * matches with the filter of the first execution, as Java's
 * PullRequestHoldService does); the 5 s sweep or the hold's end does, and
 * the re-execution finds the message. */
static void woken_pull_uses_the_subscription_of_that_moment(void **state)
{
    fixture *f = *state;
    rmq_cmd *r = st_send(f->fd, 1, "TopicW", 0, "TAGS\001TagA", "first", NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    rmq_cmd *hb = heartbeat_request("CGW", "TopicW", "TAG", "TagA", TAG_A_CODE, 1);
    r = rmq_tc_call_response(f->fd, hb, 5000);
    rmq_cmd_free(hb);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    /* sysFlag 2 (suspend, no subscription bit): the group's TAG subscription */
    st_pull_args pa = {.group = "CGW", .topic = "TopicW", .sys_flag = 2, .sub_version = 1};
    r = pull_until(f, &pa, 0);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);

    /* on one connection: the pull (processed and held when read) then the
     * heartbeat changing the expression to TagB */
    int fd2 = rmq_tc_connect(f->port);
    assert_true(fd2 >= 0);
    pa.offset = 1;
    pa.suspend_ms = 3000;
    rmq_cmd *pull = st_pull_request(700, &pa);
    hb = heartbeat_request("CGW", "TopicW", "TAG", "TagB", TAG_B_CODE, 2);
    assert_int_equal(rmq_tc_send(fd2, pull), 0);
    assert_int_equal(rmq_tc_send(fd2, hb), 0);
    rmq_cmd_free(pull);
    rmq_cmd_free(hb);
    rmq_cmd *answer = NULL;
    bool hb_done = false;
    while (!hb_done || !answer) {
        rmq_cmd *c = rmq_tc_recv(fd2, 20000);
        assert_non_null(c);
        if (c->opaque == 900) {
            assert_int_equal(c->code, 0);
            assert_null(answer); /* the pull was held when the heartbeat came */
            hb_done = true;
            rmq_cmd_free(c);
            /* only the new expression matches this message */
            r = st_send(f->fd, 2, "TopicW", 0, "TAGS\001TagB", "second", NULL);
            assert_non_null(r);
            assert_int_equal(r->code, 0);
            rmq_cmd_free(r);
        } else if (c->opaque == 700) {
            answer = c;
        } else {
            rmq_cmd_free(c); /* NOTIFY_CONSUMER_IDS_CHANGED */
        }
    }
    if (answer->code != 0)
        fail_msg("woken pull answered %d %s", answer->code, answer->remark ? answer->remark : "");
    stored_record rec[2];
    assert_int_equal(st_records(answer, rec, 2), 1);
    assert_int_equal(rec[0].queue_offset, 1);
    char *tag = st_prop(&rec[0], "TAGS");
    assert_string_equal(tag, "TagB");
    free(tag);
    rmq_cmd_free(answer);
    close(fd2);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(filter_data_from_heartbeats, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(offset_moved_pulls_store_an_event, st_setup, st_teardown),
        cmocka_unit_test_setup_teardown(woken_pull_uses_the_subscription_of_that_moment, st_setup,
                                        st_teardown),
    };
    (void)argc;
    (void)argv;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
