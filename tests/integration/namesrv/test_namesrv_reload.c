/* test_namesrv_reload.c — hot reload (`rmqhostctl reload namesrv`) keeps
 * routes, KV and liveness: the broker's connection still owns its
 * registration afterwards, and expiry still counts from the last
 * registration before the reload (issue item 7). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "namesrv_frames.h"

static int setup(void **state)
{
    return ns_setup(state, "scanNotActiveBrokerInterval = 100; brokerChannelExpiredTime = 3000;");
}

static void reload_namesrv(ns_fixture *f)
{
    char out[4096] = "";
    const char *args[] = {"reload", "namesrv", NULL};
    int rc = rmq_td_ctl(&f->d, out, sizeof(out), args);
    if (rc != 0)
        fail_msg("rmqhostctl reload namesrv exited %d: %s", rc, out);
}

static void test_reload_keeps_routes_kv_and_connection_ownership(void **state)
{
    ns_fixture *f = *state;
    int broker = ns_broker_connect(f, "b", "127.0.0.1:8001", "KeptTopic");
    const char *put[] = {"namespace", "NS", "key", "k", "value", "v", NULL};
    rmq_cmd_free(ns_call(f->fd, ns_request(100, put, NULL, 0, -1)));

    reload_namesrv(f);

    rmq_cmd *r = ns_route(f->fd, "KeptTopic", 409, false);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    const char *get[] = {"namespace", "NS", "key", "k", NULL};
    r = ns_call(f->fd, ns_request(101, get, NULL, 0, -1));
    assert_int_equal(r->code, 0);
    assert_string_equal(rmq_cmd_ext_get(r, "value"), "v");
    rmq_cmd_free(r);
    /* the channel id survived: closing the broker's connection still removes it */
    close(broker);
    assert_true(ns_wait_route_code(f->fd, "KeptTopic", 17, NS_WAIT_MS));
}

static void test_reload_keeps_liveness_so_silent_broker_still_expires(void **state)
{
    ns_fixture *f = *state;
    int broker = rmq_tc_connect(f->port);
    rmq_cmd_free(ns_register(broker, "C", "quiet", "127.0.0.1:8002", 0, 1, "QuietTopic"));
    reload_namesrv(f);
    rmq_cmd *r = ns_route(f->fd, "QuietTopic", 409, false);
    assert_int_equal(r->code, 0);
    rmq_cmd_free(r);
    assert_true(ns_wait_route_code(f->fd, "QuietTopic", 17, NS_WAIT_MS));
    close(broker);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reload_keeps_routes_kv_and_connection_ownership, setup,
                                        ns_teardown),
        cmocka_unit_test_setup_teardown(test_reload_keeps_liveness_so_silent_broker_still_expires,
                                        setup, ns_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
