/* store_pop_fixture.c — the POP integration tests' daemon, connection and
 * common requests (store_pop_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_pop_fixture.h"

static int next_opaque = 1000;

int pop_opaque(void)
{
    return next_opaque++;
}

int pop_fixture_start(fixture *f)
{
    const char *args[] = {"-o", "servers.broker.vip_listen=127.0.0.1:0", NULL};
    if (rmq_td_start(&f->d, args) != 0)
        return -1;
    f->port = rmq_td_port(&f->d, "broker");
    f->fd = f->port > 0 ? rmq_tc_connect(f->port) : -1;
    return f->fd >= 0 ? 0 : -1;
}

int pop_fixture_setup(void **state, const char *topics, const char *store_extra, bool with_filter)
{
    fixture *f = calloc(1, sizeof *f);
    *state = f;
    if (!f)
        return -1;
    f->fd = -1;
    int ns = rmq_tc_free_port();
    const char *servers[] = {"namesrv", "broker", NULL};
    char bcm[512], store_conf[256];
    snprintf(store_conf, sizeof store_conf, "mappedFileSizeCommitLog = 1048576;%s", store_extra);
    snprintf(bcm, sizeof bcm,
             "namesrvAddr = \"127.0.0.1:%d\"; brokerName = \"broker-p\"; brokerIP1 = "
             "\"127.0.0.1\"; topics = \"%s\";",
             ns, topics);
    if (ns <= 0 || rmq_td_init(&f->d, servers, NULL) != 0 ||
        bcm_configure_namesrv_and_broker(&f->d, ns, "info", bcm) != 0 ||
        (with_filter && rmq_td_add_plugin(&f->d, "filter", "filter", "broker",
                                          "enablePropertyFilter = true;") != 0) ||
        rmq_td_add_plugin(&f->d, "store", "store", "broker", store_conf) != 0)
        return -1;
    return pop_fixture_start(f);
}

void send_ok(fixture *f, const char *topic, const char *body)
{
    rmq_cmd *r = st_send(f->fd, pop_opaque(), topic, 0, NULL, body, NULL);
    assert_non_null(r);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
}

rmq_cmd *body_call(fixture *f, int code, const char *body)
{
    rmq_cmd *req = rmq_tc_request(code, pop_opaque(), NULL);
    assert_non_null(req);
    rmq_cmd_set_body(req, body, strlen(body), NULL, NULL);
    rmq_cmd *r = rmq_tc_call_response(f->fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    return r;
}

rmq_cmd *call(fixture *f, rmq_cmd *req)
{
    assert_non_null(req);
    rmq_cmd *r = rmq_tc_call(f->fd, req, 5000);
    rmq_cmd_free(req);
    assert_non_null(r);
    return r;
}

rmq_cmd *pop_request_of(const pop_args *a)
{
    char q[16], m[16], inv[32], poll[32];
    snprintf(q, sizeof q, "%d", a->qid);
    snprintf(m, sizeof m, "%d", a->max);
    snprintf(inv, sizeof inv, "%lld", a->invisible_ms);
    snprintf(poll, sizeof poll, "%lld", a->poll_ms);
    const char *kv[] = {"consumerGroup",
                        a->group,
                        "topic",
                        a->topic,
                        "queueId",
                        q,
                        "maxMsgNums",
                        m,
                        "invisibleTime",
                        inv,
                        "pollTime",
                        poll,
                        "bornTime",
                        "1700000000000",
                        "initMode",
                        "0",
                        "expType",
                        a->exp_type,
                        "exp",
                        a->exp,
                        "order",
                        a->order ? "true" : "false",
                        a->attempt ? "attemptId" : NULL,
                        a->attempt,
                        NULL};
    return rmq_tc_request(200050, pop_opaque(), kv);
}

long long polling_num_of(fixture *f, const char *group, const char *topic, const char *qid)
{
    const char *kv[] = {"consumerGroup", group, "topic", topic, "queueId", qid, NULL};
    rmq_cmd *r = call(f, rmq_tc_request(200055, pop_opaque(), kv));
    assert_int_equal(r->code, 0);
    const char *v = rmq_cmd_ext_get(r, "pollingNum");
    assert_non_null(v);
    long long n = atoll(v);
    rmq_cmd_free(r);
    return n;
}
